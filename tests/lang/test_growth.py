"""The state warnings of ``petricep check`` (lang/growth.py): exact texts for every form that
can make state unbounded or combinatorial, and none for the forms that cannot."""

from __future__ import annotations

import pytest

from petricep.lang.growth import state_warnings
from petricep.lang.parser import parse_text

_DOUBLE = "(add LIMIT n PARTIAL MATCHES, a shorter WITHIN, or skip-till-next-match)"
_NO_WINDOW = "warning: pattern 'p' has no WITHIN window: its partial matches may grow without bound (add WITHIN, or LIMIT n PARTIAL MATCHES)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # an open list under skip-till-any-match: its subsets double; named with its bounds
        (
            "SEQ(A{2,} a[], B b) WITHIN 5",
            [f"warning: pattern 'p': Kleene variable a[] (A{{2,}}) under skip-till-any-match keeps every subset of its A events in the window: partial matches can double with each one {_DOUBLE}"],
        ),
        # no window: partial matches pile up, and the open list may grow for ever
        (
            "SEQ(A{3,} a[], B b)",
            [_NO_WINDOW, "warning: pattern 'p': Kleene variable a[] (A{3,}) has no WITHIN window: one partial match may grow without bound"],
        ),
        # an upper bound: at most 4 events, at most the subsets of 4: only the missing window
        ("SEQ(A{2,4} a[], B b)", [_NO_WINDOW]),
        ("SEQ(A{2,4} a[], B b) WITHIN 5", []),
        ("SEQ(A{3} a[], B b) WITHIN 5", []),
        # a repeated group, with and without a window
        (
            "SEQ(A a, SEQ(B b, C c)+ g[]) WITHIN 5",
            [f"warning: pattern 'p': repeated group g[] under skip-till-any-match keeps every sequence of its iterations in the window: partial matches can double with each iteration {_DOUBLE}"],
        ),
        (
            "SEQ(A a, SEQ(B b, C c)+ g[]) LIMIT 10 PARTIAL MATCHES",
            ["warning: pattern 'p': repeated group g[] has no WITHIN window: one partial match may grow without bound"],
        ),
        # a stop event stops a list only when one comes: still warned, saying so
        (
            "SEQ(A a, B{2,} b[] UNTIL C c, D d) WITHIN 5",
            [f"warning: pattern 'p': Kleene variable b[] (B{{2,}}) under skip-till-any-match keeps every subset of its B events in the window: partial matches can double with each one until a C event stops the list (UNTIL C c) {_DOUBLE}"],
        ),
        # optional steps and skip-till-next-match lists grow nothing combinatorially
        ("SEQ(A a, B? b, C c) WITHIN 5", []),
        ("SEQ(A+ a[] GREEDY, B b) WHERE skip-till-next-match WITHIN 5", []),
    ],
)
def test_state_warnings(text: str, expected: list[str]) -> None:
    assert state_warnings(parse_text(f"PATTERN p: {text}").patterns) == expected
