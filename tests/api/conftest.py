"""The CLI's output for the shipped examples, computed once per session (each run starts an
interpreter)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from .helpers import ROOT, STOCKS, cli_run


@pytest.fixture(scope="session")
def stocks_head(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 5,000 rows of the shipped stock stream."""
    p = tmp_path_factory.mktemp("stocks") / "stocks_5000.csv"
    pd.read_csv(STOCKS).iloc[:5000].to_csv(p, index=False)
    return p


@pytest.fixture(scope="session")
def cli_equal_price(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """``petricep run nets/sase_equal_price.pcep`` over ``examples/data/stocks.csv`` (the README's command)."""
    return cli_run(tmp_path_factory.mktemp("cli"), [ROOT / "nets/sase_equal_price.pcep"], STOCKS,
                   "--type-field", "type", "--time-field", "ts", "--id-field", "id")


@pytest.fixture(scope="session")
def cli_v_shape(tmp_path_factory: pytest.TempPathFactory, stocks_head: Path) -> bytes:
    """``petricep run nets/stock_v_shape.sql`` over the first 5,000 stock events."""
    return cli_run(tmp_path_factory.mktemp("cli"), [ROOT / "nets/stock_v_shape.sql"], stocks_head,
                   "--type", "stock", "--time-field", "ts", "--id-field", "id")
