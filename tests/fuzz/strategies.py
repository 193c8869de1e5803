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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from petricep.lang.ast import STRATEGIES
from tests.lang.test_fuzz_parser import SEEDS, TOKENS, mutated
from tests.reference import TIES
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




# ---------------------------------------------------------------------- issue 43's input classes
#
# Each case is one event file, one pattern and one set of run options, for the differential check
# (tests/fuzz/harness.py ``run_case``: kernel vs Python engine vs tests/reference.py). Each row
# carries its *model*: the event petricep must read from it (docs/INPUT.md), so the brute-force
# reference can run without petricep's readers.

CLASSES = ("mixed", "nested", "surrogate", "bigcell", "order")
BIG = 131_073  # one character past Python csv's default field limit (131,072)
HEADER_43 = ("id", "type", "ts", "x", "y", "k", "s")


@dataclass(frozen=True)
class Row:
    """One line of an event file: its values (``None`` = the cell is empty / JSON null,
    :data:`ABSENT` = the field is not there) and whether it is meant to be bad."""

    values: dict[str, Any]
    raw: bytes | None = None  # the line as written, where it is not the values' rendering


ABSENT = object()


@dataclass(frozen=True)
class Case:
    """A fuzz case of issue 43: an input class, a pattern, an event file and the run options.

    ``reads`` maps each event type to the fields the pattern reads of it (``numeric``: the
    fields it computes with), so that the model knows which values the readers check."""

    cls: str
    pattern: str
    suffix: str
    rows: tuple[Row, ...]
    tie: str = "arrival"
    slack: int | None = None
    out: str = "jsonl"
    with_events: bool = False
    on_error: str = "skip"
    reads: dict[str, frozenset[str]] = field(default_factory=dict)
    numeric: frozenset[str] = frozenset()
    header: tuple[str, ...] = HEADER_43
    crlf: bool = False

    def data(self) -> bytes:
        """The event file's bytes (CSV with a header, or JSON Lines)."""
        end = b"\r\n" if self.crlf else b"\n"
        if self.suffix == ".csv":
            lines = [",".join(self.header).encode()]
            lines += [r.raw if r.raw is not None else _csv_line(r.values, self.header) for r in self.rows]
        else:
            lines = [r.raw if r.raw is not None else _jsonl_line(r.values) for r in self.rows]
        return end.join(lines) + end

    def argv(self) -> list[str]:
        """The run options other than the files (the harness adds them)."""
        argv = ["--tie", self.tie, "--on-error", self.on_error]
        if self.slack is not None:
            argv += ["--slack", str(self.slack)]
        if self.with_events:
            argv.append("--with-events")
        return argv

    def describe(self) -> str:
        """The case as a reproduction: options, pattern, the file (long runs shortened, \\r shown)."""
        opts = " ".join(self.argv()) + f" -o out.{self.out}"
        text = self.data().decode("utf-8", "backslashreplace").replace("\r", "\\r")
        text = _RUN.sub(lambda m: f"<{m.group(1)} x {len(m.group(0)):,}>", text)
        return f"[{self.cls}] {opts}\n{self.pattern}\n--- events{self.suffix}\n{text}"


_RUN = re.compile(r"(.)\1{99,}")


def _csv_cell(v: Any) -> bytes:
    if v is None or v is ABSENT:
        return b""
    if isinstance(v, bytes):
        return v
    if isinstance(v, bool):
        return b"true" if v else b"false"
    text = v if isinstance(v, str) else repr(v)
    if any(c in text for c in ',"'):
        text = '"' + text.replace('"', '""') + '"'
    return text.encode("utf-8", "surrogatepass")


def _csv_line(values: dict[str, Any], header: Sequence[str]) -> bytes:
    return b",".join(_csv_cell(values.get(h)) for h in header)


def _jsonl_line(values: dict[str, Any]) -> bytes:
    items = {k: v for k, v in values.items() if v is not ABSENT}
    return json.dumps(items).encode("ascii")  # ensure_ascii: a lone surrogate is written "\\ud800"


