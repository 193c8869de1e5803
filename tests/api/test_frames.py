"""``petricep.match``: DataFrames / Arrow / paths in, the CLI's matches out as tables."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

import petricep
from petricep.api.frames import match, run_matches
from petricep.errors import ConfigError, EventError, PatternError, PetricepWarning
from petricep.runtime.engine import Match

from .helpers import ROOT, STOCKS, cli_run, flat_rows

EQUAL_PRICE = ROOT / "nets/sase_equal_price.pcep"
V_SHAPE = ROOT / "nets/stock_v_shape.sql"
RISE = """\
PATTERN rise: SEQ(stock a, stock+ b[], stock c)
WHERE skip-till-next-match AND [symbol]
AND b[1].price > a.price AND b[i].price > b[i-1].price AND c.price < b[last].price
WITHIN 8
RETURN Rise(symbol = a.symbol, n = count(b[]), top = max(b[].price))

PATTERN two_rises: SEQ(Rise r1, Rise r2)
WHERE [symbol] AND r2.top > r1.top
WITHIN 20
RETURN Pair(symbol = r1.symbol, n = r1.n + r2.n)
"""


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of a DataFrame with pandas' missing values as None (NA does not compare)."""
    return [{k: (None if v is pd.NA else v) for k, v in r.items()} for r in df.to_dict("records")]


@pytest.fixture(scope="module")
def stocks() -> pd.DataFrame:
    return pd.read_csv(STOCKS)


@pytest.fixture(scope="module")
def head_csv(tmp_path_factory: pytest.TempPathFactory, stocks: pd.DataFrame) -> Path:
    p = tmp_path_factory.mktemp("head") / "stocks_head.csv"
    stocks.iloc[:3000].to_csv(p, index=False)
    return p


def test_pandas_round_trip_equals_cli_on_equal_price(stocks: pd.DataFrame, cli_equal_price: bytes) -> None:
    got = match(stocks, EQUAL_PRICE, type_field="type", time_field="ts", id_field="id")
    cli = cli_equal_price
    assert isinstance(got, pd.DataFrame)
    assert list(got.columns) == ["pattern", "a", "b", "c", "start", "end"]
    assert [str(t) for t in got.dtypes] == ["object", "int64", "int64", "int64", "int64", "int64"]
    assert records(got) == flat_rows(cli, ["a", "b", "c"])
    assert len(got) == 6525
    assert records(got.iloc[:1]) == [{"pattern": "sase_equal_price", "a": 18, "b": 119, "c": 141, "start": 18, "end": 141}]


def test_the_kernel_gives_the_same_frame(stocks: pd.DataFrame) -> None:
    """The default engine (``engine="kernel"``): the compiled kernel behind the same Run as
    petricep run; the table of ``engine="python"``, row for row (a pattern it does not cover
    runs on the Python engine, and so do Match objects, whose bindings only it keeps)."""
    opts: dict[str, Any] = {"type_field": "type", "time_field": "ts", "id_field": "id"}
    got = match(stocks, EQUAL_PRICE, **opts)
    assert records(got) == records(match(stocks, EQUAL_PRICE, engine="python", **opts)) and len(got) == 6525
    assert records(match(stocks, EQUAL_PRICE, engine="kernel", **opts)) == records(got)
    run = run_matches(stocks, EQUAL_PRICE, **opts)
    if petricep.kernel.available():
        assert run.report["engine"] == {"name": "kernel", "why": "covered"}
    assert run_matches(stocks, EQUAL_PRICE, engine="python", **opts).report["engine"] == {"name": "python", "why": "asked for"}
    kleene = "PATTERN k: SEQ(stock1 a, stock2+ b[]) WHERE [price] WITHIN 50 RETURN K(n = count(b[]))"
    if petricep.kernel.available():  # (RETURN under either: the kernel's, with the Python engine's table)
        assert run_matches(stocks.iloc[:500], kleene, tie="either", **opts).report["engine"]["name"] == "kernel"
    assert records(match(stocks.iloc[:500], kleene, tie="either", **opts)) == records(
        match(stocks.iloc[:500], kleene, tie="either", engine="python", **opts))
    objs = match(stocks.iloc[:300], EQUAL_PRICE, as_objects=True, **opts)
    assert objs and all(set(m.bindings()) == {"a", "b", "c"} for m in objs)
    assert objs[0].bindings()["a"].id == objs[0].ids["a"]
    with pytest.raises(ConfigError) as err:
        match(stocks, EQUAL_PRICE, engine="fast", **opts)
    assert str(err.value) == "engine must be one of 'kernel', 'python', not 'fast'"


