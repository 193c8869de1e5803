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
import math
import os
import re
import signal
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from petricep.api import compile_text
from petricep.cli import main
from petricep.errors import PetricepError
from petricep.events import Event
from petricep.lang.parser import parse_source
from petricep.runtime.engine import Engine
from tests.fuzz.strategies import ABSENT, Case, Row
from tests.reference import reference_run

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
        if kind == RESULT:  # (exit 3 before any row: a column a pattern reads is missing)
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




# ---------------------------------------------------------------------- issue 43: kernel vs Python vs brute force


class Mismatch(AssertionError):
    """Two answers that must be equal differ: ``kind`` names which (the long run tallies it)."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail[:600]}")
        self.kind = kind


@dataclass
class Outcome:
    """What one engine's run of a case gave, in the form the two engines must agree on."""

    code: int
    kind: str
    errors: list[str]  # stderr without the summary (whose engine line names the engine)
    engine: str  # the summary's engine line: which engine ran the matches
    matches: Any
    rejects: list[str]
    late: list[str]
    events: dict[str, Any]


def _summary_engine(err: str) -> str:
    return next((line.split("engine: ", 1)[1].split(" ", 1)[0] for line in err.splitlines()
                 if line.startswith("  engine: ")), "")


def _read_matches(path: Path, out: str) -> Any:
    """The match file as comparable values (JSON Lines strictly parsed; CSV as its text)."""
    if not path.exists():
        return None
    if out == "jsonl":
        return [strict_json(line) for line in path.read_text(encoding="utf-8").splitlines()]
    if out == "csv":
        return path.read_text(encoding="utf-8")
    table = pq.read_table(path)
    return [str(table.schema), table.to_pylist()]


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def run_engine(case: Case, engine: str, tmp: Path) -> Outcome:
    """``petricep run`` over ``case`` on one engine, every output kept for the comparison."""
    (tmp / "p.pcep").write_text(case.pattern)
    events = tmp / f"events{case.suffix}"
    events.write_bytes(case.data())
    out = tmp / f"out-{engine}.{case.out}"
    argv = ["run", str(tmp / "p.pcep"), "--events", str(events), "--type-field", "type", "--time-field", "ts",
            "--id-field", "id", "--no-progress", "--engine", engine, *case.argv(), "-o", str(out),
            "--stats", str(tmp / f"stats-{engine}.json")]
    if case.on_error == "skip":
        argv += ["--rejects", str(tmp / f"rej-{engine}.jsonl")]
    if case.slack is not None:
        argv += ["--late", str(tmp / f"late-{engine}.jsonl")]
    code, _, err = cli(argv)
    kind = typed_exit(code, err, events.name, "p.pcep")
    stats = tmp / f"stats-{engine}.json"
    errors = [line for line in err.splitlines() if not line.startswith(("summary: ", "  "))]
    return Outcome(code, kind, errors, _summary_engine(err), _read_matches(out, case.out) if code in (0, 3) else None,
                   _lines(tmp / f"rej-{engine}.jsonl"), _lines(tmp / f"late-{engine}.jsonl"),
                   json.loads(stats.read_text())["events"] if stats.exists() else {})


def compare_engines(kernel: Outcome, python: Outcome) -> None:
    """The kernel and the Python engine give the same answer to the same input, exactly."""
    for kind, a, b in [("error text", kernel.errors, python.errors), ("exit code", kernel.code, python.code),
                       ("rejects", kernel.rejects, python.rejects), ("late events", kernel.late, python.late),
                       ("event counts", kernel.events, python.events), ("matches", kernel.matches, python.matches)]:
        if a != b:
            raise Mismatch(f"kernel vs python: {kind}", f"kernel {a!r}\npython {b!r}")


_INT = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?:\.[0-9]*)?[eE][+-]?[0-9]+|\.[0-9]+[eE][+-]?[0-9]+)\Z")
UNKNOWN = object()  # a value whose reading docs/INPUT.md does not fix for this check
NOT_UTF8 = object()  # a CSV cell that is not UTF-8: an error of its row (docs/INPUT.md "CSV text")


def cell_value(v: Any, suffix: str) -> Any:
    """What a reader makes of a generated value (docs/INPUT.md): ``None`` for missing, the
    value, or :data:`UNKNOWN`."""
    if v is ABSENT or v is None or v == "":
        return None
    if suffix == ".csv":
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, bytes):  # a lone \r is text; bytes that are not UTF-8 make a bad row
            try:
                return v.decode("utf-8")
            except UnicodeDecodeError:
                return NOT_UTF8
        text = v if isinstance(v, str) else repr(v)
        if _INT.match(text):
            return int(text)
        return float(text) if _FLOAT.match(text) else text
    if isinstance(v, bool):
        return UNKNOWN
    return v


