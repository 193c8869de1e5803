"""CSV and JSON Lines files (plain, gzip or bz2), read in chunks of whole lines.

Standard input (path ``-``, :data:`STDIN`), a named pipe and process substitution are
read as streams (:mod:`petricep.io.streams`): once, as they arrive, each chunk the whole
lines available so far (not a 4 MiB block), so that a live pipe (``tail -f``) gives its
events, and their matches, as soon as a line is complete.

CSV: each physical line is one row (newlines inside quoted values are not
supported). Arrow's streaming reader reads the file for as long as it provably reads it
as the line-by-line reader would (:mod:`petricep.io.csvstream`); from the first line
where it might not (or the first batch with a bad row), the chunked reader goes on:
each chunk is parsed with Arrow and converted column by column; a chunk with anything
unusual (a bad value, a short line, a blank line, a lone ``\r``, invalid UTF-8) is
re-read line by line with Python's ``csv`` module, which gives the same values and the
exact line of each error.
"""

from __future__ import annotations

import bz2
import contextlib
import functools
import gzip
import json
import math
import os
import zlib
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from typing import IO, Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

from ..errors import EventError
from ..events import Event, EventColumns
from .checks import MISSING, RowChecker, converted_columns
from .csvline import split_line
from .csvstream import CleanLines, has_blank_line, open_batches, tables
from .prefetch import ReadAhead
from .source import EventSource
from .spec import InputSpec, duplicate_name
from .streams import STDIN, Replay, ReplayStream, is_stream, replay_of, stdin_replay, use_stdin
from .values import FLOAT_MAX, MAX_NUMBER_CHARS, text_value, type_text_column

COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2"}
_CHUNK = 4 << 20
_BOM = b"\xef\xbb\xbf"
_PEEK = 64 << 10  # what the header and first-row peeks read at a time
_NL, _CR = ord("\n"), ord("\r")


@functools.cache
def unread_column() -> pa.Array:
    """Stands for a column the run does not read. ``pa.nulls``, not ``pa.array([])``:
    converting even an empty list makes pyarrow import pandas, which an embedded run must not
    pay for."""
    return pa.nulls(0, pa.string())


def _compression(path: str) -> str | None:
    low = path.lower()
    for ext, comp in COMPRESSIONS.items():
        if low.endswith(ext):
            return comp
    try:
        with open(path, "rb") as f:
            magic = f.read(3)
    except OSError:
        return None
    if magic[:2] == b"\x1f\x8b":
        return "gzip"
    if magic == b"BZh":
        return "bz2"
    return None


def _open_stream(path: str, label: str, for_pass: bool = False) -> Any:
    """A binary stream of the file's text (decompressed); ``for_pass``: the stream of the
    reader's pass, which a stream input (standard input, a pipe) gives only once."""
    if is_stream(path):
        replay = replay_of(path, label)
        compression = _stream_compression(path, replay)
        if for_pass:
            replay.begin_pass()
        return _decompressed(replay.stream(), compression)
    if not os.path.exists(path):
        raise EventError("cannot open file: no such file", label)
    if os.path.isdir(path):
        raise EventError("cannot open file: it is a directory", label)
    try:
        return pa.input_stream(path, compression=_compression(path))
    except (OSError, pa.ArrowException) as e:
        raise EventError(f"cannot open file: {e}", label) from None


def _read_chunks(
    path: str, label: str, skip_lines: int = 0, size: int | None = None, for_pass: bool = False
) -> Iterator[tuple[bytes, int]]:
    """Whole lines of a (possibly compressed) text file, after its first ``skip_lines``:
    ``(chunk, first line number)``, read ``size`` bytes at a time, at most _CHUNK (a peek at
    the header or the first row reads _PEEK: the start of a run waits for it, and a 4 MiB
    chunk of a gzip file is ~20 ms of inflating and copying on the main thread);
    ``for_pass``: the reader's pass (see :func:`_open_stream`)."""
    yield from _chunks_of(_open_stream(path, label, for_pass), label, skip_lines, size)


