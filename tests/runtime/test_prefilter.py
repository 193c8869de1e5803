"""Filter push-down (petricep.runtime.prefilter): dropping rows before they become events
never changes a run's matches, nor their order; rows it can judge are really dropped."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.events import Event
from petricep.io.readers import InputSpec, events_from_table
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from petricep.runtime.prefilter import Prefilter
from tests.budget import examples
from tests.strategies import pattern_text, patterns, streams

SETTINGS = settings(
    max_examples=examples(300, "PETRICEP_EXAMPLES"), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
SPEC = InputSpec(path="<test>", type_field="type", time_field="ts", id_field="id")


def table(events: list[Event]) -> pa.Table:
    return pa.table(
        {
            "type": [e.type for e in events],
            "ts": [e.ts for e in events],
            "id": [e.id for e in events],
            "x": [e.attrs["x"] for e in events],
            "k": [e.attrs["k"] for e in events],
        }
    )


def run(net: Any, tbl: pa.Table, prefilter: bool, tie: str) -> tuple[list[str], int]:
    source = events_from_table(tbl, SPEC)
    if prefilter:
        source.row_filter = Prefilter(net)
    engine = Engine(net, tie=tie)
    events = list(source)
    out = [json.dumps(m.to_dict(), sort_keys=True) for m in engine.run(events)]
    return out, len(events)


@SETTINGS
@given(st.data())
def test_same_matches_in_the_same_order(data: st.DataObject) -> None:
    pattern = data.draw(patterns(returns=False, kleene=True, max_kleene=1))
    events = data.draw(streams(types=("A", "B", "C", "D", "Z"), max_size=12))
    tie = data.draw(st.sampled_from(["arrival", "strict"] + (["either"] if pattern.strategy == "skip-till-any-match" else [])))
    note(pattern_text(pattern))
    note(f"tie={tie}")
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))
    net = build_net([pattern])
    tbl = table(events)
    want, _ = run(net, tbl, False, tie)
    got, _ = run(net, tbl, True, tie)
    assert got == want


def test_rows_that_no_transition_takes_are_dropped() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE a.x > 3 AND b.x + 1 < 3 AND b.x > a.x - 9 WITHIN 10")
    events = [Event(t, i, i, i, {"x": x, "k": 0}) for i, (t, x) in enumerate(
        [("A", 5), ("Z", 9), ("A", 1), ("B", 0), ("B", 7), ("A", 4), ("B", 1)]
    )]
    tbl = table(events)
    want, n_all = run(net, tbl, False, "arrival")
    got, n_kept = run(net, tbl, True, "arrival")
    assert got == want and len(got) == 3
    assert (n_all, n_kept) == (7, 4)  # Z, A x=1 and B x=7 never become events
    kept = list(events_from_table(tbl, SPEC))
    assert [e.pos for e in kept] == list(range(7))


def test_table_numbers_become_python_numbers_with_and_without_the_filter() -> None:
    """Number columns stay numpy arrays until rows are chosen; events hold Python values."""
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE a.x > 3 AND a.y < b.y WITHIN 10")
    tbl = pa.table({"type": ["A", "B", "Z"], "ts": [1, 2, 3], "id": [7, 8, 9], "x": [5, 0, 1], "y": [0.5, 1.5, 2.5]})
    for prefilter in (True, False):
        source = events_from_table(tbl, SPEC)
        if prefilter:
            source.row_filter = Prefilter(net)
        got = [(e.type, e.ts, e.id, e.attrs["x"], e.attrs["y"]) for e in source]
        want = [("A", 1, 7, 5, 0.5), ("B", 2, 8, 0, 1.5)]
        assert got == (want if prefilter else [*want, ("Z", 3, 9, 1, 2.5)])
        assert {type(v) for row in got for v in row[1:]} == {int, float}


def test_contiguity_and_end_negation_keep_everything() -> None:
    for text in (
        "PATTERN p: SEQ(A a, B b) WHERE strict-contiguity AND a.x > 3 WITHIN 10",
        "PATTERN p: SEQ(A a, B b, !(C c)) WHERE a.x > 3 WITHIN 10",
        "PATTERN p: SEQ(A a, B b) WHERE a.x > 3 WITHIN 10 LIMIT 5 PARTIAL MATCHES",
        "PATTERN p: SEQ(A a, B b) WHERE a.x > 3 WITHIN 10 ON TIMEOUT RETURN T(x = a.x)",
    ):
        pf = Prefilter(compile_text(text))
        assert not pf.active


def test_conditions_the_filter_cannot_compute_keep_the_rows() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE a.x / 2 > 1 AND b.k = 'u' WITHIN 10")
    events = [Event(t, i, i, i, {"x": i, "k": 0}) for i, t in enumerate("ABAB")]
    got, n = run(net, table(events), True, "arrival")
    assert n == 4


def test_sql_queries_keep_every_row_and_column() -> None:
    from petricep.api import compile_sql

    pf = Prefilter(compile_sql("T MATCH_RECOGNIZE (PARTITION BY k PATTERN (A B+) DEFINE B AS B.x > PREV(B.x)) m"))
    assert not pf.active
    assert pf.needed(["k", "x", "other"], ()) == [True, True, True]
