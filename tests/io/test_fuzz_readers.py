"""Fuzzing the event readers: thousands of malformed CSV, JSON Lines and Parquet inputs, each
ending in events or a typed petricep error (never another exception); in skip mode every
row is either an event or a counted rejection, so nothing is lost.

``PETRICEP_FUZZ`` sets the number of examples per test (default 1000 under
``HYPOTHESIS_PROFILE=deep``, a quarter of it otherwise: tests/budget.py).
"""

from __future__ import annotations

import contextlib
import gzip
import math
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from petricep.errors import EventError, PetricepError
from petricep.io import InputSpec, events_from_table, open_events
from petricep.io.values import is_number
from tests.budget import examples

FUZZ = settings(
    max_examples=examples(1000, "PETRICEP_FUZZ"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)

CELLS = ["A", "B", "1", "2.5", "-3", "1e400", "nan", "", " ", '"', '""', '"a,b"', "x\ty", "2014-08-01T07:50:00",
         "201402010930", "2014-13-45", "null", "true", "\r", "é", "\x00", ",", "'q'", "0x10", "1_000",
         # hostile cells (issue 15): huge numbers, overflow, unterminated quotes, NaN/inf, BOM
         "9" * 4301, "9" * 400, "-1e309", '"abc', 'a,"b', "NaN", "Infinity", "-inf", "\ufeff", '"x""']
HEADERS = ["type,ts,id,x", "type,ts,x", "type,ts,k,x", "ts,type", "type;ts;x", "", "type,ts,ts", "type,,x", "\ufefftype,ts,x"]
JSON_LINES = ['{"type":"A","ts":1,"x":2}', '{"type":"B","ts":"1","x":"y"}', '{"type":null,"ts":1}', "[1,2]", "{",
              '{"type":"A","ts":1e999}', '{"type":"A"}', "null", '"str"', '{"type":"A","ts":-1,"x":{"a":1}}',
              '{"type":"A","ts":true}', "", "   ", '{"type":"A","ts":2,"id":[1]}', "\ufeff{}", '{"type":5,"ts":0}',
              # hostile values (issue 15): lists/objects as keys, empty and null keys, NaN literals, huge numbers
              '{"type":"A","ts":3,"k":[1],"x":1}', '{"type":"A","ts":3,"k":{"a":1},"x":1}', '{"type":"A","ts":3,"k":"","x":1}',
              '{"type":"A","ts":3,"k":null,"x":1}', '{"type":"A","ts":3,"k":1,"x":NaN}', '{"type":"A","ts":3,"k":1,"x":-Infinity}',
              '{"type":"A","ts":3,"k":1,"x":%s}' % ("9" * 4301), '{"type":"A","ts":1e400,"k":1,"x":1e400}',
              '{"type":"A","ts":%s,"k":1,"x":2}' % ("1" * 400), '{"type":"A","ts":4,"k":1,"x":""}']
# a JSON-lines file's text: lines from the list above and arbitrary ones (surrogates too)
JSON_LINES_TEXT = st.lists(st.one_of(st.sampled_from(JSON_LINES), st.text(max_size=20)), max_size=10).map(
    lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass")
)


def check(path: str, fmt: str, skip: bool, **spec: Any) -> None:
    options: dict[str, Any] = {"type_field": "type", "time_field": "ts"} | spec
    source = open_events(InputSpec(path, format=fmt, on_error="skip" if skip else "fail", **options))
    try:
        events = list(source)
    except EventError as e:
        assert not skip or e.row is None  # skip mode only stops for the input as a whole
        assert e.file == path
        return
    except PetricepError:
        return
    if skip:
        assert len(events) + source.rows_rejected == source.rows_read


def run(data: bytes, suffix: str, fmt: str, skip: bool, **spec: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / f"fuzz{suffix}")
        Path(path).write_bytes(data)
        with contextlib.suppress(PetricepError):  # raised at open: a missing column, an unreadable file
            check(path, fmt, skip, **spec)


@st.composite
def csv_text(draw: st.DrawFn) -> str:
    header = draw(st.sampled_from(HEADERS))
    rows = draw(st.lists(st.lists(st.sampled_from(CELLS), max_size=6), max_size=8))
    sep = draw(st.sampled_from([",", ",", ";", "\t"]))
    end = draw(st.sampled_from(["\n", "\r\n", "\r", ""]))
    return end.join([header] + [sep.join(r) for r in rows]) + draw(st.sampled_from(["", "\n"]))


@FUZZ
@given(csv_text(), st.booleans(), st.booleans(), st.sampled_from(["", ".gz"]))
def test_malformed_csv(text: str, skip: bool, with_id: bool, compression: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    if compression:
        data = gzip.compress(data)
    run(
        data,
        ".csv" + compression,
        "csv",
        skip,
        id_field="id" if with_id else None,
        numeric={"*": frozenset({"x"})},
        required={"A": frozenset({"k"})} if "k" in text.split("\n", 1)[0] else {},
    )


@FUZZ
@given(JSON_LINES_TEXT, st.booleans())
def test_malformed_json_lines(data: bytes, skip: bool) -> None:
    run(
        data,
        ".jsonl",
        "jsonl",
        skip,
        required={"A": frozenset({"x", "k"})},
        numeric={"A": frozenset({"x"})},
    )


@FUZZ
@given(st.binary(max_size=200), st.sampled_from([("csv", ".csv"), ("jsonl", ".jsonl"), ("parquet", ".parquet"), ("csv", ".csv.gz")]))
def test_arbitrary_bytes(data: bytes, kind: tuple[str, str]) -> None:
    fmt, suffix = kind
    for skip in (False, True):
        run(data, suffix, fmt, skip)


TABLE_CELLS = [None, "", "A", "1", 1, 2.5, math.nan, math.inf, -math.inf, 10**400, [1], {"a": 1}, True, "9" * 500]


def check_table(table: Any, skip: bool) -> None:
    spec = InputSpec(
        "t",
        type_field="type",
        time_field="ts",
        on_error="skip" if skip else "fail",
        required={"A": frozenset({"k"})},
        numeric={"A": frozenset({"x"})},
    )
    try:
        source = events_from_table(table, spec)
        events = list(source)
    except EventError as e:
        assert not skip or e.row is None
        return
    except PetricepError:
        return
    if skip:
        assert len(events) + source.rows_rejected == source.rows_read == len(table)
    for ev in (e for e in events if e.type == "A"):  # what an accepted event holds (docs/INPUT.md)
        assert ev.attrs["k"] is not None and not isinstance(ev.attrs["k"], (list, dict))
        assert is_number(ev.attrs["x"])


@settings(FUZZ, max_examples=max(1, FUZZ.max_examples // 4))
@given(
    st.lists(
        st.tuples(st.sampled_from(["A", "B", "", None]), st.sampled_from(TABLE_CELLS), st.sampled_from(TABLE_CELLS)),
        max_size=8,
    ),
    st.booleans(),
)
def test_hostile_tables(rows: list[tuple[Any, Any, Any]], skip: bool) -> None:
    """DataFrames of hostile cells (object columns: read row by row) and, where Arrow can
    type them, the same as Arrow tables and Parquet-like typed columns."""
    frame = pd.DataFrame(
        {
            "type": pd.Series([r[0] for r in rows], dtype=object),
            "ts": list(range(len(rows))),
            "k": pd.Series([r[1] for r in rows], dtype=object),
            "x": pd.Series([r[2] for r in rows], dtype=object),
        }
    )
    check_table(frame, skip)
    with contextlib.suppress(pa.ArrowException, TypeError, ValueError, OverflowError):
        table = pa.Table.from_pandas(frame, preserve_index=False)
        check_table(table, skip)
