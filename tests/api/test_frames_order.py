"""A table is not a stream: a DataFrame or Arrow table out of time order is matched sorted by
time (a stable sort: rows with equal times keep their order), and the run's report says so;
files and Spark's batches keep stream semantics (a row back in time is an error)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from petricep.api import summary_lines
from petricep.api.frames import load, match, run_matches
from petricep.api.runner import Run
from petricep.errors import EventOrderError
from petricep.io import InputSpec, events_from_table

# monthly prices of three symbols, sorted by symbol (the newcomer's table), not by date
MONTHS = ["2000-01-01", "2000-02-01", "2000-03-01", "2000-04-01"]
PRICES = {"AAA": [10, 12, 11, 13], "BBB": [50, 49, 51, 52], "CCC": [7, 7, 8, 6]}
BY_SYMBOL = pd.DataFrame(
    [{"symbol": s, "date": d, "price": p} for s, ps in PRICES.items() for d, p in zip(MONTHS, ps, strict=True)]
)
BY_DATE = BY_SYMBOL.sort_values("date", kind="stable").reset_index(drop=True)
UP = "PATTERN up: SEQ(stock a, stock b) WHERE [symbol] AND b.price > a.price WITHIN 40 d"
OPTS: dict[str, Any] = {"type": "stock", "time_field": "date"}
NOTE = (
    "the table was not in time order: its 12 rows were sorted by 'date' (10 moved; rows with equal times keep "
    "their order), then matched; errors name the table's rows, match ids without an id column count the rows "
    "in time order"
)


def matched(run: Any) -> list[dict[str, Any]]:
    return [m.to_dict() for m in run.matches]


@pytest.mark.parametrize("engine", ["kernel", "python"])
def test_a_table_sorted_by_key_matches_as_its_rows_in_time_order(engine: str) -> None:
    want = [
        {"pattern": "up", "ids": {"a": 0, "b": 3}, "start": 946684800, "end": 949363200, "attrs": {}},
        {"pattern": "up", "ids": {"a": 4, "b": 7}, "start": 949363200, "end": 951868800, "attrs": {}},
        {"pattern": "up", "ids": {"a": 5, "b": 8}, "start": 949363200, "end": 951868800, "attrs": {}},
        {"pattern": "up", "ids": {"a": 6, "b": 9}, "start": 951868800, "end": 954547200, "attrs": {}},
        {"pattern": "up", "ids": {"a": 7, "b": 10}, "start": 951868800, "end": 954547200, "attrs": {}},
    ]
    in_order = run_matches(BY_DATE, UP, engine=engine, **OPTS)
    assert matched(in_order) == want
    assert "sorted" not in in_order.report
    for table in (BY_SYMBOL, pa.Table.from_pandas(BY_SYMBOL)):
        run = run_matches(table, UP, engine=engine, **OPTS)
        assert matched(run) == want
        assert run.report["sorted"] == {"rows": 12, "moved": 10, "by": "date", "note": NOTE}
        assert run.report["events"]["read"] == 12


def test_match_tables_of_a_key_sorted_table_are_those_of_the_table_in_time_order() -> None:
    keyed = BY_SYMBOL.assign(id=[f"{s}:{d[5:7]}" for s, d in zip(BY_SYMBOL["symbol"], BY_SYMBOL["date"], strict=True)])
    timed = keyed.sort_values("date", kind="stable").reset_index(drop=True)
    got = match(keyed, UP, id_field="id", **OPTS)
    assert got.to_dict("records") == match(timed, UP, id_field="id", **OPTS).to_dict("records")
    assert list(zip(got["a"], got["b"], strict=True)) == [
        ("AAA:01", "AAA:02"), ("BBB:02", "BBB:03"), ("CCC:02", "CCC:03"), ("AAA:03", "AAA:04"), ("BBB:03", "BBB:04")
    ]


@pytest.mark.parametrize("engine", ["kernel", "python"])
def test_equal_times_keep_their_row_order(engine: str) -> None:
    pattern = "PATTERN ab: SEQ(A a, B b) WITHIN 5"
    first = pd.DataFrame({"type": ["B", "A", "B"], "ts": [2, 1, 1]})  # read: A@1, B@1, B@2
    assert match(first, pattern, type_field="type", time_field="ts", engine=engine).to_dict("records") == [
        {"pattern": "ab", "a": 0, "b": 1, "start": 1, "end": 1},
        {"pattern": "ab", "a": 0, "b": 2, "start": 1, "end": 2},
    ]
    second = pd.DataFrame({"type": ["B", "B", "A"], "ts": [2, 1, 1]})  # read: B@1, A@1, B@2
    assert match(second, pattern, type_field="type", time_field="ts", engine=engine).to_dict("records") == [
        {"pattern": "ab", "a": 1, "b": 2, "start": 1, "end": 2},
    ]


def test_a_row_that_is_no_timestamp_is_its_rows_error_in_skip_mode_too() -> None:
    df = pd.DataFrame({"type": ["B", "x", "A", "B"], "ts": ["3", "soon", "1", "2"]})
    run = run_matches(df, "PATTERN SEQ(A a, B b) WITHIN 5", type_field="type", time_field="ts", on_error="skip")
    assert matched(run) == [
        {"pattern": "pattern", "ids": {"a": 0, "b": 1}, "start": 1, "end": 2, "attrs": {}},
        {"pattern": "pattern", "ids": {"a": 0, "b": 2}, "start": 1, "end": 3, "attrs": {}},
    ]
    assert (run.report["events"]["rejected"], run.report["sorted"]["moved"]) == (1, 4)


def test_a_library_run_over_a_sorted_table_reports_it() -> None:
    files, net = load(UP)
    spec = InputSpec("stocks", type_const="stock", time_field="date")
    run = Run(net, spec, source=events_from_table(BY_SYMBOL, spec))
    assert [m.to_dict()["ids"] for m in run][:2] == [{"a": 0, "b": 3}, {"a": 4, "b": 7}]
    report = run.report()
    assert report["sorted"]["note"] == NOTE
    assert f"  {NOTE}" in summary_lines(report, 1.0)


def test_files_and_batches_keep_stream_semantics(tmp_path: Path) -> None:
    path = tmp_path / "ev.csv"
    BY_SYMBOL.to_csv(path, index=False)
    with pytest.raises(EventOrderError):
        match(path, UP, **OPTS)
    spec = InputSpec("batch", type_const="stock", time_field="date")
    with pytest.raises(EventOrderError):
        list(events_from_table(BY_SYMBOL, spec, sort_by_time=False))
    # with a slack the rows are events arriving late or not, as a stream's
    late = run_matches(BY_SYMBOL, UP, slack="1d", **OPTS)
    assert ("sorted" in late.report, late.report["events"]["late"]) == (False, 6)
