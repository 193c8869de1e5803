"""The input format registry: a format's name and file extensions -> its reader.

``open_events`` picks the reader here, so a new input (stdin ``-``, several files, a
glob) is one :func:`register_format` call, not another branch in every caller. A name
ending in ``.gz`` or ``.bz2`` is the compressed form of a format that allows it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ConfigError, EventError
from .source import EventSource
from .spec import InputSpec
from .tables import ParquetSource
from .textfiles import COMPRESSIONS, CsvSource, JsonlSource


@dataclass(frozen=True)
class Format:
    """An input format: ``open(spec, label)`` gives its events; ``extensions`` (with the
    dot) tell it from a file name; ``compressible``: ``.gz``/``.bz2`` files allowed;
    ``delimited``: the CSV options ``columns`` and ``delimiter`` apply."""

    name: str
    extensions: tuple[str, ...]
    open: Callable[[InputSpec, str], EventSource]
    compressible: bool = False
    delimited: bool = False


_FORMATS: dict[str, Format] = {}
_BY_EXTENSION: dict[str, str] = {}


def register_format(fmt: Format) -> None:
    """Add (or replace) a format; its extensions then name it."""
    _FORMATS[fmt.name] = fmt
    for ext in fmt.extensions:
        _BY_EXTENSION[ext.lower()] = fmt.name


def format_names() -> tuple[str, ...]:
    """The registered format names, in registration order."""
    return tuple(_FORMATS)


def _choices() -> str:
    names = format_names()
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


def format_named(name: str) -> Format:
    """The format called ``name``; a :class:`ConfigError` naming the known ones otherwise."""
    fmt = _FORMATS.get(name) if isinstance(name, str) else None
    if fmt is None:
        raise ConfigError(f"unknown format {name!r} (use {_choices()})")
    return fmt


def infer_format(path: str) -> str:
    """The format of a file from its name (``.gz``/``.bz2`` allowed for text formats)."""
    name = os.path.basename(str(path)).lower()
    compressed = False
    for ext in COMPRESSIONS:
        if name.endswith(ext):
            name = name[: -len(ext)]
            compressed = True
    found = _BY_EXTENSION.get(os.path.splitext(name)[1])
    if os.path.isdir(path):  # (whatever its name: the error is the events', as with a format given)
        raise EventError("cannot open file: it is a directory", str(path))
    if found is None or (compressed and not _FORMATS[found].compressible):
        raise ConfigError(f"cannot tell the format of {path!r} from its name: give the format ({_choices()})")
    return found


register_format(Format("csv", (".csv", ".txt", ".dat"), CsvSource, compressible=True, delimited=True))
register_format(Format("jsonl", (".jsonl", ".ndjson", ".json"), JsonlSource, compressible=True))
register_format(Format("parquet", (".parquet", ".pq"), ParquetSource))


__all__ = ["Format", "format_named", "format_names", "infer_format", "register_format"]
