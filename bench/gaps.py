"""Per-step gaps (issue 42): ``B b AFTER 0 TO G`` against the same pattern with the gap written
as a WHERE condition (``b.ts - a.ts <= G``), side by side on the Python engine and the kernel.

``SEQ(A a, B b)`` per key, inside a window W much longer than the gap G: with the gap in WHERE
a partial match ``a`` waits for the window (W) to close; with the gap on the step it leaves
when its gap ends (G). Both find the same matches; the table gives events/s, the peak and the
mean of the partial matches alive (sampled every ``--every`` events) and their ratios.
The kernel runs both forms too (its partial matches sampled after each batch of ``--every``
events, the Python engine's after every ``--every``-th event: the same points).

``--form list``: a Kleene list's chain and a step after it, ``SEQ(A a, B{1,3} b[] AFTER 0 TO
G, A c AFTER 0 TO G)`` (each element at most G after the one before it, c at most G after the
list's last), against its WHERE form (``b[1].ts - a.ts``, ``b[i].ts - b[i-1].ts``,
``c.ts - b[last].ts``).

``--form group``: a repeated group's steps, ``SEQ(A a, SEQ(B b AFTER 0 TO G, A c AFTER 0 TO
G){1,3} g[], B d AFTER 0 TO G)`` (each step at most G after the event before it: the first
step after ``a`` or the previous iteration's ``c``), against its WHERE form (``g[1].b.ts -
a.ts``, ``g[i].c.ts - g[i].b.ts``, ``g[i].b.ts - g[i-1].c.ts``, ``d.ts - g[last].c.ts``).

    python -m bench gaps [--events 200000] [--keys 20] [--gap 300] [--window 3600] [--repeat 3] [--form step|list|group]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from petricep.events import Event
from petricep.kernel.run import KernelRun
from petricep.lang.parser import parse_text
from petricep.merge import build_net
from petricep.runtime.engine import Engine

GAPPED = "PATTERN gap: SEQ(A a, B b AFTER 0 TO {g}) WHERE [k] AND b.x = 0 WITHIN {w}\n"
WHERE = "PATTERN gap: SEQ(A a, B b) WHERE [k] AND b.x = 0 AND b.ts - a.ts >= 0 AND b.ts - a.ts <= {g} WITHIN {w}\n"
LIST_GAPPED = (
    "PATTERN gap: SEQ(A a, B{{1,3}} b[] AFTER 0 TO {g}, A c AFTER 0 TO {g}) "
    "WHERE [k] AND a.x < 5 AND b[i].x < 25 AND c.x = 0 WITHIN {w}\n"
)
LIST_WHERE = (
    "PATTERN gap: SEQ(A a, B{{1,3}} b[], A c) WHERE [k] AND a.x < 5 AND b[i].x < 25 AND c.x = 0 "
    "AND b[1].ts - a.ts >= 0 AND b[1].ts - a.ts <= {g} AND b[i].ts - b[i-1].ts >= 0 AND b[i].ts - b[i-1].ts <= {g} "
    "AND c.ts - b[last].ts >= 0 AND c.ts - b[last].ts <= {g} WITHIN {w}\n"
)
GROUP_GAPPED = (
    "PATTERN gap: SEQ(A a, SEQ(B b AFTER 0 TO {g}, A c AFTER 0 TO {g}){{1,3}} g[], B d AFTER 0 TO {g}) "
    "WHERE [k] AND a.x < 5 AND g[i].b.x < 25 AND g[i].c.x < 25 AND d.x = 0 WITHIN {w}\n"
)
GROUP_WHERE = (
    "PATTERN gap: SEQ(A a, SEQ(B b, A c){{1,3}} g[], B d) WHERE [k] AND a.x < 5 AND g[i].b.x < 25 AND g[i].c.x < 25 "
    "AND d.x = 0 AND g[1].b.ts - a.ts >= 0 AND g[1].b.ts - a.ts <= {g} AND g[i].c.ts - g[i].b.ts >= 0 "
    "AND g[i].c.ts - g[i].b.ts <= {g} AND g[i].b.ts - g[i-1].c.ts >= 0 AND g[i].b.ts - g[i-1].c.ts <= {g} "
    "AND d.ts - g[last].c.ts >= 0 AND d.ts - g[last].c.ts <= {g} WITHIN {w}\n"
)
FORMS = {"step": (GAPPED, WHERE), "list": (LIST_GAPPED, LIST_WHERE), "group": (GROUP_GAPPED, GROUP_WHERE)}


@dataclass
class Figures:
    seconds: float
    matches: int
    peak: int
    mean: float


def stream(events: int, keys: int, seed: int) -> list[Event]:
    """One event a second: A and B at 50 % each, ``k`` over ``keys`` values, ``x`` over 0..49
    (so a B matches one A in 50: partial matches wait)."""
    rng = np.random.default_rng(seed)
    types = rng.integers(0, 2, events)
    ks = rng.integers(0, keys, events)
    xs = rng.integers(0, 50, events)
    return [Event("AB"[t], i, i, i, {"k": int(k), "x": int(x)}) for i, (t, k, x) in enumerate(zip(types, ks, xs))]


def run_python(text: str, events: list[Event], every: int) -> Figures:
    engine = Engine(build_net(list(parse_text(text, "<bench>").patterns)))
    live: list[int] = []
    matches = 0
    start = time.perf_counter()
    for i, e in enumerate(events):
        matches += len(engine.push(Event(e.type, e.ts, e.pos, e.id, dict(e.attrs))))
        if i % every == every - 1:
            live.append(engine.live_partial_matches())
    matches += len(engine.flush())
    seconds = time.perf_counter() - start
    return Figures(seconds, matches, max(live, default=0), sum(live) / max(1, len(live)))


def run_kernel(text: str, events: list[Event], every: int) -> Figures:
    net = build_net(list(parse_text(text, "<bench>").patterns))
    table = pa.table(
        {
            "type": [e.type for e in events], "ts": [e.ts for e in events], "id": [e.id for e in events],
            "k": [e.attrs["k"] for e in events], "x": [e.attrs["x"] for e in events],
        }
    )
    run = KernelRun(net, id_field="id")
    live: list[int] = []
    matches = 0
    start = time.perf_counter()
    for off in range(0, table.num_rows, every):
        matches += run.push(table.slice(off, every)).num_rows
        live.append(run.live_partial_matches())
    matches += run.flush().num_rows
    seconds = time.perf_counter() - start
    return Figures(seconds, matches, max(live, default=0), sum(live) / max(1, len(live)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench gaps", description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--keys", type=int, default=20)
    ap.add_argument("--gap", type=int, default=300, help="the step's upper bound G (seconds)")
    ap.add_argument("--window", type=int, default=3600, help="the window W (seconds)")
    ap.add_argument("--every", type=int, default=1000, help="sample the partial matches alive every N events")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    ap.add_argument("--form", choices=sorted(FORMS), default="step", help="a gap on a step, a list's chain, or a group's steps (default step)")
    args = ap.parse_args(argv)
    events = stream(args.events, args.keys, args.seed)
    g, w = args.gap, args.window
    gapped, where_form = FORMS[args.form]
    print(f"# per-step gap ({args.form}) G={g} s vs WHERE, window W={w} s, {args.events:,} events, {args.keys} keys")
    print("| form | engine | matches | best s | events/s | peak alive | mean alive |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for label, engine, text, fn in (
        ("AFTER 0 TO G (gap)", "python", gapped, run_python),
        ("WHERE b.ts - a.ts <= G", "python", where_form, run_python),
        ("AFTER 0 TO G (gap)", "kernel", gapped, run_kernel),
        ("WHERE b.ts - a.ts <= G", "kernel", where_form, run_kernel),
    ):
        runs = [fn(text.format(g=g, w=w), events, args.every) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r.seconds)
        rows.append(best)
        print(
            f"| {label} | {engine} | {best.matches:,} | {best.seconds:.2f} | {args.events / best.seconds:,.0f} "
            f"| {best.peak:,} | {best.mean:,.1f} |"
        )
    assert len({r.matches for r in rows}) == 1, "every form must find the same matches"
    for engine, (gap, where) in (("the Python engine", rows[:2]), ("the kernel", rows[2:])):
        print(
            f"\ngap / WHERE on {engine}: {where.seconds / gap.seconds:.2f}x the speed, "
            f"peak alive 1/{where.peak / max(1, gap.peak):.1f}, mean alive 1/{where.mean / max(1e-9, gap.mean):.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
