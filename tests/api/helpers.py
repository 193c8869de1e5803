"""Shared by the API tests: the CLI's JSON Lines for a run, and those lines flattened into
the rows ``petricep.match`` promises (the rules of ``petricep.output.table``, written out)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
STOCKS = ROOT / "examples/data/stocks.csv"


def cli_run(tmp: Path, patterns: Sequence[str | Path], events: str | Path, *options: str) -> bytes:
    """``petricep run`` in a fresh interpreter; the bytes of its ``-o`` file."""
    out = tmp / "cli.jsonl"
    argv = [sys.executable, "-m", "petricep", "run", *map(str, patterns), "--events", str(events), *options, "-o", str(out)]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return out.read_bytes()


def flat_rows(
    lines: bytes,
    variables: Sequence[str],
    lists: set[str] = frozenset(),  # type: ignore[assignment]
    fields: Mapping[tuple[str, str], str] | None = None,
) -> list[dict[str, Any]]:
    """The CLI's records as table rows: ids per variable (None where unbound, a list for a
    list variable), start, end, then each attribute under its column (``fields``:
    (pattern, attr) -> column; by default the attribute's own name)."""
    columns = list(dict.fromkeys((fields or {}).values()))
    rows = []
    for line in lines.decode().splitlines():
        rec = json.loads(line)
        row: dict[str, Any] = {"pattern": rec["pattern"]}
        for v in variables:
            x = rec["ids"].get(v)
            row[v] = [x] if v in lists and x is not None and not isinstance(x, list) else x
        row["start"], row["end"] = rec["start"], rec["end"]
        for c in columns:
            row[c] = None
        for k, val in rec["attrs"].items():
            row[(fields or {}).get((rec["pattern"], k), k)] = val
        rows.append(row)
    return rows