def row_values(case: Case, row: Row) -> dict[str, Any] | None:
    """A row's values as read, or ``None`` for a row whose line was written bad."""
    return None if row.raw is not None else {f: cell_value(v, case.suffix) for f, v in row.values.items()}


def bad_row(case: Case, values: dict[str, Any] | None) -> bool | None:
    """Whether docs/INPUT.md makes the row an error of its own (the time order aside): a
    missing, list or object value in a field read, text in a field computed with; ``None``
    where it leaves that open (here)."""
    if values is None or NOT_UTF8 in values.values():
        return True
    if case.suffix == ".jsonl" and any(_lone_surrogate(v) for v in values.values()):
        return True  # a lone surrogate escape is not text: its line is bad (docs/INPUT.md)
    if not isinstance(values["ts"], int):
        return True
    read = case.reads.get(str(values["type"]), frozenset())
    verdict: bool | None = False
    for f in read:
        v = values.get(f)
        if v is None or isinstance(v, list | dict) or (
                f in case.numeric and v is not UNKNOWN and not isinstance(v, int | float)):
            return True
        if v is UNKNOWN:
            verdict = None
    if UNKNOWN in values.values() and case.with_events:
        verdict = None
    return verdict


def _lone_surrogate(written: Any) -> bool:
    """Whether a value, as its JSON line is read back (an escaped pair is one character),
    holds a lone surrogate."""
    if not isinstance(written, str | list | dict):  # (numbers, and the model's markers)
        return False
    return _surrogate_in(json.loads(json.dumps(written, default=str)))


def _surrogate_in(v: Any) -> bool:
    if isinstance(v, str):
        return any("\ud800" <= c <= "\udfff" for c in v)
    if isinstance(v, dict):
        return any(_surrogate_in(k) or _surrogate_in(x) for k, x in v.items())
    return isinstance(v, list) and any(_surrogate_in(x) for x in v)


def expected_bad(case: Case) -> list[bool | None]:
    """Per row, whether it must be rejected (skip) or stop the run (fail): :func:`bad_row`,
    and without a slack a timestamp below the last kept one; ``None`` where that is open."""
    verdicts: list[bool | None] = []
    sure = maybe = None  # the last kept timestamp: over the rows surely kept / maybe kept
    for row in case.rows:
        values = row_values(case, row)
        verdict = bad_row(case, values)
        if verdict is not True and case.slack is None and values is not None:
            ts = values["ts"]
            if sure is not None and ts < sure:
                verdict = True
            elif maybe is not None and ts < maybe:
                verdict = None
        if verdict is not True and values is not None:
            maybe = values["ts"] if maybe is None else max(maybe, values["ts"])
            if verdict is False:
                sure = values["ts"] if sure is None else max(sure, values["ts"])
        verdicts.append(verdict)
    return verdicts


_ROW = re.compile(r"events\.(?:csv|jsonl):(\d+): ")


def compare_docs(case: Case, got: Outcome, rejected: set[int]) -> None:
    """The rows rejected (skip) or named by the error (fail) are the bad rows of docs/INPUT.md."""
    first_line = 2 if case.suffix == ".csv" else 1
    verdicts = expected_bad(case)
    if case.on_error == "skip" and got.code in (0, 3) and not got.errors:
        for i, verdict in enumerate(verdicts):
            if verdict is not None and (i + first_line in rejected) != verdict:
                what = "a good row rejected" if not verdict else "a bad row kept"
                raise Mismatch(f"reader vs docs: {what}", f"row {i + first_line}: {got.rejects}")
    named = [int(m.group(1)) for line in got.errors if (m := _ROW.match(line))]
    if case.on_error == "fail" and named:
        first_bad = next((i + first_line for i, v in enumerate(verdicts) if v is not False), None)
        if first_bad is not None and verdicts[first_bad - first_line] is True and named[0] != first_bad:
            raise Mismatch("reader vs docs: the error names another row", f"named {named[0]}, first bad row "
                           f"{first_bad}: {got.errors}")
        if named[0] - first_line < len(verdicts) and verdicts[named[0] - first_line] is False:
            raise Mismatch("reader vs docs: the error names a good row", "\n".join(got.errors))


