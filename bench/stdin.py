"""Standard input against the same file by path, the kernel against the Python engine, side by side.

    python -m bench.stdin [--rows N] [--repeat R]

Writes an N-row CSV (two event types, 1,000 keys, integer times) and the pattern
``SEQ(A a, B b) WHERE [k] WITHIN 5``, then times three whole ``petricep run`` processes,
alternating, best of R: ``cat f | petricep run ... --events -`` on the kernel (the default),
the same pipe with ``--engine python``, and the kernel reading the file by its path. Prints
each one's wall seconds, events/s and the summary's engine line, checks that the three match
files are byte for byte the same, and the ratios (issue 40: standard input on the kernel in
small batches, each a read's worth of lines).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATTERN = "PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 5\n"
ARGS = ["--format", "csv", "--type-field", "type", "--time-field", "ts", "--no-progress"]
RUNS = {
    "stdin, kernel": ("-", []),
    "stdin, --engine python": ("-", ["--engine", "python"]),
    "file by path, kernel": ("FILE", []),
}


def write_input(rows: int, path: Path) -> None:
    """``rows`` events: A then B on key ``i % 1000``, one time step each."""
    lines = ["type,ts,k,x\n"]
    lines += [f"{'AB'[i % 2]},{i // 2},{(i // 2) % 1000},{i % 7}\n" for i in range(rows)]
    path.write_text("".join(lines), encoding="utf-8")


def timed(name: str, pattern: Path, events: Path, out: Path) -> tuple[float, str]:
    """One whole process's wall seconds and its summary's engine line."""
    source, extra = RUNS[name]
    cmd = [sys.executable, "-m", "petricep", "run", str(pattern), "--events", str(events) if source == "FILE" else "-",
           *ARGS, *extra, "-o", str(out)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started = time.perf_counter()
    if source == "FILE":
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    else:
        with open(events, "rb") as f:
            cat = subprocess.Popen(["cat"], stdin=f, stdout=subprocess.PIPE)
            done = subprocess.run(cmd, env=env, stdin=cat.stdout, capture_output=True, text=True, check=True)
            assert cat.stdout is not None
            cat.stdout.close()
            cat.wait()
    wall = time.perf_counter() - started
    engine = [line.strip() for line in done.stderr.splitlines() if line.strip().startswith("engine:")]
    return wall, engine[-1] if engine else "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        pattern, events = tmp / "p.pcep", tmp / "ev.csv"
        pattern.write_text(PATTERN)
        write_input(args.rows, events)
        best: dict[str, float] = {}
        engines: dict[str, str] = {}
        outputs: dict[str, bytes] = {}
        for _ in range(args.repeat):
            for k, name in enumerate(RUNS):
                out = tmp / f"out{k}.jsonl"
                wall, engines[name] = timed(name, pattern, events, out)
                best[name] = min(best.get(name, wall), wall)
                outputs[name] = out.read_bytes()
        same = len(set(outputs.values())) == 1
        matches = next(iter(outputs.values())).count(b"\n")
        print(f"{args.rows:,} rows, {matches:,} matches, match files identical: {same}; best of {args.repeat}")
        for name, wall in best.items():
            print(f"  {name:24s} {wall:7.3f} s  {args.rows / wall:>12,.0f} events/s  ({engines[name]})")
        stdin_k, stdin_py, path_k = (best[n] for n in RUNS)
        print(f"  stdin kernel / stdin python: {stdin_py / stdin_k:.2f}x faster; stdin kernel / file by path: "
              f"{path_k / stdin_k:.2f} of its speed")
        if not same:
            sys.exit("the match files differ")


if __name__ == "__main__":
    main()