def test_pandas_round_trip_kleene_return_composite(tmp_path: Path, stocks: pd.DataFrame, head_csv: Path) -> None:
    pat = tmp_path / "rise.pcep"
    pat.write_text(RISE)
    got = match(stocks.iloc[:3000], pat, type="stock", time_field="ts", id_field="id")
    cli = cli_run(tmp_path, [pat], head_csv, "--type", "stock", "--time-field", "ts", "--id-field", "id")
    # a RETURN field of two patterns is prefixed with the pattern's name; one of one is not
    fields = {("rise", "symbol"): "rise.symbol", ("rise", "n"): "rise.n", ("rise", "top"): "top",
              ("two_rises", "symbol"): "two_rises.symbol", ("two_rises", "n"): "two_rises.n"}
    assert list(got.columns) == ["pattern", "a", "b", "c", "r1", "r2", "start", "end",
                                 "rise.symbol", "rise.n", "top", "two_rises.symbol", "two_rises.n"]
    assert records(got) == flat_rows(cli, ["a", "b", "c", "r1", "r2"], {"b"}, fields)
    assert str(got["a"].dtype) == "Int64" and str(got["r1"].dtype) == "object"
    assert got["b"].map(type).eq(list).sum() == (got["pattern"] == "rise").sum()
    assert any(len(b) > 1 for b in got["b"] if isinstance(b, list))
    assert (got["pattern"] == "two_rises").sum() > 0


def test_arrow_in_arrow_out_sql_equals_cli(stocks: pd.DataFrame, cli_v_shape: bytes) -> None:
    table = pa.Table.from_pandas(stocks.iloc[:5000], preserve_index=False)
    got = match(table, V_SHAPE, type="stock", time_field="ts", id_field="id")
    cli = cli_v_shape
    assert isinstance(got, pa.Table)
    assert got.schema == pa.schema([
        ("pattern", pa.string()), ("STRT", pa.int64()), ("DOWN", pa.list_(pa.int64())), ("UP", pa.list_(pa.int64())),
        ("start", pa.int64()), ("end", pa.int64()), ("symbol", pa.string()), ("top", pa.int64()),
        ("bottom", pa.int64()), ("recovered", pa.int64()), ("falling", pa.int64()),
    ])
    assert got.to_pylist() == flat_rows(cli, ["STRT", "DOWN", "UP"], {"DOWN", "UP"})
    # record batches, and a list of them, are the same input
    batches = table.to_batches(max_chunksize=1500)
    assert match(batches, V_SHAPE, type="stock", time_field="ts", id_field="id").equals(got)
    assert match(pa.RecordBatchReader.from_batches(table.schema, batches), V_SHAPE, type="stock",
                 time_field="ts", id_field="id").equals(got)


def test_path_in_gives_arrow_and_as_objects_gives_the_engines_matches(cli_equal_price: bytes) -> None:
    got = match(str(STOCKS), EQUAL_PRICE, type_field="type", time_field="ts", id_field="id")
    assert isinstance(got, pa.Table)
    assert got.to_pylist() == flat_rows(cli_equal_price, ["a", "b", "c"])
    objs = match(STOCKS, str(EQUAL_PRICE), type_field="type", time_field="ts", id_field="id", as_objects=True)
    assert all(isinstance(m, Match) for m in objs)
    assert [m.to_dict() for m in objs] == [json.loads(x) for x in cli_equal_price.decode().splitlines()]


