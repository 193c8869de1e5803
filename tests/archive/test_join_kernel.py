"""A history runner's live net on the compiled kernel: the Python engine's output, match for
match and in its order (the kernel fires a batch, the runner replays it event by event),
its errors after the same matches, and the reason wherever it stays on the Python engine."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep import kernel
from petricep.archive.join import HistoryRunner
from petricep.archive.store import Archive
from petricep.errors import ConfigError, EvaluationError
from petricep.events import Event
from petricep.lang import ast as A
from petricep.lang.parser import parse_file, parse_text
from tests.archive.test_join import (
    OPTIONAL,
    OPTIONAL_LIVE,
    SPEED,
    archive_of,
    ev,
    history_patterns,
    two_streams,
)
from tests.budget import examples
from tests.strategies import pattern_text

NETS = Path(__file__).resolve().parents[2] / "nets"
pytestmark = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built")

SETTINGS = settings(
    max_examples=examples(300, "PETRICEP_EXAMPLES") // 3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def outputs(pats: list[A.Pattern], path: str, live: list[Event], engine: str, **options: Any) -> tuple[list[Any], str]:
    runner = HistoryRunner(pats, Archive(path), engine=engine, **options)
    got = [m.to_dict() for m in runner.run([Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in live])]
    return got, runner.engine_choice.engine


@SETTINGS
@given(history_patterns(), two_streams(), st.sampled_from(["llaa", "sllaa"]), st.integers(0, 3), st.booleans())
def test_the_kernel_gives_the_engines_output_in_its_order(
    p: A.Pattern, streams: tuple[list[Event], list[Event]], mode: str, tolerance: int, beside: bool
) -> None:
    # beside: a plain pattern shares the live net, its matches interleaved with the join's
    history, live = streams
    pats = [p] + (list(parse_text("PATTERN q: SEQ(A a, B b) WHERE a.x < b.x").patterns) if beside else [])
    note(pattern_text(p) + f"\nmode={mode} tolerance={tolerance} beside={beside}")
    path = archive_of(history)
    want, _ = outputs(pats, path, live, "python", mode=mode, tolerance=tolerance)
    got, name = outputs(pats, archive_of(history), live, "kernel", mode=mode, tolerance=tolerance)
    assert name == "kernel"
    assert got == want


@pytest.mark.parametrize("condition", ["l.x < h.x", "l.x < 5"])  # the join's error, the live net's
def test_an_error_ends_the_run_after_the_same_matches(condition: str) -> None:
    text = f"PATTERN p: SEQ(ARCHIVED S h, S l) WHERE l.ts - h.ts <= 5 AND l.ts - h.ts >= 0 AND {condition}"
    history = [ev("S", 0, 0, "h0", x=5)]
    live = [ev("S", 1, 0, "l0", x=1), ev("S", 2, 1, "l1", x="text"), ev("S", 3, 2, "l2", x=0)]
    results = {}
    for engine in ("python", "kernel"):
        runner = HistoryRunner(parse_text(text).patterns, Archive(archive_of(history)), mode="llaa", engine=engine)
        got = []
        with pytest.raises(EvaluationError, match="cannot compare 'text' < 5") as info:
            for e in live:  # (as a run drives it: drain before flush)
                got += [m.ids for m in runner.push(e)]
            got += [m.ids for m in runner.drain()]
            got += [m.ids for m in runner.flush()]
        results[engine] = (got, str(info.value))
    assert results["kernel"] == results["python"] == ([{"h": "h0", "l": "l0"}], "cannot compare 'text' < 5")


@pytest.mark.parametrize(("options", "why"), [
    ({"engine": "python"}, "asked for"),
    ({"order": "archive-first"}, "the archive-first history order admits events one by one from the matches so far"),
    ({"order": "auto"}, "the auto history order admits events one by one from the matches so far"),
])
def test_where_the_python_engine_runs_it_says_why(options: dict[str, Any], why: str) -> None:
    runner = HistoryRunner(parse_text(SPEED).patterns, Archive(archive_of([])), **({"engine": "kernel"} | options))
    assert (runner.engine_choice.engine, runner.engine_choice.why) == ("python", why)


def test_composite_events_stay_on_the_python_engine() -> None:
    text = SPEED + "PATTERN r: SEQ(S a, S b) RETURN T(v = a.speed)\n"
    runner = HistoryRunner(parse_text(text).patterns, Archive(archive_of([])), engine="kernel")
    why = "composite events in a run over an archive (the kernel's matches carry their events only without them)"
    assert (runner.engine_choice.engine, runner.engine_choice.why) == ("python", why)


def test_the_archive_net_of_nets_runs_its_live_part_on_the_kernel() -> None:
    # nets/aarhus_slower_than_last_week.pcep over two generated weeks at four sensors
    pats = parse_file(str(NETS / "aarhus_slower_than_last_week.pcep")).patterns
    rng = random.Random(4)
    live = []
    for pos in range(4000):
        attrs = {"REPORT_ID": rng.randint(1, 4), "avgSpeed": rng.choice((5, 12, 40, 90)), "vehicleCount": rng.randint(3, 9)}
        live.append(Event("traffic", pos * 300 + rng.randint(0, 120), pos, f"e{pos}", attrs))
    want, _ = outputs(list(pats), archive_of([]), live, "python", mode="sllaa")
    got, name = outputs(list(pats), archive_of([]), live, "kernel", mode="sllaa")
    assert name == "kernel" and got == want and len(want) == 189


def test_an_optional_live_step_on_the_kernel() -> None:
    pats = list(parse_text(OPTIONAL).patterns)
    want, _ = outputs(pats, archive_of([ev("A", 0, 0, "h0", x=1)]), OPTIONAL_LIVE, "python")
    got, name = outputs(pats, archive_of([ev("A", 0, 0, "h0", x=1)]), OPTIONAL_LIVE, "kernel")
    assert (name, got) == ("kernel", want)
    assert len(got) == 3


def test_a_stop_event_in_the_live_part_on_the_kernel() -> None:
    from tests.archive.test_join import UNTIL, UNTIL_LIVE

    got, name = outputs(list(parse_text(UNTIL).patterns), archive_of([ev("A", 0, 0, "h0")]), UNTIL_LIVE, "kernel")
    assert name == "kernel"
    assert [m["ids"]["b"] for m in got] == [["x1"], ["x3"]]  # the stop event x2: no [x1, x3]


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(ConfigError, match="engine must be 'python' or 'kernel', not 'spark'"):
        HistoryRunner(parse_text(SPEED).patterns, Archive(archive_of([])), engine="spark")
