"""A streaming query's own Python CPU per event, without Spark (issue 39):

    python -m bench.spark_stream_cpu [--stream keys|aarhus] [--events 300000] [--file-rows 100000]
        [--keys 10000] [--buckets 8] [--profile]

The files of :mod:`bench.spark_keys` (``keys``: two types over ``--keys`` keys) or of
:mod:`bench.spark_stream` (``aarhus``: ``nets/aarhus_congestion.pcep`` over the Aarhus data) go through
the query's two Python stages as Spark would run them, one micro-batch per file: the parse
stage's ``mapInArrow`` function (:class:`~petricep.spark.streamparse.StreamParser`) over each
file's bytes, then the stateful handler (:class:`~petricep.spark.streaming.EngineProcessor`)
per (group, bucket) on an in-memory state store, its input rows and then its expired timers
at the watermark Spark would give (no delay), after one untimed parse of the first
file (a worker's imports). Printed: CPU seconds (``time.process_time``)
of the parse stage, the input rows and the timers, per 100,000 events, the matches (as the
Spark query finds them before the flush), and the bytes written to the state store.
Spark's own share of a micro-batch (the JVM, the Arrow exchange, the state store's
commits) is not in these figures: ``bench.spark_microbatch`` measures the whole.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from petricep.api import net_of
from petricep.io.readers import InputSpec
from petricep.lang.fields import field_requirements
from petricep.lang.parser import parse_text

ROOT = Path(__file__).resolve().parents[1]
AARHUS_NET = ROOT / "nets" / "aarhus_congestion.pcep"  # (bench.spark_stream --net nets/aarhus_congestion.pcep)


class _Value:
    def __init__(self, store: Store, name: str) -> None:
        self.store, self.name = store, name

    def get(self) -> tuple[Any, ...] | None:
        return self.store.values.get((self.store.key, self.name))

    def update(self, row: tuple[Any, ...]) -> None:
        self.store.written += sum(len(x) for x in row if isinstance(x, bytes | bytearray))
        self.store.values[(self.store.key, self.name)] = tuple(row)

    def clear(self) -> None:
        self.store.values.pop((self.store.key, self.name), None)


class Store:
    """The stateful processor's handle, in memory: value states and timers per key."""

    def __init__(self) -> None:
        self.key: tuple[int, int] = (0, 0)
        self.values: dict[tuple[tuple[int, int], str], tuple[Any, ...]] = {}
        self.timers: dict[tuple[int, int], set[int]] = {}
        self.written = 0  # bytes of the state rows written

    def getValueState(self, name: str, schema: Any) -> _Value:  # noqa: N802 (pyspark's name)
        return _Value(self, name)

    def registerTimer(self, ms: int) -> None:  # noqa: N802
        self.timers.setdefault(self.key, set()).add(ms)

    def deleteTimer(self, ms: int) -> None:  # noqa: N802
        self.timers.get(self.key, set()).discard(ms)


class _Clock:
    def __init__(self, wm: int, expiry: int = 0) -> None:
        self.wm, self.expiry = wm, expiry

    def getCurrentWatermarkInMs(self) -> int:  # noqa: N802
        return self.wm

    def getExpiryTimeInMs(self) -> int:  # noqa: N802
        return self.expiry


def _files(stream: str, tmp: Path, events: int, file_rows: int, keys: int) -> tuple[str, InputSpec, list[Path]]:
    if stream == "aarhus":
        from bench.spark_stream import write_data

        _, parts = write_data(tmp, events, file_rows)
        text = AARHUS_NET.read_text()
        base = InputSpec(path="", type_const="traffic", time_field="TIMESTAMP", id_field="_id")
    else:
        from bench.spark_keys import PATTERN, write_files

        parts = tmp / "parts"
        write_files(parts, events, file_rows, keys)
        text = PATTERN
        base = InputSpec(path="", type_field="type", time_field="ts", id_field="seq")
    patterns = parse_text(text, "<bench>")
    required, numeric = field_requirements(list(patterns.patterns))
    spec = InputSpec(**{**base.__dict__, "required": required, "numeric": numeric})
    return text, spec, sorted(parts.iterdir())


