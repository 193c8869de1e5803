"""Slices of the real Aarhus traffic data for the streaming tests: the first rows of the
two-week file with a ``seq`` column (the arrival position a stream needs), split into
files whose boundaries fall inside groups of equal timestamps (449 sensors report at
each instant), and the embedded engine's matches over the same rows."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Collection, Sequence
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "aarhus_traffic" / "aarhus_traffic_2014-08-01_to_14.csv.gz"

# a three-event sequence, an end negation and a middle negation on the same key
PATTERNS = """
PATTERN drop: SEQ(traffic a, traffic b, traffic c) WHERE [REPORT_ID] AND a.vehicleCount > 5
  AND b.avgSpeed < a.avgSpeed * 0.8 AND c.avgSpeed < a.avgSpeed * 0.8 WITHIN 30 min
PATTERN no_recovery: SEQ(traffic a, traffic b, !(traffic c)) WHERE [REPORT_ID] AND a.vehicleCount > 5
  AND b.avgSpeed < a.avgSpeed * 0.8 AND c.avgSpeed >= a.avgSpeed WITHIN 30 min
PATTERN dip: SEQ(traffic a, !(traffic m), traffic c) WHERE [REPORT_ID] AND a.vehicleCount > 5
  AND m.avgSpeed > a.avgSpeed AND c.avgSpeed < a.avgSpeed * 0.8 WITHIN 30 min
"""

STREAM_ARGS = ["--type", "traffic", "--time-field", "TIMESTAMP", "--id-field", "_id", "--pos-field", "seq"]


@cache
def rows(n: int) -> tuple[str, tuple[str, ...]]:
    """The header and the first ``n`` data lines, each with its 0-based ``seq``."""
    if not DATA.exists():
        import pytest

        pytest.skip(f"the Aarhus data is not at {DATA}")
    out: list[str] = []
    with gzip.open(DATA, "rt", encoding="utf-8") as fh:
        header = fh.readline().rstrip("\n") + ",seq"
        for i, line in enumerate(fh):
            if i >= n:
                break
            out.append(f"{line.rstrip()},{i}")
    return header, tuple(out)


def write_parts(directory: Path, n: int, size: int, names: Collection[int] | None = None) -> list[Path]:
    """Split the first ``n`` rows into files ``part-1.csv``... of ``size`` rows; only the
    part numbers in ``names`` (all when None). Each file's modification time follows its
    part number, so that a reader taking the oldest first reads them in stream order."""
    header, lines = rows(n)
    directory.mkdir(parents=True, exist_ok=True)
    count = -(-n // size)
    paths = []
    for i in range(1, count + 1):
        if names is not None and i not in names:
            continue
        path = directory / f"part-{i}.csv"
        path.write_text(header + "\n" + "\n".join(lines[(i - 1) * size : i * size]) + "\n")
        set_mtime(path, i)
        paths.append(path)
    return paths


def set_mtime(path: Path, t: int) -> None:
    os.utime(path, (1_000_000 + t, 1_000_000 + t))


def write_all(path: Path, n: int, order: Sequence[int] | None = None, size: int = 0) -> Path:
    """The first ``n`` rows as one CSV file (parts of ``size`` rows in ``order``, when given)."""
    header, lines = rows(n)
    if order is not None:
        lines = tuple(x for i in order for x in lines[(i - 1) * size : i * size])
    path.write_text(header + "\n" + "\n".join(lines) + "\n")
    return path


def canonical(lines: Sequence[str]) -> list[str]:
    return sorted(json.dumps(json.loads(x), sort_keys=True) for x in lines)


def output_lines(directory: Path) -> list[str]:
    """The match lines of a stream's output directory (every part file and the final one)."""
    return [x for f in sorted(directory.glob("part-*.jsonl")) for x in f.read_text().splitlines()]


def embedded(pattern_file: Path, events: Path, tmp: Path, *extra: str) -> tuple[list[str], Any]:
    """``petricep run`` (embedded) over ``events``: its match lines and its stats."""
    from petricep.cli import main

    out, stats = tmp / "embedded.jsonl", tmp / "embedded-stats.json"
    main(["run", str(pattern_file), "--events", str(events), *STREAM_ARGS[:6], "-o", str(out),
          "--stats", str(stats), "--no-progress", *extra])  # fmt: skip
    return out.read_text().splitlines(), json.loads(stats.read_text())
