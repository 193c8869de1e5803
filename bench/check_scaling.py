"""Issue 15: ``petricep check`` on files of many patterns must grow about linearly.

Generates a pattern file of n patterns (varied: SEQ/AND/OR/negation/Kleene, shared prefixes,
partitions, windows, RETURN types read by other patterns) and times ``python -m petricep check``
on it in a fresh process, reporting wall time and the child's peak memory (max RSS).

    python -m bench check_scaling [--sizes 100 1000 10000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TYPES = [f"T{i}" for i in range(40)]


def pattern(i: int, rng: random.Random) -> str:
    """One pattern of a varied file: five shapes, some reading another pattern's RETURN type."""
    a, b, c = (rng.choice(TYPES) for _ in range(3))
    w = rng.choice([10, 60, 300, 3600])
    kind = i % 5
    if kind == 0:
        body = f"SEQ({a} a, {b} b, {c} c) WHERE a.x < b.x AND [k] WITHIN {w} s"
    elif kind == 1:
        body = f"SEQ({a} a, !({c} n), {b} b) WHERE b.x > a.x + {i % 7} WITHIN {w}"
    elif kind == 2:
        body = f"SEQ({a} a, {b}+ b[], {c} c) WHERE b[i].x > b[i-1].x AND skip-till-next-match WITHIN {w} LIMIT 100 PARTIAL MATCHES"
    elif kind == 3:
        body = f"SEQ({a} a, AND({b} b, {c} c)) WHERE [k] WITHIN {w} RETURN R{i}(k = a.k, v = b.x + c.x)"
    else:
        src = f"R{i - 1}" if i >= 1 else a
        body = f"SEQ({src} r, OR({b} b, {c} c)) WHERE [k] WITHIN {w}"
    return f"PATTERN p{i}: {body}\n"


def pattern_file(n: int, seed: int = 15) -> str:
    rng = random.Random(seed)
    return "".join(pattern(i, rng) for i in range(n))


def measure(path: Path) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak MiB, exit code) of ``python -m petricep check path`` in
    a new process (CPU time: user + system of the child, steadier than wall time on a shared
    machine; the peak is the largest child's max RSS so far, so sizes run in increasing order)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "petricep", "check", str(path)], capture_output=True, env=os.environ)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr.decode()[-2000:])
    return seconds, cpu, after.ru_maxrss / 1024, proc.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    ap.add_argument("--keep", help="write the generated files into this directory")
    args = ap.parse_args(argv)
    out_dir = Path(args.keep or tempfile.mkdtemp(prefix="petricep-check-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    print("| patterns | file size | wall time | CPU time | peak memory (max RSS) | CPU s per 1,000 patterns |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        path = out_dir / f"patterns_{n}.pcep"
        path.write_text(pattern_file(n))
        seconds, cpu, peak, rc = measure(path)
        if rc != 0:
            print(f"check failed on {n} patterns (exit {rc})")
            return 1
        size = path.stat().st_size / 1024
        print(f"| {n:,} | {size:,.0f} KiB | {seconds:.1f} s | {cpu:.1f} s | {peak:,.0f} MiB | {cpu / n * 1000:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
