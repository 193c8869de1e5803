"""A match's JSON Lines record, whole and in parts."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from petricep.output.jsonl import match_json, match_json_parts
from petricep.runtime.match import Match
from tests.budget import examples

scalars = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(),  # NaN and infinities included: null
    st.text(max_size=4),
    st.booleans(),
    st.none(),
    st.integers(-5, 5).map(np.int64),
)
names = st.text(min_size=1, max_size=3)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.text(max_size=4),
    st.dictionaries(names, st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=3),
    scalars,
    scalars,
    st.dictionaries(names, scalars, max_size=3),
    st.none() | st.tuples(st.text(max_size=3), scalars),
)
def test_the_parts_make_the_line(pattern: str, ids: dict[str, Any], start: Any, end: Any, attrs: dict[str, Any], timeout: Any) -> None:
    m = Match(pattern, ids, start, end, attrs, timeout=timeout)
    line, ids_text, attrs_text = match_json_parts(m)
    assert line == match_json(m)
    record = json.loads(line)
    assert json.loads(ids_text) == record["ids"] and json.loads(attrs_text) == record["attrs"]


def test_the_parts_by_hand() -> None:
    m = Match("jam", {"a": 1, "b": [2, 3]}, float("inf"), 20, {"x": "ü"}, timeout=("B", 30))
    assert match_json_parts(m) == (
        '{"pattern": "jam", "ids": {"a": 1, "b": [2, 3]}, "start": null, "end": 20, "attrs": {"x": "ü"}, '
        '"timeout": {"type": "B", "deadline": 30}}',
        '{"a": 1, "b": [2, 3]}',
        '{"x": "ü"}',
    )


def test_the_parts_of_a_row_match() -> None:
    """A SQL ALL ROWS PER MATCH match's record has its row too."""
    from petricep.runtime.rows import RowMatch

    m = RowMatch("w", {"A": [1, 2], "B": 3}, 1, 4, {"n": 2}, row=1)
    assert match_json_parts(m) == (match_json(m), '{"A": [1, 2], "B": 3}', '{"n": 2}')
    assert match_json(m).endswith(', "row": 1}')
