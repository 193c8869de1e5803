"""What both front ends (the pattern language and SQL MATCH_RECOGNIZE) share: reading a file,
the documented limits, lark plumbing, spans, and errors in user words.

Both grammars parse with lark (LALR). This module turns lark's errors into
:class:`~petricep.errors.PatternSyntaxError` values that carry the file, position and source
text (the caret is drawn when the error is reported), translates grammar terminal names into
the words a user writes ("a name", "')'"), and checks the limits of docs/SEMANTICS.md
("Limits") on the text before lark or any recursive walk meets it.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import lark
from lark import Token, Transformer

from petricep.errors import PatternError, PatternLimitError, PatternSemanticError, PatternSyntaxError
from petricep.lang import ast as A

# ----------------------------------------------------------------------------- limits

#: brackets ``(`` ``[`` nested deeper than this are refused
MAX_NESTING = 50
#: a number literal longer than this (characters) is refused
MAX_NUMBER_LENGTH = 400
#: operators nested inside each other in one expression (a sum of n terms nests n - 1)
MAX_EXPRESSION_DEPTH = 100
#: event variables in one pattern (pcep) or one PATTERN clause (SQL)
MAX_VARIABLES = 100
#: the largest magnitude of a number literal: a float's range, so no arithmetic on a
#: constant meets ``OverflowError`` (int -> float conversion)
MAX_NUMBER = sys.float_info.max

# ----------------------------------------------------------------------------- user words

#: how an error message calls each terminal of the pattern grammar
TOKEN_NAMES: Mapping[str, str] = {
    "NAME": "a name",
    "NUMBER": "a number",
    "INT": "an integer",
    "STRING": "a string",
    "COMPOP": "a comparison",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "QMARK": "'?'",
    "DOT": "'.'",
    "COLON": "':'",
    "SEMICOLON": "';'",
    "COMMA": "','",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "MULOP": "'*', '/' or '%'",
    "SEQ": "SEQ",
    "AND_KW": "AND",
    "OR_KW": "OR",
    "NOT": "NOT",
    "ALL_KW": "ALL",
    "_WHERE": "WHERE",
    "_WITHIN": "WITHIN",
    "_RETURN": "RETURN",
    "_PATTERN": "PATTERN",
    "_STRATEGY": "STRATEGY",
    "_CONSUME": "CONSUME",
    "_CONFLICT": "CONFLICT",
    "_ARCHIVED": "ARCHIVED",
    "_AS": "AS",
    "_ON": "ON",
    "_TIMEOUT": "TIMEOUT",
    "_LIMIT": "LIMIT",
    "REPEAT_MODE": "GREEDY or RELUCTANT",
    "_AFTER": "AFTER",
    "_UNTIL": "UNTIL",
    "_TO": "TO",
    "FROM_KW": "FROM",
    "_PARTIAL": "PARTIAL",
    "_MATCHES": "MATCHES",
    "_PER": "PER",
    "_KEY": "KEY",
    "OVERFLOW": "DROP OLDEST, REJECT NEW or FAIL",
    "STRATEGY": "a strategy",
    "BANG": "'!'",
    "$END": "end of file",
}


def terminal_words(names: Mapping[str, str]) -> Callable[[str], str]:
    """A function naming a terminal in user words: ``names`` first, then keywords by their
    spelling (``_WHERE`` -> WHERE, ``AND_KW`` -> AND), else the terminal lower-cased."""

    def word(t: str) -> str:
        if t in names:
            return names[t]
        if t.startswith("_") or t.endswith("_KW"):
            return t.strip("_").removesuffix("_KW")
        return t.lower()

    return word


# ----------------------------------------------------------------------------- reading


def read_pattern_file(path: str | Path) -> str:
    """A pattern file's text (UTF-8). A file that cannot be read or is not UTF-8 text gives a
    PatternError naming the file (and the line and column of the first bad byte)."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise PatternError(f"cannot read pattern file: {e.strerror}", str(path)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[: e.start].decode("utf-8", errors="replace")
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        shown = data.decode("utf-8", errors="replace").splitlines()
        raise PatternSyntaxError(
            f"the file is not UTF-8 text: byte 0x{data[e.start]:02x} cannot be decoded (save it as UTF-8)",
            str(path),
            line,
            column,
            shown[line - 1] if line <= len(shown) else None,
        ) from None