# patterns of the value classes, each with the fields it reads per type and those it computes with
# (time windows only: a rejected row keeps its position, so the reference sees the same stream)
CLASS_PATTERNS: list[tuple[str, dict[str, frozenset[str]], frozenset[str]]] = [
    ("PATTERN p: SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 5 RETURN R(first = a.id, s = b.s)",
     {"A": frozenset("xk"), "B": frozenset("xks")}, frozenset("x")),
    ("PATTERN p: SEQ(A a, B+ b[], C c) WHERE b[i].x >= a.x AND c.y = a.y WITHIN 6 RETURN R(s = c.s, n = count(b[]))",
     {"A": frozenset("xy"), "B": frozenset("x"), "C": frozenset("ys")}, frozenset("x")),
    ("PATTERN p: AND(A a, C c) WHERE a.y = c.y WITHIN 4",
     {"A": frozenset("y"), "C": frozenset("y")}, frozenset()),
    ("PATTERN p: SEQ(A a, !(C n), B b) WHERE [k] AND n.x > a.x WITHIN 5 RETURN R(s = a.s, t = b.s)",
     {"A": frozenset("xks"), "B": frozenset("ks"), "C": frozenset("xk")}, frozenset("x")),
    ("PATTERN p: SEQ(B a, C b) WHERE [y] WITHIN 3 RETURN R(s = a.s)",
     {"B": frozenset("ys"), "C": frozenset("y")}, frozenset()),
]

SCALARS = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -2.25, 3.0]), st.sampled_from(["a", "b", "B", "1x"]))
MIXED = st.one_of(SCALARS, st.sampled_from(["", None, True, False, "true", "1.5", " 2"]))
NESTED = st.sampled_from([[1], [], [1, [2]], {"a": 1}, {}, {"a": [None]}, ["x"]])
SURROGATES = ["\ud800", "\udfff", "a\udc00b", "\ud83d\ude00", "\ud83d", "x\ud800\ud800"]


@st.composite
def _base_rows(draw: st.DrawFn, n_max: int = 10, types: str = "ABCA") -> list[dict[str, Any]]:
    """Good rows in time order with small keys: the ground the classes vary."""
    rows, ts = [], 0
    for i in range(draw(st.integers(1, n_max))):
        ts += draw(st.sampled_from([0, 1, 1, 2]))
        rows.append({"id": f"r{i}", "type": draw(st.sampled_from(types)), "ts": ts, "x": draw(st.integers(-2, 4)),
                     "y": draw(st.integers(0, 2)), "k": draw(st.integers(0, 1)), "s": draw(st.sampled_from(["p", "q r"]))})
    return rows


@st.composite
def _options(draw: st.DrawFn, suffix: str, outs: Sequence[str] = ("jsonl", "jsonl", "csv", "parquet")) -> dict[str, Any]:
    """The output format (JSON Lines most: the reference reads it), --with-events, the error mode."""
    return {"out": draw(st.sampled_from(outs)), "with_events": draw(st.booleans()),
            "on_error": draw(st.sampled_from(["skip", "skip", "fail"])), "crlf": suffix == ".csv" and draw(st.booleans())}


@st.composite
def _value_case(draw: st.DrawFn, cls: str) -> Case:
    """mixed, nested, surrogate: values of one class in random fields of random rows."""
    pattern, reads, numeric = draw(st.sampled_from(CLASS_PATTERNS))
    suffix = ".jsonl" if cls in ("nested", "surrogate") else draw(st.sampled_from([".csv", ".jsonl"]))
    rows = []
    for values in draw(_base_rows()):
        if draw(st.integers(0, 2)) == 0:
            f = draw(st.sampled_from("xyks" if cls != "surrogate" else "ss"))
            if cls == "mixed":
                values[f] = draw(MIXED)
            elif cls == "nested":
                values[f] = draw(NESTED)
            else:
                values[f] = draw(st.sampled_from(SURROGATES))
        if cls == "mixed" and suffix == ".csv" and draw(st.integers(0, 9)) == 0:  # docs/INPUT.md "CSV text"
            values["s"] = draw(st.sampled_from([b"a\rb", b"\rb", b"\xff\xfe", b"caf\xc3"]))  # s is last: no \r at its end
        if cls == "nested" and draw(st.integers(0, 3)) == 0:
            values["extra"] = draw(NESTED)  # a field no pattern reads
        rows.append(Row(values))
    return Case(cls, pattern, suffix, tuple(rows), reads=reads, numeric=numeric, **draw(_options(suffix)))


