"""python -m bench <workload> [options]   (workloads: multi, soak)"""

from __future__ import annotations

import sys

WORKLOADS = {"multi": "bench.multi", "soak": "bench.soak"}


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
