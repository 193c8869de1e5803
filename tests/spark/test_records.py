"""A match as the firing stage's row (pure Python, no Spark): its parts are the JSON
Lines record's own."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from petricep.output.jsonl import match_json
from petricep.runtime.match import Match
from petricep.spark.records import match_row
from tests.output.test_jsonl import names, scalars


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(names, st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=3),
    st.dictionaries(names, scalars, max_size=3),
)
def test_a_match_row_holds_its_records_ids_and_attrs(ids: dict[str, Any], attrs: dict[str, Any]) -> None:
    m = Match("p", ids, 1, 2.5, attrs)
    row = match_row(m, 7, 1, 3)
    line = match_json(m)
    record = json.loads(line)
    assert row[1] == json.dumps(record["ids"], ensure_ascii=False, separators=(", ", ": "))
    assert row[4] == json.dumps(record["attrs"], ensure_ascii=False, separators=(", ", ": "))
    assert row[0] == "p" and row[2:4] == (1.0, 2.5) and row[5] == line and row[6:] == (7, 1, 3, None)


def test_a_match_row_by_hand() -> None:
    m = Match("jam", {"a": 1, "b": [2, 3]}, 10, 20, {"drop": float("nan"), "name": "ü"})
    assert match_row(m, 5, 0, 0)[1:6] == (
        '{"a": 1, "b": [2, 3]}',
        10.0,
        20.0,
        '{"drop": null, "name": "ü"}',
        '{"pattern": "jam", "ids": {"a": 1, "b": [2, 3]}, "start": 10, "end": 20, "attrs": {"drop": null, "name": "ü"}}',
    )
