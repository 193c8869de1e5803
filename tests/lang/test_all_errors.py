"""Every error of a pattern file at once (issue 41): a syntax error does not hide the
declarations after it, a pattern's semantic error does not hide another pattern's, and each
error keeps its caret under the text it is about, in file order."""

from __future__ import annotations

import pickle

import pytest

from petricep.errors import PatternErrors, PatternSemanticError, PatternSyntaxError
from petricep.lang.parser import parse_sql, parse_text

THREE = """\
PATTERN one: SEQ(A a, B b)
WHERE a.x > 1 AND c.y < 2
WITHIN 10 s

PATTERN two: SEQ(A a, B b
WHERE a.x > 1
WITHIN 10 s

PATTERN three: SEQ(A a, B b)
WITHIN 10 fortnights

PATTERN four: SEQ(A a, B b) WITHIN 5 s
"""


def test_three_mistakes_give_three_errors_with_carets() -> None:
    with pytest.raises(PatternErrors) as err:
        parse_text(THREE, "p.pcep")
    assert [type(e) for e in err.value.errors] == [PatternSemanticError, PatternSyntaxError, PatternSemanticError]
    assert str(err.value) == (
        "p.pcep:2:19: error: unknown variable 'c'\n"
        "    WHERE a.x > 1 AND c.y < 2\n"
        "                      ^\n"
        "p.pcep:6:1: error: unexpected 'WHERE'; expected ')', ','\n"
        "    WHERE a.x > 1\n"
        "    ^\n"
        "p.pcep:10:11: error: unknown window unit 'fortnights' (use EVENTS, ms, s, min, h, d)\n"
        "    WITHIN 10 fortnights\n"
        "              ^"
    )
    assert err.value.exit_code == 2
    again = pickle.loads(pickle.dumps(err.value))
    assert str(again) == str(err.value)


def test_two_mistakes_in_one_pattern_are_both_reported() -> None:
    text = "PATTERN p: SEQ(A a, B b)\nWHERE z.x > 1 AND b.y = q.y\nWITHIN 0 s\n"
    with pytest.raises(PatternErrors) as err:
        parse_text(text, "p.pcep")
    assert [(e.line, e.column, e.message) for e in err.value.errors] == [
        (2, 7, "unknown variable 'z'"),
        (2, 25, "unknown variable 'q'"),
        (3, 8, "window must be positive, got 0"),
    ]


def test_a_misspelt_keyword_keeps_the_pattern_before_it() -> None:
    # the error is after a whole pattern: that pattern is still checked (its error reported)
    text = "PATTERN p: SEQ(A a, B b) WHERE a.x > c.x\nPATERN q: SEQ(A a, B b)\nPATTERN r: SEQ(A a, B b) WITHIN 1 wk\n"
    with pytest.raises(PatternErrors) as err:
        parse_text(text, "p.pcep")
    assert [(e.line, e.column, e.message) for e in err.value.errors] == [
        (1, 38, "unknown variable 'c'"),
        (2, 1, "unexpected 'PATERN'; expected ')', '*', '/' or '%', '+', ',', '-', ';', AND, AS"),
        (3, 35, "unknown window unit 'wk' (use EVENTS, ms, s, min, h, d)"),
    ]


def test_an_unfinished_last_pattern_gives_one_error() -> None:
    text = "PATTERN p: SEQ(A a, B b) WITHIN 1 s\nPATTERN q: SEQ(A a, B b) WHERE a.x >\n"
    with pytest.raises(PatternSyntaxError) as err:
        parse_text(text, "p.pcep")
    assert str(err.value) == (
        "p.pcep:2:37: error: unexpected end of file; expected '(', '-', '[', a name, a number, a strategy, a string\n"
        "    PATTERN q: SEQ(A a, B b) WHERE a.x >\n"
        "                                        ^"
    )


def test_one_error_is_raised_as_itself() -> None:
    with pytest.raises(PatternSemanticError) as err:
        parse_text("PATTERN p: SEQ(A a, B b) WHERE a.x > c.x\n", "p.pcep")
    assert not isinstance(err.value, PatternErrors)
    assert str(err.value) == "p.pcep:1:38: error: unknown variable 'c'\n    PATTERN p: SEQ(A a, B b) WHERE a.x > c.x\n                                         ^"


def test_sql_goes_on_at_the_next_query() -> None:
    text = (
        "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A B) DEFINE C AS C.x > 2);\n"
        "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A B DEFINE A AS A.x > 1);\n"
        "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A B) DEFINE A AS A.x > 1) q3;\n"
        "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A B) DEFINE A AS A.x > 1) q3\n"
    )
    with pytest.raises(PatternErrors) as err:
        parse_sql(text, "q.sql")
    assert [(e.line, e.column, e.message) for e in err.value.errors] == [
        (1, 55, "DEFINE names 'C', which PATTERN does not use"),
        (2, 60, "unexpected '.'; expected '(', ')', '*', '+', ',', '?', '{', '|'"),
        (4, 69, "two queries named 'q3' (give each an alias)"),
    ]
