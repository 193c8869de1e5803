"""``petricep draw --pattern NAME`` (one pattern's view) and ``petricep plot`` (the match
timeline), issue 18's pictures from the command line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from petricep.api import compile_files
from petricep.cli import main
from petricep.export.dot import to_dot

ROOT = Path(__file__).resolve().parents[2]
NETS = [str(ROOT / "nets/aarhus_congestion.pcep"), str(ROOT / "nets/shoplifting.pcep")]
MATCHES = (
    '{"pattern": "rise", "ids": {"a": 0, "b": 2}, "start": 1, "end": 3, "attrs": {"k": 1}}\n'
    '{"pattern": "fall", "ids": {"a": 1, "b": 4}, "start": 2, "end": 5, "attrs": {"k": 2}}\n'
)


def test_draw_one_pattern_writes_its_view(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "view.dot"
    assert main(["draw", *NETS, "-o", str(out), "--pattern", "lasting_jam"]) == 0
    assert capsys.readouterr().out == (
        f"{out}: merged net of 4 patterns, pattern 'lasting_jam' only: 2 input places, 2 state places, 2 transitions\n"
    )
    assert out.read_text() == to_dot(compile_files(NETS), pattern="lasting_jam")
    assert out.read_text() != to_dot(compile_files(NETS))


def test_draw_an_unknown_pattern_lists_the_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "view.dot"
    assert main(["draw", *NETS, "-o", str(out), "--pattern", "jam"]) == 2
    assert capsys.readouterr().err == (
        "no pattern named 'jam' in the net; its patterns: congestion, lasting_jam, shoplifting, repeat_theft\n"
    )
    assert not out.exists()


def test_draw_one_pattern_is_not_pnml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["draw", *NETS, "-o", str(tmp_path / "v.pnml"), "--pattern", "congestion"]) == 2
    assert capsys.readouterr().err == "one pattern's view is drawn as DOT, SVG or PNG, not PNML (a whole net)\n"


def test_plot_writes_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    (tmp_path / "m.jsonl").write_text(MATCHES)
    out = tmp_path / "timeline.png"
    assert main(["plot", str(tmp_path / "m.jsonl"), "-o", str(out), "--key", "k"]) == 0
    assert capsys.readouterr().out == f"{out}: the match timeline of {tmp_path / 'm.jsonl'}, per k\n"
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.jsonl", "timeline.png"]


def test_plot_without_matplotlib_names_the_extra_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "m.jsonl").write_text(MATCHES)
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    out = tmp_path / "timeline.png"
    assert main(["plot", str(tmp_path / "m.jsonl"), "-o", str(out)]) == 1
    assert capsys.readouterr().err == (
        "the match timeline needs matplotlib, which is not installed: install it with  pip install 'petricep[plot]'\n"
    )
    assert not out.exists()


def test_plot_refuses_an_unknown_image_format_and_bad_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.jsonl").write_text(MATCHES + "not json\n")
    assert main(["plot", str(tmp_path / "m.jsonl"), "-o", str(tmp_path / "t.gif")]) == 2
    assert capsys.readouterr().err == f"cannot tell the image format from {str(tmp_path / 't.gif')!r}: end it in .png, .svg, .pdf\n"
    pytest.importorskip("matplotlib")
    assert main(["plot", str(tmp_path / "m.jsonl"), "-o", str(tmp_path / "t.png")]) == 3
    assert capsys.readouterr().err == f"{tmp_path / 'm.jsonl'}:3: not a match (invalid JSON: Expecting value)\n"
    assert main(["plot", str(tmp_path / "m.jsonl"), "-o", str(tmp_path / "m.jsonl")]) == 2
    assert capsys.readouterr().err == (
        f"-o {tmp_path / 'm.jsonl'}: that is the matches file; write the output to another file\n"
    )
