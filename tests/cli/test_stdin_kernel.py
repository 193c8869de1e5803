"""Standard input on the kernel (issue 40): ``petricep run ... --events -`` fires the kernel on
what each read of the input gave, so a match leaves as soon as the line that completes it is
read -- through a real pipe, line by line, each match read back before the next line is sent
-- and its match lines are ``--engine python``'s byte for byte."""

from __future__ import annotations

import io
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import IO

from petricep.cli.main import main
from petricep.io.streams import use_stdin

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
PATTERN = "PATTERN p: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 5\n"
ARGS = ["--events", "-", "--format", "csv", "--type-field", "type", "--time-field", "ts", "--no-progress"]


def _line(out: IO[str], seconds: float = 60.0) -> str:
    """The next line the process writes (waiting at most ``seconds``: a match held back
    until more input comes would hang the test, not pass it)."""
    ready, _, _ = select.select([out], [], [], seconds)
    assert ready, "no match line while the input waits"
    return out.readline()


def test_a_match_leaves_as_soon_as_the_line_completing_it_is_read(tmp_path: Path) -> None:
    """Each line is written to the pipe alone; the match a line completes is read back before
    the next line is sent (stdin still open), and the summary says the kernel ran."""
    (tmp_path / "p.pcep").write_text(PATTERN)
    proc = subprocess.Popen(
        [sys.executable, "-m", "petricep", "run", str(tmp_path / "p.pcep"), *ARGS],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=ENV, bufsize=1,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        got = []
        for line, want in [
            ("type,ts,k,x", None),
            ("A,0,1,5", None),
            ("B,1,1,7", '{"pattern": "p", "ids": {"a": 0, "b": 1}, "start": 0, "end": 1, "attrs": {}}'),
            ("A,2,2,1", None),
            ("B,3,2,0", None),  # (no match: 0 > 1 fails)
            ("B,4,2,9", '{"pattern": "p", "ids": {"a": 2, "b": 4}, "start": 2, "end": 4, "attrs": {}}'),
        ]:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            if want is not None:
                got.append(_line(proc.stdout).rstrip("\n"))
                assert got[-1] == want
        proc.stdin.close()
        assert proc.stdout.read() == ""
        assert proc.wait(60) == 0
        err = proc.stderr.read().splitlines()
    finally:
        proc.kill()
        proc.wait()
    assert err[0] == "summary: 5 events read = 5 processed + 0 rejected + 0 late; 2 matches in " + err[0].split(" in ")[1]
    assert err[-1] == "  engine: kernel"


def _run(tmp_path: Path, text: str, capsys: object, *extra: str) -> tuple[int, str, str]:
    use_stdin(io.BytesIO(text.encode()))
    try:
        rc = main(["run", str(tmp_path / "p.pcep"), *ARGS, *extra])
    finally:
        use_stdin(None)
    out, err = capsys.readouterr()  # type: ignore[attr-defined]
    return rc, out, err


def test_standard_input_on_the_kernel_writes_the_python_engines_lines(tmp_path: Path, capsys: object) -> None:
    """Many reads' worth of input at once (a batch a read), and rows checked one by one (a
    bad row: the event path) alike: the kernel's lines are ``--engine python``'s."""
    (tmp_path / "p.pcep").write_text(PATTERN)
    rows = [f"{'AB'[i % 2]},{i // 2},{(i // 2) % 50},{i % 7}" for i in range(4000)]
    rows.insert(777, "A,oops,1,1")
    text = "type,ts,k,x\n" + "\n".join(rows) + "\n"
    rc, out, err = _run(tmp_path, text, capsys, "--on-error", "skip")
    rc_py, out_py, err_py = _run(tmp_path, text, capsys, "--on-error", "skip", "--engine", "python")
    assert (rc, out) == (rc_py, out_py) and rc == 3 and out.count("\n") == 1714  # (3: a row rejected)
    assert err.splitlines()[-1] == "  engine: kernel" and err_py.splitlines()[-1] == "  engine: python (asked for)"
    assert err.splitlines()[0].startswith("summary: 4001 events read = 4000 processed + 1 rejected + 0 late; 1714 matches")