def read_source(path: str) -> str:
    """A pattern file's text again ("" if gone or unreadable): for carets in errors about
    patterns whose spans carry no source."""
    try:
        return read_pattern_file(path)
    except PatternError:
        return ""


# ----------------------------------------------------------------------------- errors at spans


def error_at(
    message: str, span: A.Span | None, kind: type[PatternError] = PatternSemanticError, file: str | None = None
) -> PatternError:
    """An error located at ``span`` (file, line, column and source text): the caret is drawn
    when it is reported, whichever stage raised it."""
    if span is None:
        return kind(message, file)
    return kind(
        message, file or span.file, span.line or None, span.column or None, None, span.source or None
    )


class BuildError(Exception):
    """Raised by an AST builder at a token or span; :func:`transform_tree` turns it into a
    PatternSyntaxError with the source line."""

    def __init__(self, message: str, where: Any) -> None:
        super().__init__(message)
        self.message = message
        self.where = where

    def span(self, file: str, text: str) -> A.Span:
        """Where the problem is, as a span of ``file``."""
        where = self.where
        if isinstance(where, Token):
            return A.Span(file, where.line or 1, where.column or 1, text)
        if isinstance(where, A.Span):
            return A.Span(file, where.line or 1, where.column or 1, text)
        meta = getattr(where, "line", None)
        if meta is not None:
            return A.Span(file, where.line or 1, where.column or 1, text)
        return A.Span(file, 1, 1, text)


# ----------------------------------------------------------------------------- lark plumbing


@lru_cache(maxsize=4)
def grammar(name: str) -> lark.Lark:
    """The LALR parser of ``petricep/lang/<name>``, built once per process, and kept by lark
    between processes in :func:`grammar_cache` (lark checks that it was built from this text,
    with these options, by this lark and Python, and builds it again if not)."""
    text = resources.files("petricep.lang").joinpath(name).read_text(encoding="utf-8")
    cache = grammar_cache(name, text)
    return lark.Lark(
        text, parser="lalr", propagate_positions=True, maybe_placeholders=False, cache=cache or False
    )


def grammar_cache(name: str, text: str) -> str | None:
    """Where lark keeps the analysed parser of grammar ``name``: analysing the pattern grammar
    takes about 50 ms of every start-up, loading it about 5 ms (SQL's: 200 ms and 17 ms). A
    file in the user's cache directory (``$XDG_CACHE_HOME/petricep``, else
    ``~/.cache/petricep``), named after the grammar, lark's and Python's versions so that
    installations sharing it do not overwrite each other's; None without a usable directory
    (nothing is cached then, and nothing else changes)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # no home directory
        return None
    folder = os.path.join(base, "petricep")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    key = hashlib.sha256(f"{text}\0{lark.__version__}\0{sys.version_info[:2]}".encode()).hexdigest()[:16]
    return os.path.join(folder, f"{Path(name).stem}-{key}.lark-cache")


class SpanTransformer(Transformer):  # type: ignore[type-arg]
    """A lark transformer that knows its file and text, so nodes carry where they came from."""

    def __init__(self, file: str, text: str = "") -> None:
        super().__init__()
        self.file = file
        self.text = text

    def _span(self, obj: Any) -> A.Span:
        if isinstance(obj, Token):
            return A.Span(self.file, obj.line or 0, obj.column or 0, self.text)
        meta = getattr(obj, "meta", obj)
        return A.Span(self.file, getattr(meta, "line", 0), getattr(meta, "column", 0), self.text)


def _end_position(text: str) -> tuple[int, int]:
    lines = text.splitlines() or [""]
    return len(lines), len(lines[-1]) + 1


def _syntax(text: str, file: str, message: str, line: int, column: int) -> PatternSyntaxError:
    return PatternSyntaxError(message, file, line, column, None, text)


#: a known mistake at a parse error: (message, offset in the text to point at), or None
Hint = Callable[[lark.exceptions.UnexpectedInput, str], "tuple[str, int] | None"]


def _position(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def parse_tree(
    parser: lark.Lark, text: str, file: str, word: Callable[[str], str], hint: Hint | None = None
) -> lark.Tree:  # type: ignore[type-arg]
    """Run a lark parser; its errors become PatternSyntaxError in user words (``word`` names a
    terminal; ``hint`` may replace the message for a known mistake)."""
    try:
        return parser.parse(text)
    except lark.exceptions.UnexpectedInput as e:
        raise syntax_error(e, text, file, word, hint) from None


def syntax_error(
    e: lark.exceptions.UnexpectedInput, text: str, file: str, word: Callable[[str], str], hint: Hint | None = None
) -> PatternSyntaxError:
    """lark's parse error as a PatternSyntaxError in user words."""
    known = hint(e, text) if hint else None
    if known is not None:
        return _syntax(text, file, known[0], *_position(text, known[1]))
    if isinstance(e, lark.exceptions.UnexpectedCharacters):
        message = f"unexpected character {text[e.pos_in_stream or 0]!r}"
        return _syntax(text, file, message, e.line, e.column)
    if not isinstance(e, lark.exceptions.UnexpectedToken):  # pragma: no cover - LALR
        return _syntax(text, file, "unexpected end of file", *_end_position(text))
    tok = e.token
    if tok.type == "$END":
        (line, col), got = _end_position(text), "end of file"
    else:
        line, col, got = tok.line or 1, tok.column or 1, repr(str(tok))
    expected = sorted({word(t) for t in e.expected if not t.startswith("__")})
    message = f"unexpected {got}" + (f"; expected {', '.join(expected[:8])}" if expected else "")
    return _syntax(text, file, message, line, col)


