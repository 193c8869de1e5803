"""Repeated groups (issue 42): ``SEQ(A a, SEQ(B b, C c)+ g[], D d)`` per key on the kernel and on
the Python engine, side by side in one run (events/s, the same matches on both).

Two strategies: skip-till-next-match (each partial match takes the next iteration: state
bounded by the keys) and skip-till-any-match inside a short window (every sequence of
iterations: partial matches multiply with each one, the window bounds them). An iteration
condition (``g[i].b.x < g[i].c.x``), an aggregate (``count(g[]) >= 2``) and a RETURN over the
group make the kernel do what a group needs: lists in its element arena, guards reading
several lists, the group's bindings as ids.

    python -m bench groups [--events 100000] [--keys 50] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

from petricep.events import Event
from petricep.kernel.run import KernelRun
from petricep.kernel.tableplan import to_matches
from petricep.lang.parser import parse_text
from petricep.merge import build_net
from petricep.runtime.engine import Engine

TEXT = (
    "PATTERN waves: SEQ(A a, SEQ(B b, C c)+ g[], D d)\n"
    "WHERE [k] AND {strategy} AND g[i].b.x < g[i].c.x AND count(g[]) >= 2\n"
    "WITHIN {window}\n"
    "RETURN W(n = count(g[]), top = max(g[].c.x))\n"
)
FORMS = (("skip-till-next-match", 3000), ("skip-till-any-match", 500))


def stream(events: int, keys: int, seed: int) -> list[Event]:
    """One event a second of types A 10 %, B 40 %, C 40 %, D 10 %, ``k`` over ``keys``, ``x``
    over 0..9."""
    rng = np.random.default_rng(seed)
    types = rng.choice(4, events, p=[0.1, 0.4, 0.4, 0.1])
    ks = rng.integers(0, keys, events)
    xs = rng.integers(0, 10, events)
    return [Event("ABCD"[t], i, i, i, {"k": int(k), "x": int(x)}) for i, (t, k, x) in enumerate(zip(types, ks, xs))]


def run_python(text: str, events: list[Event]) -> tuple[float, list[tuple[str, dict[str, object]]]]:
    engine = Engine(build_net(list(parse_text(text, "<bench>").patterns)))
    start = time.perf_counter()
    out = [m for e in events for m in engine.push(Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)))]
    out += engine.flush()
    seconds = time.perf_counter() - start
    return seconds, [(m.id, m.attrs) for m in out]


def run_kernel(text: str, events: list[Event]) -> tuple[float, list[tuple[str, dict[str, object]]]]:
    net = build_net(list(parse_text(text, "<bench>").patterns))
    table = pa.table(
        {
            "type": [e.type for e in events], "ts": [e.ts for e in events], "id": [e.id for e in events],
            "k": [e.attrs["k"] for e in events], "x": [e.attrs["x"] for e in events],
        }
    )
    run = KernelRun(net, id_field="id")
    start = time.perf_counter()
    tables = [run.push(table), run.flush()]
    seconds = time.perf_counter() - start
    return seconds, [(m.id, m.attrs) for t in tables for m in to_matches(t, net)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench groups", description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--keys", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    args = ap.parse_args(argv)
    events = stream(args.events, args.keys, args.seed)
    print(f"# repeated group SEQ(A a, SEQ(B b, C c)+ g[], D d), {args.events:,} events, {args.keys} keys, best of {args.repeat}")
    print("| strategy | window | matches | python events/s | kernel events/s | kernel / python |")
    print("|---|---|---|---|---|---|")
    for strategy, window in FORMS:
        text = TEXT.format(strategy=strategy, window=window)
        py = min((run_python(text, events) for _ in range(args.repeat)), key=lambda r: r[0])
        k = min((run_kernel(text, events) for _ in range(args.repeat)), key=lambda r: r[0])
        assert py[1] == k[1], "both engines must find the same matches in the same order"
        print(
            f"| {strategy} | {window} s | {len(py[1]):,} | {args.events / py[0]:,.0f} | {args.events / k[0]:,.0f} "
            f"| {py[0] / k[0]:.1f}x |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