def _chunks_of(stream: Any, label: str, skip_lines: int = 0, size: int | None = None) -> Iterator[tuple[bytes, int]]:
    """:func:`_read_chunks` of an open binary stream (closed at the end)."""
    size = min(size or _CHUNK, _CHUNK)
    try:
        buf = b""
        line = 1
        first = True
        skipping = skip_lines
        while True:
            try:
                data = stream.read(size)
            except (OSError, EOFError, zlib.error, pa.ArrowException) as e:
                raise EventError(f"cannot read file: {e}", label) from None
            if first and data:
                first = False
                if data.startswith(_BOM):
                    data = data[len(_BOM) :]
            if not data:
                if buf and not skipping:
                    yield buf, line
                return
            buf += data
            if skipping:
                buf, skipped = _skip_lines(buf, skipping)
                skipping -= skipped
                line += skipped
                if skipping:
                    continue
            j = buf.rfind(b"\n")
            if j < 0:
                continue
            chunk, buf = buf[: j + 1], buf[j + 1 :]
            yield chunk, line
            line += chunk.count(b"\n")
    finally:
        stream.close()


def _stream_compression(path: str, replay: Replay) -> str | None:
    """A stream's compression, by its name or its first bytes (peeked: they are kept for
    the readers after)."""
    low = path.lower()
    for ext, comp in COMPRESSIONS.items():
        if low.endswith(ext):
            return comp
    if replay.passes:
        return None
    peek = replay.stream()
    head = b""
    while len(head) < 3:
        data = peek.read(3 - len(head))
        if not data:
            break
        head += data
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    return "bz2" if head[:3] == b"BZh" else None


def _decompressed(stream: ReplayStream, compression: str | None) -> Any:
    """A stream read through its decompression (gzip, bz2), which reads it front to back."""
    raw = cast(IO[bytes], stream)  # (a file object as far as the decompressors read it)
    if compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "bz2":
        return bz2.BZ2File(raw, mode="rb")
    return stream


def _skip_lines(buf: bytes, n: int) -> tuple[bytes, int]:
    """``buf`` after its first ``n`` whole lines (or all of them), and how many it dropped
    (found one by one: not a count of every line of a 4 MiB chunk to skip a header)."""
    i = -1
    for k in range(n):
        j = buf.find(b"\n", i + 1)
        if j < 0:
            return buf[i + 1 :], k
        i = j
    return buf[i + 1 :], n


def _text_columns(names: Sequence[str], include: list[str] | None = None) -> pa_csv.ConvertOptions:
    """Every column read as text (typed by petricep's own rule); ``include``: only those."""
    return pa_csv.ConvertOptions(
        column_types={c: pa.string() for c in names},
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
        null_values=[""],
        include_columns=include or [],
    )


def _ends_in_quotes(chunk: bytes, delimiter: str) -> bool:
    """Whether a chunk's last line leaves a quoted value open. Arrow reads on past a line's
    end inside quotes, so an open quote on any other line joins lines (the row count shows
    it); on the last line it would be read as a value."""
    last = chunk.rstrip(b"\r\n").rsplit(b"\n", 1)[-1]
    if b'"' not in last:
        return False
    return split_line(last.decode("utf-8", "replace"), delimiter)[0] is None


def _typed_text(arr: pa.Array) -> tuple[Any, bool, bool]:
    """A CSV text column typed by the cell rule: (values, all numbers, any missing)."""
    values, numbers_only = type_text_column(arr)
    return values, numbers_only, arr.null_count > 0


def _lines(chunk: bytes) -> list[bytes]:
    lines = chunk.split(b"\n")
    if chunk.endswith(b"\n"):
        lines.pop()
    return lines


def _each_line(chunk: bytes) -> Iterator[bytes]:
    """:func:`_lines`, one at a time: the first row of a 4 MiB chunk without splitting the
    hundred thousand lines after it."""
    start = 0
    while True:
        end = chunk.find(b"\n", start)
        if end < 0:
            if start < len(chunk) or not chunk:
                yield chunk[start:]
            return
        yield chunk[start:end]
        start = end + 1