def run(stream: str, events: int, file_rows: int, keys: int, buckets: int) -> dict[str, Any]:
    from petricep.spark.keystate import engine_choices, kernel_groups
    from petricep.spark.plan import Router, make_plan
    from petricep.spark.streaming import EngineProcessor, StreamParse, StreamParser, streaming_plan

    with tempfile.TemporaryDirectory(prefix="petricep-cpu-") as d:
        text, spec, files = _files(stream, Path(d), events, file_rows, keys)
        net = net_of([parse_text(text, "<bench>")])
        plan, _ = streaming_plan(make_plan(net))
        parser = StreamParser(StreamParse(spec, "seq", True, buckets), Router(plan))
        proc = EngineProcessor(net, plan, "arrival", kernel_groups(engine_choices(net, plan, "arrival")))
        store = Store()
        proc.init(store)
        list(StreamParser(StreamParse(spec, "seq", True, buckets), Router(plan))(iter([_file_batch(files[0])])))  # (imports)
        spent = {"parse": 0.0, "input": 0.0, "timer": 0.0}
        matches = [0]
        wm = 0
        for f in [*files, None]:
            if f is not None:
                t0 = time.process_time()
                out = list(parser(iter([_file_batch(f)])))
                t1 = time.process_time()
                frame = pa.Table.from_batches(out).to_pandas()
                for (g, b), pdf in frame.groupby(["g", "b"], sort=True):
                    store.key = (int(g), int(b))
                    _count(proc.handleInputRows(store.key, iter([pdf.drop(columns=["g", "b"])]), _Clock(wm)), matches)
                t2 = time.process_time()
                spent["parse"] += t1 - t0
                spent["input"] += t2 - t1
            t2 = time.process_time()
            for key in sorted(store.timers):
                for t in sorted(x for x in store.timers[key] if x <= wm):
                    store.key = key
                    store.timers[key].discard(t)
                    _count(proc.handleExpiredTimer(key, _Clock(wm), _Clock(wm, t)), matches)
            spent["timer"] += time.process_time() - t2
            if f is not None:
                wm = max(wm, int(frame["evtime"].max()))
    total = sum(spent.values())
    return {**spent, "per_100k": total * 100_000 / events, "matches": matches[0], "written": store.written}


def _file_batch(f: Path) -> pa.RecordBatch:
    """A file as the binaryFile source's row gives it to the parse stage."""
    return pa.RecordBatch.from_pydict({"path": [str(f)], "content": [f.read_bytes()]})


def _count(frames: Iterator[Any], matches: list[int]) -> None:
    for df in frames:
        matches[0] += int((df["kind"] == "match").sum())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stream", choices=["keys", "aarhus"], default="keys")
    ap.add_argument("--events", type=int, default=300_000)
    ap.add_argument("--file-rows", type=int, default=100_000)
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--buckets", type=int, default=8, help="per group (petricep stream's default on 2 cores: 8)")
    ap.add_argument("--profile", action="store_true", help="print cProfile's top functions by own time")
    args = ap.parse_args(argv)
    prof = cProfile.Profile() if args.profile else None
    if prof is not None:
        prof.enable()
    got = run(args.stream, args.events, args.file_rows, args.keys, args.buckets)
    if prof is not None:
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    print(
        f"{args.stream}: {args.events} events, files of {args.file_rows}: CPU parse {got['parse']:.3f} s, "
        f"input {got['input']:.3f} s, timer {got['timer']:.3f} s = {got['per_100k']:.3f} s per 100,000 events; "
        f"{got['matches']} matches; state rows written {got['written'] / 1e6:.1f} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
