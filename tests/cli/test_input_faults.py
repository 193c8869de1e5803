"""``petricep run`` over inputs a fault hunt found mishandled (issue 43): each is read by
docs/INPUT.md's rules, or is one typed error naming the file, the row and the field, with
its exit status; never a traceback, never a good row lost."""

from __future__ import annotations

import bz2
import gzip
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cli.rise import run

KEYED = "PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 10\n"
BIG = "y" * 140_000  # over the csv module's field limit (131,072)


def _files(tmp: Path, pattern: str, name: str, text: str | bytes) -> tuple[str, str]:
    (tmp / "p.pcep").write_text(pattern)
    ev = tmp / name
    if isinstance(text, bytes):
        ev.write_bytes(text)
    else:
        ev.write_text(text, newline="")
    return str(tmp / "p.pcep"), str(ev)


def _ids(out: str) -> list[dict[str, int]]:
    return [json.loads(line)["ids"] for line in out.splitlines()]


@pytest.mark.parametrize("cell", [BIG, f'"{BIG}"'], ids=["unquoted", "quoted"])
def test_a_big_cell_beside_a_bad_row_is_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str], cell: str) -> None:
    """Item 3: a good row with a cell over 131,072 characters, in the chunk of a bad row, is
    read as every other row (skip: only the bad row is rejected; fail: the bad row is named)."""
    pattern, ev = _files(tmp_path, KEYED, "ev.csv", f"type,ts,k,note\nA,1,x,a\nB,2,x,{cell}\nB,zz,x,c\nB,4,x,d\n")
    rejects = tmp_path / "bad.jsonl"
    rc, out, err = run(capsys, pattern, "--events", ev, "--type-field", "type", "--time-field", "ts",
                       "--on-error", "skip", "--rejects", str(rejects), "--no-progress")
    assert (rc, _ids(out)) == (3, [{"a": 0, "b": 1}, {"a": 0, "b": 3}])
    assert err.startswith("summary: 4 events read = 3 processed + 1 rejected + 0 late; 2 matches")
    assert [json.loads(x) for x in rejects.read_text().splitlines()] == [
        {"row": 4, "field": "ts", "error": "cannot parse timestamp 'zz'", "raw": "B,zz,x,c"}
    ]
    rc, out, err = run(capsys, pattern, "--events", ev, "--type-field", "type", "--time-field", "ts")
    assert (rc, _ids(out), err) == (3, [{"a": 0, "b": 1}], f"{ev}:4: field 'ts': error: cannot parse timestamp 'zz'\n")


@pytest.mark.parametrize("note", ["b\rc", '"b"\rc', '"b\rc"'], ids=["unquoted", "after-quotes", "quoted"])
def test_a_lone_cr_in_a_cell_is_text(tmp_path: Path, capsys: pytest.CaptureFixture[str], note: str) -> None:
    """Item 10: a lone ``\\r`` inside a line is text (INPUT.md), quoted value or not."""
    returned = "PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 10 RETURN P(note = b.note)\n"
    pattern, ev = _files(tmp_path, returned, "ev.csv", f"type,ts,k,note\nA,1,x,a\r\nB,2,x,{note}\r\nB,4,x,d\n")
    rc, out, err = run(capsys, pattern, "--events", ev, "--type-field", "type", "--time-field", "ts", "--no-progress")
    assert (rc, [json.loads(x)["attrs"] for x in out.splitlines()]) == (0, [{"note": "b\rc"}, {"note": "d"}])
    pattern, ev = _files(tmp_path, KEYED, "ev.csv", "type,ts,k\nA,1,x\nB,2\r0,x\nB,4,x\n")
    rc, out, err = run(capsys, pattern, "--events", ev, "--type-field", "type", "--time-field", "ts")
    assert (rc, out, err) == (3, "", f"{ev}:3: field 'ts': error: cannot parse timestamp '2\\r0'\n")


ENGINES = ["kernel", "python"]
AB = [{"a": 0, "b": 2}]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_list_or_object_only_other_types_compare_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           engine: str) -> None:
    """Item 4: a JSON list or object in a field only other types' conditions compare needs no
    value in the kernel: both engines match."""
    pattern, ev = _files(tmp_path, "PATTERN p: SEQ(A a, B b) WHERE b.x > a.x WITHIN 10\n", "ev.jsonl",
                         '{"type": "A", "ts": 1, "x": 1}\n{"type": "C", "ts": 2, "x": [1, 2]}\n'
                         '{"type": "B", "ts": 3, "x": 5}\n{"type": "C", "ts": 4, "x": {"u": 1}}\n')
    rc, out, err = run(capsys, pattern, "--events", ev, "--type-field", "type", "--time-field", "ts",
                       "--engine", engine, "--no-progress")
    assert (rc, _ids(out)) == (0, AB)
    assert err.endswith("engine: kernel\n" if engine == "kernel" else "engine: python (asked for)\n")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("value", ["[1, 2]", '{"u": 1}'], ids=["list", "object"])
