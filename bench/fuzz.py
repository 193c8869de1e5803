"""The long fuzz run of issue 15: the fuzz suite's generators and checks (tests/fuzz), run for
many more inputs, tallying each input's outcome instead of stopping at the first failure:
a result, a typed petricep error, a traceback (any other exception: a bug) or a hang (past
the per-input deadline).

    python -m bench fuzz [--patterns 10000] [--files 10000] [--cases 0] [--minutes 60] [--seed 0]

``--patterns 0``, ``--files 0`` or ``--cases 0`` leaves that part out.

Pattern texts go through ``petricep check`` and through the library (``compile_text`` and an
``Engine`` over a small stream of hostile numbers); event files (CSV and JSON Lines, half each)
through ``petricep run`` in skip and fail mode, checking the skip run's accounting and its
matches against a run over the cleaned file. ``--minutes`` bounds each of the two parts:
inputs not tried in time are not counted.

``--cases N`` is issue 43's part: cases of its input classes (tests/fuzz/strategies.py
``cases``: mixed types per column, JSON lists and objects, surrogate escapes, big cells beside
bad rows, out-of-order timestamps under every tie rule and slack, in every output format)
through ``petricep run`` on the kernel and the Python engine, compared with each other, with
docs/INPUT.md's bad rows and with tests/reference.py's brute force (``run_case``). Each
failure is tallied as a traceback or a mismatch, known (an open issue-43 item,
``KNOWN_FAILURES``) or new, with the shortest example of each distinct cause.
"""

from __future__ import annotations

import argparse
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from tests.fuzz.harness import Hang, Mismatch, check_text, known_failure, run_case, run_events, run_library
from tests.fuzz.strategies import CLASSES, RUN_PATTERNS, Case, cases, csv_files, jsonl_files, pattern_texts


class Tally:
    """Outcomes of one kind of input, with the first example of each traceback's cause."""

    def __init__(self, minutes: float) -> None:
        self.counts: Counter[str] = Counter()
        self.causes: dict[str, str] = {}
        self.stop = time.monotonic() + 60 * minutes
        self.tried = 0

    def record(self, check: Callable[[], str], example: str) -> None:
        try:
            self.counts[check()] += 1
        except Hang:
            self.counts["hang"] += 1
            self.causes.setdefault("hang", example[:300])
        except Exception as exc:  # noqa: BLE001 - what the fuzzing is after
            self.counts["traceback"] += 1
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            cause = f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}: {str(exc)[:200]}"
            self.causes.setdefault(cause, example[:300])

    def over(self) -> bool:
        return time.monotonic() > self.stop


def options(n: int, at: int) -> Any:
    return settings(
        max_examples=n, deadline=None, database=None, phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    ), seed(at)


def fuzz_patterns(n: int, minutes: float, at: int) -> tuple[Tally, Tally]:
    checks, library = Tally(minutes), Tally(minutes)
    if n <= 0:  # this part not asked for
        return checks, library
    conf, fixed = options(n, at)

    @fixed
    @conf
    @given(pattern_texts())
    def one(text: str) -> None:
        if checks.over():
            return
        checks.tried += 1
        library.tried += 1
        with TemporaryDirectory() as d:
            checks.record(lambda: check_text(text.encode("utf-8"), Path(d)), repr(text))
        library.record(lambda: run_library(text), repr(text))

    one()
    return checks, library


def fuzz_files(n: int, minutes: float, at: int) -> Tally:
    files = Tally(minutes)
    if n <= 0:  # this part not asked for
        return files
    conf, fixed = options(n, at)

    @fixed
    @conf
    @given(st.sampled_from(RUN_PATTERNS), st.one_of(csv_files().map(lambda b: (b, ".csv")),
                                                    jsonl_files().map(lambda b: (b, ".jsonl"))))
    def one(pattern: str, file: tuple[bytes, str]) -> None:
        if files.over():
            return
        files.tried += 1
        data, suffix = file
        files.record(lambda: run_events(pattern, data, suffix, data), f"{suffix} {data[:250]!r}")

    one()
    return files


