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
from petricep.output.files import OutputFile
from petricep.output.jsonl import json_line
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
    assert re.fullmatch(rf"\.o\.txt\.{os.getpid()}-[0-9a-f]{{8}}\.tmp", Path(f.temp).name)
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


def full_device(path: Path) -> None:
    """A character device that refuses every byte (as /dev/full: major 1, minor 7)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o644, os.makedev(1, 7))
    except PermissionError:
        pytest.skip("mknod needs root")


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_a_failed_write_to_a_device_keeps_the_device(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """pyarrow's parquet writer given a path deletes it when a write fails: as root,
    ``-o /dev/full --output-format parquet`` deleted /dev/full (issue 43). The file is opened
    by petricep and handed to pyarrow, so nothing is ever deleted."""
    pattern, events = files
    device = tmp_path / "full"
    full_device(device)
    rc, out, err = run(capsys, pattern, *opts(events), "-o", str(device), "--output-format", fmt)
    assert (rc, out, err) == (1, "", f"cannot write {device}: No space left on device\n")
    assert stat.S_ISCHR(device.stat().st_mode)


def test_the_library_writes_a_table_whole_and_keeps_a_device(tmp_path: Path) -> None:
    import pyarrow as pa

    from petricep.errors import OutputError
    from petricep.output.table import write_table

    device = tmp_path / "full.parquet"
    full_device(device)
    with pytest.raises(OutputError, match=f"^cannot write {device}: No space left on device$"):
        write_table(pa.table({"x": [1, 2]}), device)
    assert stat.S_ISCHR(device.stat().st_mode)
    target = tmp_path / "m.parquet"
    write_table(pa.table({"x": [1, 2]}), target)
    assert target.is_file() and leftovers(tmp_path) == []


def test_a_full_disk_under_rejects_is_one_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    device = tmp_path / "full"
    full_device(device)
    (tmp_path / "p.pcep").write_text(RISE)
    (tmp_path / "ev.csv").write_text("type,ts,k,x\nA,1,1,5\nA,x,1,5\nB,3,1,7\n")
    argv = [str(tmp_path / "p.pcep"), *opts(str(tmp_path / "ev.csv")), "--on-error", "skip", "--rejects", str(device)]
    rc, out, err = run(capsys, *argv)
    assert (rc, out, err) == (1, "", f"cannot write the rejects file {str(device)!r}: No space left on device\n")


def test_a_legal_long_output_name_is_written(files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The temporary name adds a process id and a random part: it is cut to fit the limit
    on a name, so the longest legal target name works (it failed with "File name too long")."""
    pattern, events = files
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    out = tmp_path / ("m" * (limit - len(".jsonl")) + ".jsonl")
    assert run(capsys, pattern, *opts(events), "-o", str(out))[0] == 0
    assert out.read_text() == MATCHES and leftovers(tmp_path) == []


def test_a_killed_runs_temporary_file_is_removed_by_the_next_run(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A SIGKILLed run leaves its temporary file (as large as the output it had written);
    the next run to the same target removes those of processes that no longer run, and
    leaves a live process's and other targets' alone."""
    pattern, events = files
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".m.jsonl.{int(dead.stdout)}-0123abcd.tmp"
    live = tmp_path / f".m.jsonl.{os.getpid()}-0123abcd.tmp"
    other = tmp_path / f".n.jsonl.{int(dead.stdout)}-0123abcd.tmp"
    for p in (stale, live, other):
        p.write_text("partial\n")
    assert run(capsys, pattern, *opts(events), "-o", str(tmp_path / "m.jsonl"))[0] == 0
    assert leftovers(tmp_path) == sorted([live.name, other.name])
    assert (tmp_path / "m.jsonl").read_text() == MATCHES


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
@pytest.mark.parametrize("extra", [[], ["--with-events"]])
def test_a_lone_surrogate_copied_out_is_an_error_of_its_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, extra: list[str]
) -> None:
    (tmp_path / "q.pcep").write_text("PATTERN q: SEQ(A a, B b) WITHIN 10 RETURN T(s = a.s)\n")
    (tmp_path / "e.jsonl").write_text('{"type": "A", "ts": 1, "s": "x\\ud800"}\n{"type": "A", "ts": 2, "s": "y"}\n'
                                      '{"type": "B", "ts": 3, "s": "z"}\n')
    out = tmp_path / f"m.{fmt}"
    rc, _, err = run(capsys, str(tmp_path / "q.pcep"), *opts(str(tmp_path / "e.jsonl")), "-o", str(out), *extra)
    assert rc == 3
    assert err == f"{tmp_path / 'e.jsonl'}:1: error: invalid JSON: a lone surrogate escape (\\ud800-\\udfff) is not text\n"
    rc, _, err = run(capsys, str(tmp_path / "q.pcep"), *opts(str(tmp_path / "e.jsonl")), "-o", str(out), *extra,
                     "--on-error", "skip")  # fmt: skip
    assert rc == 3 and "Traceback" not in err
    assert out.exists() and leftovers(tmp_path) == []


@pytest.mark.parametrize("engine", ["kernel", "python"])
def test_an_empty_json_object_copied_into_a_parquet_file_is_json_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    """Parquet holds no struct without fields: ``--with-events`` copying an event's ``{}`` failed
    with ArrowNotImplementedError, exit 1 (found by the issue-43 fuzzing). Such a column is
    written as JSON text, as CSV writes every nested column."""
    import pyarrow.parquet as pq

    (tmp_path / "p.pcep").write_text("PATTERN p: SEQ(A a, B b) WITHIN 3\n")
    (tmp_path / "e.jsonl").write_text('{"id": "r0", "type": "A", "ts": 1, "x": {}}\n{"id": "r1", "type": "B", "ts": 2, "x": 1}\n')
    out = tmp_path / "m.parquet"
    argv = [str(tmp_path / "p.pcep"), *opts(str(tmp_path / "e.jsonl")), "--id-field", "id", "--with-events", "-o", str(out)]
    assert run(capsys, *argv, "--engine", engine)[0] == 0
    assert pq.read_table(out).to_pylist() == [{
        "pattern": "p", "a": "r0", "b": "r1", "start": 1, "end": 2,
        "events.a": '{"id": "r0", "type": "A", "ts": 1, "x": {}}', "events.b": {"id": "r1", "type": "B", "ts": 2, "x": 1},
    }]