def _utf8(chunk: bytes) -> bool:
    """Whether a chunk is valid UTF-8 (docs/INPUT.md: invalid UTF-8 is an error of its row, in
    every column, whether a pattern reads it or not)."""
    if chunk.isascii():
        return True
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _blank_line_inside(chunk: bytes) -> bool:
    """Whether a blank line follows some line of ``chunk`` (``\n\n`` or ``\n\r\n`` in it):
    numpy over the bytes (a tenth of the time ``in`` takes to search a 4 MiB chunk for two
    or three bytes, twice per chunk of the chunked reader)."""
    a = np.frombuffer(chunk, dtype=np.uint8)
    nl = a == _NL
    if len(a) < 2:
        return False
    if (nl[1:] & nl[:-1]).any():
        return True
    return bool((nl[2:] & (a[1:-1] == _CR) & nl[:-2]).any())


def _decode(line: bytes) -> str:
    return line.decode("utf-8", "replace")


class TextSource(EventSource):
    """A text file's reader (CSV, JSON Lines); ``data``: the file's text itself, in memory
    (a part of a file, with its header: Spark's parse stage), read as the file holding those
    bytes would be; ``label`` names it (the path is never opened)."""

    def __init__(self, spec: InputSpec, label: str, data: bytes | None = None) -> None:
        super().__init__(spec, label)
        self._data = data

    def _chunks(self, skip_lines: int = 0, size: int | None = None, for_pass: bool = False) -> Iterator[tuple[bytes, int]]:
        """:func:`_read_chunks` of the file, or of the text in memory."""
        if self._data is not None:
            return _chunks_of(pa.BufferReader(self._data), self.label, skip_lines, size)
        return _read_chunks(self.spec.path, self.label, skip_lines, size, for_pass)

    def _stream_input(self) -> bool:
        """Whether the input is read as a stream (standard input, a pipe: once, as it comes)."""
        return self._data is None and is_stream(self.spec.path)


