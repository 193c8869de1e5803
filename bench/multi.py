"""Workload 5 (paper 002): one pattern registered 1..50 times, and 50 different
overlapping patterns, merged into one shared net vs run as separate nets.

    python -m bench multi [--events 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random

from bench.common import stock_stream, time_run
from petricep.lang.parser import parse_text
from petricep.merge import build_net

Q2 = "PATTERN q{i}: SEQ(stock1 a, stock2 b, stock3 c) WHERE skip-till-next-match AND [price] WITHIN 10000\n"


def overlapping(n: int, seed: int = 5) -> str:
    """n different patterns over stock1..3 that overlap the way paper 002 combines them:
    common prefixes, prefixes of each other, other windows and thresholds, longer tails."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = i % 5
        w = rng.choice([200, 300, 400, 500])
        if kind == 0:
            body = "SEQ(stock1 a, stock2 b, stock3 c)"
        elif kind == 1:
            body = "SEQ(stock1 a, stock2 b)"
        elif kind == 2:
            body = f"SEQ(stock1 a, stock2 b, stock3 c, stock{rng.choice([1, 2])} d)"
        elif kind == 3:
            body = "SEQ(stock1 a, stock2 b, stock1 c)"
        else:
            body = "SEQ(stock1 a, stock2 b, stock3 c)"
        cond = f" AND c.volume > {rng.randrange(0, 900, 100)}" if kind in (0, 4) else ""
        out.append(f"PATTERN p{i}: {body} WHERE [price]{cond} WITHIN {w}\n")
    return "".join(out)


def best(net, events, repeat, collect=True):  # type: ignore[no-untyped-def]
    runs = [time_run(net, events, collect=collect) for _ in range(repeat)]
    return min(runs, key=lambda t: t.seconds)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench multi", description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    ap.add_argument("--separate-up-to", type=int, default=20, help="also time unmerged nets up to this many patterns")
    args = ap.parse_args(argv)
    events = stock_stream(args.events, 3, 100, seed=2)
    print(f"# paper 002: SASE's three-equal-price query, {args.events} events (3 symbols, prices 1..100)")
    print(
        "| patterns | matches | merged, match objects: s (ratio to 1) | merged, output excluded: s (ratio) "
        "| separate s | places before -> after | transitions before -> after |"
    )
    print("|---|---|---|---|---|---|---|")
    base = base_count = 0.0
    for n in (1, 10, 20, 30, 40, 50):
        pats = list(parse_text("".join(Q2.format(i=i) for i in range(n)), "<bench>").patterns)
        net = build_net(pats)
        t = best(net, events, args.repeat)
        c = best(net, events, args.repeat, collect=False)
        base, base_count = base or t.seconds, base_count or c.seconds
        sep = f"{best(build_net(pats, share=False), events, 1).seconds:.2f}" if n <= args.separate_up_to else "-"
        s = net.stats()
        print(
            f"| {n} | {t.matches} | {t.seconds:.2f} ({t.seconds / base:.2f}x) | {c.seconds:.2f} ({c.seconds / base_count:.2f}x) "
            f"| {sep} | {s['state_places']} -> {s['merged_state_places']} | {s['transitions']} -> {s['merged_transitions']} |"
        )
    print()
    print(f"# 50 different overlapping patterns (skip-till-any-match), {args.events} events")
    one = build_net(list(parse_text(overlapping(1), "<bench>").patterns))
    pats = list(parse_text(overlapping(50), "<bench>").patterns)
    merged, separate = build_net(pats), build_net(pats, share=False)
    s = merged.stats()
    print("| run | matches | match objects: s (ratio to 1 pattern) | output excluded: s (ratio) |")
    print("|---|---|---|---|")
    t1, c1 = best(one, events, args.repeat), best(one, events, args.repeat, collect=False)
    for label, net, rep in (("1 pattern (p0)", one, args.repeat), ("50 merged", merged, args.repeat), ("50 separate", separate, 1)):
        t, c = best(net, events, rep), best(net, events, rep, collect=False)
        print(f"| {label} | {t.matches} | {t.seconds:.2f} ({t.seconds / t1.seconds:.2f}x) | {c.seconds:.2f} ({c.seconds / c1.seconds:.2f}x) |")
    print(
        f"\nnet size: places {s['state_places']} -> {s['merged_state_places']}, "
        f"transitions {s['transitions']} -> {s['merged_transitions']}"
    )
    return 0
