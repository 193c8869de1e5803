"""The match timeline: what it reads (JSON Lines, a pandas DataFrame, Match objects), what
it draws (per pattern over time, per key), its errors, and the typed error without
matplotlib (simulated)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from petricep.api import compile_text
from petricep.errors import ConfigError, DataError, PetricepError
from petricep.events import Event
from petricep.export.colors import PATTERN_COLORS
from petricep.export.timeline import PlotUnavailable, Timeline, bin_text, choose_bin, load, timeline
from petricep.runtime import Engine

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
T0 = 1406879400  # 2014-08-01 07:50 UTC, as the Aarhus run's matches

RECORDS = [
    {"pattern": "congestion", "ids": {"a": 1}, "start": T0, "end": T0 + 600, "attrs": {"REPORT_ID": 7}},
    {"pattern": "congestion", "ids": {"a": 2}, "start": T0 + 60, "end": T0 + 900, "attrs": {"REPORT_ID": 8}},
    {"pattern": "lasting_jam", "ids": {"f": "c[1]"}, "start": T0 + 900, "end": T0 + 3600, "attrs": {}},
    {"pattern": "congestion", "ids": {"a": 3}, "start": T0, "end": T0 + 7200, "attrs": {"REPORT_ID": 7}},
    # a timeout is a partial match, not a match
    {"pattern": "congestion", "ids": {"a": 4}, "start": T0, "end": T0 + 100, "timeout": {"type": "X"}},
]


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_reads_jsonl_without_timeouts(tmp_path: Path) -> None:
    data = load(write_jsonl(tmp_path / "m.jsonl", RECORDS), key="REPORT_ID")
    assert data == Timeline(
        ["congestion", "congestion", "lasting_jam", "congestion"],
        [T0, T0 + 60, T0 + 900, T0],
        [T0 + 600, T0 + 900, T0 + 3600, T0 + 7200],
        [7, 8, None, 7],
        True,  # epoch seconds: drawn as dates
    )


def test_iso_times_read_as_dates(tmp_path: Path) -> None:
    """``run`` writes start/end in the input's format: ISO text for ISO input (naive: UTC)."""
    rows: list[dict[str, object]] = [
        {"pattern": "rise", "start": "2014-08-01T07:50:00", "end": "2014-08-01T07:51:00"},
        {"pattern": "rise", "start": "2014-08-01T07:50:00Z", "end": "2014-08-01T09:55:00+02:00"},
    ]
    data = load(write_jsonl(tmp_path / "iso.jsonl", rows))
    t0 = 1406879400.0  # 2014-08-01T07:50:00Z
    assert data == Timeline(["rise", "rise"], [t0, t0], [t0 + 60, t0 + 300], [None, None], True)


def test_all_rows_per_match_counts_each_match_once(tmp_path: Path) -> None:
    rows = [
        {"pattern": "MR", "ids": {"A": 1, "B": [2]}, "start": 1, "end": 3, "row": 1},
        {"pattern": "MR", "ids": {"A": 1, "B": [2]}, "start": 1, "end": 3, "row": 2},
        {"pattern": "MR", "ids": {"A": 4, "B": [5]}, "start": 4, "end": 6, "row": 4},
    ]
    data = load(write_jsonl(tmp_path / "rows.jsonl", rows))
    assert (data.patterns, data.end, data.dates) == (["MR", "MR"], [3.0, 6.0], False)


def test_dataframe_with_datetimes_equals_the_jsonl(tmp_path: Path) -> None:
    jsonl = load(write_jsonl(tmp_path / "m.jsonl", RECORDS), key="REPORT_ID")
    df = pd.DataFrame(
        {
            "pattern": ["congestion", "congestion", "lasting_jam", "congestion"],
            "start": pd.to_datetime([T0, T0 + 60, T0 + 900, T0], unit="s"),
            "end": pd.to_datetime([T0 + 600, T0 + 900, T0 + 3600, T0 + 7200], unit="s"),
            "REPORT_ID": [7, 8, None, 7],
        }
    )
    frame = load(df, key="REPORT_ID")
    assert frame.patterns == jsonl.patterns and frame.start == jsonl.start and frame.end == jsonl.end
    assert frame.dates and frame.keys == [7.0, 8.0, None, 7.0]  # pandas made the column float
    # epoch milliseconds read as dates too (in seconds)
    ms = load(pd.DataFrame({"pattern": ["p"], "start": [T0 * 1000], "end": [T0 * 1000 + 500]}))
    assert (ms.start, ms.end, ms.dates) == ([T0], [T0 + 0.5], True)
    # small numbers are timestamps in their own units
    plain = load(pd.DataFrame({"pattern": ["p", "q"], "end": [3, 10]}))
    assert (plain.start, plain.end, plain.dates) == ([3.0, 10.0], [3.0, 10.0], False)


