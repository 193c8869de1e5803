"""Issue 41: the pictures agree with each other — one colour per pattern in ``draw`` and
``plot``, the same state-place counts in ``check`` and ``draw``, legends not cut short, and
every pattern's window on a shared transition."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from petricep.api import compile_files, compile_text
from petricep.cli import main
from petricep.export.colors import PATTERN_COLORS, pattern_swatches
from petricep.export.dot import to_dot
from petricep.export.model import build_diagram

from .dotparse import parse, text_of

ROOT = Path(__file__).resolve().parents[2]
# eight patterns in one set: congestion, lasting_jam, slower_than_last_week, speed_collapse,
# shoplifting, repeat_theft, checkout, serial_abandoner
EIGHT = [
    *sorted(str(p) for p in (ROOT / "nets").glob("aarhus_*.pcep")),
    str(ROOT / "nets/shoplifting.pcep"),
    str(ROOT / "nets/abandoned_carts.pcep"),
]
# the patterns in the order their first match completed (not the net's order)
FIRST_MATCHES = [
    "serial_abandoner",
    "speed_collapse",
    "repeat_theft",
    "congestion",
    "checkout",
    "slower_than_last_week",
    "shoplifting",
    "lasting_jam",
]


def _legend_colors(dot: str) -> dict[str, str]:
    """Each pattern's swatch colour in a DOT legend."""
    return dict((name, color) for color, name in re.findall(r'<font color="(#\w+)">\u2588\u2588</font> <b>(\w+)</b>', dot))


def _hex(rgba: tuple[float, ...]) -> str:
    return "#" + "".join(f"{round(c * 255):02X}" for c in rgba[:3])


def _write_matches(path: Path, names: list[str]) -> Path:
    path.write_text("".join(json.dumps({"pattern": p, "start": i, "end": i + 1}) + "\n" for i, p in enumerate(names)))
    return path


def _plot_colors(fig: object) -> dict[str, str]:
    (top,) = fig.axes  # type: ignore[attr-defined]
    labels = [t.get_text().split(" (")[0] for t in top.get_legend().get_texts()]
    return {name: _hex(s.get_edgecolor()) for name, s in zip(labels, top.patches)}


def test_pattern_swatches_rank_names_naturally() -> None:
    looks = pattern_swatches(["p10", "b", "p2", "a", "b"])
    assert {n: s.fill for n, s in looks.items()} == {
        "a": PATTERN_COLORS[0],
        "b": PATTERN_COLORS[1],
        "p2": PATTERN_COLORS[2],
        "p10": PATTERN_COLORS[3],
    }


def test_plot_colours_every_pattern_as_draw_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    from petricep.export.timeline import timeline_figure

    dot = tmp_path / "net.dot"
    assert main(["draw", *EIGHT, "-o", str(dot)]) == 0
    drawn = _legend_colors(dot.read_text())
    assert drawn == {
        "checkout": PATTERN_COLORS[0],
        "congestion": PATTERN_COLORS[1],
        "lasting_jam": PATTERN_COLORS[2],
        "repeat_theft": PATTERN_COLORS[3],
        "serial_abandoner": PATTERN_COLORS[4],
        "shoplifting": PATTERN_COLORS[5],
        "slower_than_last_week": PATTERN_COLORS[6],
        "speed_collapse": PATTERN_COLORS[7],
    }
    # every pattern matched: the matches alone give draw's colours, whatever their order
    src = _write_matches(tmp_path / "m.jsonl", FIRST_MATCHES)
    plotted = _plot_colors(timeline_figure(src))
    assert list(plotted) == FIRST_MATCHES and plotted == drawn
    # two patterns without a match: the net's names keep every colour (API and CLI)
    some = _write_matches(tmp_path / "some.jsonl", FIRST_MATCHES[2:])
    names = [p.name for p in compile_files(EIGHT).patterns]
    assert _plot_colors(timeline_figure(some, patterns=names)) == {p: drawn[p] for p in FIRST_MATCHES[2:]}
    out = tmp_path / "t.svg"
    capsys.readouterr()
    assert main(["plot", str(some), "-o", str(out), "--net", *EIGHT]) == 0
    assert capsys.readouterr().out == f"{out}: the match timeline of {some}\n"
    svg = out.read_text().upper()
    assert [c for c in PATTERN_COLORS[:8] if c in svg] == [drawn[p] for p in sorted(FIRST_MATCHES[2:])]


