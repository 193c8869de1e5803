"""Inputs that can be read only once, front to back: standard input (path ``-``), a named
pipe (FIFO), process substitution (``<(zcat f.gz)``, a ``/dev/fd/N`` pipe), a character
device or a socket.

Such an input cannot seek, so Arrow's file readers (which seek) cannot open it, and it
cannot be opened again. Its readers open their input several times all the same: to read
the CSV header, to peek at the first row (the time kind), then for the pass.
:class:`Replay` reads it once and serves it to each: bytes read before the pass are kept
and served again from the start to every later reader; once the pass has begun nothing
more is kept (a live stream may run for days), and a second pass is an error. Reads return
what is available (``read1``), never waiting for a full block, so a live pipe (``tail -f``)
gives each line as soon as it is complete. A Parquet file (its footer is at its end) is
read whole into memory: :meth:`Replay.whole`.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import IO

from ..errors import ConfigError, EventError

STDIN = "-"  # the path that names standard input
_LIVE_CHUNK = 64 << 10


class Replay:
    """An input read once (see the module), served to every reader that opens it."""

    def __init__(self, raw: IO[bytes] | None = None, label: str = "standard input (--events -)", closes: bool = False) -> None:
        self.raw = raw if raw is not None else sys.stdin.buffer
        self.label = label
        self.closes = closes  # the file is ours to close at its end
        self.kept = b""
        self.passes = 0
        self.eof = False

    def begin_pass(self) -> None:
        """The reader's pass starts: the next stream serves the kept bytes, then the rest."""
        if self.passes:
            raise ConfigError(f"{self.label} can be read only once")
        self.passes = 1

    def more(self) -> bytes:
        """The next bytes available (empty at the end)."""
        if self.eof:
            return b""
        read1 = getattr(self.raw, "read1", None)
        data = read1(_LIVE_CHUNK) if read1 is not None else self.raw.read(_LIVE_CHUNK)
        if not data:
            self.eof = True
            if self.closes:
                self.raw.close()
        return bytes(data)

    def whole(self) -> bytes:
        """Everything, read to the end and kept (for a reader that needs it all before it
        starts: Parquet); only before a pass."""
        if self.passes:
            raise ConfigError(f"{self.label} can be read only once")
        parts = [self.kept]
        while not self.eof:
            parts.append(self.more())
        self.kept = b"".join(parts)
        return self.kept

    def stream(self) -> ReplayStream:
        return ReplayStream(self)


class ReplayStream:
    """One reader's view of a :class:`Replay`: the kept bytes from the start, then new input
    (kept too, while no pass has begun)."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self.at = 0
        self.live = replay.passes > 0

    def read(self, n: int = -1) -> bytes:
        r = self.replay
        n = n if n >= 0 else _LIVE_CHUNK
        if self.at < len(r.kept):
            data = r.kept[self.at : self.at + n]
            self.at += len(data)
            if self.live and self.at >= len(r.kept):
                r.kept = b""  # served once to the pass: nobody reads it again
                self.at = 0
            return data
        data = r.more()
        if not self.live:
            r.kept += data
        elif len(data) > n:  # the rest is this (last) reader's next read
            r.kept, self.at = data, 0
        else:
            return data
        out = r.kept[self.at : self.at + n]
        self.at += len(out)
        if self.live and self.at >= len(r.kept):
            r.kept, self.at = b"", 0
        return out

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        pass


_stdin: Replay | None = None
_pipes: dict[str, Replay] = {}


def stdin_replay() -> Replay:
    """The process's standard input as a :class:`Replay` (made on first use)."""
    global _stdin
    if _stdin is None:
        _stdin = Replay()
    return _stdin


def use_stdin(raw: IO[bytes] | None) -> Replay:
    """Read ``raw`` as standard input from now on (None: the real one, afresh): for tests
    and for a caller that runs several commands in one process."""
    global _stdin
    _stdin = Replay(raw)
    return _stdin


def is_stream(path: str) -> bool:
    """Whether ``path`` is read as a stream: standard input, or a file that is no regular
    file and no directory (a FIFO, ``/dev/fd/N`` of a pipe, a character device, a socket)."""
    if path == STDIN:
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def replay_of(path: str, label: str) -> Replay:
    """The :class:`Replay` of a stream ``path`` (:func:`is_stream`): the same for every reader
    until its pass begins; a pipe opened after that (a FIFO read again by a later run) is a
    new stream."""
    if path == STDIN:
        return stdin_replay()
    replay = _pipes.get(path)
    if replay is None or replay.passes:
        try:
            raw = open(path, "rb")  # noqa: SIM115  (closed at its end: Replay.more)
        except OSError as e:
            raise EventError(f"cannot open file: {e.strerror or e}", label) from None
        replay = _pipes[path] = Replay(raw, label, closes=True)
    return replay


def pass_stream(path: str, label: str) -> ReplayStream:
    """The stream of the pass over ``path`` (:meth:`Replay.begin_pass`): what was kept, then
    the rest as it arrives."""
    replay = replay_of(path, label)
    replay.begin_pass()
    return replay.stream()


__all__ = ["STDIN", "Replay", "ReplayStream", "is_stream", "pass_stream", "replay_of", "stdin_replay", "use_stdin"]
