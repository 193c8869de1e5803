"""The state a streaming query writes per micro-batch against the number of keys (issue 39,
item 1), without Spark:

    python -m bench.spark_state_bytes [--events 20000] [--file-rows 2000] [--keys 100,100000]
        [--buckets 8] [--engines kernel,python]

The stream of :mod:`bench.spark_keys` (``SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN
500``, one event per time unit over ``--keys`` keys), cut into micro-batches of
``--file-rows`` events, through the streaming query's stateful processor as
``transformWithStateInPandas`` drives it (:mod:`tests.spark.streamsim`: an in-memory state
store), ``--buckets`` buckets of keys per group. Per key count and engine: the engine
snapshots written (count and bytes per micro-batch, the largest) and the buffers' bytes --
the state store's writes, which are the same bytes under Spark. Sizes, not times: the
figures do not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import random
from typing import Any

from bench.spark_keys import PATTERN
from petricep.api import compile_text
from petricep.events import Event
from tests.spark.streamsim import FakeHandle, _Value, simulate


class _Recording(FakeHandle):
    """A state store that notes the bytes of every write: a bucket's row (keygroups.
    STATE_FIELDS) holds its engine's snapshot, new where its token is, else as it was read."""

    def __init__(self) -> None:
        super().__init__()
        self.engine: list[int] = []  # the bytes of each new snapshot
        self.kept = 0  # the bytes of snapshots written again unchanged (with the row)
        self.buffers = 0

    def getValueState(self, name: str, schema: Any) -> _Value:  # noqa: N802 (pyspark's name)
        handle = self

        class Noted(_Value):
            def update(self, row: tuple[Any, ...]) -> None:
                token, _, buffer, wakeups, engine = row
                before = handle.store.get((handle.key, name))
                if engine is not None and (before is None or before[0] != token):
                    handle.engine.append(len(engine))
                elif engine is not None:
                    handle.kept += len(engine)
                handle.buffers += len(buffer) + len(wakeups)
                super().update(row)

        return Noted(self, name)


def stream(events: int, keys: int, seed: int = 39) -> list[Event]:
    """:func:`bench.spark_keys.write_files`'s events (the same draws), as events."""
    rng = random.Random(seed)
    out = []
    for i in range(events):
        etype, k, x = rng.choice("AB"), rng.randrange(keys), rng.randrange(100)
        out.append(Event(etype, i, i, i, {"k": k, "x": x}))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.spark_state_bytes", description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=20_000)
    ap.add_argument("--file-rows", type=int, default=2_000)
    ap.add_argument("--keys", default="100,100000", help="comma-separated key counts")
    ap.add_argument("--buckets", type=int, default=8)
    ap.add_argument("--engines", default="kernel,python")
    args = ap.parse_args(argv)
    net = compile_text(PATTERN)
    batches = max(1, -(-args.events // args.file_rows))
    cuts = list(range(args.file_rows, args.events, args.file_rows))
    for engine in args.engines.split(","):
        for keys in (int(k) for k in args.keys.split(",")):
            handle = _Recording()
            rows = simulate(net, stream(args.events, keys), "arrival", cuts, engine == "kernel", buckets=args.buckets, handle=handle)
            written = handle.engine
            print(f"{engine}, {keys} keys: {len(rows)} matches; {len(written)} engine snapshots "
                  f"({len(written) / batches:.1f} a micro-batch), {sum(written) / batches / 1e3:.1f} KB a micro-batch, "
                  f"largest {max(written, default=0) / 1e3:.1f} KB; unchanged ones written again "
                  f"{handle.kept / batches / 1e3:.1f} KB a micro-batch; buffers {handle.buffers / batches / 1e3:.1f} KB a "
                  "micro-batch")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
