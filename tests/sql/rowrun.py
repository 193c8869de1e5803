"""Running SQL MATCH_RECOGNIZE text over inline rows, for the tests."""

from __future__ import annotations

from typing import Any

from petricep.api import compile_sql
from petricep.events import Event
from petricep.runtime.engine import Engine


def events(rows: list[dict[str, Any]], type_: str = "Ticker") -> list[Event]:
    """Rows in stream order; ts = 1-based row number, id = 0-based position."""
    return [Event(type_, i + 1, i, None, dict(r)) for i, r in enumerate(rows)]


def run_sql(text: str, rows: list[dict[str, Any]], type_: str = "Ticker") -> list[dict[str, Any]]:
    engine = Engine(compile_sql(text))
    return [m.to_dict() for m in engine.run(events(rows, type_))]


def ticker(symbol: str, day_prices: list[int], fmt: str = "{:02d}-Apr-11") -> list[dict[str, Any]]:
    """Oracle's Ticker rows: one per day from the 1st."""
    return [{"symbol": symbol, "tstamp": fmt.format(i + 1), "price": p} for i, p in enumerate(day_prices)]