class CsvSource(TextSource):
    def __init__(self, spec: InputSpec, label: str, data: bytes | None = None) -> None:
        super().__init__(spec, label, data)
        self._delim = spec.delimiter or ","
        if spec.columns is not None:
            self.columns = tuple(spec.columns)
            self._header = False
        else:
            self.columns = self._read_header()
            self._header = True
            dup = duplicate_name(self.columns)
            if dup is not None:
                raise EventError(f"duplicate column {dup!r}", label, 1, dup)
        self.check_columns(1 if self._header else None)
        self._convert = _text_columns(self.columns)

    def _read_header(self) -> tuple[str, ...]:
        for chunk, _ in self._chunks(size=_PEEK):
            first = chunk[: chunk.find(b"\n")] if b"\n" in chunk else chunk
            self._head: bytes | None = chunk  # the first row is in it too: not read again
            break
        else:
            return ()
        if first.endswith(b"\r"):
            first = first[:-1]
        try:
            text = first.decode("utf-8")
        except UnicodeDecodeError:
            raise EventError("invalid UTF-8 text", self.label, 1) from None
        fields, err = split_line(text, self._delim)
        if fields is None:
            raise EventError(err or "invalid CSV", self.label, 1)
        return tuple(fields)

    def _split(self, line: bytes) -> tuple[str, list[str] | None, str | None]:
        """(text, fields, error) of one line."""
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            return _decode(line), None, "invalid UTF-8 text"
        return text, *split_line(text, self._delim)

    def read_first_row(self) -> Mapping[str, Any] | None:
        assert self.columns is not None
        head, self._head = getattr(self, "_head", None), None
        if head is not None and b"\n" in head:
            rows = head[head.find(b"\n") + 1 :]
            if rows and not rows.isspace():  # a non-blank line after the header: the first row is there
                return self._row_of((rows,))
        return self._row_of(chunk for chunk, _ in self._chunks(int(self._header), _PEEK))

    def _row_of(self, chunks: Iterable[bytes]) -> Mapping[str, Any] | None:
        """The first non-blank line of ``chunks`` as a row (None: none, or not a whole row)."""
        assert self.columns is not None
        for chunk in chunks:
            for line in _each_line(chunk):
                line = line[:-1] if line.endswith(b"\r") else line
                if line:
                    _, fields, err = self._split(line)
                    if fields is None or len(fields) != len(self.columns):
                        return None
                    return dict(zip(self.columns, fields))
        return None

    def read_events(self, run: RowChecker) -> Iterator[Event | EventColumns]:
        stream = self._stream_input()
        # Arrow's streaming reader waits for whole blocks, and opens the file again after it;
        # text in memory needs no reading ahead: the chunked reader reads it as it is
        done = 0 if stream or self._data is not None else (yield from self._stream(run))
        if done is None:
            return
        for chunk, start in self._chunks(int(self._header) + done, for_pass=stream):
            events = self._fast(run, chunk)
            if events is not None:
                yield from events
            else:
                yield from self._slow(run, chunk, start)

    def _stream(self, run: RowChecker) -> Generator[Event | EventColumns, None, int | None]:
        """The events of the file's first rows, read by Arrow's streaming reader (see
        :mod:`petricep.io.csvstream`); returns how many lines it read (each one row), or
        None when that was the whole file. The chunked reader reads on from there."""
        names = self.columns
        assert names is not None
        if not names:
            return 0
        need = run.needed(names)
        include = list(names) if need is None else [c for c, k in zip(names, need) if k] or [names[0]]
        lines = CleanLines(_open_stream(self.spec.path, self.label), _CHUNK, self._header)
        try:
            reader = open_batches(lines, names, include, self._header, self._delim, _text_columns(names, include))
        except (pa.ArrowException, OSError, ValueError):
            lines.close()
            return 0
        done = 0
        # Arrow parses the next rows on a thread of their own while these are converted (the
        # parse lets go of the interpreter lock, the conversion mostly holds it)
        parts = iter(ReadAhead(tables(reader)))
        try:
            while True:
                try:
                    table = next(parts)
                except StopIteration as end:
                    return None if end.value and not lines.stopped else done
                if has_blank_line(table.columns):
                    return done
                parsed = {name: c.chunk(0) for name, c in zip(table.column_names, table.columns)}
                events = self._columnar(run, parsed, table.num_rows)
                if events is None:
                    return done
                yield from events
                done += table.num_rows
        finally:
            lines.close()  # (Arrow's reads end at once; then its thread, then the reader)
            parts.close()
            with contextlib.suppress(pa.ArrowException):
                reader.close()

    def _fast(self, run: RowChecker, chunk: bytes) -> list[Event] | list[EventColumns] | None:
        names = self.columns
        assert names is not None
        if not names:
            return None
        if b"\r" in chunk and chunk.count(b"\r") != chunk.count(b"\r\n"):
            return None
        if chunk.startswith((b"\n", b"\r\n")) or _blank_line_inside(chunk):
            return None
        n_lines = chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
        need = run.needed(names)
        convert = self._convert
        if need is not None and not all(need):  # columns no pattern reads are not even parsed
            if not _utf8(chunk):  # ... nor checked by Arrow: invalid UTF-8 is its row's error all the same
                return None
            convert = _text_columns(names, [c for c, k in zip(names, need) if k])
        try:
            table = pa_csv.read_csv(
                pa.py_buffer(chunk),
                read_options=pa_csv.ReadOptions(column_names=list(names), use_threads=True),
                parse_options=pa_csv.ParseOptions(delimiter=self._delim, newlines_in_values=False),
                convert_options=convert,
            )
        except (pa.ArrowException, ValueError):
            return None
        if table.num_rows != n_lines or (b'"' in chunk and _ends_in_quotes(chunk, self._delim)):
            return None
        table = table.combine_chunks()
        parsed = {name: c.chunk(0) if c.num_chunks else unread_column() for name, c in zip(table.column_names, table.columns)}
        return self._columnar(run, parsed, table.num_rows)

    def _columnar(self, run: RowChecker, parsed: dict[str, pa.Array], n: int) -> list[Event] | list[EventColumns] | None:
        """The events of ``n`` rows parsed as text columns (those ``run`` converts: see
        RowChecker.converted), or None when a row needs checking one by one."""
        names = self.columns
        assert names is not None
        arrays = [parsed[name] if name in parsed else unread_column() for name in names]
        batch = converted_columns(arrays, run.converted(names), _typed_text)
        spec = self.spec
        type_arr = arrays[names.index(spec.type_field)] if spec.type_field is not None else None
        time_arr = arrays[names.index(spec.time_field)] if spec.time_field is not None else None
        return run.columnar(names, batch, type_arr, time_arr, n)

    def _slow(self, run: RowChecker, chunk: bytes, start: int) -> Iterator[Event]:
        names = self.columns
        assert names is not None
        spec = self.spec
        ncols = len(names)
        ti = names.index(spec.type_field) if spec.type_field is not None else None
        tmi = names.index(spec.time_field) if spec.time_field is not None else None
        for k, line in enumerate(_lines(chunk)):
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                continue
            row = start + k
            pos = run.take_pos()
            text, fields, err = self._split(line)
            if fields is None:
                run.reject(row, None, err or "invalid CSV", text)
                continue
            if len(fields) != ncols:
                run.reject(row, None, f"expected {ncols} fields, got {len(fields)}", text)
                continue
            attrs = {name: text_value(f) for name, f in zip(names, fields)}
            ev = run.row_event(
                attrs,
                pos,
                row,
                text,
                type_raw=fields[ti] if ti is not None else MISSING,
                time_raw=fields[tmi] if tmi is not None else MISSING,
                clean=True,
            )
            if ev is not None:
                yield ev


