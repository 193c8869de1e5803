"""Text values and timestamps as the readers convert them: one value at a time and a whole
column at once give the same values and kinds."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petricep.io.timestamps import TimeParser, fixed_digit_seconds, format_has_date, format_hint
from petricep.io.values import plain_ints, text_value, type_text_array
from tests.budget import examples
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


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.one_of(cell, st.none()), min_size=1, max_size=30))
def test_type_text_array_matches_text_value(values: list[str | None]) -> None:
    arr = pa.array([None if v == "" else v for v in values], pa.string())
    got, all_numbers = type_text_array(arr)
    want = [None if v is None else text_value(v) for v in values]
    assert [repr(g) for g in got] == [repr(w) for w in want]
    assert all_numbers == all(isinstance(w, (int, float)) for w in want)


@settings(max_examples=examples(60), deadline=None)
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


DIGIT_FORMATS = ["%Y%m%d%H%M", "%Y-%m-%d %H:%M:%S", "%d/%m/%Y", "%Y%m%d", "%H%M%Y%m%d%S", "%Y.%m.%dT%H"]


@settings(max_examples=examples(150), deadline=None)
@given(fmt=st.sampled_from(DIGIT_FORMATS),
       moments=st.lists(st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31)), min_size=1, max_size=20),
       edits=st.lists(st.tuples(st.integers(0, 19), st.integers(0, 18), st.sampled_from("0123456789x-: /")), max_size=3))
def test_fixed_digit_formats_read_as_strptime_does(fmt: str, moments: list[datetime], edits: list[tuple[int, int, str]]) -> None:
    # the column fast path for fixed-width digit formats gives each value's parse, or None
    # (the caller then parses value by value) wherever some value is not one strptime reads
    texts = [m.strftime(fmt) for m in moments]
    assert fixed_digit_seconds(pa.array(texts), fmt) is not None  # (unedited: always the fast path)
    for row, at, ch in edits:
        if row < len(texts) and at < len(texts[row]):
            texts[row] = texts[row][:at] + ch + texts[row][at + 1:]
    parser = TimeParser(fmt)
    try:
        want: list[int | float] | None = [parser.parse(t)[0] for t in texts]
    except ValueError:
        want = None
    got = fixed_digit_seconds(pa.array(texts).slice(0), fmt)
    if want is None:
        assert got is None
    elif got is not None:
        assert got.tolist() == want
    column = parser.parse_array(pa.array(texts))
    assert column == (None if want is None else (want, "datetime"))


def test_fixed_digit_seconds_takes_sliced_and_large_columns_and_refuses_other_formats() -> None:
    texts = ["197001010001", "201307011530", "200002291200", "190002281200"]
    want = [60, 1372692600, 951825600, -2203934400]
    assert fixed_digit_seconds(pa.array(["x"] + texts).slice(1), "%Y%m%d%H%M").tolist() == want  # type: ignore[union-attr]
    assert fixed_digit_seconds(pa.array(texts, pa.large_string()), "%Y%m%d%H%M").tolist() == want  # type: ignore[union-attr]
    assert fixed_digit_seconds(pa.array(["190002291200"]), "%Y%m%d%H%M") is None  # (1900 is no leap year)
    for fmt in ("%H:%M", "%Y%m%d%H%M%f", "%Y\t%m%d", "%Y%m%d%Y", "%Y%b%d"):
        assert fixed_digit_seconds(pa.array(["2013"]), fmt) is None
    assert fixed_digit_seconds(pa.array(["201307011530", None]), "%Y%m%d%H%M") is None


def arrow_plain_ints(arr: pa.Array) -> list[int] | None:
    """plain_ints' rule by Arrow alone: every value ``-?[0-9]+`` within int64."""
    try:
        ints = pc.cast(arr, pa.int64())
    except (pa.ArrowInvalid, OverflowError):
        return None
    ok = pc.all(pc.ascii_is_decimal(pc.utf8_ltrim(arr, characters="-"))).as_py()
    return ints.to_pylist() if ok and all(s.count("-") <= 1 for s in arr.to_pylist()) else None


INT_TEXTS = st.one_of(st.integers(-2**63, 2**63 - 1).map(str), st.integers(-2**64, 2**64).map(str),
                      st.sampled_from(["", "-", "+5", " 5", "5 ", "007", "-0", "--1", "1e3", "0x1f", "١٢", "9" * 19, "-" + "9" * 19]))


@settings(max_examples=examples(200), deadline=None)
@given(texts=st.lists(INT_TEXTS, min_size=1, max_size=12), start=st.integers(0, 3), large=st.booleans())
def test_plain_ints_reads_what_arrow_reads(texts: list[str], start: int, large: bool) -> None:
    # the kernel's one-pass reader of decimal text gives Arrow's ints, or None where it does
    arr = pa.array(["1"] * start + texts, pa.large_string() if large else pa.string()).slice(start)
    got = plain_ints(arr)
    assert (None if got is None else got.to_pylist()) == arrow_plain_ints(arr)


