"""The shipped examples and pattern library work as the README says."""

from __future__ import annotations

import csv
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from petricep.api import compile_files

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("path", sorted(ROOT.joinpath("nets").glob("*.pcep")), ids=lambda p: p.name)
def test_every_net_compiles(path: Path) -> None:
    net = compile_files([path])
    assert net.patterns
    for p in net.patterns:
        assert any(pl.accepting for pl in p.places)


def test_embedding_example(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(ROOT / "examples/embed.py"), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "{'pattern': 'dip', 'ids': {'a': 0, 'b': 2, 'c': 4}, 'start': 0, 'end': 4, 'attrs': {'symbol': 'ACME', 'drop': 3}}"
    assert "{'pattern': 'double_dip', 'ids': {'d1': 'dip[3,5,7]', 'd2': 'dip[5,7,9]'}, 'start': 7, 'end': 9, 'attrs': {}}" in out
    assert out[-1] == "matches per pattern: {'dip': 8, 'double_dip': 6}"


def test_stock_generator_is_deterministic_and_sase_shaped(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for out in (a, b):
        subprocess.run(
            [sys.executable, str(ROOT / "examples/generate_stocks.py"), "--events", "500", "--symbols", "4",
             "--max-price", "10", "--seed", "3", "-o", str(out)],
            check=True,
        )
    assert a.read_bytes() == b.read_bytes()
    rows = list(csv.DictReader(a.open()))
    assert len(rows) == 500
    assert [int(r["ts"]) for r in rows] == list(range(500))
    assert {r["type"] for r in rows} == {"stock1", "stock2", "stock3", "stock4"}
    assert all(1 <= int(r["price"]) <= 10 and 1 <= int(r["volume"]) <= 1000 for r in rows)


def test_shipped_sample_matches_generator() -> None:
    sample = ROOT / "examples/data/stocks.csv"
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples/generate_stocks.py"), "--events", "20000", "--symbols", "3",
         "--max-price", "100", "--seed", "7"],
        check=True, capture_output=True,
    ).stdout
    assert out == sample.read_bytes()


def test_readme_event_time_example_is_the_shipped_net(tmp_path: Path) -> None:
    """docs/CLI.md's abandoned-carts block is nets/abandoned_carts.pcep, and it runs as described."""
    from petricep.cli import main

    text = (ROOT / "nets/abandoned_carts.pcep").read_text()
    readme = (ROOT / "docs" / "CLI.md").read_text()
    assert text in readme
    events = tmp_path / "shop.csv"
    rows = ["type,ts,user,item"]
    # u1 abandons three carts in a day (one paid in between); u2 pays; times in seconds
    for ts, kind, user, item in [
        (0, "AddToCart", "u1", "book"), (100, "AddToCart", "u2", "pen"), (200, "Payment", "u2", ""),
        (4000, "AddToCart", "u1", "lamp"), (5000, "Payment", "u1", ""), (9000, "AddToCart", "u1", "mug"),
        (20000, "AddToCart", "u1", "hat"), (30000, "AddToCart", "u3", "cup"),
    ]:
        rows.append(f"{kind},{ts},{user},{item}")
    events.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out.jsonl"
    rc = main(["run", str(ROOT / "nets/abandoned_carts.pcep"), "--events", str(events), "--type-field", "type",
               "--time-field", "ts", "-o", str(out)])
    assert rc == 0
    import json

    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(m["pattern"], m["ids"], m["attrs"]) for m in lines] == [
        ("checkout", {"a": 1, "p": 2}, {}),
        ("checkout", {"a": 0}, {"user": "u1", "item": "book"}),  # closed by lamp@4000 > 0 + 1800
        ("checkout", {"a": 3, "p": 4}, {}),
        ("checkout", {"a": 5}, {"user": "u1", "item": "mug"}),  # closed by hat@20000
        ("checkout", {"a": 6}, {"user": "u1", "item": "hat"}),  # closed by cup@30000
        ("serial_abandoner", {"x": "checkout@timeout[0]", "y": "checkout@timeout[5]", "z": "checkout@timeout[6]"}, {}),
        ("checkout", {"a": 7}, {"user": "u3", "item": "cup"}),  # the stream ended
    ]
