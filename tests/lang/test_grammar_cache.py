"""The analysed LALR parsers are kept between processes (start-up, issue 16): a parser loaded
from the cache parses exactly as a freshly built one, and a missing, unusable or damaged cache
only costs the time of building it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import lark
import pytest

from petricep.lang import pcep
from petricep.lang.front import grammar, grammar_cache

PATTERN = (
    "PATTERN p: SEQ(A a, !(B b), C+ c[]) WHERE [k] AND a.x < c[i].x AND count(c[]) > 1 "
    "WITHIN 5 min RETURN T(y = a.x)\n"
)
SQL = (
    "SELECT * FROM T MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES LAST(B.x) AS m "
    "ONE ROW PER MATCH PATTERN (A B+) DEFINE B AS B.x > PREV(B.x)) MR;"
)
build = grammar.__wrapped__  # past the per-process cache


def _shape(tree: Any) -> Any:
    """A parse tree with the positions of every node and token."""
    if isinstance(tree, lark.Token):
        return (tree.type, str(tree), tree.line, tree.column, tree.end_line, tree.end_column)
    meta = tree.meta
    where = (meta.line, meta.column, meta.end_line, meta.end_column) if not meta.empty else None
    return (tree.data, where, [_shape(c) for c in tree.children])


@pytest.mark.parametrize(("name", "text"), [("pattern.lark", PATTERN), ("sql.lark", SQL)])
def test_a_cached_parser_parses_as_a_built_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = build(name)
    files = list((tmp_path / "petricep").iterdir())
    assert len(files) == 1 and files[0].name.startswith(name.removesuffix(".lark") + "-")
    os.utime(files[0], ns=(10**9, 10**9))
    loaded = build(name)
    assert files[0].stat().st_mtime_ns == 10**9  # read, not written again
    assert _shape(loaded.parse(text)) == _shape(built.parse(text))


def test_no_usable_cache_directory_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # not a directory
    assert grammar_cache("pattern.lark", "text") is None
    assert _shape(build("pattern.lark").parse(PATTERN)) == _shape(grammar("pattern.lark").parse(PATTERN))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    assert grammar_cache("pattern.lark", "text") is None


def test_a_damaged_cache_is_built_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    text = (Path(__file__).resolve().parents[2] / "petricep" / "lang" / "pattern.lark").read_text(encoding="utf-8")
    path = grammar_cache("pattern.lark", text)
    assert path is not None
    Path(path).write_bytes(b"not a parser")
    assert _shape(build("pattern.lark").parse(PATTERN)) == _shape(grammar("pattern.lark").parse(PATTERN))
    assert Path(path).read_bytes() != b"not a parser"


def test_patterns_compile_to_the_same_ast_through_a_cached_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    monkeypatch.setattr(pcep, "grammar", build)
    fresh = pcep.parse_text(PATTERN, "p.pcep")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    build("pattern.lark")  # written
    assert pcep.parse_text(PATTERN, "p.pcep") == fresh  # read
