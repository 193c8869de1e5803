"""CSV read by Arrow's own streaming reader, as far as that provably reads it as the
line-by-line reader does.

Arrow decompresses and parses on its own threads while Python turns the previous batch
into events, which is what makes large files fast. But Arrow's CSV rules are not
petricep's: it takes a lone ``\\r`` as a line end and newlines inside quotes. So Arrow
reads the file through :class:`CleanLines`, which hands it whole lines and ends the data
early, at the start of the first line that holds anything where the two could part (a
quote, a lone ``\\r``, invalid UTF-8, a read error; a line longer than Arrow's block is
Arrow's own error). Up to there every line is one row of Arrow's, so the caller can go on
with the chunked reader from exactly that line. What Arrow reports itself (a wrong field
count, a blank line: see :func:`has_blank_line`) is handled the same way, a batch earlier.
"""

from __future__ import annotations

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
_LF = ord("\n")


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
                last = self._carry
                end = self._checked(last, len(last), final=True)
                self._end(self.stopped)
                return self._serve(last, end)
            buf = self._carry + data
            j = buf.rfind(b"\n")
            if j < 0:
                self._carry = buf
                continue
            # the whole lines are served from ``buf`` itself (no copy of megabytes: only the
            # carried partial line is copied out)
            self._carry = buf[j + 1 :]
            end = self._checked(buf, j + 1, final=False)
            if self.stopped:
                self._end(True)
            return self._serve(buf, end)
        return False

    def _serve(self, buf: bytes, end: int) -> bool:
        self._ready = memoryview(buf)[:end]
        self._at = 0
        return end > 0

    def _end(self, stopped: bool) -> None:
        self.stopped = stopped
        self._carry = b""
        self.closed = True
        self._stream.close()

    def _checked(self, buf: bytes, end: int, final: bool) -> int:
        """Where the part ``buf[:end]`` ends: at ``end``, or before the line of its first
        trouble (and ``stopped`` set)."""
        bad = self._first_trouble(buf, end, final)
        if bad is None:
            return end
        self.stopped = True
        return buf.rfind(b"\n", 0, bad) + 1

    def _first_trouble(self, buf: bytes, end: int, final: bool) -> int | None:
        """The first position in ``buf[:end]`` Arrow might read otherwise (None: none)."""
        found: list[int] = []
        start = 0
        if self._header:  # the first part: its first line is the header (see the class)
            self._header = False
            start = buf.find(b"\n", 0, end) + 1 or end
        quote = buf.find(b'"', start, end)
        if quote >= 0:
            found.append(quote)
        if buf.find(b"\r", 0, end) >= 0:
            # the file's very last \r ends its last line for both readers
            body = end - 1 if final and end and buf[end - 1] == _CR else end
            if buf.count(b"\r", 0, body) != buf.count(b"\r\n", 0, body):
                i = buf.find(b"\r", 0, body)
                while i + 1 < body and buf[i + 1] == _LF:
                    i = buf.find(b"\r", i + 1, body)
                found.append(i)
        if not buf.isascii():  # (the whole buffer: a carried line's bytes are read again later)
            try:
                buf[:end].decode("utf-8")
            except UnicodeDecodeError as e:
                found.append(e.start)
        return min(found) if found else None


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