def test_polars_in_polars_out(stocks: pd.DataFrame) -> None:
    pl = pytest.importorskip("polars")
    got = match(pl.from_pandas(stocks.iloc[:2000]), V_SHAPE, type="stock", time_field="ts", id_field="id")
    want = match(stocks.iloc[:2000], V_SHAPE, type="stock", time_field="ts", id_field="id")
    assert isinstance(got, pl.DataFrame)
    assert got.columns == list(want.columns)
    assert got.to_dicts() == records(want)
    assert got.schema["DOWN"] == pl.List(pl.Int64)


def test_datetime_time_column_gives_timestamps() -> None:
    iso = ["2014-08-01T07:50:00", "2014-08-01T07:50:30.5", "2014-08-01T07:52:00", "2014-08-01T07:52:10"]
    df = pd.DataFrame({"type": ["A", "B", "A", "B"], "ts": iso, "k": [1, 1, 1, 1]})
    pattern = "PATTERN ab: SEQ(A a, B b) WHERE [k] WITHIN 1 min"
    text = match(df, pattern, type_field="type", time_field="ts")
    assert str(text["start"].dtype) == "datetime64[us]"
    assert records(text) == [
        {"pattern": "ab", "a": 0, "b": 1, "start": pd.Timestamp("2014-08-01 07:50:00"), "end": pd.Timestamp("2014-08-01 07:50:30.5")},
        {"pattern": "ab", "a": 2, "b": 3, "start": pd.Timestamp("2014-08-01 07:52:00"), "end": pd.Timestamp("2014-08-01 07:52:10")},
    ]
    # a datetime64 column: the same matches, start/end in the column's own type and zone
    typed = df.assign(ts=pd.to_datetime(df["ts"], format="ISO8601").dt.tz_localize("Europe/Copenhagen"))
    got = match(typed, pattern, type_field="type", time_field="ts")
    assert str(got["start"].dtype) == "datetime64[ns, Europe/Copenhagen]"
    assert list(got["end"]) == list(typed["ts"].iloc[[1, 3]])
    arrow = match(pa.Table.from_pandas(typed), pattern, type_field="type", time_field="ts")
    assert arrow.schema.field("start").type == pa.timestamp("ns", tz="Europe/Copenhagen")
    # numbers stay numbers
    nums = match(df.assign(ts=[0, 30, 120, 130]), "PATTERN ab: SEQ(A a, B b) WITHIN 60", type_field="type", time_field="ts")
    assert records(nums) == [{"pattern": "ab", "a": 0, "b": 1, "start": 0, "end": 30},
                             {"pattern": "ab", "a": 2, "b": 3, "start": 120, "end": 130}]


def test_with_events_structs_per_variable_and_lists_for_kleene() -> None:
    df = pd.DataFrame({
        "id": [10, 11, 12, 13],
        "type": ["A", "B", "B", "C"],
        "ts": [1, 2, 3, 4],
        "x": [5, 6, 7, 1],
        "tag": ["p", "q", "r", "s"],
    })
    got = match(df, "PATTERN k: SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x WITHIN 10 RETURN K(n = count(b[]))",
                type_field="type", time_field="ts", id_field="id", with_events=True)
    rows = records(got)
    assert [r["b"] for r in rows] == [[11, 12], [11], [12]]
    assert rows[0]["events.a"] == {"id": 10, "type": "A", "ts": 1, "x": 5, "tag": "p"}
    assert rows[0]["events.b"] == [{"id": 11, "type": "B", "ts": 2, "x": 6, "tag": "q"},
                                   {"id": 12, "type": "B", "ts": 3, "x": 7, "tag": "r"}]
    assert rows[2]["events.c"] == {"id": 13, "type": "C", "ts": 4, "x": 1, "tag": "s"}
    assert [r["n"] for r in rows] == [2, 1, 1]
    # SQL matches carry ids only: their events are found by id
    sql = match(df, "SELECT * FROM e MATCH_RECOGNIZE (ORDER BY ts MEASURES COUNT(U.*) AS ups "
                "PATTERN (S U+) DEFINE U AS U.x > PREV(U.x)) AS up",
                type="e", time_field="ts", id_field="id", with_events=True)
    assert records(sql)[0]["events.U"] == [{"id": 11, "type": "B", "ts": 2, "x": 6, "tag": "q"},
                                           {"id": 12, "type": "B", "ts": 3, "x": 7, "tag": "r"}]
    assert records(sql)[0]["events.S"]["id"] == 10


