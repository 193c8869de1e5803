"""Hostile pattern text gives one typed error naming file, line and column, with the caret
under the place; never a RecursionError, ValueError or OverflowError (docs/SEMANTICS.md,
"Limits"). Also the messages of known mistakes, in the user's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from petricep.api import compile_text
from petricep.errors import PatternError, PatternLimitError, PatternSyntaxError
from petricep.lang.front import MAX_EXPRESSION_DEPTH, MAX_NESTING, MAX_NUMBER_LENGTH, MAX_VARIABLES
from petricep.lang.growth import growth_warnings
from petricep.lang.parser import parse_file, parse_sql, parse_text


def located(file: str, line: int, column: int, message: str, source: str) -> str:
    return f"{file}:{line}:{column}: error: {message}\n    {source}\n    {' ' * (column - 1)}^"


def error_of(text: str, kind: type[PatternError] = PatternLimitError, sql: bool = False) -> str:
    with pytest.raises(kind) as err:
        if sql:
            parse_sql(text, "q.sql")
        else:
            compile_text(text, "t")
    return str(err.value)


def test_a_pattern_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.pcep"
    path.write_bytes(b"PATTERN SEQ(A a, B b)\nWITHIN 5 \xff\n")
    with pytest.raises(PatternSyntaxError) as err:
        parse_file(path)
    assert str(err.value) == located(
        str(path), 2, 10, "the file is not UTF-8 text: byte 0xff cannot be decoded (save it as UTF-8)", "WITHIN 5 \ufffd"
    )


def test_deep_seq_nesting() -> None:
    text = "PATTERN " + "SEQ(" * 500 + "A a" + ")" * 500
    col = len("PATTERN ") + 4 * (MAX_NESTING + 1)
    assert error_of(text) == located("<t>", 1, col, f"brackets nested more than {MAX_NESTING} deep", text)


def test_nested_parentheses_in_a_condition() -> None:
    cond = "(" * 250 + "a.x" + ")" * 250 + " > 1"
    text = "PATTERN SEQ(A a, B b)\n  WHERE " + cond
    assert error_of(text) == located("<t>", 2, 9 + MAX_NESTING, "brackets nested more than 50 deep", "  WHERE " + cond)


def test_a_sum_of_500_terms() -> None:
    cond = " + ".join(["a.x"] * 500) + " > 1"
    message = (
        f"expression nested too deep: more than {MAX_EXPRESSION_DEPTH} operators inside each other "
        "(split a long sum or chain of conditions into parts)"
    )
    assert error_of("PATTERN SEQ(A a, B b)\n  WHERE " + cond) == located("<t>", 2, 9, message, "  WHERE " + cond)
    # a sum of 100 terms is within the limit, and so is a RETURN field of as many
    compile_text("PATTERN SEQ(A a, B b) WHERE " + " + ".join(["a.x"] * 100) + " > 1")


def test_a_chain_of_not_and_minus() -> None:
    for word in ("NOT ", "- "):
        text = "PATTERN SEQ(A a, B b) WHERE " + word * 600 + "a.x > 1"
        assert "error: expression nested too deep" in error_of(text).splitlines()[0]


def test_a_seq_of_500_variables() -> None:
    text = "PATTERN SEQ(" + ", ".join(f"A a{i}" for i in range(500)) + ")"
    col = text.index(f"A a{MAX_VARIABLES}") + 1
    message = f"a pattern of more than {MAX_VARIABLES} event variables (split it into patterns joined through RETURN types)"
    assert error_of(text) == located("<t>", 1, col, message, text)
    compile_text("PATTERN SEQ(" + ", ".join(f"A a{i}" for i in range(MAX_VARIABLES)) + ")")


def test_a_4301_digit_window() -> None:
    text = "PATTERN SEQ(A a, B b) WITHIN " + "1" * 4301
    message = f"a number of 4301 characters: at most {MAX_NUMBER_LENGTH}"
    assert error_of(text) == located("<t>", 1, 30, message, text)


def test_a_window_beyond_float_range_written_in_digits() -> None:
    text = "PATTERN SEQ(A a, B b) WITHIN 1" + "0" * 309 + " s"
    message = "the number 10000000...0000 (310 characters) is out of range (at most 1.79769e+308)"
    assert error_of(text) == located("<t>", 1, 30, message, text)
    text = "PATTERN SEQ(A a, B b) WHERE a.x > 2e308"
    assert error_of(text) == located("<t>", 1, 35, "the number 2e308 is out of range (at most 1.79769e+308)", text)


def test_arithmetic_with_a_huge_constant_compiles() -> None:
    # the largest constants allowed convert to float: no OverflowError when conditions run
    net = compile_text("PATTERN SEQ(A a, B b) WHERE a.x * 1" + "0" * 300 + " > b.x")
    assert len(net.patterns) == 1


def test_sql_has_the_same_limits() -> None:
    text = "SELECT * FROM T MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B) DEFINE B AS B.x > " + "1" * 500 + ")"
    assert error_of(text, sql=True) == located("q.sql", 1, 78, "a number of 500 characters: at most 400", text)
    text = "SELECT * FROM T MATCH_RECOGNIZE (ORDER BY ts PATTERN (" + "(" * 60 + "A" + ")" * 60 + "))"
    assert error_of(text, sql=True).splitlines()[0] == "q.sql:1:103: error: brackets nested more than 50 deep"
    # brackets inside strings and comments do not count
    parse_sql("-- " + "(" * 80 + "\nSELECT * FROM T MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE A AS A.s = '" + "(" * 80 + "')", "q.sql")


def test_brackets_in_comments_and_strings_do_not_count() -> None:
    parse_text("# " + "(" * 80 + "\nPATTERN SEQ(A a, B b) WHERE a.s = '" + "[" * 80 + "' // " + "(" * 80)


# ----------------------------------------------------------------------------- growth warnings


def test_kleene_under_skip_till_any_match_with_a_window_names_limit() -> None:
    f = parse_text("PATTERN k: SEQ(A+ a[], B b) WITHIN 100000")
    assert growth_warnings(f.patterns) == [
        "warning: pattern 'k': Kleene variable a[] under skip-till-any-match keeps every subset of its A events in "
        "the window: partial matches can double with each one (add LIMIT n PARTIAL MATCHES, a shorter WITHIN, or "
        "skip-till-next-match)"
    ]
    # bounded: a LIMIT, a small count window, another strategy
    for text in (
        "PATTERN k: SEQ(A+ a[], B b) WITHIN 100000 LIMIT 10 PARTIAL MATCHES",
        "PATTERN k: SEQ(A+ a[], B b) WITHIN 16 EVENTS",
        "PATTERN k: SEQ(A+ a[], B b) WHERE skip-till-next-match WITHIN 100000",
    ):
        assert growth_warnings(parse_text(text).patterns) == []


def test_and_of_many_same_type_variables_names_limit() -> None:
    f = parse_text("PATTERN m: SEQ(C c, AND(A a, A b, A d, B e)) WITHIN 10")
    assert growth_warnings(f.patterns) == [
        "warning: pattern 'm': AND of 3 variables of type A binds them in every order: partial matches can grow "
        "combinatorially (add LIMIT n PARTIAL MATCHES)"
    ]
    assert growth_warnings(parse_text("PATTERN m: AND(A a, A b, B e) WITHIN 10").patterns) == []


# ----------------------------------------------------------------------------- messages in user words


def test_a_misspelt_strategy_says_which_one_was_meant() -> None:
    text = "PATTERN SEQ(A a, B b) WHERE skip-till-next WITHIN 5"
    message = (
        "unknown strategy 'skip-till-next': did you mean skip-till-next-match? (the strategies are "
        "skip-till-any-match, skip-till-next-match, strict-contiguity, partition-contiguity)"
    )
    assert error_of(text, PatternSyntaxError) == located("<t>", 1, 29, message, text)
    text = "PATTERN SEQ(A a, B b) STRATEGY strict-contiguous"
    assert error_of(text, PatternSyntaxError).splitlines()[0] == (
        "<t>:1:32: error: unknown strategy 'strict-contiguous': did you mean strict-contiguity? (the strategies are "
        "skip-till-any-match, skip-till-next-match, strict-contiguity, partition-contiguity)"
    )


def test_an_unknown_function_in_a_pattern() -> None:
    text = "PATTERN SEQ(A a, B+ b[]) WHERE b[i].x > PREVIOUS(b[i-1].x)"
    message = (
        "unknown function 'PREVIOUS': the pattern language knows count, sum, avg, min, max over a Kleene variable "
        "(sum(v[].x)); an earlier event is read through its variable (a.x, v[i-1].x)"
    )
    assert error_of(text, PatternSyntaxError) == located("<t>", 1, 41, message, text)


def test_previous_in_sql_lists_prev_and_suggests_it() -> None:
    text = "SELECT * FROM T MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B) DEFINE B AS B.x > PREVIOUS(B.x))"
    message = (
        "unknown function 'PREVIOUS'; did you mean PREV? (known: PREV, NEXT, FIRST, LAST, COUNT, SUM, AVG, MIN, MAX, "
        "ABS, CLASSIFIER, MATCH_NUMBER)"
    )
    assert error_of(text, PatternSyntaxError, sql=True) == located("q.sql", 1, 78, message, text)


def test_expected_tokens_are_named_in_user_words() -> None:
    text = "PATTERN SEQ(A a, B b) WHERE a.x > b."
    assert error_of(text, PatternSyntaxError).splitlines()[0] == "<t>:1:37: error: unexpected end of file; expected a name"
    text = "PATTERN SEQ(A a, B b"
    assert error_of(text, PatternSyntaxError).splitlines()[0] == "<t>:1:21: error: unexpected end of file; expected ')', ','"
    text = "PATTERN SEQ(A a, B b) WHERE a.x > b.x WITHIN"
    assert error_of(text, PatternSyntaxError).splitlines()[0] == (
        "<t>:1:45: error: unexpected end of file; expected '-', a number"
    )
    text = "PATTERN SEQ(A a, B b) WHERE b.x > a"
    assert error_of(text, PatternSyntaxError).splitlines()[0] == (
        "<t>:1:36: error: unexpected end of file; expected '(', '.', '['"
    )
