"""Fuzzing the pattern front end: thousands of malformed pattern files, and every one ends in
a pattern (which then compiles and merges) or a typed petricep error — never another exception.

``PETRICEP_FUZZ`` sets the number of examples per test (default 1000 under
``HYPOTHESIS_PROFILE=deep``, a quarter of it otherwise: tests/budget.py).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from petricep.errors import PatternError, PetricepError
from petricep.lang.parser import parse_text
from petricep.merge import build_net
from tests.budget import examples

FUZZ = settings(
    max_examples=examples(1000, "PETRICEP_FUZZ"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SEEDS = [p.read_text() for p in sorted((Path(__file__).resolve().parents[2] / "nets").glob("*.pcep"))] + [
    "PATTERN p: SEQ(A a, !(C c), B+ b[], AND(D d, E e), OR(F f, G g)) WHERE [k] AND a.x < b[i].x "
    "AND count(b[]) > 2 AND b[i].x > min(b[..i-1].x) WITHIN 5 EVENTS RETURN T(x = a.x, n = count(b[])) "
    "CONSUME a, b LIMIT 3 PARTIAL MATCHES FAIL\n",
    "PATTERN q: SEQ(A a, B b) WITHIN 10 min ON TIMEOUT RETURN U(a.x AS y)\nCONFLICT g: p, q\n",
]

TOKENS = [
    "PATTERN", "EVENT", "SEQ", "AND", "OR", "NOT", "WHERE", "WITHIN", "RETURN", "CONSUME", "CONFLICT", "ON",
    "TIMEOUT", "LIMIT", "PARTIAL", "MATCHES", "PER", "KEY", "DROP OLDEST", "FAIL", "STRATEGY", "EVENTS",
    "skip-till-next-match", "strict-contiguity", "(", ")", "[", "]", "[]", ",", ":", ";", ".", "..", "!", "~",
    "+", "-", "*", "/", "%", "=", "==", "!=", "<>", "<", "<=", ">", ">=", "A", "B", "a", "b", "i", "i-1",
    "last", "x", "ts", "id", "0", "1", "2.5", "1e3", "'s'", '"t"', "count", "min", "sum", "min(", "a[", "#", "\n",
    " ", "//", "s", "h", "d", "ms", "AS", "ALL",
]


def outcome(text: str) -> None:
    try:
        f = parse_text(text, "fuzz.pcep")
    except PatternError as e:
        assert e.file == "fuzz.pcep"
        str(e)  # renders with its caret
        return
    with contextlib.suppress(PetricepError):
        build_net(list(f.patterns), conflicts=list(f.conflicts))


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join))
def test_token_soup(text: str) -> None:
    outcome(text)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = min(len(text), i + draw(st.integers(0, 6)))
        insert = draw(st.one_of(st.just(""), st.sampled_from(TOKENS), st.text(max_size=3)))
        text = text[:i] + insert + text[j:]
    return text


@FUZZ
@given(mutated())
def test_mutated_pattern_files(text: str) -> None:
    outcome(text)


@FUZZ
@given(st.text(max_size=80))
def test_arbitrary_text(text: str) -> None:
    outcome(text)
