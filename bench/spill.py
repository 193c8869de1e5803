"""Partial-match spilling, paper 004's experiment: TPM vs STPM at several memory budgets.

    python -m bench spill [--objects N] [--budgets 0.1,0.25,0.5]

An RFID-style stream: objects (tags) enter at random times and pass readers A, B, C, D,
each stage taking its own typical time (A->B ~ 60 s, B->C ~ 30 s, C->D ~ 120 s, with some
objects leaving early); the pattern SEQ(A a, B b, C c, D d) WHERE [tag] WITHIN 1 h holds
one partial match per object in the pipeline. Budgets are fractions of the peak number of
live partial matches of an unspilled run. For each policy and budget: misses (keys read
back because an event needed them), keys spilled, MiB written, seconds, and whether the
matches equal the unspilled run's.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from petricep.api import compile_text
from petricep.events import Event
from petricep.runtime.engine import Engine
from petricep.runtime.spill import Spiller

PATTERN = "PATTERN route: SEQ(A a, B b, C c, D d) WHERE [tag] WITHIN 1 h"
STAGES = (("A", 0.0), ("B", 60.0), ("C", 30.0), ("D", 120.0))


def stream(objects: int, seed: int) -> list[Event]:
    rnd = random.Random(seed)
    raw = []
    t = 0.0
    for tag in range(objects):
        t += rnd.expovariate(1 / 2.0)  # an object every 2 s on average
        at = t
        for reader, gap in STAGES:
            at += rnd.expovariate(1 / gap) if gap else 0.0
            raw.append((round(at, 3), reader, tag))
            if rnd.random() < 0.05:  # leaves the route
                break
    raw.sort()
    return [Event(r, ts, i, i, {"tag": tag}) for i, (ts, r, tag) in enumerate(raw)]


def run(events: list[Event], spill: Spiller | None, sweep: int) -> tuple[list[str], float, Engine]:
    engine = Engine(compile_text(PATTERN), spill=spill, sweep_every=sweep)
    evs = [Event(e.type, e.ts, e.pos, e.id, e.attrs) for e in events]
    start = time.perf_counter()
    out = [json.dumps(m.to_dict()) for m in engine.run(evs)]
    return out, time.perf_counter() - start, engine


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench spill", description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=20000)
    ap.add_argument("--budgets", default="0.1,0.25,0.5,0.75")
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args(argv)
    events = stream(args.objects, args.seed)
    want, base_s, engine = run(events, None, 256)
    peak = engine.stats.peak_partial
    print(f"{len(events):,} events, {len(want):,} matches, peak live partial matches {peak:,} "
          f"(sampled every 256 events); unspilled {base_s:.2f} s")
    print(f"{'policy':>6} {'budget':>7} {'misses':>8} {'spilled':>8} {'MiB out':>8} {'s':>7}  same")
    for frac in (float(x) for x in args.budgets.split(",")):
        budget = max(1, int(peak * frac))
        for policy in ("tpm", "stpm"):
            spill = Spiller(budget, policy)
            try:
                got, seconds, _ = run(events, spill, 256)
            finally:
                spill.close()
            st = spill.stats
            print(f"{policy:>6} {budget:>7,} {st.misses:>8,} {st.spilled:>8,} {st.bytes_written / 2**20:>8.1f} "
                  f"{seconds:>7.2f}  {'yes' if got == want else 'NO'}", flush=True)
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