@settings(max_examples=examples(100), deadline=None)
@given(fmt=st.sampled_from(["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"]),
       moments=st.lists(st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31)), min_size=1, max_size=10),
       edits=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 19), st.sampled_from("09xTZ :-")), max_size=2))
def test_iso_columns_without_a_format_read_as_fromisoformat_does(fmt: str, moments: list[datetime],
                                                              edits: list[tuple[int, int, str]]) -> None:
    # ISO date-times without fraction or offset take the fixed-digit path with no format given;
    # whatever it gives is what each value's parse gives
    texts = [m.strftime(fmt) for m in moments]
    for row, at, ch in edits:
        if row < len(texts) and at < len(texts[row]):
            texts[row] = texts[row][:at] + ch + texts[row][at + 1:]
    parser = TimeParser()
    try:
        want: list[tuple[float, str]] | None = [parser.parse(t) for t in texts]
    except ValueError:
        want = None
    got = parser.parse_array(pa.array(texts))
    if want is None or len({k for _, k in want}) > 1:
        assert got is None
    else:
        assert got == ([v for v, _ in want], want[0][1])


def test_without_the_compiled_readers_text_columns_are_read_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    # the C readers (petricep.io._textparse): where they are not built, Arrow and the
    # value-by-value path give the same values
    import petricep.io.timestamps as ts_module
    import petricep.io.values as values_module

    ints, stamps = pa.array(["12", "-7", "007"]), pa.array(["201307011530", "201307011531"])
    iso = pa.array(["2014-08-01T07:50:00", "2014-08-01T07:55:00"])
    fast_ints = plain_ints(ints)
    assert fast_ints is not None
    fast = (fast_ints.to_pylist(), TimeParser("%Y%m%d%H%M").parse_array(stamps), TimeParser().parse_array(iso))
    monkeypatch.setattr(values_module, "_textparse", None)
    monkeypatch.setattr(ts_module, "_textparse", None)
    ts_module._digit_format.cache_clear()
    try:
        assert fixed_digit_seconds(stamps, "%Y%m%d%H%M") is None
        slow_ints = plain_ints(ints)
        assert slow_ints is not None
        slow = (slow_ints.to_pylist(), TimeParser("%Y%m%d%H%M").parse_array(stamps), TimeParser().parse_array(iso))
    finally:
        ts_module._digit_format.cache_clear()
    assert fast == slow == ([12, -7, 7], ([1372692600, 1372692660], "datetime"), ([1406879400, 1406879700], "datetime"))


def test_reading_text_columns_loads_the_compiled_readers_not_the_firing_kernel() -> None:
    # the readers' C passes are a module of their own (issue 40): a reader does not load the
    # kernel that fires nets, in a fresh interpreter
    code = (
        "import sys, pyarrow as pa\n"
        "from petricep.io.timestamps import fixed_digit_seconds\n"
        "from petricep.io.values import plain_ints\n"
        "got = (fixed_digit_seconds(pa.array(['201307011530']), '%Y%m%d%H%M').tolist(),"
        " plain_ints(pa.array(['-4'])).to_pylist())\n"
        "print(got, sorted(m for m in sys.modules if m.startswith('petricep.kernel')))\n"
    )
    from petricep.io import values as values_module

    if values_module._textparse is None:  # pragma: no cover - depends on the build
        pytest.skip("the compiled readers are not built")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "([1372692600], [-4]) []"


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        ("03/12/2026 10:00", "; give --time-format '%d/%m/%Y %H:%M' (or '%m/%d/%Y %H:%M', month first)"),
        ("25/12/2026", "; give --time-format '%d/%m/%Y'"),
        ("12/25/2026 10:00:05", "; give --time-format '%m/%d/%Y %H:%M:%S'"),
        ("1.2.26", "; give --time-format '%d.%m.%y' (or '%m.%d.%y', month first)"),
        ("3/4/2026 1:05 PM", "; give --time-format '%d/%m/%Y %I:%M %p' (or '%m/%d/%Y %I:%M %p', month first)"),
        ("25-12-2026T10:00:00.5", "; give --time-format '%d-%m-%YT%H:%M:%S.%f'"),
        ("2014-13-45", ""),
        ("zz", ""),
        ("03/12/2026 x", ""),
        (5, ""),
    ],
)
def test_a_day_month_date_gets_the_format_that_reads_it(value: object, hint: str) -> None:
    """The hint's format reads the value (checked with strptime): a user pastes it as is."""
    assert format_hint(value) == hint
    if hint:
        fmt = hint.split("'")[1]
        datetime.strptime(str(value), fmt)