def test_match_objects_from_an_engine() -> None:
    engine = Engine(compile_text("PATTERN q: SEQ(A a, B b) WHERE [k] WITHIN 10 RETURN R(k = a.k)"))
    out = []
    for i, (t, ts) in enumerate([("A", 1), ("B", 4), ("A", 5), ("B", 9)]):
        out += engine.push(Event(t, ts, i, attrs={"k": i // 2}))
    out += engine.flush()
    data = load(out, key="k")
    assert (data.patterns, data.start, data.end, data.keys, data.dates) == (
        ["q", "q"],
        [1.0, 5.0],
        [4.0, 9.0],
        [0, 1],  # the RETURN attribute k
        False,
    )


def test_bins() -> None:
    assert choose_bin(14 * 86400, True) == 3 * 3600  # two weeks: 3 h (112 bins)
    assert choose_bin(3600, True) == 30.0
    assert choose_bin(1000, False) == 10.0 and choose_bin(0.5, False) == 0.005
    assert [bin_text(w, True) for w in (30, 900, 10800, 86400, 604800, 90)] == [
        "30 s",
        "15 min",
        "3 h",
        "1 d",
        "1 w",
        "90 s",
    ]
    assert bin_text(2.5, False) == "2.5"


def test_writes_a_png_with_both_panels(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from petricep.export.timeline import timeline_figure

    src = write_jsonl(tmp_path / "m.jsonl", RECORDS)
    out = timeline(src, tmp_path / "t.png", key="REPORT_ID")
    assert out == tmp_path / "t.png" and out.read_bytes().startswith(PNG_MAGIC)
    fig = timeline_figure(src, key="REPORT_ID", bin_width=3600)
    top, keys = fig.axes
    assert fig.get_suptitle() == "4 matches of 2 pattern(s) in m.jsonl"
    assert top.get_ylabel() == "matches per 1 h"
    assert [t.get_text() for t in top.get_legend().get_texts()] == ["congestion (3)", "lasting_jam (1)"]
    stairs = [p for p in top.patches]
    assert [list(s.get_data().values) for s in stairs] == [[2, 1], [1, 0]]  # 08:00-09:00, 09:00-10:00 UTC
    assert [s.get_edgecolor()[:3] for s in stairs] == [_rgb(PATTERN_COLORS[0]), _rgb(PATTERN_COLORS[1])]
    assert keys.get_title(loc="left") == "matches per REPORT_ID (2 keys; 1 match without REPORT_ID not shown)"
    assert [t.get_text() for t in keys.get_yticklabels()] == ["7", "8"]  # most matches first
    (_, keys) = timeline_figure(src, key="REPORT_ID", top_keys=1).axes
    assert keys.get_title(loc="left") == (
        "matches per REPORT_ID (2 keys, the 1 with most matches; 1 match without REPORT_ID not shown)"
    )
    assert [t.get_text() for t in keys.get_yticklabels()] == ["7"]
    # no key: one panel; the patterns' order (and colours) as given
    fig = timeline_figure(src, patterns=["lasting_jam", "congestion"], title="Aarhus")
    (top,) = fig.axes
    assert fig.get_suptitle() == "Aarhus"
    assert [t.get_text() for t in top.get_legend().get_texts()] == ["lasting_jam (1)", "congestion (3)"]
    assert timeline(pd.DataFrame({"pattern": [], "end": []}), tmp_path / "e.svg").read_text().startswith("<?xml")


def _rgb(color: str) -> tuple[float, ...]:
    return tuple(np.array([int(color[i : i + 2], 16) for i in (1, 3, 5)]) / 255)


def test_errors_name_the_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pattern": "p", "end": 1}\n{"pattern": "p", "end": \n')
    err: pytest.ExceptionInfo[PetricepError]  # a DataError, then ConfigErrors
    with pytest.raises(DataError) as err:
        load(bad)
    assert str(err.value) == f"{bad}:2: not a match (invalid JSON: Expecting value)"
    bad.write_text('{"pattern": "p", "start": 1}\n')
    with pytest.raises(DataError) as err:
        load(bad)
    assert str(err.value) == f"{bad}:1: a match needs 'pattern' and 'end' (it has: pattern, start)"
    bad.write_text('{"pattern": "p", "end": "noon"}\n')
    with pytest.raises(DataError) as err:
        load(bad)
    assert str(err.value) == f"{bad}:1: field 'end' or 'start' is neither a number nor an ISO-8601 date-time: 'noon'"
    with pytest.raises(DataError) as err:
        load(tmp_path / "none.jsonl")
    assert str(err.value) == f"cannot open {tmp_path / 'none.jsonl'}: No such file or directory"
    with pytest.raises(ConfigError) as err:
        load(pd.DataFrame({"pattern": ["p"], "stop": [1]}))
    assert str(err.value) == "the matches DataFrame needs the column(s) end; it has: pattern, stop"
    with pytest.raises(ConfigError) as err:
        load(pd.DataFrame({"pattern": ["p"], "end": [1]}), key="sensor")
    assert str(err.value) == "no column 'sensor' in the matches DataFrame; it has: pattern, end"
    with pytest.raises(ConfigError) as err:
        load(pd.DataFrame({"pattern": ["p"], "end": [5]}), dates=True)
    assert str(err.value) == "the match times (5 .. 5) do not read as epoch seconds or milliseconds"
    with pytest.raises(ConfigError) as err:
        timeline(bad, tmp_path / "t.jpg")
    assert str(err.value) == f"cannot tell the image format from '{tmp_path / 't.jpg'}': end it in .png, .svg, .pdf"


def test_without_matplotlib_a_typed_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    src = write_jsonl(tmp_path / "m.jsonl", RECORDS)
    with pytest.raises(PlotUnavailable) as err:
        timeline(src, tmp_path / "t.png")
    assert isinstance(err.value, ConfigError)
    assert str(err.value) == (
        "the match timeline needs matplotlib, which is not installed: install it with  pip install 'petricep[plot]'"
    )
    assert not (tmp_path / "t.png").exists()
