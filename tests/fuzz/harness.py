"""What every fuzzed input must give, shared by the fuzz tests and ``python -m bench fuzz``:
a result or a typed :class:`~petricep.errors.PetricepError`, within a deadline, through the
command line (``check``, ``run``) and the library (``compile_text``, ``Engine``).

Each check returns the outcome's kind (``"result"`` or ``"typed error"``) and raises
:class:`Hang` past the deadline; any other exception is a bug the fuzzing found (the tests
let it fail them, the benchmark counts it as a traceback).
"""

from __future__ import annotations

import io
import json
import os
import signal
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from petricep.api import compile_text
from petricep.cli import main
from petricep.errors import PetricepError
from petricep.events import Event
from petricep.runtime.engine import Engine

# seconds one input may take (a loaded CI machine is slow; a hang is minutes)
DEADLINE_S = float(os.environ.get("PETRICEP_FUZZ_DEADLINE", "60"))
RESULT, TYPED = "result", "typed error"


class Hang(Exception):
    """An input ran past the deadline."""


@contextmanager
def deadline(seconds: float = DEADLINE_S) -> Iterator[None]:
    """Raise :class:`Hang` in the main thread after ``seconds`` (SIGALRM; POSIX)."""

    def expired(signum: int, frame: Any) -> None:
        raise Hang(f"no answer within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def cli(argv: Sequence[str]) -> tuple[int, str, str]:
    """``petricep ARGV`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err), deadline():
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def typed_exit(code: int, err: str, *names: str) -> str:
    """An exit code of a petricep error: the message names an input file, no traceback, and
    the status is a pattern error's (2) or a data error's (3), never the environment's (1)."""
    assert "Traceback" not in err, err
    if code == 0:
        return RESULT
    assert code in (2, 3), (code, err)
    if code == 3 and " rejected" in err:  # a skip run that finished, rows rejected and counted
        return RESULT
    assert any(name in err for name in names), err  # the error names the file it is about
    return TYPED


def check_text(data: bytes, tmp: Path) -> str:
    """``petricep check`` on a pattern file holding ``data``."""
    path = tmp / "fuzz.pcep"
    path.write_bytes(data)
    code, _, err = cli(["check", str(path)])
    return typed_exit(code, err, "fuzz.pcep")


# a small stream whose values include the hostile numbers (docs/SEMANTICS.md "Numbers")
VALUES = [0, 1, -1, 2.5, 1e308, -1e308, float("inf"), float("-inf"), float("nan"), 10**400, 2**53 + 1, 0.0]
STREAM = [
    Event(t, i // 2, i, f"e{i}", {"x": VALUES[i % len(VALUES)], "y": VALUES[(i * 5) % len(VALUES)], "k": i % 2})
    for i, t in enumerate("ABCDABDCABCDBADC")
]


def run_library(text: str) -> str:
    """``compile_text`` then an :class:`Engine` over :data:`STREAM` (a bounded budget)."""
    with deadline():
        try:
            net = compile_text(text, "fuzz")
            engine = Engine(net, max_partial_matches=200_000)
            for m in engine.run(Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in STREAM):
                json.dumps(m.to_dict())
        except PetricepError as exc:
            str(exc)
            return TYPED
    return RESULT


def strict_json(line: str) -> Any:
    """RFC 8259: no NaN or Infinity."""

    def refuse(name: str) -> Any:
        raise ValueError(f"not JSON: {name}")

    return json.loads(line, parse_constant=refuse)


def run_events(pattern: str, data: bytes, suffix: str, clean: bytes | None) -> str:
    """``petricep run`` over an event file in skip mode, then in fail mode; with skip, every
    row is processed or rejected, and the matches equal a run over ``clean`` (the file
    without the rows the skip run rejected, computed by :func:`cleaned`) when given."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "p.pcep").write_text(pattern)
        events = tmp / f"events{suffix}"
        events.write_bytes(data)
        base = ["run", str(tmp / "p.pcep"), "--events", str(events), "--type-field", "type", "--time-field", "ts",
                "--id-field", "id", "--no-progress"]
        code, _, err = cli([*base, "--on-error", "skip", "--rejects", str(tmp / "rej.jsonl"),
                            "--stats", str(tmp / "stats.json"), "-o", str(tmp / "out.jsonl")])
        kind = typed_exit(code, err, events.name, "p.pcep")
        if code in (0, 3):
            stats = json.loads((tmp / "stats.json").read_text())["events"]
            assert stats["read"] == stats["processed"] + stats["rejected"], stats
            assert (code == 3) == (stats["rejected"] > 0), (code, stats)
            got = [strict_json(line) for line in (tmp / "out.jsonl").read_text().splitlines()]
            if clean is not None:
                rejected = {json.loads(r)["row"] for r in (tmp / "rej.jsonl").read_text().splitlines()} if (
                    tmp / "rej.jsonl").exists() else set()
                assert len(rejected) == stats["rejected"]
                cleaned_events = tmp / f"cleaned{suffix}"
                cleaned_events.write_bytes(cleaned(clean, rejected))
                clean_argv = [*base[:3], str(cleaned_events), *base[4:]]
                code2, _, err2 = cli([*clean_argv, "--on-error", "skip", "-o", str(tmp / "clean.jsonl"),
                                      "--stats", str(tmp / "clean_stats.json")])
                assert code2 == 0, err2
                again = [strict_json(line) for line in (tmp / "clean.jsonl").read_text().splitlines()]
                assert again == got
                clean_stats = json.loads((tmp / "clean_stats.json").read_text())["events"]
                assert clean_stats["processed"] == stats["processed"]
        code, _, err = cli([*base, "-o", str(tmp / "out2.jsonl")])
        typed_exit(code, err, events.name, "p.pcep")
        return kind


def cleaned(data: bytes, rejected: set[int]) -> bytes:
    """The file without the lines (1-based, header counted) of the rejected rows."""
    lines = data.splitlines(keepends=True)
    return b"".join(line for n, line in enumerate(lines, 1) if n not in rejected)


__all__ = ["DEADLINE_S", "Hang", "RESULT", "STREAM", "TYPED", "check_text", "cleaned", "cli", "deadline",
           "run_events", "run_library", "strict_json", "typed_exit"]
