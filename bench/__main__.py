"""python -m bench <workload> [options]   (python -m bench <workload> --help for each)"""

from __future__ import annotations

import sys

WORKLOADS = {
    "sase": "bench.sase_q2",
    "nasdaq": "bench.nasdaq",
    "negation": "bench.negation",
    "kleene": "bench.kleene",
    "multi": "bench.multi",
    "aarhus": "bench.aarhus",
    "soak": "bench.soak",
    "history": "bench.history",
    "spill": "bench.spill",
    "check_scaling": "bench.check_scaling",
    "fuzz": "bench.fuzz",
    "kernel": "bench.kernel",
    "instructions": "bench.instructions",
    "engines": "bench.engines",
    "rows": "bench.rows",
    "gaps": "bench.gaps",
    "groups": "bench.groups",
    "values": "bench.values",
    "library": "bench.library",
    "composites": "bench.composites",
}


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in WORKLOADS:
        print(__doc__.strip())
        print("workloads: " + ", ".join(WORKLOADS))
        return 2
    import importlib

    module = importlib.import_module(WORKLOADS[sys.argv[1]])
    return int(module.main(sys.argv[2:]))


if __name__ == "__main__":
    raise SystemExit(main())
