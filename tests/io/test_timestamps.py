"""Text values and timestamps as the readers convert them: one value at a time and a whole
column at once give the same values and kinds."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petricep.io.timestamps import TimeParser, format_has_date
from petricep.io.values import text_value, type_text_array
from tests.io.reading import cell

# --------------------------------------------------------------------------------------
# values and timestamps


def test_timestamp_parser() -> None:
    tp = TimeParser()
    assert tp.parse("5") == (5, "number")
    assert tp.parse("2.5") == (2.5, "number")
    assert tp.parse(7) == (7, "number")
    assert tp.parse("1970-01-01T00:00:01.5") == (1.5, "datetime")
    assert tp.parse("1970-01-01T01:00:00+01:00") == (0, "datetime")
    assert tp.parse("1970-01-01T00:00:00Z") == (0, "datetime")
    for bad in ("", " 5", "abc", "nan", "1e999", "2014-13-45", True, None, float("nan"), [1]):
        with pytest.raises(ValueError):
            tp.parse(bad)
    assert TimeParser(time_unit="ns").parse(1_500_000_000) == (1.5, "number")
    assert TimeParser(time_unit="us").parse("3000000") == (3, "number")
    f = TimeParser("%Y%m%d%H%M")
    assert f.parse("197001010001") == (60, "datetime")
    assert f.parse(197001010002) == (120, "datetime")
    tod = TimeParser("%H:%M:%S.%f")
    assert tod.parse("01:00:00.5") == (3600.5, "datetime")
    assert format_has_date("%Y%m%d") and not format_has_date("%H:%M:%S.%f") and not format_has_date("%%d %H")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(cell, st.none()), min_size=1, max_size=30))
def test_type_text_array_matches_text_value(values: list[str | None]) -> None:
    arr = pa.array([None if v == "" else v for v in values], pa.string())
    got, all_numbers = type_text_array(arr)
    want = [None if v is None else text_value(v) for v in values]
    assert [repr(g) for g in got] == [repr(w) for w in want]
    assert all_numbers == all(isinstance(w, (int, float)) for w in want)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(cell, st.sampled_from(["2014-08-01T00:00:00", "2014-08-01T00:00:00.5+01:00"])),
        min_size=1,
        max_size=20,
    )
)
def test_parse_array_matches_parse(values: list[str]) -> None:
    tp = TimeParser()
    res = tp.parse_array(pa.array(values, pa.string()))
    try:
        want = [tp.parse(v) for v in values]
    except ValueError:
        assert res is None
        return
    kinds = {k for _, k in want}
    if len(kinds) > 1:
        assert res is None
    else:
        assert res is not None
        assert [repr(t) for t in res[0]] == [repr(t) for t, _ in want] and res[1] == kinds.pop()