class CaseTally(Tally):
    """Outcomes of issue 43's cases of one input class: also the cases compared with the
    reference, the mismatches, and whether each failure is a known one."""

    def __init__(self, minutes: float) -> None:
        super().__init__(minutes)
        self.shortest: dict[str, str] = {}

    def run(self, case: Case) -> None:
        example = case.describe()
        try:
            kind, compared, engine = run_case(case)
            self.counts[kind] += 1
            self.counts["reference"] += compared
            self.counts["on the kernel"] += engine == "kernel"
            return
        except Hang:
            self.counts["hang"] += 1
            self.causes.setdefault("hang", example[:300])
            return
        except Mismatch as exc:
            self.failed(case, exc, "mismatch", exc.kind)
        except Exception as exc:  # noqa: BLE001 - what the fuzzing is after
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            self.failed(case, exc, "traceback", f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}")

    def failed(self, case: Case, exc: BaseException, what: str, cause: str) -> None:
        """Count a failure under its cause, keeping the shortest example of each."""
        item = known_failure(case, exc)
        self.counts[what] += 1
        self.counts["known" if item else "new"] += 1
        cause = f"{what}: {cause} ({item or 'NEW'})"
        example = case.describe()
        if cause not in self.shortest or len(example) < len(self.shortest[cause]):
            self.shortest[cause] = example
            self.causes[cause] = str(exc)[:400]
        self.counts[cause] += 1


def fuzz_cases(n: int, minutes: float, at: int) -> dict[str, CaseTally]:
    tallies = {cls: CaseTally(minutes) for cls in CLASSES}
    if n <= 0:  # this part not asked for
        return tallies
    stop = tallies[CLASSES[0]]
    conf, fixed = options(n, at)

    @fixed
    @conf
    @given(cases())
    def one(case: Case) -> None:
        if stop.over():
            return
        tally = tallies[case.cls]
        tally.tried += 1
        tally.run(case)

    one()
    return tallies


def report_cases(tallies: dict[str, CaseTally], seconds: float) -> None:
    print(f"\nissue 43's input classes, {seconds:.0f} s:\n")
    print("| class | cases | results | typed errors | on the kernel | vs reference | tracebacks | mismatches | known | new "
          "| hangs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for cls, t in tallies.items():
        c = t.counts
        print(f"| {cls} | {t.tried:,} | {c['result']:,} | {c['typed error']:,} | {c['on the kernel']:,} | {c['reference']:,} | {c['traceback']:,} | "
              f"{c['mismatch']:,} | {c['known']:,} | {c['new']:,} | {c['hang']:,} |")
    for cls, t in tallies.items():
        for cause, example in t.shortest.items():
            print(f"\n* {cls}: {cause}, {t.counts[cause]:,} cases\n  {t.causes[cause]}\n```\n{example[:1500]}\n```")


def report(name: str, tally: Tally, seconds: float) -> None:
    c = tally.counts
    print(f"| {name} | {tally.tried:,} | {c['result']:,} | {c['typed error']:,} | {c['traceback']:,} | {c['hang']:,} | "
          f"{seconds:.0f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench fuzz", description=__doc__.splitlines()[0])
    ap.add_argument("--patterns", type=int, default=10_000, help="pattern texts to try (default 10,000)")
    ap.add_argument("--files", type=int, default=10_000, help="event files to try (default 10,000)")
    ap.add_argument("--cases", type=int, default=0, help="issue 43's cases to try (default 0: not run)")
    ap.add_argument("--minutes", type=float, default=60.0, help="time bound of each part (default 60)")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    checks, library = fuzz_patterns(args.patterns, args.minutes, args.seed)
    t1 = time.monotonic()
    files = fuzz_files(args.files, args.minutes, args.seed)
    t2 = time.monotonic()
    tallies = fuzz_cases(args.cases, args.minutes, args.seed)
    t3 = time.monotonic()
    print("| inputs | tried | results | typed errors | tracebacks | hangs | s |")
    print("|---|---|---|---|---|---|---|")
    report("pattern texts: `petricep check`", checks, t1 - t0)
    report("pattern texts: `compile_text` + `Engine`", library, t1 - t0)
    report("event files (CSV, JSON Lines): `petricep run` skip + fail", files, t2 - t1)
    for tally in (checks, library, files):
        for cause, example in tally.causes.items():
            print(f"* {cause}\n  e.g. {example}")
    if args.cases > 0:
        report_cases(tallies, t3 - t2)
    bad = sum(t.counts["traceback"] + t.counts["hang"] for t in (checks, library, files))
    bad += sum(t.counts["new"] + t.counts["hang"] for t in tallies.values())
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
