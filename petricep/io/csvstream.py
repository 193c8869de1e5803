"""CSV read by Arrow's own streaming reader, as far as that provably reads it as the
line-by-line reader does.

Arrow decompresses and parses on its own threads while Python turns the previous batch
into events, which is what makes large files fast. But Arrow's CSV rules are not
petricep's: it takes a lone ``\\r`` as a line end, newlines inside quotes, a field of
any length. So Arrow reads the file through :class:`CleanLines`, which hands it whole
lines and ends the data early, at the start of the first line that holds anything where
the two could part (a quote, a lone ``\\r``, invalid UTF-8, a line as long as the csv
module's field limit, a read error). Up to there every line is one row of Arrow's, so
the caller can go on with the chunked reader from exactly that line. What Arrow reports
itself (a wrong field count, a blank line: see :func:`has_blank_line`) is handled the
same way, a batch earlier.
"""

from __future__ import annotations

import csv
from collections.abc import Generator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv

# Arrow's block (one batch): its read-ahead holds a few dozen of them. Small blocks keep
# that memory low; their batches are joined into tables of at least ROWS rows, so the
# cost per batch in Python does not grow.
BLOCK = 256 << 10
ROWS = 65_536
_CR = ord("\r")


class CleanLines:
    """A read-only file object for Arrow: the text of ``stream``, read ``chunk`` bytes at a
    time (as the chunked reader reads it, so a read error falls between the same lines),
    ending before the first line Arrow might read otherwise.

    ``stopped`` tells that the data ended early: the caller reads on from the line after
    the last row Arrow gave. ``header``: the first line is the header, which Arrow skips
    (``skip_rows``) and the header reader has already read and checked as one whole CSV
    line: quotes in it are no trouble (pyarrow's own ``write_csv`` quotes every header),
    while everything else in it still is (a lone ``\\r`` would end Arrow's row early).
    """

    def __init__(self, stream: Any, chunk: int, header: bool = False) -> None:
        self._stream = stream
        self._chunk = chunk
        self._header = header
        self._carry = b""
        self._ready = memoryview(b"")  # checked lines not yet handed out
        self._at = 0
        self._limit = csv.field_size_limit()
        self.stopped = False
        self.closed = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        """No more reads. The stream itself is closed by the thread that reads it (Arrow's:
        it may be inside a read now), on its next read or at the end."""
        self.closed = True

    def read(self, nbytes: int = -1) -> memoryview:
        """At most ``nbytes`` of the checked text (Arrow's block size bounds what its
        read-ahead holds); empty at the end."""
        if self._at >= len(self._ready) and not self._fill():
            self._stream.close()
            return memoryview(b"")
        end = len(self._ready) if nbytes < 0 else self._at + max(nbytes, 1)
        if end < len(self._ready) and self._ready[end - 1] == _CR:
            end += 1  # never between \r and \n: Arrow (26) ends the file early at a block of a lone \n
        out = self._ready[self._at : end]
        self._at += len(out)
        return out

    def _fill(self) -> bool:
        """Read and check the next whole lines; False at the end."""
        while not self.closed:
            try:
                data = self._stream.read(self._chunk)
            except (OSError, EOFError, ValueError, pa.ArrowException):  # the chunked reader meets it again
                self._end(True)
                return False
            if not data:
                last = self._checked(self._carry, final=True)
                self._end(self.stopped)
                return self._serve(last)
            buf = self._carry + data
            j = buf.rfind(b"\n")
            if j < 0:
                self._carry = buf
                continue
            part, self._carry = buf[: j + 1], buf[j + 1 :]
            part = self._checked(part, final=False)
            if self.stopped:
                self._end(True)
            return self._serve(part)
        return False

    def _serve(self, part: bytes) -> bool:
        self._ready = memoryview(part)
        self._at = 0
        return bool(part)

    def _end(self, stopped: bool) -> None:
        self.stopped = stopped
        self._carry = b""
        self.closed = True
        self._stream.close()

    def _checked(self, part: bytes, final: bool) -> bytes:
        """``part``, or its lines before the first troubled one (and ``stopped`` set)."""
        bad = self._first_trouble(part, final)
        if bad is None:
            return part
        self.stopped = True
        return part[: part.rfind(b"\n", 0, bad) + 1]

    def _first_trouble(self, part: bytes, final: bool) -> int | None:
        found: list[int] = []
        start = 0
        if self._header:  # the first part: its first line is the header (see the class)
            self._header = False
            start = part.find(b"\n") + 1 or len(part)
        quote = part.find(b'"', start)
        if quote >= 0:
            found.append(quote)
        if b"\r" in part:
            # the file's very last \r ends its last line for both readers
            body = part[:-1] if final and part.endswith(b"\r") else part
            if body.count(b"\r") != body.count(b"\r\n"):
                i = body.find(b"\r")
                while body[i + 1 : i + 2] == b"\n":
                    i = body.find(b"\r", i + 1)
                found.append(i)
        if not part.isascii():
            try:
                part.decode("utf-8")
            except UnicodeDecodeError as e:
                found.append(e.start)
        long = self._long_line(part)
        if long is not None:
            found.append(long)
        return min(found) if found else None

    def _long_line(self, part: bytes) -> int | None:
        """Where the first line of ``limit`` bytes or more starts: the csv module rejects a
        field that long, Arrow does not."""
        limit = self._limit
        pos = 0
        while len(part) - pos >= limit:
            j = part.rfind(b"\n", pos, pos + limit)
            if j < 0:
                return pos
            pos = j + 1
        return None


def open_batches(
    lines: CleanLines,
    names: Sequence[str],
    include: Sequence[str],
    header: bool,
    delimiter: str,
    convert: pa_csv.ConvertOptions,
) -> pa_csv.CSVStreamingReader:
    """Arrow's streaming reader over ``lines``: one row per line, blank lines kept as rows
    (so that :func:`has_blank_line` sees them), only the ``include`` columns converted."""
    return pa_csv.open_csv(
        lines,
        read_options=pa_csv.ReadOptions(column_names=list(names), skip_rows=1 if header else 0, block_size=BLOCK),
        parse_options=pa_csv.ParseOptions(delimiter=delimiter, newlines_in_values=False, ignore_empty_lines=False),
        convert_options=convert,
    )


def tables(reader: pa_csv.CSVStreamingReader, rows: int | None = None) -> Generator[pa.Table, None, bool]:
    """The reader's batches joined into tables of at least ``rows`` (default ROWS) rows, one
    array a column; returns False when a read failed (a bad line: the chunked reader tells which)."""
    rows = ROWS if rows is None else rows
    pending: list[pa.RecordBatch] = []
    size = 0
    ok = True
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            break
        except (pa.ArrowException, OSError, ValueError):
            ok = False
            break
        pending.append(batch)
        size += batch.num_rows
        if size >= rows:
            yield pa.Table.from_batches(pending).combine_chunks()
            pending, size = [], 0
    if pending:
        yield pa.Table.from_batches(pending).combine_chunks()
    return ok


def has_blank_line(columns: Sequence[pa.Array | pa.ChunkedArray]) -> bool:
    """Whether a batch may hold a blank line (Arrow reads one as a row of nulls only; the
    line-by-line reader skips it, so the line numbers part): every column has a null."""
    return all(c.null_count for c in columns)


__all__ = ["BLOCK", "ROWS", "CleanLines", "has_blank_line", "open_batches", "tables"]
