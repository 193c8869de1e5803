"""Progress of a Spark run on stderr (``--progress``): which stage or micro-batch is
running, how many of its tasks are done, and the events and matches counted so far.

Spark's own console progress bar is off in petricep sessions (it interleaves with the
summary); this reads the same numbers from the status tracker in a daemon thread and
writes one line whenever they change, at most every ``interval`` seconds. The thread
only reads: a run without ``--progress`` behaves the same, minus the lines."""

from __future__ import annotations

import threading
from typing import IO, Any


class Progress:
    """A polling reporter, used as a context manager around a Spark run; ``note()`` sets
    what the caller counted so far (micro-batch, events, matches)."""

    def __init__(self, spark: Any, err: IO[str], enabled: bool, interval: float = 0.5) -> None:
        self.spark = spark
        self.err = err
        self.enabled = enabled
        self.interval = interval
        self.counts = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last = ""
        self.lines = 0

    def __enter__(self) -> Progress:
        if self.enabled:
            self._thread = threading.Thread(target=self._loop, name="petricep-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def note(self, text: str) -> None:
        """What the caller has counted so far (shown after the stage's tasks)."""
        self.counts = text
        if self.enabled:
            self._write(self.line())

    def line(self) -> str:
        """The current progress line: running stages with their done/total tasks."""
        stages = []
        try:
            tracker = self.spark.sparkContext.statusTracker()
            for sid in sorted(tracker.getActiveStageIds()):
                info = tracker.getStageInfo(sid)
                if info is not None:
                    stages.append(f"stage {sid} {info.numCompletedTasks}/{info.numTasks} tasks")
        except Exception:  # the context is stopping: nothing to show
            return ""
        parts = [", ".join(stages) or "idle"]
        if self.counts:
            parts.append(self.counts)
        return "progress: " + "; ".join(parts)

    def _write(self, line: str) -> None:
        if line and line != self._last:
            self.err.write(line + "\n")
            self.err.flush()
            self._last = line
            self.lines += 1

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._write(self.line())