def test_a_list_key_on_another_type_is_no_key(tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str,
                                              value: str) -> None:
    """Item 7: ``[k]`` with a list or object as the key of an event no pattern keys."""
    pattern, ev = _files(tmp_path, KEYED, "ev.jsonl",
                         f'{{"type": "A", "ts": 1, "k": "a"}}\n{{"type": "C", "ts": 2, "k": {value}}}\n'
                         '{"type": "B", "ts": 3, "k": "a"}\n')
    rc, out, err = run(capsys, pattern, "--events", ev, "--type-field", "type", "--time-field", "ts",
                       "--engine", engine, "--no-progress")
    assert (rc, _ids(out)) == (0, AB)


def _parquet_keys(tmp: Path, keys: list[object]) -> str:
    path = tmp / "ev.parquet"
    pq.write_table(pa.table({"type": ["A", "C", "B", "B"], "ts": [1, 2, 3, 4], "k": keys}), path)
    return str(path)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("keys", [[[1], [2], [1], None], [{"u": 1}, {"u": 2}, {"u": 1}, None]], ids=["list", "struct"])
def test_a_parquet_list_or_struct_key_column_is_rejected_row_by_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str, keys: list[object]
) -> None:
    """Item 7: a Parquet list<int> or struct key column: each row a pattern keys is an error of
    its row (fail: the first; skip: each, counted, and the others read), never a traceback."""
    (tmp_path / "p.pcep").write_text(KEYED)
    ev = _parquet_keys(tmp_path, keys)
    what = "a list" if isinstance(keys[0], list) else "an object"
    opts = ["--events", ev, "--type-field", "type", "--time-field", "ts", "--engine", engine]
    rc, out, err = run(capsys, str(tmp_path / "p.pcep"), *opts)
    assert (rc, out, err) == (3, "", f"{ev}:0: field 'k': error: expected a single value, got {what}\n")
    rejects = tmp_path / "bad.jsonl"
    rc, out, err = run(capsys, str(tmp_path / "p.pcep"), *opts, "--on-error", "skip", "--rejects", str(rejects),
                       "--no-progress")
    assert (rc, out) == (3, "")
    assert err.startswith("summary: 4 events read = 1 processed + 3 rejected + 0 late; 0 matches")
    assert [(r["row"], r["field"], r["error"]) for r in map(json.loads, rejects.read_text().splitlines())] == [
        (0, "k", f"expected a single value, got {what}"),
        (2, "k", f"expected a single value, got {what}"),
        (3, "k", "missing value"),
    ]


UNREAD = b"type,ts,k,note\nA,1,x,a\nB,2,x,b\xffc\nB,4,x,d\n"  # note: no pattern reads it


@pytest.mark.parametrize("options", [[], ["--with-events"], ["--no-prefilter"], ["--engine", "python"]],
                         ids=["plain", "with-events", "no-prefilter", "python"])
def test_invalid_utf8_in_a_column_no_pattern_reads_is_its_rows_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str]
) -> None:
    """Item 10: whatever the options, as INPUT.md says (before: accepted unless --with-events)."""
    pattern, ev = _files(tmp_path, KEYED, "ev.csv", UNREAD)
    opts = ["--events", ev, "--type-field", "type", "--time-field", "ts", *options]
    rc, out, err = run(capsys, pattern, *opts)
    assert (rc, out, err) == (3, "", f"{ev}:3: error: invalid UTF-8 text\n")
    rejects = tmp_path / "bad.jsonl"
    rc, out, err = run(capsys, pattern, *opts, "--on-error", "skip", "--rejects", str(rejects), "--no-progress")
    assert (rc, _ids(out)) == (3, [{"a": 0, "b": 2}])
    assert [json.loads(x) for x in rejects.read_text().splitlines()] == [
        {"row": 3, "field": None, "error": "invalid UTF-8 text", "raw": "B,2,x,b\ufffdc"}
    ]


EVENTS = "type,ts,k\nA,1,x\nB,2,x\nB,3,y\nB,4,x\n"
WANT = [{"a": 0, "b": 1}, {"a": 0, "b": 3}]


