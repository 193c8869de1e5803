"""One CSV line as fields, by docs/INPUT.md's rules, for the line-by-line reader.

Python's ``csv`` module reads a line as petricep does, but for two of its own rules that
INPUT.md does not have: a ``\\r`` outside quotes ends its record (and anything after it is
the error "new-line character seen in unquoted field - do you need to open the file in
universal-newline mode?"), and a field is at most ``csv.field_size_limit()`` (131,072)
characters. Here each physical line is one row and a lone ``\\r`` in it is text, and a
cell has no length limit (Arrow, which reads the same files in bulk, has none either), so
the line reader never rejects a row the bulk readers take, and never names a good row for
a bad one's error.
"""

from __future__ import annotations

import contextlib
import csv
import threading
from collections.abc import Iterator

# csv.field_size_limit is one setting for the whole process: raised only while a long line
# is read, and back before any other thread's line is read with it
_LIMIT_LOCK = threading.Lock()
_STAND_INS = "\uffff\ufffe\U0010ffff\U0010fffe"  # noncharacters: not in any sane text


def split_line(text: str, delimiter: str) -> tuple[list[str] | None, str | None]:
    """(fields, error) of one CSV line. A quoted value must end on its line: the csv module
    would read on into the next line (here: the sentinel ``""``), or take the line's end as
    the quote's, so an unterminated ``"abc`` is an error, never the value ``abc``. A line
    without quotes is its fields split at the delimiter (what the csv module gives, a lone
    ``\\r`` and long cells included)."""
    if '"' not in text:
        return (text.split(delimiter) if text else []), None
    cr = None
    if "\r" in text:
        cr = _stand_in(text)
        text = text.replace("\r", cr)
    with _fields_up_to(len(text)):
        reader = csv.reader([text, ""], delimiter=delimiter)
        try:
            fields = next(reader, [])
        except csv.Error as e:
            return None, f"invalid CSV: {e}"
    if reader.line_num > 1:
        return None, "invalid CSV: unterminated quoted value"
    if cr is not None:
        fields = [f.replace(cr, "\r") for f in fields]
    return fields, None


def _stand_in(text: str) -> str:
    """A character ``text`` does not hold, to stand for its ``\\r`` while the csv module reads
    it (the csv module takes it for a line end even inside one line)."""
    for c in _STAND_INS:
        if c not in text:
            return c
    code = 0xE000  # the private use area: some character of it is free in any line
    while chr(code) in text:
        code += 1
    return chr(code)


@contextlib.contextmanager
def _fields_up_to(n: int) -> Iterator[None]:
    """The csv module takes fields of up to ``n`` characters for the ``with`` block (a field
    is never longer than its line). Every line takes the lock: a short one must not be read
    while another thread puts the limit back under it."""
    with _LIMIT_LOCK:
        old = csv.field_size_limit()
        if n < old:
            yield
            return
        csv.field_size_limit(n + 1)
        try:
            yield
        finally:
            csv.field_size_limit(old)


__all__ = ["split_line"]
