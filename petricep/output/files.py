"""Match output: JSON Lines, one match per line (SPEC §4), and the files it goes to.

Output is always valid JSON (RFC 8259): a number that is not finite (``inf``, ``nan``, from
``1e308 + 1e308`` in a RETURN field, or a NaN cell of an input) is written as ``null``;
``json.dumps(..., allow_nan=False)`` guards that no ``Infinity`` ever reaches a line.

Output files are never half-written where a good one was: :class:`OutputFile` writes into
a temporary file beside the target and renames it into place only when the run commits
(:meth:`OutputFile.commit`); a failed run removes the temporary file and leaves the
target as it was. A target that is not a regular file (``/dev/stdout``, ``/dev/full``, a
pipe) is written directly: there is nothing to replace. Every write error (disk full, a
missing directory, a path under a file) becomes one :class:`~petricep.errors.OutputError`
naming the path.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Any, BinaryIO

from petricep.errors import ConfigError, OutputError
from petricep.events import Event
from petricep.runtime.engine import Match


def _plain(v: Any) -> Any:
    """A value as JSON can hold it: non-finite numbers become None (``null``), numpy
    scalars their Python value, anything else unknown its text."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    item = getattr(v, "item", None)  # numpy scalars
    if callable(item):
        return _plain(item())
    return str(v)


_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "), allow_nan=False, check_circular=False).encode


def json_line(record: Mapping[str, Any]) -> str:
    """One JSON object on one line (without the newline), RFC 8259-valid.

    A record JSON can hold as it is (text keys; text, numbers, booleans, None, lists and
    dicts) is encoded directly; one it cannot (a non-finite number: ``ValueError``, a numpy
    integer or another unknown value: ``TypeError``) goes through :func:`_plain` first, so
    the common record is not walked twice (bench/HISTORY.md, issue 16 second pass). Keys are
    taken as text: a record never has others (variable, field and column names)."""
    try:
        return _ENCODE(record)
    except (TypeError, ValueError):
        return _ENCODE(_plain(record))


def match_json(m: Match) -> str:
    return json_line(m.to_dict())


def match_json_parts(m: Match) -> tuple[str, str, str]:
    """:func:`match_json`'s line with its ``ids`` and ``attrs`` objects' own text, the line
    made of its values' texts (as the encoder joins a record's items), none encoded twice."""
    texts = {k: _json_value(v) for k, v in m.to_dict().items()}
    return "{" + ", ".join(f"{_ENCODE(k)}: {t}" for k, t in texts.items()) + "}", texts["ids"], texts["attrs"]


def _json_value(v: Any) -> str:
    try:
        return _ENCODE(v)
    except (TypeError, ValueError):
        return _ENCODE(_plain(v))


def _cannot_write(path: str, exc: OSError) -> OutputError:
    return OutputError(f"cannot write {path}: {exc.strerror or exc}")


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (an existing file through any link, or one path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(outputs: Mapping[str, str | None], inputs: Mapping[str, Iterable[str]]) -> None:
    """Refuse an output that would overwrite an input, or two outputs naming one file.

    ``outputs``: option -> path (None: not given); ``inputs``: what the files are (``the
    events file``, ``a pattern file``) -> their paths. Checked before anything is opened,
    so that ``-o events.csv`` never truncates the events it was about to read."""
    given = [(opt, path) for opt, path in outputs.items() if path is not None]
    for opt, path in given:
        for what, paths in inputs.items():
            if any(same_file(path, p) for p in paths):
                raise ConfigError(f"{opt} {path}: that is {what}; write the output to another file")
    for i, (opt, path) in enumerate(given):
        for other, path2 in given[:i]:
            if same_file(path, path2):
                raise ConfigError(f"{other} and {opt} name the same file {path}")


class OutputPath:
    """A file to be replaced as a whole: :attr:`temp` is where to write (a new file beside
    the target, or the target itself when it is not a regular file); :meth:`commit` renames
    it into place, :meth:`discard` removes it. Readers of the target see the old file or
    the new one, never a part."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.direct = _exists_not_regular(path)
        self.temp = path
        self.target = os.path.realpath(path)  # through a link: the file it points to is replaced
        self.done = False
        if self.direct:
            return
        folder, name = os.path.split(self.target)
        prefix = temp_prefix(folder, name)
        remove_stale_temps(folder, prefix)
        self.temp = os.path.join(folder, f"{prefix}{os.getpid()}-{secrets.token_hex(4)}.tmp")
        try:
            os.close(os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            if os.path.exists(path):  # a replaced file keeps its permissions
                os.chmod(self.temp, stat.S_IMODE(os.stat(path).st_mode))
        except OSError as exc:
            self._remove()
            raise _cannot_write(path, exc) from None

    def commit(self) -> None:
        if self.done:
            return
        self.done = True
        if not self.direct:
            try:
                os.replace(self.temp, self.target)
            except OSError as exc:
                self._remove()
                raise _cannot_write(self.path, exc) from None

    def discard(self) -> None:
        if not self.done:
            self.done = True
            self._remove()

    def _remove(self) -> None:
        if not self.direct:
            with contextlib.suppress(OSError):
                os.unlink(self.temp)


# what a temporary name adds to its target's name besides the process id: ".", ".", "-",
# eight hex digits, ".tmp"
_TEMP_EXTRA = 15


def temp_prefix(folder: str, name: str) -> str:
    """The start of every temporary name of target ``name``: ``.name.``, the name cut so that
    the whole temporary name (with a process id and a random part) fits the folder's limit
    on a name (a legal 245-character target must not fail with "File name too long")."""
    try:
        limit = os.pathconf(folder or ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    room = limit - _TEMP_EXTRA - len(str(os.getpid()))
    return f".{name[:room]}."


def remove_stale_temps(folder: str, prefix: str) -> None:
    """Remove the temporary files a killed run left for this target: names
    ``{prefix}{pid}-{hex}.tmp`` whose process no longer runs. A SIGKILLed run cannot remove
    its own, and each is as large as the partial output it held; a live run's (this
    process's included) are left alone."""
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return
    for entry in names:
        if not (entry.startswith(prefix) and entry.endswith(".tmp")):
            continue
        pid, dash, rest = entry[len(prefix) : -len(".tmp")].partition("-")
        if not (dash and pid.isdigit() and len(rest) == 8) or _running(int(pid)):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(folder, entry))


