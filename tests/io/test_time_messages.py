"""Errors name date-times as the input wrote them (the text as written, an Arrow or pandas
date-time in ISO form), never as the epoch seconds petricep computes; numbers stay numbers."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from petricep.errors import EventOrderError
from petricep.io import InputSpec, events_from_table, open_events
from petricep.io.tables import BATCH_ROWS

TAIL = " (input must be in time order)"


def order_error(source: Any) -> str:
    with pytest.raises(EventOrderError) as e:
        for _ in source.items(as_columns=True):
            pass
    return str(e.value)


@pytest.mark.parametrize(
    "name,text,options,want",
    [
        ("iso.csv", "type,ts\nA,2000-02-01\nB,2000-01-01\n", {},
         "iso.csv:3: field 'ts': error: timestamp 2000-01-01 is before the previous event's 2000-02-01"),
        ("fmt.csv", "type,ts\nA,01/02/2000 10:00\nB,01/01/2000 10:00\n", {"time_format": "%d/%m/%Y %H:%M"},
         "fmt.csv:3: field 'ts': error: timestamp 01/01/2000 10:00 is before the previous event's 01/02/2000 10:00"),
        ("zone.jsonl", '{"type": "A", "ts": "2000-02-01T10:00:00Z"}\n{"type": "B", "ts": "2000-02-01T09:59:59.5Z"}\n', {},
         "zone.jsonl:2: field 'ts': error: timestamp 2000-02-01T09:59:59.5Z is before the previous event's "
         "2000-02-01T10:00:00Z"),
        ("num.csv", "type,ts\nA,5\nB,3.5\n", {},
         "num.csv:3: field 'ts': error: timestamp 3.5 is before the previous event's 5"),
    ],
)
def test_a_file_back_in_time_names_its_times_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str, options: dict[str, Any], want: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path(name).write_text(text)
    assert order_error(open_events(InputSpec(name, type_field="type", time_field="ts", **options))) == want + TAIL


def test_arrow_and_pandas_date_times_are_named_in_iso_form() -> None:
    spec = InputSpec("t", type_field="type", time_field="ts")
    df = pd.DataFrame({"type": ["A", "B", "B"], "ts": pd.to_datetime(["2000-01-01 00:00", "2000-02-01 08:30", "2000-01-15 00:00"])})
    assert order_error(events_from_table(df, spec, sort_by_time=False)) == (
        "t:2: field 'ts': error: timestamp 2000-01-15T00:00:00 is before the previous event's 2000-02-01T08:30:00" + TAIL
    )
    zoned = pa.table({"type": ["A", "B"], "ts": pa.array([60_000_000, 0], pa.timestamp("us", "UTC"))})
    assert order_error(events_from_table(zoned, spec, sort_by_time=False)) == (
        "t:1: field 'ts': error: timestamp 1970-01-01T00:00:00+00:00 is before the previous event's "
        "1970-01-01T00:01:00+00:00" + TAIL
    )


def test_the_previous_event_of_a_batch_checked_whole_is_named_as_written() -> None:
    """The row back in time opens a batch: the previous event is the last of a batch the
    reader checked as columns, its time taken from the column."""
    n = BATCH_ROWS + 10
    base = dt.datetime(2000, 1, 1)
    stamps = [(base + dt.timedelta(seconds=i)).isoformat(sep=" ") for i in range(n)]
    stamps[BATCH_ROWS] = "2000-01-01 00:00:00"
    table = pa.table({"type": ["A"] * n, "ts": stamps})
    assert order_error(events_from_table(table, InputSpec("t", type_field="type", time_field="ts"), sort_by_time=False)) == (
        f"t:{BATCH_ROWS}: field 'ts': error: timestamp 2000-01-01 00:00:00 is before the previous event's "
        "2000-01-01 18:12:15" + TAIL
    )
