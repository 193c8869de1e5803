"""Composite events read in the same run: a reader in a shared net of its own (merge's
``_levels``, since 2026-12-07: under the tie rule ``either`` a reader sharing its producer's
net would never see a timestamp group's composite events) against the merge before it, which
put a reader beside its producer where partition, window and strategy agree.

Three patterns over one keyed stream, as ``petricep.match`` runs them from a CSV read by
pyarrow: ``p`` makes ``P`` events, ``q`` reads them, ``r`` shares ``p``'s first step (front
combination). The same matches both ways under ``arrival``; the time is the library call,
alternately, best and median of ``--repeat`` rounds.

    python -m bench composites [--events 1000000] [--keys 20000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

import petricep
from petricep import merge
from petricep.compile.net import PatternNet
from petricep.lang.parser import parse_text

TEXT = """
PATTERN p: SEQ(A a, B b) WHERE [tag] AND a.ts < b.ts WITHIN 100 RETURN P(tag = a.tag)
PATTERN q: SEQ(P x, C c) WHERE [tag] WITHIN 100
PATTERN r: SEQ(A a, D d) WHERE [tag] WITHIN 100
"""


def write_csv(path: str, events: int, keys: int, seed: int) -> None:
    """One event a second, types A-D alike, ``tag`` over ``keys``."""
    rng = np.random.default_rng(seed)
    types = np.array(list("ABCD"))[rng.integers(0, 4, events)]
    ids = np.arange(events)
    pcsv.write_csv(pa.table({"type": types, "ts": ids, "id": ids, "tag": rng.integers(0, keys, events)}), path)


def together(nets: Sequence[PatternNet]) -> dict[int, int]:
    """The merge before readers got nets of their own: every pattern at one level."""
    return {n.index: 0 for n in nets}


def once(path: str, levels: Callable[[Sequence[PatternNet]], dict[int, int]]) -> tuple[float, int, int]:
    """(seconds of the library call, matches, shared nets) with ``levels`` as merge's rule."""
    saved = merge._levels
    merge._levels = levels  # type: ignore[assignment]  # (the rule under test, for this call only)
    try:
        nets = len(merge.build_net(list(parse_text(TEXT).patterns)).groups)
        table = pcsv.read_csv(path)
        start = time.perf_counter()
        out = petricep.match(table, TEXT, type_field="type", time_field="ts", id_field="id")
        return time.perf_counter() - start, len(out), nets
    finally:
        merge._levels = saved


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench composites", description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    rules = {"own nets (now)": merge._levels, "beside the producer (before)": together}
    times: dict[str, list[float]] = {k: [] for k in rules}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "events.csv")
        write_csv(path, args.events, args.keys, args.seed)
        once(path, merge._levels)  # (warm: the kernel's import, the first compile)
        seen: dict[str, tuple[int, int]] = {}
        for _ in range(args.repeat):
            for name, rule in rules.items():
                seconds, matches, nets = once(path, rule)
                times[name].append(seconds)
                seen[name] = (matches, nets)
    (m1, n1), (m2, n2) = seen.values()
    if m1 != m2:
        raise SystemExit(f"the two merges found {m1} and {m2} matches")
    print(f"{args.events:,} events, {args.keys:,} keys, {m1:,} matches; shared nets {n1} (now) and {n2} (before)")
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    for name, v in times.items():
        print(f"  {name:30} best {min(v):.3f} s  median {med[name]:.3f} s")
    now, before = med.values()
    print(f"  now / before (medians): {now / before:.2f}")
    return 0
