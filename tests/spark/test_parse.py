"""The parse stage without Spark: a reader's checked batches go out a column at a time,
row for row what the event-by-event path gives (pure Python, runs in the default suite)."""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest

from petricep.api import compile_text
from petricep.io.readers import InputSpec, open_events
from petricep.spark.parse import ORDER, VALUE, ParseConfig, Parser
from petricep.spark.partition import kernel_fields
from petricep.spark.plan import Router, make_plan
from petricep.spark.records import EVENT
from petricep.spark.shuffle import Layout, Rows, columns

PATTERN = "PATTERN p: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 5\n"
HEADER = b"id,ts,type,k,x,note"


def lines(seed: int, n: int = 300, types: str = "ABC") -> list[bytes]:
    rnd = random.Random(seed)
    out = [HEADER]
    ts = 0
    for i in range(n):
        ts += rnd.choice((0, 0, 1))
        x = rnd.choice([str(rnd.randint(-3, 3)), f"{rnd.random():.3f}", "", "high"])
        k = rnd.choice(["1", "2", "x", ""])
        out.append(f"{i},{ts},{rnd.choice(types)},{k},{x},n{i}".encode())
        if rnd.random() < 0.02:
            out.append(b"")  # a blank line: no row, no position
    return out


def parse(monkeypatch: pytest.MonkeyPatch, text: list[bytes], by_columns: bool) -> tuple[pa.Table, int]:
    net = compile_text(PATTERN)
    plan = make_plan(net)
    layout = Layout.of([kernel_fields(net, g) for g in plan.groups])
    assert layout.fields == ("x", "k")
    spec = InputSpec(path="events.csv", type_field="type", time_field="ts", id_field="id")
    config = ParseConfig(spec, text="csv", header=HEADER, names=tuple(HEADER.decode().split(",")), layout=layout)
    taken = [0]
    if not by_columns:  # every checked batch event by event, the way the stage read before
        def each(self: Parser, cols: Any, lids: list[int], out: Any, side: Any) -> None:
            for i, lid in enumerate(map(int, lids)):
                self._event(cols.event(i), lid, out, side)

        monkeypatch.setattr(Parser, "_columns", each)
    else:  # count the batches that go out a column at a time
        real = Rows.add_columns

        def counted(self: Rows, *args: Any) -> None:
            taken[0] += 1
            real(self, *args)

        monkeypatch.setattr(Rows, "add_columns", counted)
    batches = [
        pa.record_batch({VALUE: pa.array(text[a : a + 97], pa.binary()), ORDER: pa.array(range(a, min(a + 97, len(text))), pa.int64())})
        for a in range(0, len(text), 97)
    ]
    out = pa.Table.from_batches(list(Parser(config, Router(plan))(iter(batches))))
    monkeypatch.undo()
    return out, taken[0]


@pytest.mark.parametrize("seed,types", [(0, "ABC"), (1, "ABC"), (2, "AB"), (3, "AB"), (4, "C")])
def test_checked_batches_go_out_as_the_event_path_sends_them(
    monkeypatch: pytest.MonkeyPatch, seed: int, types: str
) -> None:
    """Rows of types no pattern reads (C) only count in the clock's runs."""
    text = lines(seed, types=types)
    by_columns, taken = parse(monkeypatch, text, True)
    by_events, _ = parse(monkeypatch, text, False)
    assert (taken > 0) == (types != "C")
    assert by_columns.equals(by_events)


def test_typed_rows_hold_what_the_reader_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    text = lines(7)
    table, taken = parse(monkeypatch, text, True)
    assert taken > 0
    path = tmp_path / "events.csv"
    path.write_bytes(b"\n".join(text) + b"\n")
    events = [e for e in open_events(InputSpec(path=str(path), type_field="type", time_field="ts", id_field="id"))]
    routed = [e for e in events if e.type in ("A", "B")]
    rows = table.filter(pa.compute.equal(table["kind"], EVENT))
    assert rows.num_rows == len(routed)
    net = compile_text(PATTERN)
    layout = Layout.of([kernel_fields(net, g) for g in make_plan(net).groups])
    batch = rows.combine_chunks().to_batches()[0]
    cols = columns(batch, 0, batch.num_rows, [e.pos for e in routed], layout, 0, False)
    got = [cols.event(i) for i in range(len(cols))]
    assert [(e.type, e.ts, e.id, e.attrs) for e in got] == [
        (e.type, e.ts, e.id, {"x": e.attrs.get("x"), "k": e.attrs.get("k")}) for e in routed
    ]
    assert [type(e.attrs["x"]) for e in got] == [type(e.attrs.get("x")) for e in routed]


def _data_by_line(lines: list[bytes], lids: list[int], header: bytes | None, text: str) -> tuple[bytes, list[int], list[int]]:
    """The rule line by line: the file's first line loses its BOM and is the CSV header
    where there is one; blank lines have no row."""
    from petricep.spark.parse import blank

    data, keys, blanks = [], [], []
    for line, lid in zip(lines, lids):
        if lid == 0:
            line = line.removeprefix(b"\xef\xbb\xbf")
            if header is not None:
                continue
        if blank(line, text):
            blanks.append(lid)
            continue
        data.append(line)
        keys.append(lid)
    return b"\n".join(data), keys, blanks


@pytest.mark.parametrize("text", ["csv", "jsonl"])
@pytest.mark.parametrize("header", [None, b"a,b"])
def test_a_runs_data_lines_a_column_at_a_time(text: str, header: bytes | None) -> None:
    import numpy as np

    rnd = random.Random(7)
    pieces = [b"", b"\r", b" ", b"   \t      ", b"\xef\xbb\xbf", b"\xef\xbb\xbf{}", b'{"a": 1}', b" {}", b"1,2", b"x" * 20, b"\x0c"]
    spec = InputSpec(path="events." + text)
    parser = Parser(ParseConfig(spec, text=text, header=header if text == "csv" else None), Router(make_plan(compile_text(PATTERN))))
    for _ in range(300):
        n = rnd.randint(1, 12)
        start = rnd.choice([0, 0, 5])
        lines = [rnd.choice(pieces) for _ in range(n)]
        lids = list(range(start, start + n))
        blanks: list[int] = []
        joined, keys = parser._data(pa.array(lines, pa.binary()), np.array(lids, dtype=np.int64), blanks)
        want = _data_by_line(lines, lids, parser.config.header, text)
        assert (joined, keys.tolist(), blanks) == want, (lines, lids)