#: the most syntax errors one file reports (a file of garbage would give one per line)
MAX_SYNTAX_ERRORS = 20


def _error_offset(e: lark.exceptions.UnexpectedInput, text: str) -> int:
    """Where in the text the parser stopped (the end for an unexpected end of file)."""
    tok = getattr(e, "token", None)
    if tok is not None:
        return len(text) if tok.type == "$END" else int(tok.start_pos or 0)
    return int(getattr(e, "pos_in_stream", None) or 0)


_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank(text: str, start: int, stop: int) -> str:
    """``text`` with spaces over ``text[start:stop]``, newlines kept: every later position
    stays where it was."""
    if start >= stop:
        return text
    return text[:start] + _NOT_NEWLINE.sub(" ", text[start:stop]) + text[stop:]


def parse_tree_all(
    parser: lark.Lark,
    text: str,
    file: str,
    word: Callable[[str], str],
    boundaries: list[tuple[int, int]],
    hint: Hint | None = None,
) -> tuple[list[lark.Tree], list[PatternSyntaxError]]:  # type: ignore[type-arg]
    """Parse, going on after a syntax error at the next top-level declaration, so that one
    run reports every declaration's error. ``boundaries``: where declarations may begin, as
    (resume, start) offsets in text order: the parser resumes at ``resume`` (a PATTERN
    keyword; a query's ``;``), and ``start`` is where the declaration after it begins.

    Each parse reads the text from where the last one resumed, the text before blanked
    (spaces, newlines kept: positions, hence carets, stay the file's). After an error the
    declarations before it are parsed alone (up to the error, or, when the declaration there
    is incomplete, up to its start) and the parse resumes at the next boundary. Every token
    is parsed about twice at most; the trees come in file order."""
    trees: list[lark.Tree] = []  # type: ignore[type-arg]
    errors: list[PatternSyntaxError] = []
    offset = 0  # the text before it is read: blanked in later parses
    while True:
        try:
            trees.append(parser.parse(_blank(text, 0, offset)))
            return trees, errors
        except lark.exceptions.UnexpectedInput as e:
            at = _error_offset(e, text)
            errors.append(syntax_error(e, text, file, word, hint))
        before = _prefix_tree(parser, text, offset, at, boundaries)
        if before is not None:
            trees.append(before)
        resume = next((r for r, _s in boundaries if r >= at and r > offset), len(text))
        if resume >= len(text) or len(errors) >= MAX_SYNTAX_ERRORS:  # (enough: the rest is not read)
            return trees, errors
        offset = resume


def _prefix_tree(
    parser: lark.Lark, text: str, offset: int, at: int, boundaries: list[tuple[int, int]]
) -> lark.Tree | None:  # type: ignore[type-arg]
    """The declarations between ``offset`` and a syntax error at ``at``, parsed alone: up to
    the error, else up to the start of the declaration it is in (or the one before, where a
    keyword first on a line was not a declaration's); None when none parses."""
    starts = [s for _r, s in boundaries if offset < s < at][-2:]
    for end in [at, *reversed(starts)]:
        try:
            return parser.parse(_blank(text[:end], 0, offset))
        except lark.exceptions.UnexpectedInput:
            continue
    return None