def modeled_events(case: Case, rejected: set[int]) -> list[Event] | None:
    """The stream the reference must see: each row not rejected, read by docs/INPUT.md's
    rules, late events left out and the rest re-ordered under a slack (docs/SEMANTICS.md
    "Event time"); ``None`` when a row the readers kept is one this model cannot tell."""
    first_line = 2 if case.suffix == ".csv" else 1
    kept: list[tuple[int, dict[str, Any]]] = []
    for i, row in enumerate(case.rows):
        if i + first_line in rejected:
            continue
        values = row_values(case, row)
        if values is None or bad_row(case, values) is not False:
            return None
        kept.append((i, values))
    if case.slack is not None:
        on_time, top = [], None
        for i, values in kept:
            if top is None or values["ts"] >= top - case.slack:
                on_time.append((i, values))
            top = values["ts"] if top is None else max(top, values["ts"])
        kept = sorted(on_time, key=lambda iv: iv[1]["ts"])  # stable: ties keep their arrival
    events = []
    for pos, (i, values) in enumerate(kept):
        read = case.reads.get(str(values["type"]), frozenset())
        at = pos if case.slack is not None else i
        events.append(Event(values["type"], values["ts"], at, values["id"], {f: values[f] for f in read}))
    return events


def _json_safe(m: dict[str, Any]) -> str:
    """A reference match as the JSON Lines output writes it (non-finite numbers null)."""
    attrs = {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in m["attrs"].items()}
    return json.dumps({**m, "attrs": attrs}, sort_keys=True)


def compare_reference(case: Case, got: Outcome, rejected: set[int]) -> bool:
    """The engines' matches equal tests/reference.py's brute force over the modeled stream,
    where the case is clean enough for the model; says whether it compared."""
    events = modeled_events(case, rejected)
    if events is None or got.code not in (0, 3) or got.errors or case.out != "jsonl":
        return False
    if case.slack is None and any(b.ts < a.ts for a, b in zip(events, events[1:])):
        raise Mismatch("reader vs docs", f"a timestamp going backwards was kept: {[e.ts for e in events]}")
    if case.slack is not None and len(got.late) != len(case.rows) - len(rejected) - len(events):
        raise Mismatch("late events vs docs", f"{len(got.late)} late, modeled {len(case.rows) - len(rejected) - len(events)}")
    try:
        want = reference_run(list(parse_source(case.pattern, "p.pcep", "pcep").patterns), events, case.tie)
    except (TypeError, ValueError):  # the reference refuses the stream or the pattern: not comparable
        return False
    mine = sorted(json.dumps({k: m[k] for k in ("pattern", "ids", "start", "end", "attrs")}, sort_keys=True)
                  for m in got.matches)
    if mine != sorted(_json_safe(m) for m in want):
        raise Mismatch(f"engine vs reference (tie {case.tie})", f"engine {mine}\nreference {sorted(map(_json_safe, want))}")
    return True


def run_case(case: Case) -> tuple[str, bool, str]:
    """Issue 43's check of one case: both engines answer (a result or a typed error, never a
    traceback), exactly alike, and, where the model can tell, like the brute force. Returns
    the outcome's kind, whether the reference was compared and the engine ``--engine kernel``
    ran on (its summary's; the Python engine where the kernel does not cover the run);
    raises :class:`Mismatch`."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        kernel = run_engine(case, "kernel", tmp)
        python = run_engine(case, "python", tmp)
        compare_engines(kernel, python)
        rejected = {json.loads(r)["row"] for r in kernel.rejects}
        if kernel.code in (0, 3) and kernel.events:
            total = kernel.events["processed"] + kernel.events["rejected"] + kernel.events.get("late", 0)
            if kernel.events["read"] != total:
                raise Mismatch("event accounting", str(kernel.events))
        compare_docs(case, kernel, rejected)
        return kernel.kind, compare_reference(case, python, rejected), kernel.engine


# Failures of issue 43 that are being fixed in other branches: the fuzz tests let a case that
# fails this way pass (noted), the long run counts it as known. Remove an entry once its fix is
# merged: the fuzzing then checks that class again.
KNOWN_FAILURES: list[tuple[str, Callable[[Case, str], bool]]] = [
    # (issue 43's items 1, 3, 4, 7, 8 and 10, and the empty JSON object copied into a Parquet
    # match file that this fuzzing found, are fixed: a failure of one of them is a new one)
]


def known_failure(case: Case, exc: BaseException) -> str | None:
    """The issue item a failure of ``case`` is known as, or ``None`` for a new failure."""
    text = f"{type(exc).__name__}: {exc}"
    return next((item for item, test in KNOWN_FAILURES if test(case, text)), None)


__all__ = ["DEADLINE_S", "Hang", "KNOWN_FAILURES", "Mismatch", "Outcome", "RESULT", "STREAM", "TYPED", "check_text", "cleaned", "cli",
           "NOT_UTF8", "compare_docs", "compare_engines", "compare_reference", "expected_bad", "known_failure", "deadline", "modeled_events", "run_case", "run_engine", "run_events",
           "run_library", "strict_json", "typed_exit"]
