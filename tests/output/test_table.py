"""The match file's format, read from its name (``petricep.output.table``)."""

from __future__ import annotations

import pytest

from petricep.errors import ConfigError
from petricep.output.table import output_format


def test_output_format_by_extension() -> None:
    assert [output_format(p) for p in ("a.jsonl", "b.PARQUET", "c.csv", "d.ndjson")] == ["jsonl", "parquet", "csv", "jsonl"]
    with pytest.raises(ConfigError) as e:
        output_format("out.txt")
    assert str(e.value) == "cannot tell the match file format from 'out.txt': end it in .jsonl, .parquet or .csv"