def test_shared_variable_names_share_a_column_and_timeouts_are_marked() -> None:
    df = pd.DataFrame({"type": ["A", "B", "A", "C", "A"], "ts": [0, 1, 2, 3, 30], "k": [1] * 5})
    got = match(df, [
        "PATTERN p: SEQ(A a, B b) WITHIN 5 ON TIMEOUT RETURN Lost(k = a.k)",
        "PATTERN q: SEQ(A a, C c) WITHIN 5 RETURN Done(k = a.k)",
    ], type_field="type", time_field="ts")
    assert list(got.columns) == ["pattern", "a", "b", "c", "start", "end", "timeout", "deadline", "p.k", "q.k"]
    assert records(got) == [
        {"pattern": "p", "a": 0, "b": 1, "c": None, "start": 0, "end": 1, "timeout": None, "deadline": None, "p.k": None, "q.k": None},
        {"pattern": "q", "a": 0, "b": None, "c": 3, "start": 0, "end": 3, "timeout": None, "deadline": None, "p.k": None, "q.k": 1},
        {"pattern": "q", "a": 2, "b": None, "c": 3, "start": 2, "end": 3, "timeout": None, "deadline": None, "p.k": None, "q.k": 1},
        {"pattern": "p", "a": 2, "b": None, "c": None, "start": 2, "end": 2, "timeout": "Lost", "deadline": 7, "p.k": 1, "q.k": None},
        {"pattern": "p", "a": 4, "b": None, "c": None, "start": 30, "end": 30, "timeout": "Lost", "deadline": 35, "p.k": 1, "q.k": None},
    ]


def test_texts_in_a_list_are_named_by_position() -> None:
    df = pd.DataFrame({"type": ["A", "B"], "ts": [0, 1]})
    got = match(df, ["PATTERN SEQ(A a, B b) WITHIN 5", "PATTERN SEQ(B x) WITHIN 5"], type_field="type", time_field="ts")
    assert list(got["pattern"]) == ["pattern_1", "pattern_2"]
    assert list(match(df, "PATTERN SEQ(A a, B b) WITHIN 5", type_field="type", time_field="ts")["pattern"]) == ["pattern"]


def test_no_match_still_has_the_columns() -> None:
    df = pd.DataFrame({"type": ["A"], "ts": [0]})
    with pytest.warns(PetricepWarning, match=r"^pattern 'p': no event of type 'B' was read \(types seen: A\)$"):
        got = match(pa.Table.from_pandas(df), "PATTERN p: SEQ(A a, B+ b[]) WITHIN 5", type_field="type", time_field="ts")
    assert got.num_rows == 0
    assert got.schema.names == ["pattern", "a", "b", "start", "end"]
    assert got.schema.field("b").type == pa.list_(pa.int64())


def test_slack_and_skipped_rows() -> None:
    df = pd.DataFrame({"type": ["A", "B", "A", "B"], "ts": [2, 1, "x", 5]})
    # a table out of time order is read sorted by time (tests/api/test_frames_order.py); with a slack, as it is
    got = match(df.iloc[[0, 1, 3]], "PATTERN SEQ(A a, B b) WITHIN 10", type_field="type", time_field="ts")
    assert records(got) == [{"pattern": "pattern", "a": 1, "b": 2, "start": 2, "end": 5}]
    got = match(df, "PATTERN SEQ(A a, B b) WITHIN 10", type_field="type", time_field="ts", slack="2s", on_error="skip")
    assert records(got) == [{"pattern": "pattern", "a": 0, "b": 3, "start": 2, "end": 5}]


