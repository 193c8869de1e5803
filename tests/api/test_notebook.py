"""``examples/notebook.ipynb`` runs top to bottom in a fresh kernel (nbclient) and shows a
net inline and a matches DataFrame; ``examples/pandas_quickstart.py`` prints what its
comments promise."""

from __future__ import annotations

import re
import runpy
import shutil

import pandas as pd
import pytest

from petricep.api.frames import match

from .helpers import ROOT, STOCKS

PATTERNS = """
PATTERN rebound: SEQ(stock a, stock b, stock c)
WHERE [symbol] AND skip-till-next-match
AND b.price < a.price - 60 AND c.price > a.price
WITHIN 20 s
RETURN Rebound(symbol = a.symbol, dip = a.price - b.price)

PATTERN restless: SEQ(Rebound r1, Rebound r2, Rebound r3)
WHERE [symbol] AND skip-till-next-match
WITHIN 1 min
"""


@pytest.fixture(scope="module")
def trades() -> pd.DataFrame:
    df = pd.read_csv(STOCKS).iloc[:2000]
    df["time"] = pd.Timestamp("2024-01-02 09:30") + pd.to_timedelta(df["ts"], unit="s")
    return df


def test_quickstart_prints_counts_matches_and_events(capsys: pytest.CaptureFixture[str], trades: pd.DataFrame) -> None:
    runpy.run_path(str(ROOT / "examples/pandas_quickstart.py"), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    want = match(trades, PATTERNS, type="stock", time_field="time", id_field="id")
    assert out[0] == "{'rebound': 214, 'restless': 138}"
    assert out[0] == str(want["pattern"].value_counts().to_dict())
    assert out[1].split() == ["pattern", "a", "b", "c", "r1", "r2", "r3", "start", "end", "symbol", "dip"]
    assert out[2].split() == ["0", "rebound", "17", "26", "33", "None", "None", "None", "2024-01-02", "09:30:17",
                              "2024-01-02", "09:30:33", "S3", "69"]
    first = want.iloc[0]
    prices = trades.set_index("id")["price"]
    assert out[-1] == f"{prices[first['a']]} {prices[first['b']]} {prices[first['c']]}" == "72 3 91"


def test_notebook_executes_and_shows_net_and_matches(trades: pd.DataFrame) -> None:
    for mod in ("nbclient", "nbformat", "ipykernel"):
        pytest.importorskip(mod, reason=f"{mod} is needed to execute the example notebook (pip install nbclient nbformat ipykernel)")
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "examples/notebook.ipynb", as_version=4)
    NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "examples")}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(o.output_type != "error" for c in code for o in c.outputs)
    net_out = code[1].outputs[0]["data"]
    if shutil.which("dot"):
        assert net_out["image/svg+xml"].lstrip().startswith(("<?xml", "<svg"))
        assert "rebound" in net_out["image/svg+xml"] and "restless" in net_out["image/svg+xml"]
    want = match(trades, PATTERNS, type="stock", time_field="time", id_field="id")
    html = code[2].outputs[0]["data"]["text/html"]
    assert html.count("<tr") == 1 + 5 and "2024-01-02 09:30:17" in html
    assert code[3].outputs[0]["data"]["text/plain"] == str(want.groupby("pattern").size())
    rows = [line.split() for line in code[4].outputs[0]["data"]["text/plain"].splitlines()]
    assert rows[0] == ["id", "ts", "type", "symbol", "price", "volume", "time"]
    first = want.iloc[0]
    by_id = trades.set_index("id")
    for var, row in zip("abc", rows[1:]):
        ev = by_id.loc[first[var]]
        assert row == [var, str(first[var]), str(ev["ts"]), ev["type"], ev["symbol"], str(ev["price"]),
                       str(ev["volume"]), *str(ev["time"]).split()]


def test_readme_example_prints_what_the_readme_shows(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## From pandas and Arrow"):]
    found = re.search(r"```python\n(.*?)```\n\n```\n(.*?)```", section, re.DOTALL)
    assert found is not None
    code, shown = found.groups()
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out == shown
