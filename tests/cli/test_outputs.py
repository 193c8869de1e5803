"""Output safety of ``petricep run`` / ``draw`` (issue 15): an output naming an input is
refused, outputs are replaced whole or not at all, write errors are one message, and every
line is RFC 8259 JSON (non-finite numbers as null)."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from petricep.cli import main
from petricep.io.output import OutputFile, json_line
from tests.cli.rise import EVENTS, RISE, ROOT, opts, run
from tests.cli.rise import LINES as MATCHES


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize(
    "option,target,what",
    [
        ("-o", "events", "the events file"),
        ("-o", "pattern", "a pattern file"),
        ("--stats", "events", "the events file"),
        ("--stats", "pattern", "a pattern file"),
    ],
)
def test_an_output_naming_an_input_is_refused_and_the_input_kept(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], option: str, target: str, what: str
) -> None:
    pattern, events = files
    path = events if target == "events" else pattern
    before = Path(path).read_bytes()
    rc, out, err = run(capsys, pattern, *opts(events), option, path)
    assert (rc, out) == (2, "")
    assert err == f"{option} {path}: that is {what}; write the output to another file\n"
    assert Path(path).read_bytes() == before


def test_an_input_reached_through_another_path_is_refused(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pattern, events = files
    link = tmp_path / "link.csv"
    link.symlink_to(events)
    other = str(tmp_path / "sub" / ".." / "ev.csv")
    (tmp_path / "sub").mkdir()
    for path in (str(link), other):
        rc, _, err = run(capsys, pattern, *opts(events), "-o", path)
        assert rc == 2 and err == f"-o {path}: that is the events file; write the output to another file\n"
    assert Path(events).read_text() == EVENTS


def test_rejects_naming_the_events_file_and_two_outputs_naming_one_file(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pattern, events = files
    rc, _, err = run(capsys, pattern, *opts(events), "--on-error", "skip", "--rejects", events)
    assert rc == 2 and err == f"--rejects {events}: that is the events file; write the output to another file\n"
    same = str(tmp_path / "out.jsonl")
    rc, _, err = run(capsys, pattern, *opts(events), "-o", same, "--stats", same)
    assert rc == 2 and err == f"-o and --stats name the same file {same}\n"
    assert not (tmp_path / "out.jsonl").exists()


def test_draw_refuses_to_overwrite_a_pattern_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern = tmp_path / "net.dot"  # a pattern file whose name looks like a diagram
    pattern.write_text(RISE)
    assert main(["draw", str(pattern), "-o", str(pattern)]) == 2
    assert capsys.readouterr().err == f"-o {pattern}: that is a pattern file; write the output to another file\n"
    assert pattern.read_text() == RISE


def test_a_failed_run_leaves_the_previous_outputs_as_they_were(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern = tmp_path / "p.pcep"
    pattern.write_text("PATTERN p: A a RETURN T(v = a.s)\nPATTERN q: T t WHERE t.v < 5\n")
    events = tmp_path / "ev.jsonl"
    events.write_text('{"t":"A","ts":4,"s":1}\n{"t":"A","ts":5,"s":"x"}\n{"t":"A","ts":9,"s":3}\n{"t":"A","ts":9,"s":"two"}\n')
    out, stats, rejects = tmp_path / "m.jsonl", tmp_path / "s.json", tmp_path / "r.jsonl"
    for f in (out, stats, rejects):
        f.write_text("the good result of an earlier run\n")
    rc, _, err = run(
        capsys, str(pattern), "--events", str(events), "--type-field", "t", "--time-field", "ts",
        "--on-error", "skip", "--rejects", str(rejects), "-o", str(out), "--stats", str(stats),
    )  # fmt: skip
    assert rc == 3
    assert err == f"{events}: event at position 1 (id 1): cannot compare 'x' < 5\n"
    for f in (out, stats, rejects):
        assert f.read_text() == "the good result of an earlier run\n"
    assert leftovers(tmp_path) == []


def test_outputs_replace_old_files_whole_and_keep_their_permissions(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pattern, events = files
    out = tmp_path / "m.jsonl"
    out.write_text("old\n" * 1000)
    out.chmod(0o640)
    rc, _, _ = run(capsys, pattern, *opts(events), "-o", str(out), "--stats", str(tmp_path / "s.json"))
    assert rc == 0
    assert out.read_text() == MATCHES
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert json.loads((tmp_path / "s.json").read_text())["events"]["read"] == 5
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "target,reason",
    [("missing/m.jsonl", "No such file or directory"), ("ev.csv/m.jsonl", "Not a directory"), (".", "Is a directory")],
)
def test_an_unwritable_output_is_one_message(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, reason: str
) -> None:
    pattern, events = files
    path = str(tmp_path / target)
    for option in ("-o", "--stats"):
        rc, out, err = run(capsys, pattern, *opts(events), option, path)
        assert (rc, out) == (1, "")
        assert err == f"cannot write {path}: {reason}\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("option", ["-o", "--stats"])
def test_a_full_disk_is_one_message_exit_1(files: tuple[str, str], option: str) -> None:
    pattern, events = files
    proc = subprocess.run(
        [sys.executable, "-m", "petricep", "run", pattern, *opts(events), option, "/dev/full"],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == "cannot write /dev/full: No space left on device"
    assert "Traceback" not in proc.stderr


def test_non_finite_numbers_are_written_as_null(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern = tmp_path / "p.pcep"
    pattern.write_text("PATTERN p: SEQ(A a, B b) WITHIN 10 RETURN T(d = a.x + b.x, n = (a.x + b.x) - (a.x + b.x), f = b.x)\n")
    events = tmp_path / "ev.csv"
    events.write_text("type,ts,x\nA,1,1e308\nB,2,1e308\n")
    rc, out, _ = run(capsys, str(pattern), *opts(str(events)))
    assert rc == 0
    assert out == '{"pattern": "p", "ids": {"a": 0, "b": 1}, "start": 1, "end": 2, "attrs": {"d": null, "n": null, "f": 1e+308}}\n'
    json.loads(out, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))


def test_json_line_of_numpy_and_non_finite_values() -> None:
    import numpy as np

    rec = {"i": np.int64(3), "f": np.float64("inf"), "l": [float("nan"), 1.5], "t": (1, -float("inf"))}
    assert json_line(rec) == '{"i": 3, "f": null, "l": [null, 1.5], "t": [1, null]}'


def test_output_file_commit_discard_and_direct_targets(tmp_path: Path) -> None:
    target = tmp_path / "o.txt"
    target.write_text("old")
    f = OutputFile(str(target))
    f.write("new")
    assert target.read_text() == "old" and leftovers(tmp_path) == [Path(f.temp).name]
    assert re.fullmatch(r"\.o\.txt\.[0-9a-f]{8}\.tmp", Path(f.temp).name)
    f.discard()
    assert target.read_text() == "old" and leftovers(tmp_path) == []
    with OutputFile(str(target)) as g:
        g.write("new")
        g.commit()
    assert target.read_text() == "new" and leftovers(tmp_path) == []
    assert OutputFile("/dev/null").temp == "/dev/null"  # not a regular file: written in place


def test_archive_rejects_are_refused_over_the_events_and_renamed_into_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "ev.csv"
    events.write_text("type,ts,x\nA,1,1\nA,oops,2\nA,3,3\n")
    base = ["archive", "--events", str(events), "--type-field", "type", "--time-field", "ts", "--on-error", "skip"]
    assert main([*base, "--to", str(tmp_path / "arch"), "--rejects", str(events)]) == 2
    assert capsys.readouterr().err == f"--rejects {events}: that is the events file; write the output to another file\n"
    rejects = tmp_path / "bad.jsonl"
    assert main([*base, "--to", str(tmp_path / "arch"), "--rejects", str(rejects)]) == 3
    assert [json.loads(line)["row"] for line in rejects.read_text().splitlines()] == [3]
    assert leftovers(tmp_path) == []


def test_an_output_through_a_link_replaces_the_file_it_points_to(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    with OutputFile(str(link)) as f:
        f.write("new\n")
        f.commit()
    assert link.is_symlink() and real.read_text() == "new\n" and leftovers(tmp_path) == []