def _json_int(text: str) -> Any:
    """A JSON integer by the cell rule of :mod:`petricep.io.values`: a number only when a
    float64 holds it (and at most MAX_NUMBER_CHARS long), else its text."""
    if len(text) > MAX_NUMBER_CHARS:
        return text
    n = int(text)
    return n if -FLOAT_MAX <= n <= FLOAT_MAX else text


def _json_float(text: str) -> Any:
    """A JSON fraction or exponent number, by the same rule: ``1e400`` stays text."""
    if len(text) > MAX_NUMBER_CHARS:
        return text
    f = float(text)
    return f if math.isfinite(f) else text


# JSON numbers typed as CSV cells are; the literals NaN and Infinity (not JSON, though
# Python's json reads them) are text, as the cells ``NaN`` and ``Infinity`` are
_JSON = json.JSONDecoder(parse_int=_json_int, parse_float=_json_float, parse_constant=str)


def _lone_surrogate(value: Any) -> bool:
    """Whether a decoded JSON value holds a lone surrogate (``"\\ud800"`` decodes to one; a
    pair decodes to one character). It is not Unicode text: no UTF-8 output, Arrow column or
    text comparison can hold it, so its row is an error, as a line of invalid UTF-8 is."""
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(_lone_surrogate(k) or _lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_lone_surrogate(v) for v in value)
    return False


class JsonlSource(TextSource):
    def __init__(self, spec: InputSpec, label: str, data: bytes | None = None) -> None:
        super().__init__(spec, label, data)
        first = self.first_row()
        self.columns = tuple(first) if first is not None else None

    def read_first_row(self) -> Mapping[str, Any] | None:
        for chunk, _ in self._chunks(size=_PEEK):
            for line in _each_line(chunk):
                if line.strip():
                    obj, _ = self._parse(line)
                    return obj if isinstance(obj, dict) else None
        return None

    @staticmethod
    def _parse(line: bytes) -> tuple[Any, str | None]:
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            return None, "invalid JSON: invalid UTF-8 text"
        try:
            obj = _JSON.decode(text)
        except json.JSONDecodeError as e:
            return None, f"invalid JSON: {e.msg} (column {e.colno})"
        except RecursionError:
            return None, "invalid JSON: nested too deeply"
        except ValueError as e:
            return None, f"invalid JSON: {e}"
        if not isinstance(obj, dict):
            return None, "invalid JSON: a line must hold one object"
        if (b"\\ud" in line or b"\\uD" in line) and _lone_surrogate(obj):
            return None, "invalid JSON: a lone surrogate escape (\\ud800-\\udfff) is not text"
        return obj, None

    def read_events(self, run: RowChecker) -> Iterator[Event | EventColumns]:
        for chunk, start in self._chunks(for_pass=self._stream_input()):
            for k, line in enumerate(_lines(chunk)):
                if not line.strip():
                    continue
                row = start + k
                pos = run.take_pos()
                obj, err = self._parse(line)
                text = _decode(line[:-1] if line.endswith(b"\r") else line)
                if err is not None:
                    run.reject(row, None, err, text)
                    continue
                ev = run.row_event(obj, pos, row, text)
                if ev is not None:
                    yield ev


# (standard input's replay is :mod:`petricep.io.streams`'; named here too, where callers had it)
__all__ = [
    "COMPRESSIONS", "STDIN", "CsvSource", "JsonlSource", "split_line", "stdin_replay", "unread_column", "use_stdin",
]  # fmt: skip
