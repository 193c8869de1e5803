"""The kernel's instructions per event on Aarhus congestion, counted by valgrind's callgrind:
a measure of the firing loop that does not move with the machine's load.

    python -m bench instructions [--rows 200000] [--net nets/aarhus_congestion.pcep]

Timings on a shared machine move by 20-30% from one minute to the next, more than most
changes to the kernel's loop are worth; the instructions it executes per event do not move at
all, so two builds compare exactly (cache misses and branch mispredictions are not counted:
confirm a change with timings, alternately, as bench/HISTORY.md does). The count covers
``fire_one`` and everything it calls (the per-event work: entering each group, guards,
firing, storing, negation, housekeeping), not the Python around a kernel call.

It runs the first ``--rows`` rows of the Aarhus file (cached as Arrow under /tmp, times as
int64 as ``bench kernel`` gives them) through :class:`~petricep.kernel.KernelRun` in a child
process under ``valgrind --tool=callgrind`` (about 50x slower than native: 200,000 rows take
about a minute). Needs valgrind (Debian ``valgrind``) and the built kernel.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.aarhus import DATA as AARHUS
from bench.common import ROOT

SYMBOL = "__pyx_f_8petricep_6kernel_7_kernel_fire_one"  # Cython's C name of the per-row function


def child(rows: int, net_path: str) -> None:
    """The measured run (in the process callgrind watches): Aarhus rows through the kernel."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pa_csv
    import pyarrow.ipc as ipc

    from petricep.kernel import KernelRun
    from petricep.lang.parser import parse_file
    from petricep.merge import build_net

    cache = Path(tempfile.gettempdir()) / f"petricep-aarhus-{rows}.arrow"
    if not cache.exists():
        table = pa_csv.read_csv(str(AARHUS)).slice(0, rows)
        at = table.schema.get_field_index("TIMESTAMP")
        table = table.set_column(at, "TIMESTAMP", pc.cast(table.column("TIMESTAMP"), pa.int64()))
        with ipc.new_file(str(cache), table.schema) as w:
            w.write_table(table)
    table = ipc.open_file(str(cache)).read_all()
    net = build_net(list(parse_file(net_path).patterns))
    run = KernelRun(net, type_field=None, event_type="traffic", time_field="TIMESTAMP", id_field="_id")
    found = run.push(table).num_rows + run.flush().num_rows
    print(f"rows {table.num_rows} matches {found}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench instructions", description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--net", default=str(ROOT / "nets" / "aarhus_congestion.pcep"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.rows, args.net)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind)")
        return 1
    if not AARHUS.exists():
        print(f"the Aarhus data set is absent ({AARHUS})")
        return 1
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", f"--toggle-collect={SYMBOL}"]
        cmd += [sys.executable, "-m", "bench.instructions", "--child", "--rows", str(args.rows), "--net", args.net]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stderr[-2000:])
            return 1
        collected = re.search(r"Collected : (\d+)", done.stderr)
        if collected is None or int(collected.group(1)) == 0:
            print("callgrind counted nothing: is the compiled kernel built? (petricep.kernel.available())")
            return 1
    print(done.stdout.strip())
    n = int(collected.group(1))
    print(f"instructions in {SYMBOL} and below: {n:,} ({n / args.rows:,.0f} per row)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
