"""A match as the firing stage's row (pure Python, no Spark): its parts are the JSON
Lines record's own."""

from __future__ import annotations

import datetime
import json
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petricep.errors import ConfigError
from petricep.events import Event
from petricep.output.jsonl import match_json
from petricep.runtime.match import Match
from petricep.spark.records import decode, decode_columns, encode, encode_fields, match_row
from tests.budget import examples
from tests.output.test_jsonl import names, scalars


@settings(max_examples=examples(300), deadline=None)
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


_TZS = st.sampled_from(
    [None, datetime.timezone.utc, datetime.timezone(datetime.timedelta(hours=-5, minutes=-30)), "Europe/Berlin"]
)
_ODD = st.one_of(
    st.builds(
        lambda dt, tz: dt.replace(tzinfo=ZoneInfo(tz) if isinstance(tz, str) else tz), st.datetimes(), _TZS
    ),
    st.dates(),
    st.times(timezones=st.sampled_from([datetime.timezone.utc, datetime.timezone(datetime.timedelta(hours=3))])),
    st.times(),
    st.timedeltas(),
    st.decimals(allow_nan=False),
)
# (numpy scalars are left out: marshal writes them as their bytes, an earlier limit of the fast path)
_PLAIN = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4), st.binary(max_size=4))
_VALUE = st.recursive(
    st.one_of(_PLAIN, _ODD),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner), st.dictionaries(names, inner, max_size=2)),
    max_leaves=6,
)


@settings(max_examples=examples(300), deadline=None)
@given(st.dictionaries(names, _VALUE, max_size=4), st.booleans())
def test_an_events_values_travel_exactly_without_pickle(attrs: dict[str, Any], fields: bool) -> None:
    """Values ``marshal`` does not know (date-times, decimals, tuples among them) travel as
    tagged plain values: decoded equal and of the same types, as a streaming checkpoint
    keeps them (never unpickled)."""
    e = Event("A", 3, 7, "id", attrs)
    names_ = tuple(attrs)
    data = encode_fields(e, names_) if fields else encode(e)
    got = decode(data, 7, False, names_)
    assert (got.type, got.ts, got.id) == ("A", 3, "id")
    assert _typed(got.attrs) == _typed(attrs)
    cols = decode_columns([data], [7], False, names_)
    assert _typed(cols.event(0).attrs) == _typed(attrs)


def _typed(v: Any) -> Any:
    """``v`` with the type of every value beside it (``1 == 1.0 == True`` otherwise; a
    zone's name too)."""
    if isinstance(v, dict):
        return {k: _typed(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_typed(x) for x in v])
    if isinstance(v, float) and v != v:
        return ("nan",)
    tz = getattr(v, "tzinfo", None)
    return (type(v).__name__, repr(v), str(tz))


def test_a_value_of_another_type_is_refused() -> None:
    class Odd:
        def __repr__(self) -> str:
            return "Odd()"

    with pytest.raises(ConfigError) as err:
        encode(Event("A", 0, 0, 0, {"x": Odd()}))
    assert str(err.value) == (
        "an event value of type Odd (Odd()) cannot travel between Spark stages (numbers, text, bytes, booleans, "
        "date-times with a fixed offset or a named zone, decimals, lists and dicts can)"
    )


def test_side_values_travel_without_pickle() -> None:
    """The parse stage's side rows (clock runs, counts, errors, facts) as plain bytes."""
    import numpy as np

    from petricep.spark.records import RowError, dump_value, load_value

    value = ([(1.5, 0, 3), (2, 4, 4)], ({0: 3}, [7]), (5, "bad", None, True, False), {"ids": {"int"}, "time": set()})
    assert load_value(dump_value(value)) == value
    assert RowError(*load_value(dump_value((5, "bad", "x", False, True)))) == RowError(5, "bad", "x", False, True)
    got = load_value(dump_value([np.float32(1.5), np.int16(-3)]))
    assert [(type(x), x) for x in got] == [(np.float32, 1.5), (np.int16, -3)]
