"""Text in memory (:func:`~petricep.io.readers.events_from_text`, what Spark's parse stage
reads each run of a file's lines with) reads exactly as :func:`open_events` reads a file
holding the same bytes: the same events (as events and as checked column batches), the
same counts, the same error (message, row, field) or rejections. The file is read by
Arrow's streaming reader, the text by the chunked reader alone, so this is also the claim
that the two read alike."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from petricep.errors import ConfigError, EventError, PetricepError
from petricep.events import EventColumns
from petricep.io import InputSpec, open_events
from petricep.io import textfiles as textfiles_mod
from petricep.io.readers import events_from_text
from petricep.io.source import EventSource
from tests.io.test_fuzz_readers import FUZZ, JSON_LINES_TEXT, csv_text


def outcome(open_source: Any, as_columns: bool) -> tuple[Any, ...]:
    """What reading gives: the events (those of column batches too: where batches end may
    differ, a last line without its newline is a chunk of its own) and the counts, or the
    error it stops at."""
    try:
        source: EventSource = open_source()
        events: list[str] = []
        for item in source.items(as_columns=as_columns):
            if isinstance(item, EventColumns):
                events.extend(repr(item.event(k)) for k in range(len(item)))
            else:
                events.append(repr(item))
        return ("ok", events, source.rows_read, source.rows_rejected, source.time_kind)
    except EventError as e:
        return ("error", e.message, e.file, e.row, e.field)
    except PetricepError as e:
        return ("refused", type(e).__name__, str(e))


def same(data: bytes, fmt: str, **spec: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / f"in.{fmt}")
        Path(path).write_bytes(data)
        spec_ = InputSpec(path, format=fmt, **spec)
        for as_columns in (False, True):
            want = outcome(lambda: open_events(spec_), as_columns)
            got = outcome(lambda: events_from_text(data, spec_), as_columns)
            assert got == want


X_CELLS = ["1", "2.5", "-3", "", "abc", '"q,t"', '"a""b"', "\r", "é", "1e400", "nan", '"open', "7,8"]


@st.composite
def good_csv(draw: st.DrawFn) -> str:
    """Mostly good rows (whole batches are checked as columns), with now and then a blank
    line, a quoted or bad cell, a short row, a time out of order, a CRLF."""
    header = draw(st.sampled_from(["type,ts,id,x", "\ufefftype,ts,id,x"]))
    lines = [header]
    ts = 0
    for i in range(draw(st.integers(0, 40))):
        ts += draw(st.sampled_from([0, 1, 1, 2, -1])) if draw(st.integers(0, 9)) == 0 else 1
        x = draw(st.sampled_from(X_CELLS)) if draw(st.integers(0, 5)) == 0 else str(i)
        t = draw(st.sampled_from(["A", "B", ""])) if draw(st.integers(0, 9)) == 0 else "A"
        lines.append(f"{t},{ts},{100 + i},{x}")
        if draw(st.integers(0, 19)) == 0:
            lines.append(draw(st.sampled_from(["", "\r", " "])))
    end = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    return end.join(lines) + draw(st.sampled_from(["", end]))


@FUZZ
@given(st.one_of(good_csv(), csv_text()), st.booleans(), st.booleans(), st.booleans())
def test_csv_text_reads_as_its_file(text: str, skip: bool, with_id: bool, small: bool) -> None:
    data = text.encode("utf-8", "surrogatepass")
    with pytest.MonkeyPatch.context() as m:
        if small:  # many chunks (the chunked reader's own seams)
            m.setattr(textfiles_mod, "_CHUNK", 64)
        same(
            data,
            "csv",
            type_field="type",
            time_field="ts",
            id_field="id" if with_id else None,
            on_error="skip" if skip else "fail",
            numeric={"*": frozenset({"x"})},
        )


@FUZZ
@given(JSON_LINES_TEXT, st.booleans())
def test_json_lines_text_reads_as_its_file(data: bytes, skip: bool) -> None:
    same(
        data,
        "jsonl",
        type_field="type",
        time_field="ts",
        on_error="skip" if skip else "fail",
        required={"A": frozenset({"x", "k"})},
    )


def test_text_with_a_bom_header_and_crlf() -> None:
    data = "\ufefftype,ts,x\r\nA,1,2\r\n\r\nB,2,x\r\n".encode()
    source = events_from_text(data, InputSpec("part-7.csv", format="csv", type_field="type", time_field="ts"))
    assert [(e.type, e.ts, e.pos, e.attrs) for e in source] == [
        ("A", 1, 0, {"type": "A", "ts": 1, "x": 2}),
        ("B", 2, 1, {"type": "B", "ts": 2, "x": "x"}),
    ]
    same(data, "csv", type_field="type", time_field="ts")


def test_an_error_names_the_label_and_the_texts_line() -> None:
    data = b"type,ts,x\nA,1,2\nA,x,3\n"
    with pytest.raises(EventError) as info:
        list(events_from_text(data, InputSpec("big.csv", format="csv", type_field="type", time_field="ts")))
    assert (info.value.file, info.value.row, info.value.field) == ("big.csv", 3, "ts")


def test_text_in_memory_is_csv_or_json_lines() -> None:
    with pytest.raises(ConfigError, match="text in memory is CSV or JSON Lines, not 'parquet'"):
        events_from_text(b"", InputSpec("x.parquet", format="parquet"))
    with pytest.raises(ConfigError, match="not None"):
        events_from_text(b"a\n", InputSpec("x.csv"))
