"""Shared by the export tests: nets to draw, and the marker for tests that need ``dot``."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NETS = sorted([*(ROOT / "nets").glob("*.pcep"), *(ROOT / "nets").glob("*.sql")])  # SQL queries draw too

# the tests that render SVG or PNG: tests/conftest.py's ``needs_dot`` fixture skips them
# where dot is missing, with one line in the summary for all of them
needs_dot = pytest.mark.usefixtures("needs_dot")

SHARED = """
PATTERN p1: SEQ(A a, B b, C c) WHERE [k] AND b.x > a.x WITHIN 10
PATTERN p2: SEQ(A a, B b, D d) WHERE [k] AND b.x > a.x WITHIN 20
PATTERN p3: SEQ(A x, B y) WHERE [k] AND y.x > x.x AND y.z = 1 WITHIN 20
PATTERN p4: SEQ(A a, !(E e), D d) WHERE [k] AND e.y = 1 WITHIN 20
PATTERN p5: SEQ(A a, B+ b[], D d) WHERE [k] AND b[i].x > b[i-1].x WITHIN 20
"""


def overlapping_seq_patterns(n: int = 50, seed: int = 7) -> str:
    """``n`` SEQ patterns over types A..F built to overlap: common prefixes (A, AB, AC,
    ABC, B), equal patterns, near-equal ones (another window or threshold)."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        k = rnd.choice((2, 3, 3, 4))
        seq = list(rnd.choice(("A", "AB", "B", "AC", "ABC")))[:k]
        while len(seq) < k:
            seq.append(rnd.choice("ABCDEF"))
        body = ", ".join(f"{t} {v}" for t, v in zip(seq, "abcd"))
        cond = f" AND b.x > {rnd.choice((0, 5, 10))}" if rnd.random() < 0.4 else ""
        out.append(f"PATTERN p{i}: SEQ({body}) WHERE [k]{cond} WITHIN {rnd.choice((10, 20, 30))}")
    return "\n".join(out)
