"""The real out-of-order trade feed in ../shared/data/stock_trades (skipped when absent).

In arrival order (``seq_id``) 47,364 trades carry an earlier time than a predecessor, by up to
0.89 s. With a slack above that, the result equals the result on the time-sorted stream; with
too little, the late events are exactly those whose time is below the highest earlier time
minus the slack, and the result equals the time-sorted stream without them.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from petricep.api import compile_files
from petricep.cli import main
from petricep.events import Event
from petricep.io.readers import InputSpec, open_events
from petricep.runtime.engine import Engine

ROOT = Path(__file__).resolve().parents[1]
TRADES = ROOT.parent / "shared" / "data" / "stock_trades" / "time_and_sales_10_symbols.tar.gz"
PATTERN = ROOT / "nets" / "trades_rising.pcep"
TIME_FORMAT = "%H:%M:%S.%f"

pytestmark = pytest.mark.skipif(not TRADES.exists(), reason="../shared/data is not here")


@pytest.fixture(scope="module")
def arrival_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """All ten files as one CSV in arrival order (by seq_id; the files are stored newest first)."""
    rows = []
    with tarfile.open(TRADES) as tar:
        for member in tar.getmembers():
            fh = tar.extractfile(member)
            if fh is None:
                continue
            for line in fh.read().decode().splitlines():
                sym, seq_text, volume, price, time, side = line.split()
                rows.append((int(seq_text), sym, volume, price, time, side))
    rows.sort()
    path = tmp_path_factory.mktemp("trades") / "arrival.csv"
    with path.open("w") as out:
        out.write("symbol,seq,volume,price,time,side\n")
        for seq, sym, volume, price, time, side in rows:
            out.write(f"{sym},{seq},{volume},{price},{time},{side}\n")
    return path


@pytest.fixture(scope="module")
def arrivals(arrival_csv: Path) -> list[Event]:
    spec = InputSpec(
        str(arrival_csv), type_const="Trade", time_field="time", id_field="seq", time_format=TIME_FORMAT,
        numeric={"Trade": frozenset({"price"})}, ordered=False,
    )
    return list(open_events(spec))


def copies(events: list[Event]) -> list[Event]:
    return [Event(e.type, e.ts, n, e.id, e.attrs) for n, e in enumerate(events)]


def matches(events: list[Event], slack: float | None = None) -> tuple[list[dict[str, Any]], list[Any]]:
    late: list[Any] = []
    engine = Engine(compile_files([PATTERN]), slack=slack, on_late=(lambda e, m: late.append(e.id)) if slack is not None else None)
    return [m.to_dict() for m in engine.run(events)], late


def time_sorted(events: list[Event]) -> list[Event]:
    return copies(sorted(events, key=lambda e: (e.ts, e.pos)))


def test_the_feed_is_out_of_order(arrivals: list[Event]) -> None:
    top, worst, behind = arrivals[0].ts, 0.0, 0
    for e in arrivals:
        behind += e.ts < top
        worst = max(worst, top - e.ts)
        top = max(top, e.ts)
    assert len(arrivals) == 224_473
    assert behind == 47_364  # earlier than some predecessor
    assert 0.88 < worst <= 0.89


def test_enough_slack_gives_the_time_sorted_result(arrivals: list[Event]) -> None:
    want, _ = matches(time_sorted(arrivals))
    got, late = matches(copies(arrivals), slack=1.0)
    assert late == []
    assert len(want) == 6915
    assert got == want


def test_too_little_slack_reports_exactly_the_late_events(arrivals: list[Event], arrival_csv: Path, tmp_path: Path) -> None:
    slack = 0.1
    want_late, on_time = [], []
    top = None
    for e in arrivals:
        if top is not None and e.ts < top - slack:
            want_late.append(e.id)
        else:
            on_time.append(e)
            top = e.ts if top is None else max(top, e.ts)
    want, _ = matches(time_sorted(on_time))
    out, late_file = tmp_path / "m.jsonl", tmp_path / "late.jsonl"
    rc = main(
        [
            "run", str(PATTERN), "--events", str(arrival_csv), "--type", "Trade", "--time-field", "time",
            "--time-format", TIME_FORMAT, "--id-field", "seq", "--slack", "100ms", "--late", str(late_file),
            "-o", str(out), "--no-progress",
        ]
    )
    assert rc == 3  # finished, with late events
    late = [json.loads(line) for line in late_file.read_text().splitlines()]
    assert len(want_late) == 39_088
    assert [r["id"] for r in late] == want_late
    assert all(r["ts"] < r["watermark"] for r in late)
    assert [json.loads(line) for line in out.read_text().splitlines()] == want
