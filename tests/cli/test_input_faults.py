"""``petricep run`` over inputs a fault hunt found mishandled (issue 43): each is read by
docs/INPUT.md's rules, or is one typed error naming the file, the row and the field, with
its exit status; never a traceback, never a good row lost."""

from __future__ import annotations

import json
from pathlib import Path

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
