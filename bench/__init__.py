"""petricep benchmarks: `python -m bench <workload> [options]` (see bench/RESULTS.md)."""