def transform_tree(builder: Transformer, tree: lark.Tree, text: str, file: str) -> Any:  # type: ignore[type-arg]
    """Apply an AST builder; a :class:`BuildError` it raises becomes PatternSyntaxError."""
    try:
        return builder.transform(tree)
    except lark.exceptions.VisitError as e:
        err = e.orig_exc
        if isinstance(err, BuildError):
            raise error_at(err.message, err.span(file, text), PatternSyntaxError) from None
        if isinstance(err, PatternError):
            raise err from None
        raise


def transform_each(
    builder: Transformer, trees: list[lark.Tree], text: str, file: str  # type: ignore[type-arg]
) -> tuple[list[Any], list[PatternError]]:
    """Apply an AST builder to each top-level declaration of ``trees`` on its own, so that a
    declaration's error (a :class:`BuildError`) does not hide the others': the values of the
    declarations that built, and the errors of those that did not, in file order."""
    values: list[Any] = []
    errors: list[PatternError] = []
    for child in (c for tree in trees for c in tree.children):
        if not isinstance(child, lark.Tree):
            continue  # a separator
        try:
            values.append(transform_tree(builder, child, text, file))
        except PatternError as e:
            errors.append(e)
    return values, errors


def semicolons(text: str, skip: re.Pattern[str]) -> list[tuple[int, int]]:
    """The ``;`` outside comments and strings, as :func:`parse_tree_all`'s boundaries (the
    parser resumes at one; the next statement begins after it)."""
    out: list[tuple[int, int]] = []
    pos, n = 0, len(text)
    while pos < n:
        m = skip.match(text, pos)
        if m is not None and m.end() > pos:
            pos = m.end()
            continue
        if text[pos] == ";":
            out.append((pos, pos + 1))
        pos += 1
    return out


# ----------------------------------------------------------------------------- limits on text

_NUMBER = re.compile(r"\d+(\.\d+)?([eE][+-]?\d+)?|\.\d+")


def check_text_limits(text: str, file: str, skip: re.Pattern[str]) -> None:
    """Bracket nesting and number literals, checked on the text before parsing (``skip``
    matches what the grammar ignores or quotes: comments and strings). Linear in the text."""
    depth = 0
    pos, n = 0, len(text)
    while pos < n:
        ch = text[pos]
        if ch in "([":
            depth += 1
            if depth > MAX_NESTING:
                raise _limit(text, file, pos, f"brackets nested more than {MAX_NESTING} deep")
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch.isdigit() or (ch == "." and pos + 1 < n and text[pos + 1].isdigit()):
            if pos > 0 and (text[pos - 1].isalnum() or text[pos - 1] == "_"):
                m = re.compile(r"\w+").match(text, pos)  # part of a name (a1, x_2)
            else:
                m = _NUMBER.match(text, pos)
                if m is not None:
                    _check_number(m.group(), text, file, pos)
            pos = m.end() if m is not None else pos + 1
            continue
        else:
            m = skip.match(text, pos)
            if m is not None and m.end() > pos:
                pos = m.end()
                continue
        pos += 1


def _check_number(literal: str, text: str, file: str, pos: int) -> None:
    if len(literal) > MAX_NUMBER_LENGTH:
        raise _limit(text, file, pos, f"a number of {len(literal)} characters: at most {MAX_NUMBER_LENGTH}")
    value = float(literal)  # never raises: a decimal literal over the range gives inf
    if value > MAX_NUMBER:
        raise _limit(text, file, pos, f"the number {_short(literal)} is out of range (at most {MAX_NUMBER:.6g})")


def _short(literal: str) -> str:
    return literal if len(literal) <= 20 else f"{literal[:8]}...{literal[-4:]} ({len(literal)} characters)"


def _limit(text: str, file: str, pos: int, message: str) -> PatternLimitError:
    return PatternLimitError(message, file, *_position(text, pos), None, text)


def number_value(literal: str) -> int | float:
    """A number literal's value (already within the limits): an int when written as one."""
    return int(literal) if literal.isdigit() else float(literal)


def expression_depth_error(span: A.Span) -> PatternLimitError:
    """The error for an expression nested deeper than :data:`MAX_EXPRESSION_DEPTH`."""
    err = error_at(
        f"expression nested too deep: more than {MAX_EXPRESSION_DEPTH} operators inside each other "
        "(split a long sum or chain of conditions into parts)",
        span,
        PatternLimitError,
    )
    assert isinstance(err, PatternLimitError)
    return err
