"""The pattern language: SASE verbatim, extensions, and exact error messages."""

from __future__ import annotations

import pytest

from petricep.errors import PatternError, PatternSemanticError, PatternSyntaxError
from petricep.lang import ast as A
from petricep.lang.parser import parse_file, parse_text

SASE_KLEENE = """PATTERN SEQ(stock+ a[], stock b)
WHERE skip-till-next-match
AND [symbol]
AND a[1].price % 500 = 0
AND a[i].price > min(a[..i-1].price)
AND b.volume < 150
WITHIN 500"""


def test_sase_kleene_query_verbatim() -> None:
    (p,) = parse_text(SASE_KLEENE, "q.pcep", default_name="q").patterns
    assert p.name == "q"
    assert p.strategy == "skip-till-next-match"
    assert p.partition == ("symbol",)
    assert p.window == A.Window(A.WIN_TIME, 500)
    assert p.structure == A.Seq((A.EventRef("stock", "a", kleene=True), A.EventRef("stock", "b")))
    first, iteration, volume = p.conditions
    assert first == A.Compare(
        "=", A.BinOp("%", A.Attr("a", "price", A.Index(A.IDX_CONST, 1)), A.Num(500)), A.Num(0)
    )
    assert iteration == A.Compare(
        ">", A.Attr("a", "price", A.Index(A.IDX_CUR)), A.Agg("min", "a", "price", upto_prev=True)
    )
    assert volume == A.Compare("<", A.Attr("b", "volume"), A.Num(150))


def test_negation_paper_form_with_count_window() -> None:
    text = "EVENT SEQ(A a, B b, !(C c), D d) WHERE [attr1] AND d.attr2 = '1' WITHIN 20 EVENTS"
    (p,) = parse_text(text, "n.pcep", default_name="n").patterns
    assert [r.negated for r in A.events_of(p.structure)] == [False, False, True, False]
    assert p.window == A.Window(A.WIN_COUNT, 20, "EVENTS")
    assert p.conditions == (A.Compare("=", A.Attr("d", "attr2"), A.Str("1")),)


def test_named_patterns_nesting_return_and_units() -> None:
    text = """
    PATTERN one: AND(A a, OR(B b, SEQ(C c, !D d, E e)))
    WHERE a.x < b.x < c.x STRATEGY skip-till-next-match WITHIN 12 h
    RETURN T(y = a.x + 1, a.x AS z, b.q)
    PATTERN two: SEQ(T t, ~(A n), A a) WITHIN 90 s;
    """
    one, two = parse_text(text, "f.pcep").patterns
    assert (one.name, two.name) == ("one", "two")
    assert one.window == A.Window(A.WIN_DURATION, 12, "h")
    assert one.strategy == "skip-till-next-match"
    assert one.conditions == (  # a chain is a conjunction of pairs
        A.Compare("<", A.Attr("a", "x"), A.Attr("b", "x")),
        A.Compare("<", A.Attr("b", "x"), A.Attr("c", "x")),
    )
    assert one.returns is not None
    assert [f.name for f in one.returns.fields] == ["y", "z", "q"]
    assert two.structure.children[1] == A.EventRef("A", "n", negated=True)  # type: ignore[union-attr]


def test_nested_seq_is_flattened() -> None:
    (p,) = parse_text("PATTERN SEQ(A a, SEQ(B b, C c), D d)", "f.pcep", default_name="f").patterns
    assert p.structure == A.Seq(tuple(A.EventRef(t, v) for t, v in zip("ABCD", "abcd")))


def test_unnamed_patterns_are_numbered_after_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "pair.pcep"
    f.write_text("PATTERN SEQ(A a, B b)\nPATTERN SEQ(B b, A a)\n")
    assert [p.name for p in parse_file(f).patterns] == ["pair_1", "pair_2"]