def _running(pid: int) -> bool:
    """Whether a process with this id exists (one we may not signal exists too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _exists_not_regular(path: str) -> bool:
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


class OutputFile(OutputPath):
    """A text file written through :class:`OutputPath`: ``write`` turns every OS error
    into one OutputError naming the path; ``commit`` flushes, closes and renames;
    ``close`` without a commit discards (the target keeps its old contents)."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        try:
            self.fh: IO[str] = open(self.temp, "w", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            self._remove()
            raise _cannot_write(path, exc) from None

    def write(self, text: str) -> None:
        try:
            self.fh.write(text)
        except OSError as exc:
            raise _cannot_write(self.path, exc) from None

    def commit(self) -> None:
        if self.done:
            return
        try:
            self.fh.close()  # flushes: a full disk shows here at the latest
        except OSError as exc:
            self.discard()
            raise _cannot_write(self.path, exc) from None
        super().commit()

    def discard(self) -> None:
        if not self.done:
            with contextlib.suppress(OSError):  # what could not be written is discarded anyway
                self.fh.close()
        super().discard()

    def __enter__(self) -> OutputFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()  # after a commit: nothing to do


class JsonlWriter:
    """Matches as JSON Lines; each line is written whole (one ``write``), so an interrupted
    run leaves complete lines."""

    def __init__(self, out: IO[str] | OutputFile) -> None:
        self.out = out
        self.count = 0

    def write(self, m: Match) -> None:
        self.out.write(match_json(m) + "\n")
        self.count += 1


class LateWriter:
    """Late events (``--late``): one JSON object per line with the event's arrival
    position, id, type, timestamp and attributes, and the watermark it arrived behind."""

    def __init__(self, out: IO[str] | OutputFile) -> None:
        self.out = out
        self.count = 0

    def write(self, e: Event, watermark: Any) -> None:
        rec = {"pos": e.pos, "id": e.id, "type": e.type, "ts": e.ts, "watermark": watermark, "attrs": e.attrs}
        self.out.write(json_line(rec) + "\n")
        self.count += 1


def json_document(data: Any) -> str:
    """A whole JSON document (``--stats``), indented, RFC 8259-valid, with its newline."""
    return json.dumps(_plain(data), indent=2, allow_nan=False) + "\n"


def write_binary(target: OutputPath, write: Callable[[BinaryIO], object]) -> None:
    """``write`` given an open binary file on ``target``'s temporary file (or on the target
    itself where that is not a regular file), then committed; an OS error discards it and
    becomes one OutputError naming the path.

    The file is opened here, never by the writer: pyarrow's ``parquet.write_table`` given a
    *path* deletes that path when a write fails, which removed a device such as
    ``/dev/full`` (issue 43); given a file object it only writes."""
    try:
        with open(target.temp, "wb") as fh:
            write(fh)
    except OSError as exc:
        target.discard()
        raise _cannot_write(target.path, exc) from None
    target.commit()


def write_bytes(path: str, data: bytes) -> None:
    """A whole binary file (``draw -o``), replaced atomically."""
    write_binary(OutputPath(path), lambda fh: fh.write(data))
