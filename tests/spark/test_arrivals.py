"""The streaming file source's order and log (:mod:`petricep.spark.arrivals`), without
Spark: files in (modification time, name) order, cut by ``maxFilesPerTrigger``; a
file that appears later is read whenever it appears; a restarted query replays a
micro-batch with exactly its files (issue 39, item 3)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from petricep.errors import ConfigError
from petricep.spark.arrivals import Arrivals, listing, local_path, read_files


def _write(directory: Path, name: str, mtime: int, text: str = "x\n") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    os.utime(path, (1_000_000 + mtime, 1_000_000 + mtime))
    return path


def _names(arrivals: Arrivals, start: dict[str, int], end: dict[str, int]) -> list[str]:
    return sorted(os.path.basename(p) for part in arrivals.batch_files(start, end) for p in part)


def test_files_that_arrived_together_are_read_by_name(tmp_path: Path) -> None:
    """A burst copy (one modification time), two files per micro-batch; an older file first."""
    inp = tmp_path / "in"
    for name in ("part-4.csv", "part-2.csv", "part-5.csv", "part-1.csv", "part-3.csv"):
        _write(inp, name, 5)
    _write(inp, "zz-early.csv", 1)
    arrivals = Arrivals(str(inp), str(tmp_path / "log"), partitions=2)
    offsets = [arrivals.initial_offset()]
    while True:
        nxt = arrivals.latest_offset(offsets[-1], 2)
        if nxt == offsets[-1]:
            break
        offsets.append(nxt)
    assert offsets == [{"batch": -1}, {"batch": 0}, {"batch": 1}, {"batch": 2}]
    batches = [_names(arrivals, a, b) for a, b in zip(offsets, offsets[1:])]
    assert batches == [["part-1.csv", "zz-early.csv"], ["part-2.csv", "part-3.csv"], ["part-4.csv", "part-5.csv"]]
    assert arrivals.batch_files(offsets[0], offsets[1]) == [[str(inp / "zz-early.csv")], [str(inp / "part-1.csv")]]
    whole = Arrivals(str(inp), str(tmp_path / "log-all"), partitions=4)  # no --max-files-per-trigger
    assert whole.latest_offset(whole.initial_offset(), None) == {"batch": 0}
    assert whole.batch_files({"batch": -1}, {"batch": 0}) == [
        [str(inp / n) for n in names] for names in (["zz-early.csv", "part-4.csv"], ["part-1.csv", "part-5.csv"],
                                                    ["part-2.csv"], ["part-3.csv"])
    ]  # fmt: skip


def test_a_file_that_appears_later_is_read_whatever_its_time(tmp_path: Path) -> None:
    """Moved in with an old modification time (mv keeps it): read in the next micro-batch;
    names starting with . or _ and names the format's glob refuses are not read."""
    inp = tmp_path / "in"
    _write(inp, "b.csv", 5)
    arrivals = Arrivals(str(inp), str(tmp_path / "log"), pattern="*.csv*")
    first = arrivals.latest_offset(arrivals.initial_offset(), None)
    assert first == {"batch": 0} and arrivals.latest_offset(first, None) == first
    _write(inp, "a.csv", 1)
    for name in (".a.csv.tmp", "_SUCCESS", "notes.txt", "c.csv._COPYING_"):
        _write(inp, name, 9)
    (inp / "sub.csv").mkdir()
    second = arrivals.latest_offset(first, None)
    assert second == {"batch": 1} and _names(arrivals, first, second) == ["a.csv"]
    assert listing(str(inp), "*.csv*") == [(1_000_001_000, "a.csv"), (1_000_005_000, "b.csv")]


def test_a_restart_replays_a_micro_batch_with_its_files(tmp_path: Path) -> None:
    """A micro-batch logged but whose offset Spark never recorded (killed in between) is
    taken again as it was, though more files arrived since; a recorded one is read back
    from the log by a new reader."""
    inp, log = tmp_path / "in", str(tmp_path / "log")
    _write(inp, "p1.csv", 1)
    _write(inp, "p2.csv", 2)
    first = Arrivals(str(inp), log).latest_offset({"batch": -1}, 1)
    assert first == {"batch": 0}
    _write(inp, "p0.csv", 0)
    again = Arrivals(str(inp), log)
    assert again.latest_offset({"batch": -1}, 5) == first
    assert _names(again, {"batch": -1}, first) == ["p1.csv"]
    rest = again.latest_offset(first, None)
    assert _names(Arrivals(str(inp), log), first, rest) == ["p0.csv", "p2.csv"]
    assert sorted(os.listdir(log)) == ["0", "1"]


def test_available_now_reads_the_files_there_at_the_start(tmp_path: Path) -> None:
    inp = tmp_path / "in"
    _write(inp, "p1.csv", 1)
    arrivals = Arrivals(str(inp), str(tmp_path / "log"))
    arrivals.prepare_available_now()
    _write(inp, "p2.csv", 2)
    first = arrivals.latest_offset({"batch": -1}, None)
    assert _names(arrivals, {"batch": -1}, first) == ["p1.csv"]
    assert arrivals.latest_offset(first, None) == first


def test_an_earlier_petriceps_checkpoint_is_refused(tmp_path: Path) -> None:
    arrivals = Arrivals(str(tmp_path), str(tmp_path / "log"))
    with pytest.raises(ConfigError) as err:
        arrivals.latest_offset({"logOffset": 3}, None)
    assert str(err.value) == (
        'this checkpoint\'s offset {"logOffset": 3} is not petricep\'s file source\'s (a checkpoint of an '
        "earlier petricep, which read files through Spark's file source): restart the query from a new checkpoint"
    )
    with pytest.raises(ConfigError, match=r"^the checkpoint's file log has no micro-batch 0 \("):
        arrivals.batch_files({"batch": -1}, {"batch": 0})
    with pytest.raises(ConfigError) as err:
        Arrivals(str(tmp_path / "nowhere"), str(tmp_path / "log")).latest_offset({"batch": -1}, None)
    assert str(err.value) == f"{tmp_path / 'nowhere'}: no such directory (the input directory to watch)"


def test_a_partition_reads_its_files_whole(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.csv", 0, "seq,ts\n0,1\n")
    (batch,) = read_files([str(path)])
    assert batch.to_pylist() == [{"path": str(path), "content": b"seq,ts\n0,1\n"}]
    assert [local_path(p) for p in ("/d", "file:///d", "file:/d", "s3://b/d")] == ["/d", "/d", "/d", None]
