"""SQL MATCH_RECOGNIZE on the kernel's row matcher against the Python row runtime: the shipped
query ``nets/stock_v_shape.sql`` over ``examples/data/stocks.csv`` and over a generated stream.

    python -m bench rows [--events 500000] [--repeat 3] [--skip-process]

In memory: the same Event objects (type ``stock``) through :class:`Engine` and
:class:`RowKernelEngine`, alternately, best of ``--repeat``, the matches checked equal.
Whole process: ``python -m petricep run nets/stock_v_shape.sql --events F --type stock
--time-field ts --id-field id -o OUT`` with and without ``PETRICEP_NO_KERNEL=1``, alternately,
best of ``--repeat``, the match files checked byte-identical.
"""

from __future__ import annotations

import argparse
import filecmp
import gc
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, stock_stream
from petricep.api import compile_sql
from petricep.compile.net import Net
from petricep.events import Event
from petricep.io.readers import InputSpec, open_events
from petricep.kernel.rowengine import RowKernelEngine
from petricep.runtime.engine import Engine

QUERY = ROOT / "nets" / "stock_v_shape.sql"
STOCKS = ROOT / "examples" / "data" / "stocks.csv"


def in_memory(net: Net, events: list[Event], make: type[Engine]) -> tuple[float, list[dict[str, object]]]:
    """Seconds to push every event and flush (match objects built), and the matches."""
    evs = [Event(e.type, e.ts, e.pos, e.id, e.attrs) for e in events]
    gc.collect()
    t = time.perf_counter()
    found = list(make(net).run(evs))
    seconds = time.perf_counter() - t
    return seconds, [m.to_dict() for m in found]


def process(events_file: Path, out: Path, kernel: bool) -> float:
    """Seconds of a whole ``petricep run`` process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if not kernel:
        env["PETRICEP_NO_KERNEL"] = "1"
    cmd = [sys.executable, "-m", "petricep", "run", str(QUERY), "--events", str(events_file), "--type", "stock"]
    cmd += ["--time-field", "ts", "--id-field", "id", "-o", str(out)]
    t = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    return time.perf_counter() - t


def stocks_events() -> list[Event]:
    spec = InputSpec(str(STOCKS), type_const="stock", time_field="ts", id_field="id")
    return list(open_events(spec))


def compare(label: str, net: Net, events: list[Event], repeat: int) -> None:
    best = {"python": float("inf"), "kernel": float("inf")}
    want = None
    for _ in range(repeat):
        for name, make in (("python", Engine), ("kernel", RowKernelEngine)):
            seconds, found = in_memory(net, events, make)
            best[name] = min(best[name], seconds)
            if want is None:
                want = found
            assert found == want, f"{name}: other matches"
    ratio = best["python"] / best["kernel"]
    print(f"{label} in memory: {len(events):,} rows, {len(want or []):,} matches; python {best['python']:.3f} s, "
          f"kernel {best['kernel']:.3f} s ({ratio:.1f}x)")


def compare_process(label: str, events_file: Path, repeat: int, tmp: Path) -> None:
    best = {"python": float("inf"), "kernel": float("inf")}
    for _ in range(repeat):
        for name in ("python", "kernel"):
            best[name] = min(best[name], process(events_file, tmp / f"{name}.jsonl", name == "kernel"))
    assert filecmp.cmp(tmp / "python.jsonl", tmp / "kernel.jsonl", shallow=False), "match files differ"
    ratio = best["python"] / best["kernel"]
    print(f"{label} whole process: python {best['python']:.2f} s, kernel {best['kernel']:.2f} s ({ratio:.1f}x), same bytes")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=500_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-process", action="store_true")
    args = ap.parse_args(argv)
    text = QUERY.read_text()
    net = compile_sql(text)
    compare("stocks.csv", net, stocks_events(), args.repeat)
    # a DEFINE reading the match (FIRST): the kernel asks its Python closure per thread
    reading = text.replace("UP.price > PREV(UP.price)", "UP.price > PREV(UP.price) AND UP.price < FIRST(STRT.price)")
    compare("stocks.csv, UP reading FIRST(STRT.price)", compile_sql(reading), stocks_events(), args.repeat)
    generated = [Event("stock", e.ts, e.pos, e.id, e.attrs) for e in stock_stream(args.events, 20, 100, 7)]
    compare("generated", net, generated, args.repeat)
    if args.skip_process:
        return 0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        compare_process("stocks.csv", STOCKS, args.repeat, tmp)
        big = tmp / "gen.csv"
        gen = [sys.executable, str(ROOT / "examples" / "generate_stocks.py"), "--events", str(args.events)]
        subprocess.run([*gen, "--symbols", "20", "--seed", "7", "-o", str(big)], check=True)
        compare_process("generated", big, args.repeat, tmp)
    return 0
