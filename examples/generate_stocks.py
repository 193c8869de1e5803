"""SASE-style stock stream generator.

Each event is one trade: a type ``stock<k>`` (k = 1..symbols), a timestamp that
grows by one per event, a price drawn uniformly from 1..max_price and a volume
from 1..1000 — the stream the SASE papers (and paper 002's experiment) use.

    python examples/generate_stocks.py --events 100000 --symbols 20 --max-price 100 \
        --seed 7 -o stocks.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np


def generate(events: int, symbols: int, max_price: int, seed: int) -> Iterator[dict[str, object]]:
    rng = np.random.default_rng(seed)
    chunk = 65536
    done = 0
    while done < events:
        n = min(chunk, events - done)
        sym = rng.integers(1, symbols + 1, n)
        price = rng.integers(1, max_price + 1, n)
        volume = rng.integers(1, 1001, n)
        for i in range(n):
            k = int(sym[i])
            yield {
                "id": done + i,
                "ts": done + i,
                "type": f"stock{k}",
                "symbol": f"S{k}",
                "price": int(price[i]),
                "volume": int(volume[i]),
            }
        done += n


def generate_table(events: int, symbols: int, max_price: int, seed: int) -> Any:
    """The same stream as :func:`generate`, as a pyarrow Table built without a row loop."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    chunk = 65536
    parts: list[tuple[Any, Any, Any]] = []
    done = 0
    while done < events:
        n = min(chunk, events - done)
        parts.append((rng.integers(1, symbols + 1, n), rng.integers(1, max_price + 1, n), rng.integers(1, 1001, n)))
        done += n
    sym = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    names = np.array([f"stock{k}" for k in range(symbols + 1)], dtype=object)
    symbol_names = np.array([f"S{k}" for k in range(symbols + 1)], dtype=object)
    ids = np.arange(events, dtype=np.int64)
    return pa.table(
        {
            "id": ids,
            "ts": ids,
            "type": pa.array(names[sym], pa.string()).dictionary_encode(),
            "symbol": pa.array(symbol_names[sym], pa.string()).dictionary_encode(),
            "price": np.concatenate([p[1] for p in parts]) if parts else ids,
            "volume": np.concatenate([p[2] for p in parts]) if parts else ids,
        }
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10000, help="stream size (default 10000)")
    ap.add_argument("--symbols", type=int, default=20, help="number of stock symbols (default 20)")
    ap.add_argument("--max-price", type=int, default=100, help="prices are 1..max-price (default 100)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--format", choices=("csv", "jsonl", "parquet"), default=None, help="default: from -o's extension")
    ap.add_argument("-o", "--out", default="-", help="output file (default: CSV on stdout)")
    args = ap.parse_args(argv)
    fmt = args.format or ("parquet" if args.out.endswith(".parquet") else "jsonl" if args.out.endswith(".jsonl") else "csv")
    rows = generate(args.events, args.symbols, args.max_price, args.seed)
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(list(rows)), args.out)
        return 0
    out = sys.stdout if args.out == "-" else open(args.out, "w", newline="", encoding="utf-8")  # noqa: SIM115
    try:
        if fmt == "jsonl":
            for r in rows:
                out.write(json.dumps(r) + "\n")
        else:
            w = csv.DictWriter(out, fieldnames=["id", "ts", "type", "symbol", "price", "volume"], lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
