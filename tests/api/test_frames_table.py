"""``petricep.match``'s matches as files: JSON Lines byte-identical to ``petricep run``, Parquet
and CSV by extension, events in JSON Lines with times printed in the input's own format."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from petricep.api.frames import load, match, run_matches
from petricep.output.table import MatchWriter, match_line, to_table, write_matches

from .helpers import ROOT, STOCKS, cli_run

V_SHAPE = ROOT / "nets/stock_v_shape.sql"
OPTS: dict[str, Any] = {"type": "stock", "time_field": "ts", "id_field": "id"}
CLI_OPTS = ("--type", "stock", "--time-field", "ts", "--id-field", "id")


def test_jsonl_is_byte_identical_to_the_cli(tmp_path: Path, stocks_head: Path, cli_v_shape: bytes) -> None:
    objs = match(stocks_head, V_SHAPE, as_objects=True, **OPTS)
    _, net = load(V_SHAPE)
    n = write_matches(objs, tmp_path / "m.jsonl", net)
    cli = cli_v_shape
    assert n == len(cli.splitlines()) > 100
    assert (tmp_path / "m.jsonl").read_bytes() == cli
    # a stream, flushed per match (for a live run)
    buf = io.StringIO()
    with MatchWriter(buf, net, flush=True) as w:
        w.write_all(objs)
    assert buf.getvalue().encode() == cli


def test_jsonl_with_timeouts_and_composites_is_byte_identical(tmp_path: Path) -> None:
    pat = tmp_path / "p.pcep"
    pat.write_text(
        "PATTERN up: SEQ(stock a, stock b) WHERE [symbol] AND b.price > a.price + 90 WITHIN 5\n"
        "ON TIMEOUT RETURN Flat(symbol = a.symbol)\n"
        "PATTERN flats: SEQ(Flat f, Flat g) WHERE [symbol] WITHIN 3\n"
    )
    events = tmp_path / "e.csv"
    pd.read_csv(STOCKS).iloc[:1500].to_csv(events, index=False)
    objs = match(events, pat, as_objects=True, **OPTS)
    assert {m.timeout is not None for m in objs} == {True, False}
    _, net = load(pat)
    write_matches(objs, tmp_path / "m.jsonl", net)
    assert (tmp_path / "m.jsonl").read_bytes() == cli_run(tmp_path, [pat], events, *CLI_OPTS)


def test_parquet_reads_back_as_the_table(tmp_path: Path, stocks_head: Path) -> None:
    run = run_matches(stocks_head, V_SHAPE, with_events=True, **OPTS)
    table = to_table(run.matches, run.layout, True, run.events_of)
    with MatchWriter(tmp_path / "m.parquet", run.layout, with_events=True, events_of=run.events_of) as w:
        w.write_all(run.matches)
    back = pq.read_table(tmp_path / "m.parquet")
    assert back.equals(table)
    assert back.num_rows == len(run.matches)
    assert back.schema.field("events.DOWN").type.value_type.field("price").type == pa.int64()


def test_csv_has_flat_columns_and_json_lists(tmp_path: Path, stocks_head: Path) -> None:
    run = run_matches(stocks_head, V_SHAPE, **OPTS)
    write_matches(run.matches, tmp_path / "m.csv", run.layout)
    rows = list(csv.reader((tmp_path / "m.csv").open()))
    assert rows[0] == ["pattern", "STRT", "DOWN", "UP", "start", "end", "symbol", "top", "bottom", "recovered", "falling"]
    assert rows[1:4] == [
        ["v_shape", "0", "[2]", "[3]", "0", "3", "S3", "81", "80", "97", "1"],
        ["v_shape", "8", "[9]", "[10]", "8", "10", "S1", "51", "19", "95", "1"],
        ["v_shape", "3", "[5, 6, 11, 12]", "[15, 17]", "3", "17", "S3", "97", "16", "72", "4"],
    ]
    assert len(rows) == len(run.matches) + 1


def test_jsonl_with_events_and_input_times(tmp_path: Path) -> None:
    df = pd.DataFrame({
        "type": ["A", "B", "B"],
        "ts": ["2014-08-01 07:50:00Z", "2014-08-01 07:50:30.25Z", "2014-08-01 07:50:40Z"],
        "x": [1, 2, 3],
    })
    run = run_matches(df, "PATTERN ab: SEQ(A a, B+ b[]) WHERE b[i].x > b[i-1].x WITHIN 1 min",
                      type_field="type", time_field="ts", with_events=True)
    lines = [match_line(m, True, run.times(), run.events_of) for m in run.matches]
    assert lines[0] == (
        '{"pattern": "ab", "ids": {"a": 0, "b": [1]}, "start": "2014-08-01 07:50:00Z", '
        '"end": "2014-08-01 07:50:30.25Z", "attrs": {}, "events": {"a": {"type": "A", '
        '"ts": "2014-08-01 07:50:00Z", "x": 1}, "b": [{"type": "B", "ts": "2014-08-01 07:50:30.25Z", "x": 2}]}}'
    )
    assert [json.loads(x)["ids"]["b"] for x in lines] == [[1], [1, 2], [2]]
    assert json.loads(lines[1])["end"] == "2014-08-01 07:50:40Z"  # as the first row: no fraction
    # without events and formatter: the CLI's line
    assert match_line(run.matches[0]) == '{"pattern": "ab", "ids": {"a": 0, "b": [1]}, "start": 1406879400, ' \
        '"end": 1406879430.25, "attrs": {}}'