def test_check_and_draw_count_the_same_places(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["check", *EIGHT]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "net before merging: 8 patterns, 9 input places, 17 state places, 17 transitions" in lines
    assert "net after merging: 8 shared nets, 9 input places, 17 state places, 17 transitions" in lines  # (readers of composite events in nets of their own)
    assert (
        "  congestion: 3 state places, 3 transitions; inputs traffic; window 15 min; partition [REPORT_ID]; "
        "partition-contiguity; returns Congestion"
    ) in lines
    dot = tmp_path / "net.dot"
    assert main(["draw", *EIGHT, "-o", str(dot)]) == 0
    assert capsys.readouterr().out == f"{dot}: merged net of 8 patterns, 9 input places, 17 state places, 17 transitions\n"
    # with sharing and a SQL query too: check's numbers are the diagram's nodes
    text = "PATTERN p1: SEQ(A a, B b, C c) WITHIN 10\nPATTERN p2: SEQ(A x, B y, D z) WITHIN 20\n"
    pcep = tmp_path / "many.pcep"
    pcep.write_text(text)
    files = [str(pcep), str(ROOT / "nets/stock_v_shape.sql")]
    assert main(["check", *files]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "net after merging: 2 shared nets, 5 input places, 9 state places, 12 transitions" in lines
    assert (
        "  v_shape: MATCH_RECOGNIZE, 5 state places, 8 transitions; rows of stock; window 1000; partition by symbol; "
        "one row per match; skip to last UP"
    ) in lines
    assert main(["draw", *files, "-o", str(dot)]) == 0
    assert capsys.readouterr().out == f"{dot}: merged net of 3 patterns, 5 input places, 9 state places, 12 transitions\n"


def test_the_legend_holds_every_summary_whole() -> None:
    net = compile_files(sorted((ROOT / "nets").glob("*.pcep")) + [ROOT / "nets/stock_v_shape.sql"])
    d = build_diagram(net)
    legend = text_of(parse(to_dot(net)).attrs["label"])
    assert "\u2026" not in legend and "..." not in legend
    flat = legend.replace("\n", " ")
    long = [e for e in d.legend if len(e.text) > 90]
    assert [e.pattern for e in long] == [
        "congestion",
        "lasting_jam",
        "speed_collapse",
        "checkout",
        "sase_kleene_min",
        "stop_and_go",
        "stall_recovery",
        "rising_trades",
    ]
    for e in d.legend:
        assert f"{e.pattern} {e.text}" in flat
    # wrapped at 90 characters, on word boundaries
    assert (
        "lasting_jam SEQ(Congestion first, !(traffic free), Congestion second) [REPORT_ID] where free.avgSpeed\n"
        "> 60 within 1 h\n"
    ) in legend


def test_a_shared_transition_shows_every_patterns_window() -> None:
    net = compile_text(
        "PATTERN fast: SEQ(A a, B b, C c) WHERE [k] WITHIN 15 min\n"
        "PATTERN slow: SEQ(A a, B b, D d) WHERE [k] WITHIN 1 h\n"
        "PATTERN slower: SEQ(A a, B b, E e) WHERE [k] WITHIN 1 h\n"
        "PATTERN open: SEQ(A a, F f) WHERE [k] WITHIN 1 h\n"
    )
    nodes = parse(to_dot(net)).all_nodes()
    labels = {n: text_of(a["label"]) for n, a in nodes.items() if n.startswith("g0.t")}
    assert labels == {
        "g0.t0": "A a\nwithin 15 min (fast), 1 h (slow, slower,\nopen)",  # wrapped at 40 characters
        "g0.t1": "B b\nwithin 15 min (fast), 1 h (slow, slower)",
        "g0.t2": "C c\nwithin 15 min",
        "g0.t3": "D d\nwithin 1 h",
        "g0.t4": "E e\nwithin 1 h",
        "g0.t5": "F f\nwithin 1 h",
    }
