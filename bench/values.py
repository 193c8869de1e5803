"""The kernel's value dictionaries over a stream of distinct values (card numbers as text and
as ints beyond 2**53): their size at the end, a snapshot's bytes, the push time.

    python -m bench values [--events 1000000] [--batch 65536] [--kinds text,big,int,key] [--slack 4096,never]

``SEQ(A a, B b) WHERE a.card = b.card WITHIN 5`` over A, B pairs that share a card, every
pair a card of its own (``card`` a text column, or an int64 column of 16-digit numbers
beyond 2**53; ``int``: small ints, which need no dictionary; ``key``: the text cards as
the partition key instead, ``SEQ(A a, B b) WHERE [card] WITHIN 5``), pushed to a
:class:`~petricep.kernel.run.KernelRun` ``--batch`` rows at a time.
Per kind and slack (values' and keys'; ``never``: no compaction but before a snapshot, as a run
without compaction kept them): the dictionaries' entries (strings, big ints, keys) after the last batch,
the kernel's per-key arrays (bytes), the run's snapshot (``petricep.kernel.snapshot.dumps``)
there, the push time.
Runs as a script too (``python bench/values.py``) against another tree's petricep: one
without ``value_slack`` is the run before compaction.
"""

from __future__ import annotations

import argparse
import inspect
import time
from typing import Any

import numpy as np
import pyarrow as pa

from petricep.api import compile_text
from petricep.kernel import KernelRun
from petricep.kernel.snapshot import dumps

PATTERN = "PATTERN p: SEQ(A a, B b) WHERE a.card = b.card WITHIN 5"
KEYED = "PATTERN p: SEQ(A a, B b) WHERE [card] WITHIN 5"  # (kind key: the text cards as partition keys)
BASE = 9_100_000_000_000_000  # 16-digit card numbers beyond 2**53 (9,007,199,254,740,992)
NEVER = 10**15


class _Snapshotting:
    """What ``dumps`` reads of an engine: the run's state and the run."""

    def __init__(self, run: KernelRun) -> None:
        self.kernel = run
        self.snapshot_state = run.snapshot_state


def batches(events: int, batch: int, kind: str) -> list[pa.Table]:
    """The stream as tables of ``batch`` rows: A, B, A, B, ... a card per pair."""
    out = []
    for start in range(0, events, batch):
        pos = np.arange(start, min(start + batch, events), dtype=np.int64)
        cards = BASE + pos // 2
        if kind in ("text", "key"):
            card = pa.array([f"card{c}" for c in cards.tolist()])
        else:  # (int: numbers a float64 holds, no dictionary: the cost of the rest alone)
            card = pa.array(cards if kind == "big" else pos // 2)
        types = pa.DictionaryArray.from_arrays(pa.array((pos % 2).astype(np.int32)), pa.array(["A", "B"]))
        out.append(pa.table({"type": types, "ts": pos, "id": pos, "card": card}))
    return out


def measure(tables: list[pa.Table], slack: int, keyed: bool) -> dict[str, Any]:
    """One run over ``tables``: entries, snapshot bytes, push seconds, matches."""
    net = compile_text(KEYED if keyed else PATTERN)
    compacting = "value_slack" in inspect.signature(KernelRun).parameters
    extra: dict[str, Any] = {"value_slack": slack, "key_slack": slack} if compacting else {}
    run = KernelRun(net, id_field="id", **extra)
    matches = 0
    t0 = time.perf_counter()
    for t in tables:
        matches += run.push(t).num_rows
    seconds = time.perf_counter() - t0
    strings, bigs = len(run.strings()), len(run.kernel.bigs)
    keys = sum(len(d) for d in {id(d): d for d in run.key_dicts}.values())
    key_bytes = run.memory()["per-key lists"]
    size = len(dumps(_Snapshotting(run)))
    return {"strings": strings, "bigs": bigs, "keys": keys, "key_bytes": key_bytes, "snapshot": size, "seconds": seconds,
            "matches": matches, "compacting": compacting}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench values", description=__doc__)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=65_536)
    ap.add_argument("--kinds", default="text,big,int,key")
    ap.add_argument("--slack", default="4096,never")
    args = ap.parse_args(argv)
    print("kind | slack | strings | big ints | keys | per-key bytes | snapshot bytes | push s | events/s | matches")
    for kind in args.kinds.split(","):
        tables = batches(args.events, args.batch, kind)
        for name in args.slack.split(","):
            got = measure(tables, NEVER if name == "never" else int(name), kind == "key")
            label = name if got["compacting"] else "(no compaction)"
            print(f"{kind} | {label} | {got['strings']:,} | {got['bigs']:,} | {got['keys']:,} | {got['key_bytes']:,} | {got['snapshot']:,} | "
                  f"{got['seconds']:.2f} | {args.events / got['seconds']:,.0f} | {got['matches']:,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
