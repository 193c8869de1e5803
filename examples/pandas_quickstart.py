"""petricep from pandas: a DataFrame of events in, a DataFrame of matches out.

    python examples/pandas_quickstart.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import petricep

DATA = Path(__file__).resolve().parent / "data" / "stocks.csv"

PATTERNS = """
# a dip and a rebound: per symbol, a trade more than 60 below a first one, then one
# above the first, all within 20 seconds
PATTERN rebound: SEQ(stock a, stock b, stock c)
WHERE [symbol] AND skip-till-next-match
AND b.price < a.price - 60 AND c.price > a.price
WITHIN 20 s
RETURN Rebound(symbol = a.symbol, dip = a.price - b.price)

# three rebounds of one symbol within a minute (reads the Rebound events above)
PATTERN restless: SEQ(Rebound r1, Rebound r2, Rebound r3)
WHERE [symbol] AND skip-till-next-match
WITHIN 1 min
"""


def main() -> None:
    trades = pd.read_csv(DATA).iloc[:2000]
    # a real time column: one trade a second from the opening bell
    trades["time"] = pd.Timestamp("2024-01-02 09:30") + pd.to_timedelta(trades["ts"], unit="s")

    matches = petricep.match(trades, PATTERNS, type="stock", time_field="time", id_field="id")
    print(matches["pattern"].value_counts().to_dict())
    print(matches.head(3).to_string())

    # each match joined to its events' rows: one struct (a dict) per variable
    rich = petricep.match(trades, PATTERNS, type="stock", time_field="time", id_field="id", with_events=True)
    first = rich.iloc[0]
    print(first["events.a"]["price"], first["events.b"]["price"], first["events.c"]["price"])


if __name__ == "__main__":
    main()
