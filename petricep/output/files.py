"""The files a run writes (matches in any format, ``--stats``, ``--late``, drawings, plots):
each written whole or not at all, and never over an input.

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
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Mapping
from typing import IO, BinaryIO

from petricep.errors import ConfigError, OutputError


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
