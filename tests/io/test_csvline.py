"""``petricep.io.csvline.split_line``: the csv module's fields for a line, but a lone ``\\r`` is
text and a cell has no length limit (docs/INPUT.md, "CSV text")."""

from __future__ import annotations

import csv

from hypothesis import given, settings
from hypothesis import strategies as st

from petricep.io.csvline import split_line
from tests.budget import examples

LINE = st.text(st.sampled_from(list('ab,"\x00é \t')), max_size=30)


@settings(max_examples=examples(500), deadline=None)
@given(LINE)
def test_the_csv_modules_fields_where_it_reads_the_line(text: str) -> None:
    """Without a ``\\r`` and below the field limit: exactly what the csv module reads."""
    reader = csv.reader([text, ""])
    try:
        want: tuple[list[str] | None, str | None] = (next(reader, []), None)
        if reader.line_num > 1:
            want = (None, "invalid CSV: unterminated quoted value")
    except csv.Error as e:
        want = (None, f"invalid CSV: {e}")
    assert split_line(text, ",") == want


@settings(max_examples=examples(300), deadline=None)
@given(LINE)
def test_a_lone_cr_is_text_wherever_it_stands(text: str) -> None:
    """A ``\\r`` reads as the text it is: the fields of the line with ``\\r`` for some ``b``."""
    fields, err = split_line(text, ",")
    crs, cr_err = split_line(text.replace("b", "\r"), ",")
    assert cr_err == err
    assert crs == (None if fields is None else [f.replace("b", "\r") for f in fields])


def test_long_cells_and_the_csv_modules_limit() -> None:
    limit = csv.field_size_limit()
    big = "y" * (limit + 10)
    assert split_line(f"a,{big},c", ",") == (["a", big, "c"], None)
    assert split_line(f'a,"{big},x",c', ",") == (["a", big + ",x", "c"], None)
    assert split_line(f'"{big}', ",") == (None, "invalid CSV: unterminated quoted value")
    assert csv.field_size_limit() == limit  # the process's setting is left as it was
