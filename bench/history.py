"""History-aware patterns on the Aarhus data: LLAA vs SLLAA (latency tolerances) vs
archive-first and measured order — archive reads, events loaded, time, identical matches.

    python -m bench history [--events N]

The first week (2014-08-01 to 08-07) is archived once (``petricep archive``); each
configuration then runs ``nets/aarhus_slower_than_last_week.pcep`` over the second week as the
live stream, on its own copy of that archive (live events are archived as the run goes).
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import tempfile
import time
from typing import Any

from bench.common import ROOT
from petricep.archive.join import HistoryRunner
from petricep.archive.store import Archive
from petricep.io.readers import InputSpec, open_events
from petricep.lang.parser import parse_file, parse_text

AARHUS = ROOT.parent / "shared" / "data" / "aarhus_traffic" / "aarhus_traffic_2014-08-01_to_14.csv.gz"
NET = ROOT / "nets" / "aarhus_slower_than_last_week.pcep"
CONFIGS = [
    ("llaa", 0, "live-first"),
    ("sllaa", 0, "live-first"),
    ("sllaa", 600, "live-first"),
    ("sllaa", 3600, "live-first"),
    ("sllaa", 3600, "archive-first"),
    ("sllaa", 3600, "auto"),
]
# the other way round: the archived part is the selective one (free flow above 120 a week ago)
FASTER = """
PATTERN faster_last_week: SEQ(ARCHIVED traffic lastweek, traffic now)
WHERE [REPORT_ID] AND lastweek.avgSpeed >= 120
  AND now.ts - lastweek.ts >= 604500 AND now.ts - lastweek.ts <= 605100
  AND now.avgSpeed < lastweek.avgSpeed / 2
"""
FASTER_CONFIGS = [("sllaa", 3600, "live-first"), ("sllaa", 3600, "archive-first"), ("sllaa", 3600, "auto")]


WEEK2 = 1407456000  # 2014-08-08T00:00:00Z


def table(patterns: Any, live: list[Any], base: str, configs: list[tuple[str, int, str]]) -> None:
    print(f"{'mode':>6} {'latency':>7} {'order':>13} {'s':>7} {'reads':>7} {'loaded':>8} {'archived m.':>11} "
          f"{'gated':>8} {'matches':>8}")
    reference = None
    for mode, latency, order in configs:
        path = tempfile.mkdtemp(prefix="petricep-bench-archive-")
        shutil.rmtree(path)
        shutil.copytree(base, path)
        try:
            runner = HistoryRunner(patterns, Archive(path), mode, latency, order)
            start = time.perf_counter()
            out = sorted(json.dumps(m.to_dict(), sort_keys=True) for m in runner.run(itertools.islice(live, None)))
            seconds = time.perf_counter() - start
        finally:
            shutil.rmtree(path, ignore_errors=True)
        st = runner.join.stats
        same = "" if reference is None else ("  (same matches)" if out == reference else "  (DIFFERENT matches!)")
        reference = reference if reference is not None else out
        print(f"{mode:>6} {latency:>7} {order:>13} {seconds:>7.1f} {st.loads:>7,} {st.rows:>8,} "
              f"{st.archived_matches:>11,} {st.gated:>8,} {len(out):>8,}{same}", flush=True)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench history", description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=0, help="first N events only (default: all)")
    ap.add_argument("--faster-hours", type=float, default=12, help="live hours for the second pattern (default 12)")
    args = ap.parse_args(argv)
    spec = InputSpec(str(AARHUS), type_const="traffic", time_field="TIMESTAMP", id_field="_id")
    events = list(open_events(spec))
    if args.events:
        events = events[: args.events]
    patterns = parse_file(NET).patterns
    history = [e for e in events if e.ts < WEEK2]
    live = [e for e in events if e.ts >= WEEK2]
    base = tempfile.mkdtemp(prefix="petricep-bench-week1-")
    started = time.perf_counter()
    week1 = Archive(base)
    week1.extend(history)
    week1.flush()
    print(f"archived {len(history):,} events of week 1 in {time.perf_counter() - started:.1f} s; "
          f"live: {len(live):,} events of week 2; {NET.name}")
    table(patterns, live, base, CONFIGS)
    faster = parse_text(FASTER, "faster").patterns
    hours = [e for e in live if e.ts < WEEK2 + args.faster_hours * 3600]
    print(f"\n{len(hours):,} live events (first {args.faster_hours:g} h of week 2); faster_last_week")
    table(faster, hours, base, FASTER_CONFIGS)
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
