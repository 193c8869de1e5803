"""The event-time clauses: ``ON TIMEOUT RETURN T(...)`` and ``LIMIT n PARTIAL MATCHES ...``."""

from __future__ import annotations

import pytest

from petricep.errors import PatternSemanticError, PatternSyntaxError
from petricep.lang import ast as A
from petricep.lang.parser import parse_text


def test_timeout_and_limit_clauses() -> None:
    (p,) = parse_text(
        """PATTERN cart: SEQ(Add a, Pay b)
        WHERE [user]
        WITHIN 30 min
        limit 500 partial matches per key reject   new
        on timeout return Abandoned(user = a.user, a.ts AS added)"""
    ).patterns
    assert p.limit == A.Limit(500, "reject-new")
    assert p.timeout == A.Return("Abandoned", (A.ReturnField("user", A.Attr("a", "user")), A.ReturnField("added", A.Attr("a", "ts"))))
    assert A.outputs(p) == (p.timeout,)


@pytest.mark.parametrize(
    ("clause", "policy"),
    [("", "drop-oldest"), ("DROP OLDEST", "drop-oldest"), ("REJECT NEW", "reject-new"), ("FAIL", "fail")],
)
def test_limit_policies(clause: str, policy: str) -> None:
    (p,) = parse_text(f"PATTERN p: SEQ(A a, B b) WITHIN 5 LIMIT 3 PARTIAL MATCHES {clause}").patterns
    assert p.limit == A.Limit(3, policy)


def test_the_new_keywords_stay_usable_as_names() -> None:
    (p,) = parse_text("PATTERN p: SEQ(On limit, Key timeout) WHERE limit.per = timeout.key WITHIN 5").patterns
    assert [r.var for r in A.events_of(p.structure)] == ["limit", "timeout"]


def test_a_timeout_without_fields() -> None:
    (p,) = parse_text("PATTERN p: SEQ(A a, B b) WITHIN 5 ON TIMEOUT RETURN Expired").patterns
    assert p.timeout == A.Return("Expired", ())


ERRORS = [
    ("PATTERN p: SEQ(A a, B b) ON TIMEOUT RETURN T(x = a.x)", PatternSemanticError,
     "bad.pcep:1:44: error: ON TIMEOUT needs a WITHIN window: without one a partial match never times out"),
    ("PATTERN p: SEQ(A a, B b) WITHIN 5 RETURN T() ON TIMEOUT RETURN T()", PatternSemanticError,
     "bad.pcep:1:64: error: the timeout type 'T' must differ from the RETURN type"),
    ("PATTERN p: SEQ(A a, B b) WITHIN 5 ON TIMEOUT RETURN A()", PatternSemanticError,
     "bad.pcep:1:53: error: pattern 'p' cannot consume its own ON TIMEOUT RETURN type 'A'"),
    ("PATTERN p: SEQ(A a, !(C c), B b) WITHIN 5 ON TIMEOUT RETURN T(x = c.x)", PatternSemanticError,
     "bad.pcep:1:67: error: ON TIMEOUT RETURN cannot read the negated variable 'c'"),
    ("PATTERN p: SEQ(A a, B b) WITHIN 5 ON TIMEOUT RETURN T(x = z.x)", PatternSemanticError,
     "bad.pcep:1:59: error: unknown variable 'z'"),
    ("PATTERN p: SEQ(A a, B b) WITHIN 5 ON TIMEOUT RETURN T(x = a.x, x = b.x)", PatternSemanticError,
     "bad.pcep:1:68: error: ON TIMEOUT RETURN field 'x' given twice"),
    ("PATTERN p: SEQ(A a, B b) WITHIN 5 ON TIMEOUT RETURN T() ON TIMEOUT RETURN U()", PatternSyntaxError,
     "bad.pcep:1:57: error: duplicate ON TIMEOUT clause"),
    ("PATTERN p: SEQ(A a, B b) WITHIN 5 LIMIT 0 PARTIAL MATCHES", PatternSyntaxError,
     "bad.pcep:1:41: error: LIMIT needs at least 1 partial match"),
    ("PATTERN p: SEQ(A a, B b) WITHIN 5 LIMIT 99999999999999999999 PARTIAL MATCHES", PatternSyntaxError,
     "bad.pcep:1:41: error: LIMIT takes at most 9223372036854775807 partial matches"),
    ("PATTERN p: SEQ(A a, B b) WITHIN 5 LIMIT 10 PARTIAL MATCHES DROP NEWEST", PatternSyntaxError,
     "bad.pcep:1:60: error: unexpected 'DROP'"),
    ("PATTERN p: SEQ(A a, B b) WITHIN 5 LIMIT 10", PatternSyntaxError,
     "bad.pcep:1:43: error: unexpected end of file; expected PARTIAL"),
    ("PATTERN p: SEQ(A a, B b) WITHIN 5 LIMIT 2 PARTIAL MATCHES LIMIT 3 PARTIAL MATCHES", PatternSyntaxError,
     "bad.pcep:1:59: error: duplicate LIMIT clause"),
]


@pytest.mark.parametrize(("text", "kind", "message"), ERRORS, ids=[e[2].split("error: ")[1][:40] for e in ERRORS])
def test_clause_errors_are_located(text: str, kind: type, message: str) -> None:
    with pytest.raises(kind) as info:
        parse_text(text, "bad.pcep")
    first = str(info.value).splitlines()[0]
    assert first.startswith(message), first
    col = info.value.column  # type: ignore[attr-defined]
    assert str(info.value).splitlines()[2] == " " * (4 + col - 1) + "^"
