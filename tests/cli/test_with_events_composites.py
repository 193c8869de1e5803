"""``--with-events`` with composite events (RETURN, ON TIMEOUT) on the kernel (issue 40): its
matches carry their bound events -- input events as read, composite events as their matches
made them (the RETURN or ON TIMEOUT values their fields) -- so the file is ``--engine
python``'s byte for byte, and the summary says the kernel ran."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.cli.rise import run

NET = (
    "PATTERN up: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 6\n"
    "RETURN Up(k = a.k, gain = b.x - a.x, s = a.s)\n"
    "PATTERN twice: SEQ(Up u1, Up u2) WHERE [k] AND u2.gain >= u1.gain WITHIN 10\n"
    "PATTERN late: SEQ(A a, C c) WHERE [k] WITHIN 4 ON TIMEOUT RETURN Late(k = a.k, x = a.x)\n"
    "PATTERN after: SEQ(Late l, B b) WHERE [k] AND b.x > l.x WITHIN 8\n"
)
ARGS = ["--type-field", "type", "--time-field", "ts", "--id-field", "id", "--with-events", "--no-progress"]


def _events(path: Path, rows: int, seed: int) -> None:
    rnd = random.Random(seed)
    lines = ["type,ts,id,k,x,s"]
    ts = 0
    for i in range(rows):
        ts += rnd.choice((0, 1, 1, 2))
        x = rnd.randint(0, 9) if rnd.random() < 0.8 else rnd.choice((1.5, 2.0))
        lines.append(f"{rnd.choice('AABC')},{ts},e{i},{rnd.randint(0, 3)},{x},{rnd.choice('pq')}")
    path.write_text("\n".join(lines) + "\n")


def test_a_small_run_writes_the_bound_events_of_composite_matches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The exact lines: RETURN matches with their input events, matches over two composite
    events (their fields the RETURN values), timeouts and matches over them (the ON TIMEOUT
    values); ``--engine python`` writes the same."""
    (tmp_path / "p.pcep").write_text(NET)
    (tmp_path / "ev.csv").write_text(
        "type,ts,id,k,x,s\nA,0,a0,1,1,p\nB,1,b1,1,5,q\nA,2,a2,1,2,p\nB,3,b3,1,9,q\nA,10,a10,2,3,p\nB,11,b11,1,8,q\n"
    )
    rc, out, err = run(capsys, str(tmp_path / "p.pcep"), "--events", str(tmp_path / "ev.csv"), *ARGS)
    assert rc == 0 and err.splitlines()[-1] == "  engine: kernel"
    assert out.splitlines() == [
        '{"pattern": "up", "ids": {"a": "a0", "b": "b1"}, "start": 0, "end": 1, "attrs": {"k": 1, "gain": 4, "s": "p"}, "events": {"a": {"type": "A", "ts": 0, "id": "a0", "k": 1, "x": 1, "s": "p"}, "b": {"type": "B", "ts": 1, "id": "b1", "k": 1, "x": 5, "s": "q"}}}',
        '{"pattern": "up", "ids": {"a": "a0", "b": "b3"}, "start": 0, "end": 3, "attrs": {"k": 1, "gain": 8, "s": "p"}, "events": {"a": {"type": "A", "ts": 0, "id": "a0", "k": 1, "x": 1, "s": "p"}, "b": {"type": "B", "ts": 3, "id": "b3", "k": 1, "x": 9, "s": "q"}}}',
        '{"pattern": "up", "ids": {"a": "a2", "b": "b3"}, "start": 2, "end": 3, "attrs": {"k": 1, "gain": 7, "s": "p"}, "events": {"a": {"type": "A", "ts": 2, "id": "a2", "k": 1, "x": 2, "s": "p"}, "b": {"type": "B", "ts": 3, "id": "b3", "k": 1, "x": 9, "s": "q"}}}',
        '{"pattern": "twice", "ids": {"u1": "up[a0,b1]", "u2": "up[a0,b3]"}, "start": 1, "end": 3, "attrs": {}, "events": {"u1": {"k": 1, "gain": 4, "s": "p"}, "u2": {"k": 1, "gain": 8, "s": "p"}}}',
        '{"pattern": "twice", "ids": {"u1": "up[a0,b1]", "u2": "up[a2,b3]"}, "start": 1, "end": 3, "attrs": {}, "events": {"u1": {"k": 1, "gain": 4, "s": "p"}, "u2": {"k": 1, "gain": 7, "s": "p"}}}',
        '{"pattern": "late", "ids": {"a": "a0"}, "start": 0, "end": 0, "attrs": {"k": 1, "x": 1}, "timeout": {"type": "Late", "deadline": 4}, "events": {"a": {"type": "A", "ts": 0, "id": "a0", "k": 1, "x": 1, "s": "p"}}}',
        '{"pattern": "late", "ids": {"a": "a2"}, "start": 2, "end": 2, "attrs": {"k": 1, "x": 2}, "timeout": {"type": "Late", "deadline": 6}, "events": {"a": {"type": "A", "ts": 2, "id": "a2", "k": 1, "x": 2, "s": "p"}}}',
        '{"pattern": "after", "ids": {"l": "late@timeout[a0]", "b": "b11"}, "start": 10, "end": 11, "attrs": {}, "events": {"l": {"k": 1, "x": 1}, "b": {"type": "B", "ts": 11, "id": "b11", "k": 1, "x": 8, "s": "q"}}}',
        '{"pattern": "after", "ids": {"l": "late@timeout[a2]", "b": "b11"}, "start": 10, "end": 11, "attrs": {}, "events": {"l": {"k": 1, "x": 2}, "b": {"type": "B", "ts": 11, "id": "b11", "k": 1, "x": 8, "s": "q"}}}',
        '{"pattern": "late", "ids": {"a": "a10"}, "start": 10, "end": 10, "attrs": {"k": 2, "x": 3}, "timeout": {"type": "Late", "deadline": 14}, "events": {"a": {"type": "A", "ts": 10, "id": "a10", "k": 2, "x": 3, "s": "p"}}}',
    ]
    rc_py, out_py, _ = run(capsys, str(tmp_path / "p.pcep"), "--events", str(tmp_path / "ev.csv"), *ARGS, "--engine", "python")
    assert (rc_py, out_py) == (rc, out)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_with_events_and_composite_events_give_the_python_engines_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int, fmt: str
) -> None:
    (tmp_path / "p.pcep").write_text(NET)
    _events(tmp_path / "ev.csv", 3000, seed)
    got = {}
    for engine in ("kernel", "python"):
        out = tmp_path / f"{engine}.{fmt}"
        rc, _, err = run(capsys, str(tmp_path / "p.pcep"), "--events", str(tmp_path / "ev.csv"), *ARGS,
                         "--engine", engine, "-o", str(out))
        assert rc == 0
        got[engine] = (out.read_bytes(), err.splitlines()[-1])
    assert got["kernel"][1] == "  engine: kernel" and got["python"][1] == "  engine: python (asked for)"
    assert got["kernel"][0] == got["python"][0]
    if fmt == "jsonl":
        text = got["kernel"][0].decode()
        assert '"pattern": "twice"' in text and '"pattern": "after"' in text and '"timeout": {"type": "Late"' in text
