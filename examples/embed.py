"""Embedding petricep in a Python program: compile a pattern, push events, get matches.

    python examples/embed.py
"""

from __future__ import annotations

from petricep.api import compile_text
from petricep.events import Event
from petricep.runtime import Engine

PATTERNS = """
# a price dip: three trades of one symbol, each cheaper than the one before,
# back to back (no other trade of that symbol between), within 10 time units
PATTERN dip: SEQ(stock a, stock b, stock c)
WHERE [symbol] AND partition-contiguity
AND b.price < a.price AND c.price < b.price
WITHIN 10
RETURN Dip(symbol = a.symbol, drop = a.price - c.price)

# two dips of the same symbol within 50 time units (consumes Dip events)
PATTERN double_dip: SEQ(Dip d1, Dip d2)
WHERE [symbol] AND skip-till-next-match
WITHIN 50
"""


def main() -> None:
    net = compile_text(PATTERNS, name="embedded")
    engine = Engine(net)  # the net is immutable; the engine holds the per-key markings
    prices = {"ACME": [100, 98, 97, 130, 95, 99, 90, 88, 87], "INIT": [50, 51, 49, 48, 47, 46, 45, 44, 60]}
    ts = 0
    for step in range(9):
        for symbol, series in prices.items():
            e = Event("stock", ts, ts, attrs={"symbol": symbol, "price": series[step]})
            for m in engine.push(e):
                print(m.to_dict())
            ts += 1
    for m in engine.flush():
        print(m.to_dict())
    print("matches per pattern:", engine.stats.matches)


if __name__ == "__main__":
    main()
