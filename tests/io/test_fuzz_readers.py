"""Fuzzing the event readers: thousands of malformed CSV, JSON Lines and Parquet inputs, each
ending in events or a typed petricep error (never another exception); in skip mode every
row is either an event or a counted rejection, so nothing is lost.

``PETRICEP_FUZZ`` sets the number of examples per test (default 1000).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from petricep.errors import EventError, PetricepError
from petricep.io import InputSpec, open_events

FUZZ = settings(
    max_examples=int(os.environ.get("PETRICEP_FUZZ", "1000")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)

CELLS = ["A", "B", "1", "2.5", "-3", "1e400", "nan", "", " ", '"', '""', '"a,b"', "x\ty", "2014-08-01T07:50:00",
         "201402010930", "2014-13-45", "null", "true", "\r", "é", "\x00", ",", "'q'", "0x10", "1_000"]
HEADERS = ["type,ts,id,x", "type,ts,x", "ts,type", "type;ts;x", "", "type,ts,ts", "type,,x", "\ufefftype,ts,x"]
JSON_LINES = ['{"type":"A","ts":1,"x":2}', '{"type":"B","ts":"1","x":"y"}', '{"type":null,"ts":1}', "[1,2]", "{",
              '{"type":"A","ts":1e999}', '{"type":"A"}', "null", '"str"', '{"type":"A","ts":-1,"x":{"a":1}}',
              '{"type":"A","ts":true}', "", "   ", '{"type":"A","ts":2,"id":[1]}', "\ufeff{}", '{"type":5,"ts":0}']


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
    run(data, ".csv" + compression, "csv", skip, id_field="id" if with_id else None, numeric={"*": frozenset({"x"})})


@FUZZ
@given(st.lists(st.one_of(st.sampled_from(JSON_LINES), st.text(max_size=20)), max_size=10), st.booleans())
def test_malformed_json_lines(lines: list[str], skip: bool) -> None:
    run("\n".join(lines).encode("utf-8", "surrogatepass"), ".jsonl", "jsonl", skip, required={"A": frozenset({"x"})})


@FUZZ
@given(st.binary(max_size=200), st.sampled_from([("csv", ".csv"), ("jsonl", ".jsonl"), ("parquet", ".parquet"), ("csv", ".csv.gz")]))
def test_arbitrary_bytes(data: bytes, kind: tuple[str, str]) -> None:
    fmt, suffix = kind
    for skip in (False, True):
        run(data, suffix, fmt, skip)
