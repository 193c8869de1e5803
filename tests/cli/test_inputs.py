"""Inputs of ``petricep run`` (issue 18): standard input, several files and globs read one
after the other as one stream, and a live pipe whose matches come out as they are found."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from petricep.io.textfiles import use_stdin
from tests.cli.rise import EVENTS, LINES, RISE, ROOT, opts, run

HEADER, *ROWS = EVENTS.splitlines(keepends=True)


@pytest.fixture
def parts(tmp_path: Path) -> tuple[str, list[str]]:
    """The rise pattern, and its events cut into three files of one stream."""
    (tmp_path / "rise.pcep").write_text(RISE)
    cuts = [ROWS[:2], ROWS[2:3], ROWS[3:]]
    paths = []
    for i, rows in enumerate(cuts, 1):
        p = tmp_path / f"part-{i}.csv"
        p.write_text(HEADER + "".join(rows))
        paths.append(str(p))
    return str(tmp_path / "rise.pcep"), paths


def test_several_files_are_one_stream(parts: tuple[str, list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    pattern, paths = parts
    rc, out, err = run(capsys, pattern, "--events", *paths, *opts("")[2:], "--no-progress")
    assert (rc, out) == (0, LINES)  # ids are positions: they go on from file to file
    assert err.startswith("summary: 5 events read = 5 processed + 0 rejected + 0 late; 2 matches")


def test_a_glob_reads_its_files_in_sorted_order(parts: tuple[str, list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    pattern, paths = parts
    glob = str(Path(paths[0]).parent / "part-*.csv")
    assert run(capsys, pattern, "--events", glob, *opts("")[2:], "--no-progress")[:2] == (0, LINES)
    rc, out, err = run(capsys, pattern, "--events", glob + ".nothing*", *opts("")[2:])
    assert (rc, out, err) == (2, "", f"--events {glob + '.nothing*'!r}: no file matches\n")


def test_time_order_goes_on_across_files(parts: tuple[str, list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    pattern, paths = parts
    rc, out, err = run(capsys, pattern, "--events", paths[1], paths[0], *opts("")[2:], "--no-progress")
    assert (rc, out) == (3, "")
    assert err == (
        f"{paths[0]}:2: field 'ts': error: timestamp 1 is before the previous event's 3 "
        "(use --slack D to accept events up to D late)\n"
    )


def test_files_of_one_stream_have_the_same_columns(parts: tuple[str, list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    pattern, paths = parts
    Path(paths[2]).write_text("type,ts,x,k\nB,4,4,2\n")
    rc, _, err = run(capsys, pattern, "--events", *paths, *opts("")[2:])
    assert (rc, err) == (
        3,
        f"{paths[2]}:1: error: its columns (type, ts, x, k) are not those of {paths[0]} (type, ts, k, x): "
        "files of one stream must have the same columns\n",
    )


def test_skipped_rows_name_their_file(parts: tuple[str, list[str]], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pattern, paths = parts
    Path(paths[1]).write_text(HEADER + "B,x,1,7\n")
    rejects = tmp_path / "rej.jsonl"
    rc, out, _ = run(capsys, pattern, "--events", *paths, *opts("")[2:], "--on-error", "skip", "--rejects", str(rejects))
    assert rc == 3
    assert out == '{"pattern": "rise", "ids": {"a": 0, "b": 4}, "start": 1, "end": 5, "attrs": {}}\n'
    assert rejects.read_text() == (
        f'{{"file": "{paths[1]}", "row": 2, "field": "ts", "error": "cannot parse timestamp \'x\'", "raw": "B,x,1,7"}}\n'
    )


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_standard_input_equals_the_file(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rise.pcep").write_text(RISE)
    if fmt == "csv":
        data = EVENTS
    else:
        names = HEADER.strip().split(",")
        data = "".join(
            "{" + ", ".join(f'"{n}": {v if n != "type" else chr(34) + v + chr(34)}' for n, v in zip(names, r.strip().split(","))) + "}\n"
            for r in ROWS
        )
    use_stdin(io.BytesIO(data.encode()))
    try:
        rc, out, _ = run(capsys, str(tmp_path / "rise.pcep"), "--events", "-", "--format", fmt, *opts("")[2:], "--no-progress")
    finally:
        use_stdin(None)
    assert (rc, out) == (0, LINES)


def test_standard_input_needs_a_format_and_comes_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rise.pcep").write_text(RISE)
    rc, _, err = run(capsys, str(tmp_path / "rise.pcep"), "--events", "-", *opts("")[2:])
    assert (rc, err) == (2, "--events -: give the format of standard input with --format csv or --format jsonl\n")
    rc, _, err = run(capsys, str(tmp_path / "rise.pcep"), "--events", "-", "x.csv", *opts("")[2:])
    assert (rc, err) == (2, "--events -: standard input is the only input of a run (no other files with it)\n")


def test_a_live_pipe_gives_each_match_before_the_input_ends(tmp_path: Path) -> None:
    """As ``tail -f events.csv | petricep run ...``: the first match is read from the
    command's output while its input is still open."""
    (tmp_path / "rise.pcep").write_text(RISE)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "petricep", "run", str(tmp_path / "rise.pcep"), "--events", "-", "--format", "csv",
         *opts("")[2:], "--no-progress"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for line in [HEADER, *ROWS[:3]]:  # the B at ts 3 completes the first match
            proc.stdin.write(line.encode())
            proc.stdin.flush()
            time.sleep(0.05)
        first = proc.stdout.readline().decode()  # blocks until the match is flushed
        assert first == LINES.splitlines(keepends=True)[0]
        assert proc.poll() is None  # still running: its input is open
        proc.stdin.write("".join(ROWS[3:]).encode())
        proc.stdin.close()
        rest = proc.stdout.read().decode()
        assert rest == LINES.splitlines(keepends=True)[1]
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()
