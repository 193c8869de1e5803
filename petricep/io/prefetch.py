"""Reading ahead: a source's items made on a thread of their own while the caller fires
and writes the ones before.

Arrow parses and decompresses on its own threads, and its compute kernels (the cell
typing, the timestamps, the row filter) let go of the interpreter lock, and so does the
compiled kernel's firing (``Kernel.lock_free``); the match writer runs in the caller's
thread. Reading the next batch while the current one fires puts those on the second core
instead of one after the other.

Nothing about the items changes: the same items in the same order, and an error of the
reader (a bad row, an unreadable file) comes out where the caller's next item would have
been, as the same exception, after every item before it. Read ahead only where the reader
writes nothing the caller could see before it reaches the item that caused it: the
caller decides (:func:`petricep.api.runner.Run`: not with ``on_error="skip"``, whose
rejects file and counts must stop at the last event of a stopped run; not for standard
input, whose matches are written as each line arrives).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Generator, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")
AHEAD = 2  # items made before the caller takes them: one firing, one being read


class _End:
    """The reader's end: ``error`` is the exception it ended with (None: the input's end),
    ``value`` what a generator returned."""

    def __init__(self, error: BaseException | None, value: Any = None) -> None:
        self.error = error
        self.value = value


class ReadAhead(Generic[T]):
    """``items`` made on a thread, at most ``ahead`` ahead of the caller; iterate it once.
    Where ``items`` is a generator, the iteration returns what it returned.

    Closing it (or leaving the loop: the generator's close) stops the thread after the
    item it is making and closes ``items`` there, so a reader's files are closed by the
    thread that reads them."""

    def __init__(self, items: Iterator[T], ahead: int = AHEAD) -> None:
        self._items = items
        self._queue: queue.Queue[T | _End] = queue.Queue(maxsize=ahead)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._produce, name="petricep-read-ahead", daemon=True)
        self._thread.start()

    def _produce(self) -> None:
        items = self._items
        try:
            while True:
                try:
                    item = next(items)
                except StopIteration as end:
                    value = end.value
                    break
                if not self._put(item):
                    return
        except BaseException as exc:  # delivered to the caller, in order: nothing is lost
            self._put(_End(exc))
            return
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()
        self._put(_End(None, value))

    def _put(self, item: T | _End) -> bool:
        """Queue ``item`` unless the caller has stopped; whether it was queued."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> Generator[T, None, Any]:
        try:
            while True:
                item = self._queue.get()
                if isinstance(item, _End):
                    if item.error is not None:
                        raise item.error
                    return item.value
                yield item
        finally:
            self.close()

    def close(self) -> None:
        """Stop reading ahead and wait for the thread (it ends after its current item)."""
        self._stop.set()
        while self._thread.is_alive():
            with contextlib.suppress(queue.Empty):  # make room for a put in progress
                self._queue.get_nowait()
            self._thread.join(0.01)


__all__ = ["AHEAD", "ReadAhead"]
