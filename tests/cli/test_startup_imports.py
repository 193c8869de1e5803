"""Start-up (issue 16): an embedded ``petricep run`` imports neither pandas nor anything of
Spark, whatever it reads and on either embedded engine; nor Graphviz, snakes, matplotlib or
tqdm, which only drawing, plotting and a progress bar need. pyarrow imports pandas as soon as
a value crosses between Python and Arrow through its own conversions, so this is checked in
a fresh interpreter, after a whole run through the command line's ``main``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from petricep.kernel import run as kernel_run

ROOT = Path(__file__).resolve().parents[2]
PATTERN = "PATTERN rise: SEQ(A a, B b) WHERE [k] AND b.x > a.x AND a.x > 1 WITHIN 10\n"
ROWS = [
    {"type": "A", "ts": 1, "id": 10, "k": "u", "x": 5},
    {"type": "A", "ts": 2, "id": 11, "k": "v", "x": 0.5},
    {"type": "B", "ts": 3, "id": 12, "k": "u", "x": 7},
]
#: modules an embedded run (without a progress bar) never needs
HEAVY = ("pandas", "pyspark", "graphviz", "snakes", "matplotlib", "tqdm")


def _write_events(tmp_path: Path, fmt: str) -> Path:
    path = tmp_path / f"ev.{fmt}"
    if fmt == "csv":
        path.write_text("type,ts,id,k,x\n" + "".join(f"{r['type']},{r['ts']},{r['id']},{r['k']},{r['x']}\n" for r in ROWS))
    elif fmt == "stamps":  # (date-time stamps read with --time-format: the kernel's DigitFormat)
        path = tmp_path / "ev.csv"
        path.write_text("type,ts,id,k,x\n" + "".join(
            f"{r['type']},201307011530{r['ts']:02d},{r['id']},{r['k']},{r['x']}\n" for r in ROWS))
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    else:
        pq.write_table(pa.Table.from_pylist(ROWS), path)
    return path


@pytest.mark.parametrize("engine", ["python", "kernel"])
@pytest.mark.parametrize("fmt", ["csv", "stamps", "jsonl", "parquet"])
def test_an_embedded_run_imports_no_pandas_spark_or_drawing_library(tmp_path: Path, fmt: str, engine: str) -> None:
    if engine == "kernel" and kernel_run._kernel is None:  # pragma: no cover - depends on the build
        pytest.skip("the compiled kernel is not built")
    (tmp_path / "p.pcep").write_text(PATTERN)
    events = _write_events(tmp_path, fmt)
    out = tmp_path / "m.jsonl"
    argv = ["run", str(tmp_path / "p.pcep"), "--events", str(events), "--type-field", "type", "--time-field", "ts",
            "--id-field", "id", "--engine", engine, "--no-progress", "-o", str(out)]  # fmt: skip
    if fmt == "stamps":
        argv += ["--time-format", "%Y%m%d%H%M%S"]
    code = (
        "import sys\n"
        "from petricep.cli import main\n"
        f"rc = main({argv!r})\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})\n"
        "print(rc, heavy)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert proc.stdout == "0 []\n", proc.stdout + proc.stderr
    assert [json.loads(line)["ids"] for line in out.read_text().splitlines()] == [{"a": 10, "b": 12}]
