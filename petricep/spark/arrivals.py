"""The files of a watched directory in arrival order: (modification time, name).

Spark's file source sorts new files by modification time only, stably, after a listing
whose order the file system decides, and with ``maxFilesPerTrigger`` it cuts that list:
files copied at once (one modification time) went into micro-batches in whatever order
the directory listed them, so a file with later events could be read before one with
earlier events, whose events were then behind the watermark (a user's burst copy lost
166 of 179 matches). This source orders new files by (modification time in ms, as
Spark reads it; then name) and cuts that list, so a burst copy of ``part-1.csv``,
``part-2.csv``... is read as ``petricep run`` reads them in name order.

As Spark's file source, it reads every file it has not read before, whenever it appears
(one moved in with an old modification time too: its events are then late, counted), and
ignores names starting with ``.`` or ``_`` (files being written, ``_SUCCESS``) or ending in
``._COPYING_``. What it has
read is its log, one JSON file per micro-batch under the query's checkpoint
(``petricep-files/<n>``), written before Spark records the micro-batch's offset ``{"batch":
n}``: a restarted query replays a micro-batch with exactly its files, and a micro-batch
logged but never recorded is taken again as it was. It is a Python streaming data source
(pyspark >= 4.2: admission control for ``maxFilesPerTrigger``) over a local directory;
:func:`supported` says whether it can run.
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from petricep.errors import ConfigError

NAME = "petricep_files"
SCHEMA = "path string, content binary"
LOG_DIR = "petricep-files"
_ARROW_SCHEMA = pa.schema([("path", pa.string()), ("content", pa.binary())])


def supported() -> bool:
    """Whether this pyspark runs Python streaming sources with admission control (4.2+)."""
    try:
        from pyspark.sql.streaming.datasource import ReadMaxFiles  # noqa: F401
    except ImportError:
        return False
    return True


def local_path(path: str) -> str | None:
    """The local path of a directory named by a path or a ``file:`` URL (None: not local)."""
    if path.startswith("file://"):
        return path[len("file://") :]
    if path.startswith("file:"):
        return path[len("file:") :]
    return None if "://" in path else path


def listing(directory: str, pattern: str | None) -> list[tuple[int, str]]:
    """The directory's files as (modification time in ms, name), in arrival order; as
    Spark lists a directory: plain files only, no name starting with ``.`` or ``_`` nor
    ending in ``._COPYING_`` (a copy under way)."""
    out = []
    if not os.path.isdir(directory):
        raise ConfigError(f"{directory}: no such directory (the input directory to watch)")
    with os.scandir(directory) as entries:
        for entry in entries:
            name = entry.name
            if name.startswith((".", "_")) or name.endswith("._COPYING_"):
                continue
            if pattern is not None and not fnmatch.fnmatchcase(name, pattern):
                continue
            try:
                if not entry.is_file():
                    continue
                out.append((entry.stat().st_mtime_ns // 1_000_000, name))
            except FileNotFoundError:  # gone since the listing
                continue
    out.sort()
    return out


class Arrivals:
    """The source's logic, without pyspark: offsets, the log, the files of a micro-batch."""

    def __init__(self, directory: str, log: str, pattern: str | None = None, partitions: int = 2) -> None:
        self.directory = directory
        self.log = log
        self.pattern = pattern
        self.partitions = max(1, partitions)
        self._seen: set[str] | None = None  # names logged (read or to be read)
        self._frozen: list[tuple[int, str]] | None = None  # availableNow: the files there at the start

    def initial_offset(self) -> dict[str, int]:
        return {"batch": -1}

    def prepare_available_now(self) -> None:
        """``trigger(availableNow=True)``: read the files there now, none that come later."""
        self._frozen = listing(self.directory, self.pattern)

    def latest_offset(self, start: dict[str, Any], max_files: int | None) -> dict[str, int]:
        """The offset after ``start`` taking the next (at most ``max_files``) new files in
        arrival order, logged first; ``start`` itself when none is new. A micro-batch
        already logged after ``start`` (its offset never recorded) is taken as it was."""
        after = _batch(start) + 1
        if os.path.exists(self._path(after)):
            return {"batch": after}
        seen = self._names()
        new = [f for f in (self._frozen if self._frozen is not None else listing(self.directory, self.pattern))
               if f[1] not in seen]  # fmt: skip
        if max_files is not None:
            new = new[:max_files]
        if not new:
            return {"batch": after - 1}
        self._write(after, new)
        seen.update(name for _, name in new)
        return {"batch": after}

    def batch_files(self, start: dict[str, Any], end: dict[str, Any]) -> list[list[str]]:
        """The paths of the micro-batch (start, end], in up to ``partitions`` lists."""
        names = [name for b in range(_batch(start) + 1, _batch(end) + 1) for _, name in self._read(b)]
        paths = [os.path.join(self.directory, n) for n in names]
        n = min(len(paths), self.partitions)
        return [paths[i::n] for i in range(n)]

    def _names(self) -> set[str]:
        if self._seen is None:
            seen: set[str] = set()
            if os.path.isdir(self.log):
                for entry in os.listdir(self.log):
                    if entry.isdigit():
                        seen.update(name for _, name in self._read(int(entry)))
            self._seen = seen
        return self._seen

    def _path(self, batch: int) -> str:
        return os.path.join(self.log, str(batch))

    def _read(self, batch: int) -> list[tuple[int, str]]:
        try:
            with open(self._path(batch), encoding="utf-8") as fh:
                return [(int(t), str(n)) for t, n in json.load(fh)["files"]]
        except FileNotFoundError:
            raise ConfigError(
                f"the checkpoint's file log has no micro-batch {batch} ({self.log}): "
                "restart the query from a new checkpoint"
            ) from None

    def _write(self, batch: int, files: list[tuple[int, str]]) -> None:
        """Atomically: a reader never sees half a log entry."""
        os.makedirs(self.log, exist_ok=True)
        tmp = os.path.join(self.log, f".{batch}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"files": [[t, n] for t, n in files]}, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self._path(batch))


def _batch(offset: dict[str, Any]) -> int:
    if not isinstance(offset, dict) or not isinstance(offset.get("batch"), int):
        raise ConfigError(
            f"this checkpoint's offset {json.dumps(offset)} is not petricep's file source's (a checkpoint "
            "of an earlier petricep, which read files through Spark's file source): restart the query "
            "from a new checkpoint"
        )
    return int(offset["batch"])


def read_files(paths: list[str]) -> Iterator[pa.RecordBatch]:
    """A partition's files, one record batch each (path, content)."""
    for path in paths:
        try:
            with open(path, "rb") as fh:
                content = fh.read()
        except FileNotFoundError:
            raise ConfigError(f"{path}: the file was removed before it was read") from None
        yield pa.RecordBatch.from_arrays([pa.array([path]), pa.array([content], pa.binary())], schema=_ARROW_SCHEMA)


Parse = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


def source_class(parse: Parse | None = None, schema: str = SCHEMA, name: str = NAME) -> type:
    """The pyspark ``DataSource`` subclass of this source (built here: pyspark is optional),
    registered as ``name``. With ``parse``, a micro-batch's partition yields what ``parse``
    makes of its files' batches (``schema``): the reading task parses them itself, rather
    than a second Python worker after it (``mapInArrow``), with every file's bytes sent
    through the JVM to it once more."""
    from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
    from pyspark.sql.streaming.datasource import ReadLimit, ReadMaxFiles, SupportsTriggerAvailableNow

    class Partition(InputPartition):  # type: ignore[misc]
        def __init__(self, paths: list[str]) -> None:
            super().__init__(paths)
            self.paths = paths

    class Reader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc]
        def __init__(self, options: dict[str, str]) -> None:
            self.max_files = int(options["max_files"]) if options.get("max_files") else None
            self.arrivals = Arrivals(
                options["path"], options["log"], options.get("glob") or None, int(options.get("partitions", "2"))
            )

        def initialOffset(self) -> dict[str, int]:  # noqa: N802 (pyspark's names)
            return self.arrivals.initial_offset()

        def getDefaultReadLimit(self) -> Any:  # noqa: N802
            return ReadMaxFiles(self.max_files) if self.max_files is not None else super().getDefaultReadLimit()

        def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, int]:  # noqa: N802
            return self.arrivals.latest_offset(start, limit.max_files if isinstance(limit, ReadMaxFiles) else None)

        def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
            self.arrivals.prepare_available_now()

        def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[Any]:
            return [Partition(p) for p in self.arrivals.batch_files(start, end)]

        def read(self, partition: Any) -> Iterator[pa.RecordBatch]:
            return read_files(partition.paths) if parse is None else parse(read_files(partition.paths))

        def commit(self, end: dict[str, Any]) -> None:
            pass

    class Source(DataSource):  # type: ignore[misc]
        @classmethod
        def name(cls) -> str:
            return name

        def schema(self) -> str:
            return schema

        def streamReader(self, schema: Any) -> Any:  # noqa: N802
            return Reader(dict(self.options))

    return Source
