"""``petricep.match`` reads its inputs by the command line's rules (docs/INPUT.md): a field a
pattern reads must hold one value, in every kind of input, with the same error or skip."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from petricep.api.frames import match, run_matches
from petricep.errors import EventError
from petricep.lang.parser import parse_text
from petricep.merge import build_net

from .helpers import ROOT

KEYED = "PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 10"
OPTS: dict[str, Any] = {"type_field": "type", "time_field": "ts"}
# row 2 (an A) has no key: the CLI stops there (fail) or skips it; it is never a key of its own
FRAME = pd.DataFrame({"type": ["A", "B", "A", "B", "A", "B"], "ts": [1, 2, 3, 4, 5, 6], "k": ["x", "x", None, "x", "x", "x"]})
SKIPPED = [{"a": 0, "b": 1}, {"a": 0, "b": 3}, {"a": 0, "b": 5}, {"a": 4, "b": 5}]


def _inputs(tmp: Path) -> dict[str, tuple[Any, str]]:
    """The frame as every kind of input, with how its errors name row 2's key."""
    table = pa.Table.from_pandas(FRAME, preserve_index=False)
    FRAME.to_csv(tmp / "ev.csv", index=False)
    pq.write_table(table, tmp / "ev.parquet")
    (tmp / "ev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in FRAME.to_dict("records")))
    return {
        "pandas None": (FRAME, "DataFrame row 2, column 'k'"),
        "pandas NaN": (FRAME.assign(k=[1.0, 1.0, np.nan, 1.0, 1.0, 1.0]), "DataFrame row 2, column 'k'"),
        "arrow": (table, "Arrow table row 2, column 'k'"),
        "records": (FRAME.to_dict("records"), "records row 2, column 'k'"),
        "csv": (str(tmp / "ev.csv"), f"{tmp / 'ev.csv'}:4: field 'k'"),
        "parquet": (str(tmp / "ev.parquet"), f"{tmp / 'ev.parquet'}:2: field 'k'"),
        "jsonl": (str(tmp / "ev.jsonl"), f"{tmp / 'ev.jsonl'}:3: field 'k'"),
    }


def test_a_missing_key_is_an_error_of_its_row_in_every_input(tmp_path: Path) -> None:
    for kind, (events, where) in _inputs(tmp_path).items():
        for engine in ("kernel", "python"):
            with pytest.raises(EventError) as e:
                match(events, KEYED, engine=engine, **OPTS)
            assert (kind, str(e.value)) == (kind, f"{where}: error: missing value")
            assert e.value.row == (4 if kind == "csv" else 3 if kind == "jsonl" else 2)


def test_a_missing_key_is_skipped_as_the_cli_skips_it(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path)
    (tmp_path / "keyed.pcep").write_text(KEYED + "\n")
    argv = [sys.executable, "-m", "petricep", "run", str(tmp_path / "keyed.pcep"), "--events", str(tmp_path / "ev.csv"),
            "--type-field", "type", "--time-field", "ts", "--on-error", "skip"]
    cli = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    assert cli.returncode == 3  # a run that rejected rows
    assert [json.loads(x)["ids"] for x in cli.stdout.splitlines()] == SKIPPED
    for kind, (events, _) in inputs.items():
        run = run_matches(events, KEYED, on_error="skip", **OPTS)
        assert (kind, [m.ids for m in run.matches]) == (kind, SKIPPED)
        assert (kind, run.report["events"]["rejected"]) == (kind, 1)


def test_a_compiled_net_reads_by_its_patterns_rules() -> None:
    pattern = parse_text(KEYED, "<net>").patterns[0]
    net = build_net([pattern], True)
    with pytest.raises(EventError) as e:
        match(FRAME, net, **OPTS)
    assert str(e.value) == "DataFrame row 2, column 'k': error: missing value"
