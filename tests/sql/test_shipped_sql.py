"""The shipped SQL file over the shipped stock stream agrees with the brute-force reference."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from petricep.cli import main
from tests.sql import row_reference as R

ROOT = Path(__file__).resolve().parents[2]


def test_stock_v_shape_matches_the_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "v.jsonl"
    args = ["run", str(ROOT / "nets/stock_v_shape.sql"), "--events", str(ROOT / "examples/data/stocks.csv")]
    assert main([*args, "--type", "stock", "--time-field", "ts", "--id-field", "id", "-o", str(out)]) == 0
    capsys.readouterr()
    got = [json.loads(line) for line in out.read_text().splitlines()]

    with open(ROOT / "examples/data/stocks.csv", newline="") as fh:
        rows = [{"id": int(r["id"]), "ts": int(r["ts"]), "symbol": r["symbol"], "price": int(r["price"])} for r in csv.DictReader(fh)]
    by_symbol: dict[str, list[dict[str, int | str]]] = {}
    for r in rows:
        by_symbol.setdefault(str(r["symbol"]), []).append(r)

    def down(prow: list[R.Row], mp: R.Mapping) -> bool:
        i = mp[-1][0]
        return i > 0 and prow[i]["price"] < prow[i - 1]["price"]

    def up(prow: list[R.Row], mp: R.Mapping) -> bool:
        i = mp[-1][0]
        return i > 0 and prow[i]["price"] > prow[i - 1]["price"]

    plus = lambda v: ("quant", ("var", v), 1, None, True)  # noqa: E731
    q = R.Query(("seq", [("var", "STRT"), plus("DOWN"), plus("UP")]), {"DOWN": down, "UP": up}, ("last", "UP"), 1000, {"DOWN", "UP"})
    expected = []
    for prow in by_symbol.values():
        for _, mp in R.partition_matches(q, prow):
            downs = [prow[i]["price"] for i, v in mp if v == "DOWN"]
            ups = [prow[i]["price"] for i, v in mp if v == "UP"]
            expected.append(
                {
                    "ids": {
                        "STRT": prow[mp[0][0]]["id"],
                        "DOWN": [prow[i]["id"] for i, v in mp if v == "DOWN"],
                        "UP": [prow[i]["id"] for i, v in mp if v == "UP"],
                    },
                    "attrs": {"symbol": prow[0]["symbol"], "top": prow[mp[0][0]]["price"], "bottom": downs[-1], "recovered": ups[-1], "falling": len(downs)},
                }
            )
    key = lambda m: json.dumps(m["ids"], sort_keys=True)  # noqa: E731
    assert len(expected) == 6573
    assert sorted(({"ids": m["ids"], "attrs": m["attrs"]} for m in got), key=key) == sorted(expected, key=key)
