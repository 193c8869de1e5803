"""Every net of nets/ on the kernel: covered ones give the Python engine's matches on a
generated stream (and on the shared NASDAQ file where present); the others say why not."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from petricep.api import compile_files
from petricep.events import Event
from petricep.kernel import supports
from tests.kernel.compare import both

NETS = Path(__file__).resolve().parents[2] / "nets"
NASDAQ = NETS.parent.parent / "shared" / "data" / "opencep_events" / "NASDAQ_MEDIUM.txt"

EXPECTED = {
    "aarhus_congestion.pcep": "covered",
    "aarhus_slower_than_last_week.pcep": "ARCHIVED variables",
    "aarhus_speed_collapse.pcep": "covered",
    "abandoned_carts.pcep": "covered",
    "nasdaq_rising_peaks.pcep": "covered",
    "sase_equal_price.pcep": "covered",
    "sase_kleene_min.pcep": "covered",
    "shoplifting.pcep": "covered",
    "stock_v_shape.sql": "covered",
    "stop_and_go.pcep": "covered",
    "timed_stall_recovery.pcep": "covered",
    "trades_rising.pcep": "covered",
}


def test_every_net_is_listed() -> None:
    assert sorted(p.name for p in NETS.iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_covered_or_refused_with_reason(name: str) -> None:
    assert supports(compile_files([str(NETS / name)])) == (EXPECTED[name] == "covered", EXPECTED[name])


def stream(kind: str, n: int, seed: int) -> list[Event]:
    rng = random.Random(seed)
    out = []
    ts = 0.0
    for pos in range(n):
        ts += rng.choice((0, 0.1, 0.25, 1, 30))
        if kind == "stocks":
            k = rng.randint(1, 3)
            out.append(Event(f"stock{k}", int(ts * 4), pos, pos, {"price": rng.randint(1, 6), "symbol": f"S{k}"}))
        elif kind == "trades":
            out.append(Event("Trade", ts, pos, pos, {"symbol": rng.choice("xyz"), "price": rng.randint(1, 9)}))
        elif kind == "traffic":
            speed = rng.choice((5, 50, 120, 8))
            attrs: dict[str, Any] = {"REPORT_ID": rng.randint(1, 4), "avgSpeed": speed, "vehicleCount": rng.randint(0, 3)}
            out.append(Event("traffic", int(ts * 60), pos, pos, attrs))
        elif kind == "jam":  # readings at two sensors that often slow down as traffic builds up
            step = pos % 6
            attrs = {"REPORT_ID": rng.randint(1, 2), "avgSpeed": 90 - 12 * step + rng.randint(0, 5), "vehicleCount": step + 1}
            out.append(Event("traffic", int(ts * 60), pos, pos, attrs))
        elif kind == "kleene":  # runs of trades from prices divisible by 500, closed by low volumes
            price = rng.choice((500, 1000, 1500, rng.randint(1, 2000)))
            attrs = {"symbol": f"S{rng.randint(1, 3)}", "price": price, "volume": rng.randint(1, 300)}
            out.append(Event("stock", _clock(out, rng.choice((0, 1, 5, 20))), pos, pos, attrs))
        elif kind == "carts":  # users adding items, sometimes paying within the half hour
            t = rng.choice(("AddToCart", "AddToCart", "Payment"))
            step = rng.choice((0, 60, 600, 1500, 3600))
            out.append(Event(t, _clock(out, step), pos, pos, {"user": f"u{rng.randint(1, 4)}", "item": rng.randint(1, 9)}))
        elif kind == "stalls":  # two sensors going from free flow to a standstill and back, minutes apart
            speed = rng.choice((95, 120, 5, 10, 60, 30))
            attrs = {"REPORT_ID": rng.randint(1, 2), "avgSpeed": speed, "vehicleCount": rng.randint(0, 2)}
            out.append(Event("traffic", _clock(out, rng.choice((0, 60, 300, 600, 1200))), pos, pos, attrs))
        elif kind == "shop":
            t = rng.choice(("SHELF_READING", "SHELF_READING", "COUNTER_READING", "EXIT_READING", "EXIT_READING"))
            out.append(Event(t, int(ts * 600), pos, pos, {"tag": rng.randint(1, 5)}))
        else:
            t = rng.choice(("MSFT", "DRIV", "CBRL", "AAPL"))
            out.append(Event(t, int(ts * 10), pos, pos, {"peak": rng.randint(1, 20)}))
    return out


def _clock(out: list[Event], step: int) -> float:
    """The next timestamp: ``step`` seconds after the last event's."""
    return (out[-1].ts if out else 0) + step


@pytest.mark.parametrize(
    ("name", "kind", "ties"),
    [
        ("sase_equal_price.pcep", "stocks", ("arrival", "strict")),
        ("trades_rising.pcep", "trades", ("arrival", "strict")),
        ("aarhus_speed_collapse.pcep", "traffic", ("arrival", "strict", "either")),
        ("aarhus_congestion.pcep", "jam", ("arrival", "strict")),
        ("shoplifting.pcep", "shop", ("arrival", "strict")),
        ("abandoned_carts.pcep", "carts", ("arrival", "strict")),
        ("sase_kleene_min.pcep", "kleene", ("arrival", "strict")),
        ("nasdaq_rising_peaks.pcep", "nasdaq", ("arrival", "strict", "either")),
        ("timed_stall_recovery.pcep", "stalls", ("arrival", "strict", "either")),
        ("stop_and_go.pcep", "traffic", ("arrival", "strict")),
    ],
)
def test_covered_nets_match_the_engine(name: str, kind: str, ties: tuple[str, ...]) -> None:
    net = compile_files([str(NETS / name)])
    for seed, tie in enumerate(ties):
        evs = stream(kind, 3000, seed)
        out = both(net, evs, tie, 1234, sweep_every=97)
        assert out["kernel"] == out["python"]
        assert out["python"][0]  # the stream is made to match


@pytest.mark.skipif(not NASDAQ.exists(), reason="needs ../shared/data")
def test_nasdaq_file_under_either() -> None:
    import pyarrow.compute as pc

    from bench.nasdaq import SPEC, load
    from petricep.io.readers import events_from_table

    table = load(str(NASDAQ), 1)
    evs = list(events_from_table(table, SPEC))
    net = compile_files([str(NETS / "nasdaq_rising_peaks.pcep")])
    out = both(net, evs, "either", 800)
    assert out["kernel"] == out["python"]
    assert len(out["python"][0]) == 1425
    assert pc.min(table.column("ts")).as_py()  # the file is the shared one, not empty
