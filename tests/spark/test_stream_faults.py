"""The streaming fault test (issue 14): ``petricep stream`` killed with SIGKILL at three
random moments while Aarhus files keep arriving out of order (every second pair
swapped) with boundaries inside groups of equal timestamps, restarted from its
checkpoint each time; at the end the union of its output equals a batch ``run`` over
all the events — nothing lost, nothing twice — and the micro-batches' accounting (each
batch's last log line: a replayed batch logs again) counts every event once, none late
(the watermark covers the disorder)."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.spark.aarhus import (
    PATTERNS,
    STREAM_ARGS,
    canonical,
    embedded,
    output_lines,
    set_mtime,
    write_all,
    write_parts,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # four JVMs, started and killed: the slow tier

N, SIZE = 9_000, 1_000
ARRIVAL = [2, 1, 4, 3, 6, 5, 8, 7, 9]
KILLS = 3  # each a JVM start (~10 s of CPU): three random moments, restarts from a restart's checkpoint


def _commits(checkpoint: Path) -> int:
    d = checkpoint / "commits"
    return len([p for p in d.iterdir() if p.name.isdigit()]) if d.is_dir() else 0


def _arrive(directory: Path, rng: random.Random, done: threading.Event) -> None:
    """Write the parts in ARRIVAL order, one every 0.5-2.5 s, modification times in that order."""
    staging = directory.parent / "staging"
    for i, part in enumerate(ARRIVAL):
        time.sleep(rng.uniform(0.5, 2.5))
        (path,) = write_parts(staging, N, SIZE, {part})
        set_mtime(path, i)
        os.replace(path, directory / path.name)  # a file appears whole
    done.set()


def test_sigkill_at_random_moments_loses_nothing(tmp_path: Path) -> None:
    (tmp_path / "p.pcep").write_text(PATTERNS)
    want, _ = embedded(tmp_path / "p.pcep", write_all(tmp_path / "all.csv", N), tmp_path)
    inp, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    inp.mkdir()
    cmd = [sys.executable, "-m", "petricep", "stream", str(tmp_path / "p.pcep"), "--input", str(inp),
           "--output", str(out), "--checkpoint", str(ck), *STREAM_ARGS, "--watermark", "1800",
           "--master", "local[2]", "--partitions", "3", "--max-files-per-trigger", "1"]  # fmt: skip
    env = dict(
        os.environ,
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_SUBMIT_ARGS="--driver-memory 1g --conf spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1 pyspark-shell",
    )
    rng = random.Random(14)
    done = threading.Event()
    writer = threading.Thread(target=_arrive, args=(inp, rng, done), daemon=True)
    writer.start()
    logs = []
    for kill in range(KILLS):
        log = tmp_path / f"log-{kill}.txt"
        logs.append(log)
        before = _commits(ck)
        with open(log, "w") as fh:
            proc = subprocess.Popen(cmd + ["--trigger-seconds", "0.5"], env=env, stdout=fh, stderr=fh, start_new_session=True)
        target, extra = before + rng.randint(0, 2), rng.uniform(0, 2)
        deadline = time.monotonic() + 90
        while proc.poll() is None and _commits(ck) < target and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(extra)
        assert proc.poll() is None, log.read_text()[-2000:]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert done.wait(60)
    # the rest in one micro-batch (after the batch a kill left planned, replayed as planned)
    rest = ["--available-now", "--flush", "--max-files-per-trigger", str(len(ARRIVAL))]
    final = subprocess.run(cmd + rest, env=env, capture_output=True, text=True, timeout=300)
    assert final.returncode == 0, final.stderr[-3000:]
    got = output_lines(out)
    assert len(got) == len(set(got))  # nothing twice
    assert canonical(got) == canonical(want)  # nothing lost, nothing extra
    assert not list(out.glob("late-*.jsonl"))
    batches: dict[int, tuple[int, int]] = {}
    for text in [x.read_text() for x in logs] + [final.stderr]:
        for m in re.finditer(r"^batch (\d+): (\d+) events read = \d+ processed \+ 0 rejected \+ (\d+) late", text, re.M):
            batches[int(m[1])] = (int(m[2]), int(m[3]))
    assert sum(r for r, _ in batches.values()) == N
    assert sum(late for _, late in batches.values()) == 0
    assert "summary: " in final.stderr and "+ 0 late;" in final.stderr
