"""Soak: a long generated stream through windowed patterns; memory must stay flat.

    python -m bench soak --events 10000000 [--every 1000000] [--engine kernel]

Events are generated lazily (SASE-style stocks, examples/generate_stocks.py), pushed one by
one and dropped, so the process holds only the engine's state: the partial matches of the
open windows, negation buffers and pending timeouts. Printed at every checkpoint: events,
seconds, events/s, RSS now, peak RSS, live partial matches, matches and timeouts. The check
the issue asks for: peak RSS at the end within 10% of peak RSS at 1M events. ``--engine
kernel``: the same events through the compiled kernel (``KernelEngine``, batches of 4,096).
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import time
from collections.abc import Iterator

from bench.common import ROOT
from petricep.api import compile_text
from petricep.events import Event
from petricep.kernel import supports
from petricep.kernel.engine import KernelEngine
from petricep.runtime.engine import Engine

PATTERNS = """
PATTERN equal_price: SEQ(stock1 a, stock2 b, stock3 c)
WHERE [price]
WITHIN 10000
ON TIMEOUT RETURN Expired(price = a.price)

PATTERN next_equal_price: SEQ(stock1 a, stock2 b, stock3 c)
WHERE skip-till-next-match AND [price]
WITHIN 10000

PATTERN rising_run: SEQ(stock4 a, stock5+ r[], stock6 c)
WHERE [price] AND r[i].volume > r[i-1].volume
WITHIN 2000
LIMIT 1000 PARTIAL MATCHES
"""


def events(n: int, seed: int) -> Iterator[Event]:
    spec = importlib.util.spec_from_file_location("generate_stocks", ROOT / "examples" / "generate_stocks.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for r in mod.generate(n, 20, 100, seed):
        attrs = {"symbol": r["symbol"], "price": r["price"], "volume": r["volume"]}
        yield Event(str(r["type"]), int(r["ts"]), int(r["id"]), int(r["id"]), attrs)


def rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _engines(kind: str) -> list[Engine | KernelEngine]:
    """The soak's engines: the Python engine over the shared net; on the kernel, one
    ``KernelEngine`` per pattern it covers (it refuses the shared net: a Kleene list
    sharing a merged slot, Kleene beside ON TIMEOUT and LIMIT), the others named."""
    if kind == "python":
        return [Engine(compile_text(PATTERNS, "soak"), collect=False)]
    out: list[Engine | KernelEngine] = []
    for text in ("PATTERN" + block for block in PATTERNS.split("PATTERN")[1:]):
        net = compile_text(text, "soak")
        ok, why = supports(net)
        name = net.patterns[0].name
        print(f"# {name}: " + ("on the kernel" if ok else f"not on the kernel ({why})"))
        if ok:
            out.append(KernelEngine(net))
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench soak", description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--every", type=int, default=1_000_000, help="checkpoint interval (default 1M)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--engine", choices=("python", "kernel"), default="python")
    args = ap.parse_args(argv)
    engines = _engines(args.engine)
    print(f"{'events':>11} {'s':>7} {'events/s':>9} {'RSS MiB':>8} {'peak MiB':>8} {'live PMs':>8} "
          f"{'matches':>9} {'timeouts':>9} {'dropped':>7}")
    start = time.perf_counter()
    first_peak = None
    n = 0
    for e in events(args.events, args.seed):
        for engine in engines:
            engine.push(e)
        n += 1
        if n % args.every == 0:
            elapsed = time.perf_counter() - start
            counts = [c for engine in engines for c in engine.report()["patterns"].values()]
            live = sum(engine.live_partial_matches() for engine in engines)
            peak = peak_mib()
            if first_peak is None:
                first_peak = peak
            print(f"{n:>11,} {elapsed:>7.1f} {n / elapsed:>9,.0f} {rss_mib():>8.1f} {peak:>8.1f} "
                  f"{live:>8,} {sum(c['matches'] for c in counts):>9,} "
                  f"{sum(c['timeouts'] for c in counts):>9,} {sum(c['dropped'] for c in counts):>7,}", flush=True)
    for engine in engines:
        engine.flush()
    final = peak_mib()
    if first_peak:
        growth = final / first_peak - 1
        verdict = "within" if growth <= 0.10 else "NOT within"
        print(f"peak RSS {final:.1f} MiB at {n:,} events vs {first_peak:.1f} MiB at {args.every:,}: "
              f"{growth:+.1%} ({verdict} 10%)")
        return 0 if growth <= 0.10 else 1
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