@st.composite
def _bigcell_case(draw: st.DrawFn) -> Case:
    """A cell over the csv module's field limit in a good row, beside bad rows."""
    pattern, reads, numeric = draw(st.sampled_from(CLASS_PATTERNS[:1] + CLASS_PATTERNS[3:]))
    suffix = draw(st.sampled_from([".csv", ".csv", ".jsonl"]))
    header = HEADER_43
    rows = []
    base = draw(_base_rows(n_max=8))
    big_at = draw(st.integers(0, len(base) - 1))
    for i, values in enumerate(base):
        raw = None
        if i == big_at:
            values["s"] = draw(st.sampled_from(["s", "é", "q"])) * (BIG + draw(st.integers(0, 100)))
        elif draw(st.integers(0, 2)) == 0:
            bad = draw(st.sampled_from(["x", "short", "quote", "ts"]))
            if bad == "x":
                values["x"] = "n/a"
            elif bad == "ts":
                values["ts"] = "soon"
            elif bad == "short":  # CSV: a field too few; JSON Lines: a field absent (bad where read)
                values["s"] = ABSENT
                raw = _csv_line(values, header[:-1]) if suffix == ".csv" else None
            elif suffix == ".csv":  # an unterminated quoted value
                raw = _csv_line({**values, "s": None}, header) + b'"ab'
            else:  # broken JSON
                raw = _jsonl_line(values)[:-2]
        rows.append(Row(values, raw))
    return Case("bigcell", pattern, suffix, tuple(rows), reads=reads, numeric=numeric, **draw(_options(suffix)))


# patterns of the order class: issue 43 item 1's mix, its neighbours, and random ones
ORDER_PATTERNS = [
    "PATTERN p: SEQ(B a, B b, !(B n)) WITHIN 4 EVENTS",
    "PATTERN p: SEQ(A a, !(B n), C c) WITHIN 3 EVENTS",
    "PATTERN p: SEQ(!(C n), A a, B b) WHERE [k] WITHIN 3",
    "PATTERN p: SEQ(A a, B+ b[], !(C n)) WHERE b[i].x >= a.x WITHIN 5 EVENTS",
    "PATTERN p: SEQ(A a, B b) WHERE a.x <= b.x WITHIN 2",
]


@st.composite
def _order_case(draw: st.DrawFn) -> Case:
    """Out-of-order timestamps (with and without a slack) under every tie rule."""
    tie = draw(st.sampled_from([*TIES, "either"]))
    either = tie == "either"  # item 1's mix gets more of the draws under this rule
    strategies = ("skip-till-any-match",) if tie == "either" else STRATEGIES
    if draw(st.integers(0, 2)) < 1 + either:  # item 1's family: two variables, an end negation, a count window
        t1, t2, t3 = (draw(st.sampled_from("AB")) for _ in range(3))
        pattern = f"PATTERN p: SEQ({t1} a, {t2} b, !({t3} n)) WITHIN {draw(st.integers(2, 6))} EVENTS"
    elif draw(st.booleans()):
        pattern = draw(st.sampled_from(ORDER_PATTERNS))
    else:
        pattern = pattern_text(draw(patterns(max_vars=4, strategies=strategies, min_window=1)))
    suffix = draw(st.sampled_from([".csv", ".jsonl"]))
    rows, ts = [], 3
    # half the streams: two types, in time order, many ties (issue 43 item 1's mix)
    ties = draw(st.integers(0, 2)) < 1 + either
    steps = [0, 1, 1, 2] if ties or draw(st.booleans()) else [0, 0, 0, 1, 2, -1, -3]
    for i in range(draw(st.integers(5 if ties else 1, 10))):  # item 1 needs a few events
        ts = max(0, ts + draw(st.sampled_from(steps)))
        rows.append(Row({"id": f"r{i}", "type": draw(st.sampled_from("AB" if ties else "AABBBCD")), "ts": ts, "x": draw(st.integers(0, 5)),
                         "k": draw(st.integers(0, 2))}))
    reads = {t: frozenset("xk") for t in "ABCD"}
    slack = draw(st.sampled_from([None, None, 0, 1, 3]))
    return Case("order", pattern, suffix, tuple(rows), tie, slack, reads=reads, numeric=frozenset("x"),
                header=("id", "type", "ts", "x", "k"), **draw(_options(suffix, ["jsonl", "jsonl", "jsonl", "csv", "parquet"])))


def cases(classes: Sequence[str] = CLASSES) -> st.SearchStrategy[Case]:
    """Fuzz cases of the given input classes (issue 43)."""
    makers = {"mixed": _value_case("mixed"), "nested": _value_case("nested"), "surrogate": _value_case("surrogate"),
              "bigcell": _bigcell_case(), "order": _order_case()}
    return st.one_of([makers[c] for c in classes])


__all__ = ["ABSENT", "BIG", "CLASSES", "CLASS_PATTERNS", "Case", "EXTREME_NUMBERS", "MAX_NESTING", "ORDER_PATTERNS",
           "RUN_PATTERNS", "Row", "cases", "csv_files", "jsonl_files", "pattern_texts", "token_mutations", "tokens",
           "valid_text"]
