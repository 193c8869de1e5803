"""``petricep stream`` on Spark over files that go back in time within the watermark
(issue 39, item 0): the stream's matches are ``run --slack W``'s over the files in
arrival order, with or without a restart between them (a burst copy of files:
tests/spark/test_stream_time.py). One Spark session for both (the ``spark`` fixture)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from petricep.cli import main
from tests.spark.aarhus import canonical, output_lines, set_mtime
from tests.spark.test_stream_reorder import ISSUE, ISSUE_WANT

pytestmark = pytest.mark.spark

HEADER = "seq,type,ts,k,x"
F0 = ["0,A,70,4,0", "1,B,74,4,0"]
F1 = ["2,A,73,4,0", "3,A,75,4,0", "4,B,76,4,4"]
ARGS = ["--type-field", "type", "--time-field", "ts", "--pos-field", "seq"]


def _file(path: Path, rows: list[str], mtime: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    set_mtime(path, mtime)


def _stream(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    rc = main(["stream", str(tmp / "p.pcep"), "--input", str(tmp / "in"), "--output", str(tmp / "out"),
               "--checkpoint", str(tmp / "ck"), *extra, "--master", "local[2]", "--partitions", "3",
               "--available-now", "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 0, err
    return err


def _slack_run(tmp: Path, capsys: pytest.CaptureFixture[str], files: list[Path], *extra: str) -> list[str]:
    out = tmp / "run.jsonl"
    assert main(["run", str(tmp / "p.pcep"), "--events", *map(str, files), *extra, "-o", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    return out.read_text().splitlines()


@pytest.mark.parametrize("restart", [False, True])
def test_a_file_back_in_time_gives_the_slack_run(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], restart: bool
) -> None:
    """The issue's f0.csv, then f1.csv (newer) whose A at 73 goes back before f0's B at 74:
    one micro-batch per file, the second in a new run of the query when ``restart``."""
    (tmp_path / "p.pcep").write_text(ISSUE + "\n")
    _file(tmp_path / "in" / "f0.csv", F0, 0)
    if restart:
        err = _stream(tmp_path, capsys, *ARGS, "--watermark", "4")
        assert "summary: 2 events read = 2 processed + 0 rejected + 0 late; 0 matches" in err
    _file(tmp_path / "in" / "f1.csv", F1, 1)
    err = _stream(tmp_path, capsys, *ARGS, "--watermark", "4", "--max-files-per-trigger", "1", "--flush")
    n = 3 if restart else 5
    assert f"summary: {n} events read = {n} processed + 0 rejected + 0 late; 3 matches" in err
    want = _slack_run(tmp_path, capsys, [tmp_path / "in" / "f0.csv", tmp_path / "in" / "f1.csv"], *ARGS[:4],
                      "--slack", "4")  # fmt: skip
    assert canonical(want) == canonical(ISSUE_WANT)
    assert canonical(output_lines(tmp_path / "out")) == canonical(want)
