"""``petricep.match`` builds its table from the kernel's record batches (no :class:`Match`
per match) wherever they give it exactly: the table must be the one the Python engine's
matches make (``to_table``), value for value and type for type, whatever the id column's
type (int64, int32, text, none), the time column's (numbers, floats, naive and zoned
timestamps) and the patterns (lists, RETURN fields, ON TIMEOUT, two patterns sharing names)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petricep.api.frames import match, run_matches
from petricep.events import Event
from petricep.lang.printer import pattern_text
from petricep.output.table import to_table
from tests.strategies import patterns, streams

OPTS: dict[str, Any] = {"type_field": "type", "time_field": "ts"}
PATTERNS = [
    "PATTERN p: SEQ(A a, B b) WHERE a.x < b.x WITHIN 4",
    "PATTERN p: SEQ(A a, B+ b[], C c) WHERE skip-till-next-match AND sum(b[].x) > a.x WITHIN 6 "
    "RETURN R(total = sum(b[].x), first = a.x / 2)",
    "PATTERN p: SEQ(A a, B b) WITHIN 3 ON TIMEOUT RETURN T(x = a.x)",
    ["PATTERN p: SEQ(A a, B b) WITHIN 3 RETURN R(v = a.x)", "PATTERN q: SEQ(B b, C c) WITHIN 3 RETURN R(v = c.x * 1.5)"],
]


def _table(events: list[Event], ids: str, times: str) -> pa.Table:
    cols: dict[str, Any] = {"type": [e.type for e in events], "x": [e.attrs["x"] for e in events]}
    cols["k"] = [e.attrs["k"] for e in events]
    ts = [e.ts for e in events]
    if times == "int":
        cols["ts"] = pa.array(ts, pa.int64())
    elif times == "float":
        cols["ts"] = pa.array([t / 3 for t in ts], pa.float64())
    else:
        tz = None if times == "naive" else "Europe/Copenhagen"
        cols["ts"] = pa.array([1_700_000_000_000 + 1000 * t for t in ts], pa.timestamp("ms", tz=tz))
    if ids != "none":
        t = {"int64": pa.int64(), "int32": pa.int32(), "text": pa.string()}[ids]
        cols["id"] = pa.array([e.id if ids != "text" else f"e{e.id}" for e in events], t)
    return pa.table(cols)


def _both(table: pa.Table, pattern: Any, ids: str) -> tuple[pa.Table, pa.Table, str]:
    opts = dict(OPTS, id_field=None if ids == "none" else "id")
    kernel = run_matches(table, pattern, **opts)
    python = run_matches(table, pattern, engine="python", **opts)
    assert python.report["engine"]["name"] == "python"
    return kernel.table(), python.table(), kernel.report["engine"]["name"]


@pytest.mark.parametrize("ids", ["int64", "int32", "text", "none"])
@pytest.mark.parametrize("times", ["int", "float", "naive", "zoned"])
@pytest.mark.parametrize("pattern", PATTERNS, ids=["seq", "kleene-return", "timeout", "two"])
def test_the_table_from_the_kernels_batches_is_the_engines(ids: str, times: str, pattern: Any) -> None:
    events = [Event("ABC"[i % 3] if i % 4 else "A", i // 2, i, i, {"x": (i * 7) % 5, "k": i % 2}) for i in range(40)]
    got, want, engine = _both(_table(events, ids, times), pattern, ids)
    assert engine == "kernel"
    assert want.num_rows > 0
    assert got.schema == want.schema
    assert got.equals(want), (got.slice(0, 3).to_pylist(), want.slice(0, 3).to_pylist())


def test_a_large_run_takes_no_match_object() -> None:
    """Over the kernel's batches, no Match is made for the table (the objects come only when
    asked: ``FrameRun.matches``)."""
    events = [Event("AB"[i % 2], i, i, i, {"x": i % 5, "k": 0}) for i in range(2000)]
    run = run_matches(_table(events, "int64", "int"), PATTERNS[0], id_field="id", **OPTS)
    assert run.chunks and all(isinstance(c, pa.RecordBatch) for c in run.chunks)
    table = run.table()
    assert run._objects is None
    assert table.num_rows == len(run.matches) > 0
    assert table.equals(to_table(run.matches, run.layout, id_type=run.input.id_type))


@settings(max_examples=60, deadline=None)
@given(
    patterns(max_vars=4, negation=True, windows=("time",), min_window=1),
    streams(max_size=14),
    st.sampled_from(["int64", "int32", "text", "none"]),
    st.sampled_from(["int", "float", "naive", "zoned"]),
)
def test_random_patterns_give_the_engines_table(pattern: Any, events: list[Event], ids: str, times: str) -> None:
    got, want, _ = _both(_table(events, ids, times), pattern_text(pattern), ids)
    assert got.schema == want.schema
    assert got.equals(want)


def test_match_returns_the_batches_table() -> None:
    events = [Event("ABC"[i % 3], i, i, i, {"x": i % 5, "k": 0}) for i in range(30)]
    table = _table(events, "int32", "zoned")
    got = match(table, PATTERNS[1], id_field="id", **OPTS)
    assert got.equals(run_matches(table, PATTERNS[1], engine="python", id_field="id", **OPTS).table())
    assert got.schema.field("a").type == pa.int32() and got.schema.field("b").type == pa.list_(pa.int32())
    assert got.schema.field("start").type == pa.timestamp("ms", tz="Europe/Copenhagen")
