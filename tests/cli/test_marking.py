"""A run's marking on its net (issue 18): ``run --stats`` writes the per-place and
per-transition counts, ``draw --stats`` colours the net by them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from petricep import kernel
from petricep.cli import main
from tests.cli.rise import opts, run

NET_SECTION = {
    "places": {"g0.p1": {"created": 2, "peak": 2}, "g0.p2": {"created": 2, "peak": 0}},
    "transitions": {"g0.t0": 2, "g0.t1": 2, "emit.rise": 2},
}


def test_run_stats_hold_the_marking(files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The Python engine counts the marking (the kernel, the default engine, does not)."""
    pattern, events = files
    stats = tmp_path / "run.json"
    assert run(capsys, pattern, *opts(events), "--stats", str(stats), "--no-progress", "--engine", "python")[0] == 0
    assert json.loads(stats.read_text())["net"] == NET_SECTION


@pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built or switched off")
def test_stats_of_a_kernel_run_say_how_to_get_the_marking(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pattern, events = files
    stats = tmp_path / "run.json"
    assert run(capsys, pattern, *opts(events), "--stats", str(stats), "--no-progress")[0] == 0
    report = json.loads(stats.read_text())
    assert report["engine"] == {"name": "kernel", "why": "covered"} and "net" not in report
    assert main(["draw", pattern, "-o", str(tmp_path / "x.dot"), "--stats", str(stats)]) == 2
    assert capsys.readouterr().err == (
        "the run's statistics have no per-place and per-transition counts (a \"net\" section with \"places\" and "
        "\"transitions\"): the run was on the compiled kernel, which counts none: run with --engine python --stats FILE\n"
    )


def test_draw_colours_the_net_by_the_run(files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = files
    stats = tmp_path / "run.json"
    run(capsys, pattern, *opts(events), "--stats", str(stats), "--no-progress", "--engine", "python")
    out = tmp_path / "m.dot"
    assert main(["draw", pattern, "-o", str(out), "--stats", str(stats)]) == 0
    dot = out.read_text()
    assert "partial matches alive at their peak" in dot
    assert "created 2, peak 2" in dot and "fired 2" in dot
    assert main(["draw", pattern, "-o", str(out), "--stats", str(stats), "--measure", "created"]) == 0
    assert "partial matches created" in out.read_text()
    if shutil.which("dot"):
        assert main(["draw", pattern, "-o", str(tmp_path / "m.png"), "--stats", str(stats), "--pattern", "rise"]) == 0
        assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"


def test_stats_of_another_net_or_no_marking_are_refused(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pattern, _ = files
    other = tmp_path / "other.pcep"
    other.write_text("PATTERN other: SEQ(C c, D d) WITHIN 3\n")
    stats = tmp_path / "run.json"
    stats.write_text(json.dumps({"net": NET_SECTION}))
    capsys.readouterr()
    assert main(["draw", str(other), "-o", str(tmp_path / "x.dot"), "--stats", str(stats)]) == 2
    assert capsys.readouterr().err == (
        "the run's statistics do not fit this net: it has no such place or transition: emit.rise\n"
    )
    stats.write_text(json.dumps({"events": {}}))
    assert main(["draw", pattern, "-o", str(tmp_path / "x.dot"), "--stats", str(stats)]) == 2
    assert capsys.readouterr().err.startswith("the run's statistics have no per-place and per-transition counts")
    stats.write_text("{")
    assert main(["draw", pattern, "-o", str(tmp_path / "x.dot"), "--stats", str(stats)]) == 3
    assert capsys.readouterr().err == f"{stats}:1: not a statistics file (invalid JSON: Expecting property name enclosed in double quotes)\n"