def _writer(target: str | int, data: bytes) -> threading.Thread:
    """A thread writing ``data`` into a FIFO (by name) or a pipe (its write end), then closing it."""

    def write() -> None:
        with open(target, "wb") as f:
            f.write(data)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("kind", ["fifo", "pipe", "gzip pipe", "bz2 pipe"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_fifo_or_process_substitution_is_read_as_a_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, engine: str
) -> None:
    """Item 10: ``--events FIFO`` and ``<(cat f)`` (a /dev/fd pipe): "lseek failed" before."""
    (tmp_path / "p.pcep").write_text(KEYED)
    packs: dict[str, Callable[[bytes], bytes]] = {"gzip pipe": gzip.compress, "bz2 pipe": bz2.compress}
    data = packs.get(kind, bytes)(EVENTS.encode())
    if kind == "fifo":
        path = str(tmp_path / "events")
        os.mkfifo(path)
        writer = _writer(path, data)
    else:
        read_end, write_end = os.pipe()
        path = f"/dev/fd/{read_end}"
        writer = _writer(write_end, data)
    try:
        rc, out, err = run(capsys, str(tmp_path / "p.pcep"), "--events", path, "--format", "csv", "--type-field", "type",
                           "--time-field", "ts", "--engine", engine, "--no-progress")
    finally:
        writer.join(5)
        if kind != "fifo":
            os.close(read_end)
    assert (rc, _ids(out)) == (0, WANT), err
    assert err.startswith("summary: 4 events read = 4 processed + 0 rejected + 0 late; 2 matches")


def test_a_parquet_file_from_a_pipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.pcep").write_text(KEYED)
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"type": ["A", "B", "B", "B"], "ts": [1, 2, 3, 4], "k": ["x", "x", "y", "x"]}), sink)
    read_end, write_end = os.pipe()
    writer = _writer(write_end, sink.getvalue().to_pybytes())
    try:
        rc, out, err = run(capsys, str(tmp_path / "p.pcep"), "--events", f"/dev/fd/{read_end}", "--format", "parquet",
                           "--type-field", "type", "--time-field", "ts", "--no-progress")
    finally:
        writer.join(5)
        os.close(read_end)
    assert (rc, _ids(out)) == (0, WANT), err


@pytest.mark.parametrize("options", [[], ["--format", "csv"], ["--format", "parquet"]], ids=["named", "csv", "parquet"])
def test_a_directory_as_events(tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str]) -> None:
    """Item 10: "cannot tell the format" before (exit 2): the events' error, exit 3."""
    (tmp_path / "p.pcep").write_text(KEYED)
    (tmp_path / "day.csv").mkdir()
    for events in (tmp_path / "day.csv", tmp_path):
        rc, out, err = run(capsys, str(tmp_path / "p.pcep"), "--events", str(events), *options, "--type-field", "type")
        assert (rc, out, err) == (3, "", f"{events}: error: cannot open file: it is a directory\n")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_missing_column_names_the_events_file_and_the_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """Item 10: a missing attribute column was a pattern error (exit 2) naming no events
    file, a missing time column exit 3 with the columns: now both the events' error (exit 3),
    naming the file, the column and the columns (and for an attribute, where it is read)."""
    pattern = tmp_path / "p.pcep"
    pattern.write_text("PATTERN p: SEQ(A a, B b)\nWHERE [k] AND b.x > a.y\nWITHIN 10\n")
    ev = tmp_path / f"ev.{fmt}"
    table = pa.table({"type": ["A", "B"], "ts": [1, 2], "k": ["x", "x"], "x": [1, 2]})
    if fmt == "csv":
        ev.write_text("type,ts,k,x\nA,1,x,1\nB,2,x,2\n")
    else:
        pq.write_table(table, ev)
    at = f"{ev}:1" if fmt == "csv" else str(ev)
    rc, out, err = run(capsys, str(pattern), "--events", str(ev), "--type-field", "type", "--time-field", "ts")
    assert (rc, out) == (3, "")
    assert err.splitlines() == [
        f"{at}: field 'y': error: missing column 'y' (the columns: type, ts, k, x), read at {pattern}:2:21: "
        "event type 'A' has no field 'y'",
        "    WHERE [k] AND b.x > a.y",
        "                        ^",
    ]
    rc, out, err = run(capsys, str(pattern), "--events", str(ev), "--type-field", "type", "--time-field", "time")
    assert (rc, out, err) == (3, "", f"{at}: field 'time': error: missing column 'time' (the columns: type, ts, k, x)\n")


@pytest.mark.parametrize("kind", ["fifo", "pipe"])
def test_a_stream_without_matches_is_not_read_again(tmp_path: Path, kind: str) -> None:
    """The explanation of a pattern without matches reads the input again: a FIFO opened
    again waited for a writer for ever (the run hung after its summary), a drained pipe read
    as empty and gave a wrong reason ("its events never come in its order"). A stream is
    explained as standard input is."""
    import subprocess
    import sys

    (tmp_path / "p.pcep").write_text("PATTERN z: SEQ(A a, B b) WITHIN 1\n")
    (tmp_path / "e.csv").write_text("type,ts\nA,1\nB,5\n")
    events = str(tmp_path / "e.csv")
    if kind == "fifo":
        os.mkfifo(tmp_path / "f")
        source, feed = str(tmp_path / "f"), f"cat {events} > {tmp_path / 'f'} & "
    else:
        source, feed = f"<(cat {events})", ""
    command = (f"{feed}{sys.executable} -m petricep run {tmp_path / 'p.pcep'} --events {source} --format csv "
               "--type-field type --time-field ts --no-progress")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "    pattern 'z': run with --engine python to see which step no event could take, and its conditions" in (
        proc.stderr.splitlines())
