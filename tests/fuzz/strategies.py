"""Hostile inputs for the fuzz suite (issue 15): pattern text from the grammar, valid and
mutated, and event files with broken rows. Built on the parser's and readers' fuzz tests
(``tests/lang/test_fuzz_parser.py``, ``tests/io/test_fuzz_readers.py``): their seeds, token
list and mutations, plus the classes of hostile input issue 15 lists.

Every class of issue 15's table is in: numbers and nesting past the front end's limits, bytes
that are not UTF-8, non-finite RETURN values, huge cells and empty keys.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import strategies as st

from tests.lang.test_fuzz_parser import SEEDS, TOKENS, mutated
from tests.strategies import pattern_text, patterns

# ---------------------------------------------------------------------- pattern text

_TOKEN = re.compile(r"\s+|[A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|'[^'\n]*'|\"[^\"\n]*\"|.", re.S)
_NUMBER = re.compile(r"\d")

# numbers past the front end's limits (400 characters, a float's range) must give its typed error
EXTREME_NUMBERS = ["0", "00", "1e308", "1e-320", "0.0000000001", "9" * 20, "9" * 300, "1" + "0" * 299, "2.5e307", "9" * 309, "9" * 4301,
                   "18446744073709551616", "9007199254740993"]
# nesting and sums past the front end's limits (50 brackets, 100 nested operators) must give its
# typed error, never a RecursionError; one such growth per text keeps examples small
MAX_NESTING = 120
MAX_TERMS = 300
# unicode (outside surrogates) and NUL bytes; bytes that are not UTF-8 are added by
# test_fuzz_inputs.test_check_command_on_bytes_that_are_not_utf8
UNICODE = st.characters(exclude_categories=["Cs"])


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


@st.composite
def token_mutations(draw: st.DrawFn, text: str) -> str:
    """1-4 grammar-aware edits of ``text``: token swaps, deletions, duplications, extreme
    numbers, deep nesting, long sums, unicode and NUL bytes."""
    toks = tokens(text) or [""]
    once = {"nest", "paren", "sum"}  # at most one of these growths per text (see MAX_TERMS)
    for _ in range(draw(st.integers(1, 6))):
        n = len(toks)
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        op = draw(st.sampled_from(["swap", "delete", "duplicate", "number", "nest", "paren", "sum", "unicode", "nul",
                                   "token"]))
        if op in once:
            once.clear()
        elif op in ("nest", "paren", "sum"):
            op = "token"
        if op == "swap":
            toks[i], toks[j] = toks[j], toks[i]
        elif op == "delete" and n > 1:
            del toks[i]
        elif op == "duplicate":
            toks[i:i] = [toks[i]] * draw(st.integers(1, 3))
        elif op == "number":
            numbers = [k for k, t in enumerate(toks) if _NUMBER.match(t)]
            k = draw(st.sampled_from(numbers)) if numbers else i
            toks[k] = draw(st.sampled_from(EXTREME_NUMBERS))
        elif op == "nest":
            d = draw(st.integers(1, MAX_NESTING))
            toks[i:i] = ["SEQ("] * d
            toks.append(")" * d)
        elif op == "paren":
            d = draw(st.integers(1, MAX_NESTING))
            toks[i] = "(" * d + toks[i] + ")" * d
        elif op == "sum":
            numbers = [k for k, t in enumerate(toks) if _NUMBER.match(t)]
            k = draw(st.sampled_from(numbers)) if numbers else i
            toks[k] = " + ".join([toks[k] if numbers else "1"] * draw(st.integers(2, MAX_TERMS)))
        elif op == "unicode":
            toks.insert(i, draw(st.text(UNICODE, min_size=1, max_size=3)))
        elif op == "nul":
            toks.insert(i, "\x00")
        else:
            toks.insert(i, draw(st.sampled_from(TOKENS)))
    return "".join(toks)


def valid_text() -> st.SearchStrategy[str]:
    """Patterns straight from the grammar (random ASTs, printed), and the shipped ones."""
    return st.one_of(patterns().map(pattern_text), st.sampled_from(SEEDS))


def pattern_texts() -> st.SearchStrategy[str]:
    """Valid, token-mutated, character-mutated (the parser fuzz test's) and arbitrary text."""
    return st.one_of(
        valid_text(),
        valid_text().flatmap(token_mutations),
        mutated(),
        st.text(UNICODE, max_size=60),
    )


# ---------------------------------------------------------------------- event files

# valid patterns the event files run through: time windows only, since a rejected row keeps
# its position (count windows would see the cleaned file differently); RETURN arithmetic too
# (non-finite results are written as null: docs/SEMANTICS.md "Numbers")
RUN_PATTERNS = [
    "PATTERN p: SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 5 RETURN R(first = a.id, at = b.ts, p = a.x * b.x * 1e300)\n"
    "PATTERN q: SEQ(R r, C c) WITHIN 3\n",
    "PATTERN p: SEQ(A a, !(C c), B+ b[]) WHERE [k] AND b[i].x >= a.x AND count(b[]) <= 3 WITHIN 6\n",
    "PATTERN p: AND(A a, B b) WHERE a.x = b.x OR a.x * 2 > b.x + 1 WITHIN 4\n",
    "PATTERN p: SEQ(A a, B b) WHERE [k] AND skip-till-next-match AND a.x / b.x > 0.5 WITHIN 8\n",
]

HEADER = ["id", "type", "ts", "x", "k"]
GOOD_X = st.one_of(st.integers(-5, 5), st.sampled_from([0.5, -2.25, 1e300, 3.0]))

# hostile cells for x (the compared field), ts and the [k] key (empty: a missing value in every
# reader, docs/INPUT.md)
BAD_X = ["nan", "inf", "-inf", "NaN", "1e400", "-1e400", "abc", "1,5", "0x10", "1_000", "  7", "9" * 400, "9" * 4000,
         "é", "true", "x" * 5000, "9" * 4301]
BAD_TS = ["abc", "nan", "inf", "-1", "1e400", "", "2014-13-45", "9" * 300, "9" * 4301]


@st.composite
def event_rows(draw: st.DrawFn) -> list[tuple[str, dict[str, Any] | bytes]]:
    """Rows in time order: ("good", values) or a hostile row, each on one line of its own
    with its id first (so a skip run's rejections map back to lines)."""
    n = draw(st.integers(1, 14))
    rows: list[tuple[str, dict[str, Any] | bytes]] = []
    ts = 0
    for i in range(n):
        ts += draw(st.sampled_from([0, 1, 1, 2]))
        good = {"id": f"r{i}", "type": draw(st.sampled_from("ABBCR")), "ts": ts, "x": draw(GOOD_X),
                "k": draw(st.integers(0, 2))}
        kind = draw(st.sampled_from(["good", "good", "good", "x", "ts", "short", "long", "binary", "quote", "early", "key"]))
        if kind == "x":
            good["x"] = draw(st.sampled_from(BAD_X))
        elif kind == "ts":
            good["ts"] = draw(st.sampled_from(BAD_TS))
        elif kind == "key":
            good["k"] = ""
        elif kind == "early":
            good["ts"] = ts - 5  # out of time order
        elif kind == "binary":
            good["x"] = draw(st.binary(min_size=1, max_size=30)).translate(None, b"\r\n\",")
        rows.append((kind, good))
    return rows


def _cell(v: Any) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode("utf-8")


@st.composite
def csv_files(draw: st.DrawFn) -> bytes:
    rows = draw(event_rows())
    end = draw(st.sampled_from([b"\n", b"\r\n"]))
    lines = [b",".join(h.encode() for h in HEADER)]
    for kind, row in rows:
        assert isinstance(row, dict)
        cells = [_cell(row[h]) for h in HEADER]
        if kind == "short":
            cells = cells[: draw(st.integers(1, 4))]
        elif kind == "long":
            cells += [b"1"] * draw(st.integers(1, 3))
        elif kind == "quote":  # a quoted cell holding the delimiter, or a quote inside a cell
            cells[3] = draw(st.sampled_from([b'"1,5"', b'"2"', b'4"5', b'""', b'"a""b"']))
        lines.append(b",".join(cells))
    bom = draw(st.sampled_from([b"", b"\xef\xbb\xbf"]))
    return bom + end.join(lines) + draw(st.sampled_from([b"", end]))


def _json_value(v: Any) -> str:
    if isinstance(v, bytes):
        return json.dumps(v.decode("latin-1"))
    if isinstance(v, str) and v in ("nan", "NaN", "inf", "-inf"):
        return {"nan": "NaN", "NaN": "NaN", "inf": "Infinity", "-inf": "-Infinity"}[v]  # JSON extensions
    if isinstance(v, str) and v.lstrip("-").isdigit():
        return v  # a huge number
    return json.dumps(v)


@st.composite
def jsonl_files(draw: st.DrawFn) -> bytes:
    rows = draw(event_rows())
    lines = []
    for kind, row in rows:
        assert isinstance(row, dict)
        items = [f'"{h}": {_json_value(row[h])}' for h in HEADER]
        if kind == "short":
            items = items[: draw(st.integers(1, 4))]
        elif kind == "long":
            items.append('"extra": [1, {"a": null}]')
        text = "{" + ", ".join(items) + "}"
        if kind == "quote":
            text = text[: draw(st.integers(1, len(text) - 1))]  # broken JSON
        elif kind == "binary":
            text = text.replace('"x": ', '"x": \x00', 1)
        lines.append(text.encode("utf-8"))
    bom = draw(st.sampled_from([b"", b"\xef\xbb\xbf"]))
    end = draw(st.sampled_from([b"\n", b"\r\n"]))
    return bom + end.join(lines) + end


__all__ = ["EXTREME_NUMBERS", "MAX_NESTING", "RUN_PATTERNS", "csv_files", "jsonl_files", "pattern_texts",
           "token_mutations", "tokens", "valid_text"]
