"""The 2-event ``run --engine spark`` (issue 39: <= 8 s wall, JVM start included), trees
alternately: each run a fresh process (its own JVM), its wall seconds and the CPU seconds
of its whole process tree (the JVM and its Python workers: this process is their child
subreaper and reaps them before reading ``RUSAGE_CHILDREN``).

    python -m bench.spark_small --trees main=/work/main,branch=. --rounds 3
    python -m bench.spark_small --trees branch=. --env PETRICEP_SPARK_PRESTART=0
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EVENTS = "id,type,ts,x\n1,A,1,1\n2,B,2,2\n"
PATTERN = "PATTERN SEQ(A a, B b)\nWHERE a.x < b.x\nWITHIN 10\n"


def one_run(tree: str, work: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, CPU s of the process tree, exit status) of one run with ``tree`` on PYTHONPATH."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    args = [sys.executable, "-m", "petricep", "run", str(work / "p.pcep"), "--events", str(work / "two.csv"),
            "--type-field", "type", "--time-field", "ts", "--id-field", "id", "--engine", "spark"]  # fmt: skip
    started = time.perf_counter()
    rc = subprocess.call(args, env={**os.environ, **env, "PYTHONPATH": os.path.abspath(tree)},
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    wall = time.perf_counter() - started
    while True:  # the JVM and its workers, orphaned to this process
        try:
            os.wait()
        except ChildProcessError:
            break
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, rc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.spark_small", description=__doc__.split("\n\n")[0])
    ap.add_argument("--trees", default="tree=.", help="name=path,... (each a petricep tree, run alternately)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for every run")
    args = ap.parse_args(argv)
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    trees = [t.split("=", 1) for t in args.trees.split(",")]
    env = dict(e.split("=", 1) for e in args.env)
    work = Path(tempfile.mkdtemp(prefix="petricep-small-"))
    (work / "two.csv").write_text(EVENTS)
    (work / "p.pcep").write_text(PATTERN)
    walls: dict[str, list[float]] = {name: [] for name, _ in trees}
    for rnd in range(args.rounds):
        for name, path in trees:
            load = os.getloadavg()[0]
            wall, cpu, rc = one_run(path, work, env)
            walls[name].append(wall)
            print(f"round {rnd} {name}: {wall:.2f} s wall, {cpu:.2f} CPU s, exit {rc}, load {load:.2f}", flush=True)
    for name, ws in walls.items():
        print(f"{name}: median {statistics.median(ws):.2f} s ({', '.join(f'{w:.2f}' for w in ws)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