def test_errors_name_dataframe_row_and_column() -> None:
    df = pd.DataFrame({"type": ["A", "B"], "ts": [1, "x"], "v": [1, 2]})
    with pytest.raises(EventError) as e:
        match(df, "PATTERN SEQ(A a, B b) WITHIN 5", type_field="type", time_field="ts")
    assert str(e.value) == "DataFrame row 1, column 'ts': error: cannot parse timestamp 'x'"
    assert (e.value.file, e.value.row, e.value.field) == ("DataFrame", 1, "ts")
    with pytest.raises(EventError) as o:  # read sorted by time: the error names the table's row
        match(pd.DataFrame({"type": [None, "A", "B"], "ts": [3, 1, 2], "label": ["u", "v", "w"]}).set_index("label"),
              "PATTERN SEQ(A a, B b) WITHIN 5", type_field="type", time_field="ts")
    assert str(o.value) == "DataFrame row 0 (index 'u'), column 'type': error: missing value"
    with pytest.raises(EventError) as m:
        match(df, "PATTERN SEQ(A a, B b) WITHIN 5", type_field="type", time_field="time")
    assert str(m.value) == "DataFrame column 'time': error: missing column 'time'"
    with pytest.raises(EventError) as a:
        match(pa.table({"type": ["A", "B"], "ts": [1, None]}), "PATTERN SEQ(A a, B b) WITHIN 5", type_field="type", time_field="ts")
    assert str(a.value).startswith("Arrow table row 1, column 'ts': error: ")
    with pytest.raises(EventError) as p:  # the input's error, naming the pattern that reads the column
        match(df.assign(ts=[1, 2]), "PATTERN SEQ(A a, B b) WHERE b.w > a.v WITHIN 5", type_field="type", time_field="ts")
    assert str(p.value) == ("DataFrame column 'w': error: missing column 'w' (the columns: type, ts, v), read at "
                            "<pattern>:1:29: event type 'B' has no field 'w'\n"
                            "    PATTERN SEQ(A a, B b) WHERE b.w > a.v WITHIN 5\n"
                            "                                ^")
    with pytest.raises(EventError) as n:
        match(df.assign(ts=[1, 2], v=[1, "big"]), "PATTERN SEQ(A a, B b) WHERE b.v > a.v WITHIN 5",
              type_field="type", time_field="ts")
    assert str(n.value).startswith("DataFrame row 1, column 'v': error: ")


def test_bad_options_are_config_errors(stocks: pd.DataFrame) -> None:
    with pytest.raises(ConfigError, match=r"^events must be a pandas or Polars DataFrame, an Arrow table, record batches or a path, not int$"):
        match(3, EQUAL_PRICE, type_field="type")
    with pytest.raises(ConfigError, match=r"^format, columns and delimiter apply to event files only$"):
        match(stocks, EQUAL_PRICE, type_field="type", format="csv")
    with pytest.raises(ConfigError, match=r"^slack: expected a number >= 0, optionally with a unit \(ms, s, min, h, d\), got '2 fortnights'$"):
        match(stocks, EQUAL_PRICE, type_field="type", slack="2 fortnights")
    with pytest.raises(ConfigError) as e:
        match(stocks, EQUAL_PRICE, type_feld="type")
    assert str(e.value) == (
        "unknown option 'type_feld' (options: as_objects, type_field, type, time_field, id_field, time_unit, "
        "time_format, format, columns, delimiter, slack, tie, on_error, rejects, on_late, lang, with_events, prefilter, engine, max_memory)"
    )
    with pytest.raises(PatternError, match=r"^missing\.pcep: error: cannot read pattern file: no such file$"):
        match(stocks, "missing.pcep", type_field="type")