ERRORS = [
    (
        "PATTERN SEQ(A a B b)",
        PatternSyntaxError,
        "bad.pcep:1:17: error: unexpected 'B'",
        "    PATTERN SEQ(A a B b)\n                    ^",
    ),
    (
        "PATTERN SEQ(A a, B b)\nWHERE a.x > c.y",
        PatternSemanticError,
        "bad.pcep:2:13: error: unknown variable 'c'",
        "    WHERE a.x > c.y\n                ^",
    ),
    (
        "PATTERN SEQ(A a, B b) WHERE a[i].x > 1",
        PatternSemanticError,
        "bad.pcep:1:29: error: 'a' is not a Kleene variable: write a.x",
        "",
    ),
    (
        "PATTERN SEQ(A+ a[], B b) WHERE a.x > 1",
        PatternSemanticError,
        "bad.pcep:1:32: error: 'a' is a Kleene variable: use an index (a[i].x, a[1].x, a[last].x) or an aggregate",
        "",
    ),
    (
        "PATTERN SEQ(A a, B b) WITHIN 10 weeks",
        PatternSemanticError,
        "bad.pcep:1:33: error: unknown window unit 'weeks' (use EVENTS, ms, s, min, h, d)",
        "",
    ),
    ("PATTERN SEQ(A a, B b) WITHIN -3", PatternSemanticError, "bad.pcep:1:31: error: window must be positive, got -3", ""),
    (
        "PATTERN SEQ(A a, B b) WITHIN 2.5 EVENTS",
        PatternSemanticError,
        "bad.pcep:1:30: error: a count window needs a whole number of events, got 2.5",
        "",
    ),
    ("PATTERN AND(A a, !B b)", PatternSemanticError, "bad.pcep:1:18: error: negation !(B b) must be an element of a SEQ", ""),
    ("PATTERN SEQ(A a, B a)", PatternSemanticError, "bad.pcep:1:18: error: variable 'a' is bound twice", ""),
    (
        "PATTERN SEQ(A a, B b) WHERE a.x > 1 OR [k]",
        PatternSemanticError,
        "bad.pcep:1:41: error: [attr] may only appear as a top-level AND term of WHERE",
        "",
    ),
    (
        "PATTERN SEQ(A a, B b) WHERE skip-till-next-match STRATEGY strict-contiguity",
        PatternSemanticError,
        "bad.pcep:1:59: error: two strategies: skip-till-next-match and strict-contiguity",
        "",
    ),
    ("PATTERN SEQ(A a, B b) WHERE a.x > 1 WHERE b.x > 1", PatternSyntaxError, "bad.pcep:1:37: error: duplicate WHERE clause", ""),
    (
        "PATTERN SEQ(A a, !(N n), !(M m), B b) WHERE n.x = m.x",
        PatternSemanticError,
        "bad.pcep:1:45: error: a condition may mention one negated variable, this one mentions m, n",
        "",
    ),
    ("PATTERN SEQ(!(N n))", PatternSemanticError, "bad.pcep:1:9: error: a SEQ needs at least one positive (non-negated) event", ""),
    ("PATTERN SEQ(A a, B b) RETURN T(a.x + 1)", PatternSyntaxError, "bad.pcep:1:32: error: a computed RETURN field needs a name: write name = expression", ""),
    ("PATTERN SEQ(A a, B b) WHERE a.x @ 1", PatternSyntaxError, "bad.pcep:1:33: error: unexpected character '@'", ""),
    ("PATTERN SEQ(A a, B b", PatternSyntaxError, "bad.pcep:1:21: error: unexpected end of file", ""),
    ("PATTERN SEQ(A a, B b) WHERE foo(a[].x) > 1", PatternSyntaxError, "bad.pcep:1:29: error: unknown aggregate 'foo' (use count, sum, avg, min, max)", ""),
    ("PATTERN SEQ(A+ a[], B b) WHERE a[j].x > 1", PatternSyntaxError, "bad.pcep:1:34: error: unknown Kleene index 'j' (use i, i-1, last or a number)", ""),
]


@pytest.mark.parametrize("text,kind,head,caret", ERRORS, ids=[e[2].split("error: ")[1][:40] for e in ERRORS])
def test_errors_name_file_line_column_with_caret(text: str, kind: type[PatternError], head: str, caret: str) -> None:
    with pytest.raises(kind) as info:
        parse_text(text, "bad.pcep")
    message = str(info.value)
    assert message.splitlines()[0].startswith(head), message
    if caret:
        assert message.endswith(caret), message
    else:  # the caret sits under the reported column
        src, mark = message.splitlines()[1:3]
        col, line = info.value.column, info.value.line
        assert col is not None and line is not None
        assert mark == " " * (4 + col - 1) + "^"
        assert src == "    " + text.splitlines()[line - 1]


def test_every_shipped_net_parses() -> None:
    from pathlib import Path

    nets = sorted(Path(__file__).resolve().parents[2].joinpath("nets").glob("*.pcep"))
    assert len(nets) >= 5
    for f in nets:
        assert parse_file(f).patterns
