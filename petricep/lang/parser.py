"""Which front end reads a file: the pattern language (:mod:`petricep.lang.pcep`) or SQL
MATCH_RECOGNIZE (:mod:`petricep.lang.sql`), by the ``lang`` asked for or the extension.

Both give a :class:`~petricep.lang.ast.PatternFile`, so every command accepts both. This is the
module callers import (``parse_file``, ``parse_text``); the two front ends know nothing of each
other.
"""

from __future__ import annotations

from pathlib import Path

from petricep.errors import ConfigError
from petricep.lang import ast as A
from petricep.lang.front import read_pattern_file
from petricep.lang.pcep import parse_raw, parse_text
from petricep.lang.sql import parse_sql

LANGS = ("pcep", "sql")

__all__ = ["LANGS", "lang_of", "parse_file", "parse_raw", "parse_source", "parse_sql", "parse_text"]


def lang_of(path: str | Path, lang: str | None = None) -> str:
    """The front end for a file: ``lang`` when given, else by extension (``.sql``: SQL)."""
    if lang is not None:
        if lang not in LANGS:
            raise ConfigError(f"unknown pattern language {lang!r} (use {', '.join(LANGS)})")
        return lang
    return "sql" if Path(path).suffix.lower() == ".sql" else "pcep"


def parse_source(text: str, file: str, lang: str, default_name: str | None = None) -> A.PatternFile:
    """Text in language ``lang`` (one of :data:`LANGS`) -> its checked PatternFile."""
    if lang == "sql":
        return parse_sql(text, file, default_name=default_name)
    return parse_text(text, file, default_name=default_name)


def parse_file(path: str | Path, lang: str | None = None) -> A.PatternFile:
    """Parse a pattern file: the pattern language, or SQL MATCH_RECOGNIZE queries (``*.sql``
    or ``lang="sql"``). Unnamed patterns are named after the file's stem."""
    text = read_pattern_file(path)
    return parse_source(text, str(path), lang_of(path, lang), default_name=Path(path).name.split(".")[0])
