"""``petricep run`` under its budgets and under a memory limit (issue 43): an explosive pattern
stops with the budget's message and exit 3 -- ``--max-partial-matches``, ``--max-memory``, a
huge ``--slack`` -- and where the machine's limit comes first, the typed error, never a
``MemoryError`` traceback. Each run is a subprocess with its address space capped
(RLIMIT_AS), so that a regression cannot take the machine down."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from petricep import kernel

ROOT = Path(__file__).resolve().parents[2]
CAP = 4_000_000_000  # bytes of address space: the issue's `ulimit -v 4000000`
KLEENE = "PATTERN p: SEQ(A a, B+ b[], C c) WITHIN 100000\n"
BUDGET = (
    "pattern 'p': 1024 live partial matches, over the run's budget of 1000 (key None holds 1024) at event 10; bound the "
    "pattern with LIMIT n PARTIAL MATCHES, or raise the budget (--max-partial-matches N, Engine(max_partial_matches=N))"
)
HOW = "bound the patterns with a window (WITHIN) or LIMIT n PARTIAL MATCHES, or raise the budget (--max-memory SIZE)"


def capped(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def petricep(tmp_path: Path, events: str, *args: str, pattern: str = KLEENE, cap: int = CAP) -> tuple[int, str]:
    """``petricep run`` over ``events`` (CSV text) with its address space capped at ``cap``:
    the exit status and standard error."""
    (tmp_path / "p.pcep").write_text(pattern)
    (tmp_path / "ev.csv").write_text(events)
    argv = [
        sys.executable, "-m", "petricep", "run", str(tmp_path / "p.pcep"), "--events", str(tmp_path / "ev.csv"),
        "--type-field", "type", "--time-field", "ts", "--no-progress", "-o", str(tmp_path / "out.jsonl"), *args,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120, preexec_fn=lambda: capped(cap)
    )
    return done.returncode, done.stderr


def kleene_rows() -> str:
    """1 A, 60 B, 1 C: 2**k partial matches after k Bs."""
    return "type,ts\nA,0\n" + "".join(f"B,{i}\n" for i in range(1, 61)) + "C,61\n"


@pytest.mark.parametrize("engine", ["local", "python"])
def test_the_kleene_case_stops_at_the_budget(tmp_path: Path, engine: str) -> None:
    """Before: 23.7 GB and the OOM killer on the kernel, also with --max-partial-matches 1000
    (checked after each batch of 4,096 events; here one batch), a MemoryError traceback under
    a 4 GB cap."""
    if engine == "local" and not kernel.available():
        pytest.skip("the compiled kernel is not built or switched off")
    rc, err = petricep(tmp_path, kleene_rows(), "--max-partial-matches", "1000", "--engine", engine)
    assert (rc, err.splitlines()[-1]) == (3, BUDGET)


def test_the_kleene_case_stops_at_the_memory_budget(tmp_path: Path) -> None:
    if not kernel.available():
        pytest.skip("the compiled kernel is not built or switched off")
    rc, err = petricep(tmp_path, kleene_rows(), "--max-memory", "64MB", "--max-partial-matches", "none")
    assert (rc, err.splitlines()[-1]) == (
        3,
        "the run's memory budget of 64.0 MB is used up at event 20: 58.4 MB held (partial matches 41.9 MB, Kleene lists "
        "15.2 MB, a step's new partial matches 1.0 MB, matches held 139.3 KB, events they bind 42.0 KB, per-key lists "
        f"52 B), 41.9 MB more asked for; {HOW}",
    )


def test_no_budget_under_a_memory_limit_is_the_typed_error(tmp_path: Path) -> None:
    """``--max-partial-matches none`` and the process's limit reached first: the MemoryError
    is the budget's typed error (exit 3), not a traceback (exit 1)."""
    rc, err = petricep(tmp_path, kleene_rows(), "--max-partial-matches", "none", cap=2_000_000_000)
    assert rc == 3 and "Traceback" not in err
    assert err.splitlines()[-1] == (
        "out of memory: the machine (or the process's memory limit) ran out before the run's budgets did; set a "
        "budget below it (--max-memory SIZE, --max-partial-matches N) to stop the run with the state named, or "
        "bound the patterns with a window (WITHIN) or LIMIT n PARTIAL MATCHES"
    )


def test_a_huge_slack_counts_against_the_memory_budget(tmp_path: Path) -> None:
    """Every event arrives before the one it follows: the slack holds them all (before, outside
    any budget: 1.18 GB for 2M events)."""
    n = 60_000
    rows = "type,ts,k\n" + "".join(f"{'A' if i % 2 == 0 else 'B'},{n - i},{i // 2}\n" for i in range(n))
    pattern = "PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 1000000000\n"
    rc, err = petricep(tmp_path, rows, "--slack", "1000000000", "--max-memory", "5MB", "--engine", "python", pattern=pattern)
    assert (rc, err.splitlines()[-1]) == (
        3,
        f"the run's memory budget of 5.0 MB is used up at event 10114: 5.1 MB held (events the slack holds 5.1 MB); {HOW}",
    )
    # the kernel behind the reorder stage: the held events and the kernel's arenas (its
    # matches and events too, which it counts) against the same budget, checked alike
    rc, err = petricep(tmp_path, rows, "--slack", "1000000000", "--max-memory", "5MB", pattern=pattern)
    assert (rc, err.splitlines()[-1]) == (
        3,
        "the run's memory budget of 5.0 MB is used up at event 9657: 5.1 MB held (events the slack holds 4.8 MB, "
        f"matches held 113.7 KB, partial matches 73.7 KB, events they bind 42.0 KB, per-key lists 44 B); {HOW}",
    )


def test_a_bad_size_is_a_usage_error(tmp_path: Path) -> None:
    rc, err = petricep(tmp_path, kleene_rows(), "--max-memory", "lots")
    assert rc == 2
    assert err.splitlines()[-1].endswith("argument --max-memory: expected a size such as 512MB, 1GB or 2GiB, not 'lots'")
