"""Batches as columns for the kernel alone (``items(as_columns=True, fields_only=True)``):
the type and time columns are not turned into Python values unless a pattern reads them,
every other column is exactly what the events carry, and runs give the same match file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as csv
import pyarrow.parquet as pq
import pytest

from petricep.api import compile_text
from petricep.events import EventColumns
from petricep.io import InputSpec, open_events
from petricep.runtime.prefilter import Prefilter

from .reading import write

CSV = "kind,when,id,x,note\n" + "".join(
    f"{'AB'[i % 2]},2014-08-01T07:{i // 60:02d}:{i % 60:02d},e{i},{i % 7},n{i % 3}\n" for i in range(200)
)
SPEC: dict[str, Any] = {"type_field": "kind", "time_field": "when", "id_field": "id"}


def _batches(path: str, pattern: str, fields_only: bool) -> list[EventColumns]:
    source = open_events(InputSpec(path, **SPEC))
    source.row_filter = Prefilter(compile_text(pattern))
    items = list(source.items(as_columns=True, fields_only=fields_only))
    assert items and all(isinstance(b, EventColumns) for b in items)
    return items  # type: ignore[return-value]


def _listed(col: Any) -> list[Any]:
    return col.tolist() if hasattr(col, "tolist") else list(col)


@pytest.mark.parametrize("name", ["e.csv", "e.csv.gz", "e.parquet"])
def test_type_and_time_columns_stay_unconverted(tmp_path: Path, name: str) -> None:
    """A pattern reading x only: the batch carries x and the id, not kind and when; the
    times and types are those of the full batch."""
    if name.endswith(".parquet"):
        path = str(tmp_path / name)
        text = {c: pa.string() for c in ("kind", "when", "id", "note")}
        pq.write_table(csv.read_csv(pa.py_buffer(CSV.encode()), convert_options=csv.ConvertOptions(column_types=text)), path)
    else:
        path = write(tmp_path, name, CSV)
    pattern = "PATTERN p: SEQ(A a, B b) WHERE b.x > a.x WITHIN 1 h"
    lean = _batches(path, pattern, True)
    full = _batches(path, pattern, False)
    assert [sorted(b.attrs) for b in lean] == [["id", "x"]]
    assert [sorted(b.attrs) for b in full] == [["id", "kind", "when", "x"]]
    (a,), (b,) = lean, full
    assert _listed(a.attrs["x"]) == _listed(b.attrs["x"]) == [i % 7 for i in range(200)]
    assert _listed(a.ids) == _listed(b.ids) == [f"e{i}" for i in range(200)]
    assert _listed(a.ts) == _listed(b.ts) and _listed(a.ts)[:2] == [1406876400, 1406876401]
    assert list(a.types.names) == list(b.types.names) == ["A", "B"]


def test_a_pattern_reading_the_type_and_time_fields_gets_them(tmp_path: Path) -> None:
    path = write(tmp_path, "e.csv", CSV)
    (batch,) = _batches(path, "PATTERN p: SEQ(A a, B b) WHERE a.kind = 'A' AND b.when != a.when WITHIN 1 h", True)
    assert sorted(batch.attrs) == ["id", "kind", "when"]
    assert _listed(batch.attrs["kind"])[:3] == ["A", "B", "A"]
    assert _listed(batch.attrs["when"])[:2] == ["2014-08-01T07:00:00", "2014-08-01T07:00:01"]


@pytest.mark.parametrize("extra", [(), ("--with-events",)])
def test_runs_reading_type_and_time_as_fields_give_the_engines_file(run_cli: Any, tmp_path: Path, extra: tuple[str, ...]) -> None:
    """The kernel (fields only; with bound events, every field) and the Python engine write
    the same file, conditions on the type and time fields included."""
    ev = write(tmp_path, "e.csv", CSV)
    pf = tmp_path / "p.pcep"
    pf.write_text(
        "PATTERN p: SEQ(A a, B b) WHERE a.kind = 'A' AND b.when != a.when AND b.x > a.x WITHIN 10 s\n"
        "PATTERN q: SEQ(B a, A b) WHERE b.x < a.x WITHIN 5 s\n"
    )
    opts = ("--events", ev, "--type-field", "kind", "--time-field", "when", "--id-field", "id", *extra)
    rc_py, out_py, _ = run_cli("run", str(pf), *opts, "--engine", "python")
    rc_k, out_k, _ = run_cli("run", str(pf), *opts, "--engine", "kernel")
    assert rc_py == rc_k == 0
    assert out_k == out_py and out_py.count("\n") > 50