def test_petricep_match_is_lazy_and_the_same_function() -> None:
    assert petricep.match is match
    code = "import sys, petricep.errors; print('pyarrow' in sys.modules, 'petricep.api.frames' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.split() == ["False", "False"]


def test_records_and_empty_inputs() -> None:
    pattern = "PATTERN p: SEQ(A a, B b) WITHIN 5 s"
    recs = [{"type": "A", "ts": "2020-01-01T00:00:00"}, {"type": "B", "ts": "2020-01-01T00:00:02"}]
    got = match(recs, pattern, type_field="type", time_field="ts")
    assert isinstance(got, pa.Table)
    assert got.to_pylist() == [{"pattern": "p", "a": 0, "b": 1, "start": pd.Timestamp("2020-01-01").to_pydatetime(),
                                "end": pd.Timestamp("2020-01-01 00:00:02").to_pydatetime()}]
    with pytest.raises(EventError) as e:
        match([{"type": "A", "ts": 1}, {"type": "B"}], pattern, type_field="type", time_field="ts")
    assert str(e.value) == "records row 1, column 'ts': error: missing field 'ts'"
    empty = pd.DataFrame({"type": pd.Series([], dtype=str), "ts": pd.Series([], dtype="int64")})
    with pytest.warns(PetricepWarning) as said:
        none = match(empty, pattern, type_field="type", time_field="ts")
    assert [str(w.message) for w in said] == [f"pattern 'p': no event of type {t!r} was read (types seen: none)" for t in "AB"]
    assert list(none.columns) == ["pattern", "a", "b", "start", "end"] and len(none) == 0


def test_id_columns_keep_the_id_columns_type() -> None:
    t = pa.table({"id": pa.array([7, 8, 9], pa.int32()), "type": ["A", "B", "B"], "ts": [1, 2, 3]})
    pats = ["PATTERN p: SEQ(A a, B+ b[]) WITHIN 5 RETURN P(n = count(b[]))", "PATTERN q: SEQ(P x, B y) WITHIN 5"]
    got = match(t, pats, type_field="type", time_field="ts", id_field="id")
    assert got.schema.field("a").type == pa.int32()
    assert got.schema.field("b").type == pa.list_(pa.int32())
    assert got.schema.field("x").type == pa.string()  # composite events' ids are text
    assert got.column("x").to_pylist() == [None, None, None, "p[7,8]"]
    assert got.column("y").type == pa.int32() and got.column("y").to_pylist() == [None, None, None, 9]
    named = match(t.set_column(0, "id", pa.array(["u", "v", "w"])), pats[0], type_field="type", time_field="ts",
                  id_field="id")
    assert named.column("b").to_pylist() == [["v"], ["v", "w"], ["w"]]
    with pytest.warns(PetricepWarning, match=r"^pattern 'p': no event of type 'B' was read \(types seen: A\)$"):
        empty = match(t.slice(0, 1), pats[0], type_field="type", time_field="ts", id_field="id")
    assert empty.num_rows == 0 and empty.schema.field("a").type == pa.int32()


def test_skipped_rows_go_to_rejects(tmp_path: Path) -> None:
    df = pd.DataFrame({"type": ["A", "B", "B"], "ts": [1, 2, 3], "v": [1, "big", 5]})
    bad = tmp_path / "bad.jsonl"
    run = run_matches(df, "PATTERN p: SEQ(A a, B b) WHERE b.v > a.v WITHIN 5", type_field="type", time_field="ts",
                      on_error="skip", rejects=str(bad))
    assert [m.ids for m in run.matches] == [{"a": 0, "b": 2}]
    assert run.report["events"]["rejected"] == 1
    assert [json.loads(x) for x in bad.read_text().splitlines()] == [
        {"row": 1, "field": "v", "error": "expected a number, got 'big'", "raw": {"type": "B", "ts": 2, "v": "big"}}
    ]
