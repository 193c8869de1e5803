"""Event time on real Aarhus rows (449 sensors: ~449 events share each instant), files
of 2,000 rows so that every file boundary falls inside a group of equal timestamps.

Regression tests for issue 14's defects: a restart at such a boundary lost the rest of
the group (Spark dropped events at the watermark's own instant); files read out of order
lost their events silently; a negated event tying with the previous file's last
timestamp could be skipped. Now a stream's output equals the embedded run over the
events that were not late, and every late event is counted and written out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from petricep.cli import main
from petricep.kernel import available
from tests.spark.aarhus import (
    PATTERNS,
    STREAM_ARGS,
    canonical,
    embedded,
    output_lines,
    rows,
    set_mtime,
    write_all,
    write_parts,
)

pytestmark = pytest.mark.spark

N, SIZE = 12_000, 2_000


def stream(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str, code: int | None = 0) -> str:
    """One ``petricep stream`` invocation over ``tmp/in`` (its stderr)."""
    args = ["stream", str(tmp / "p.pcep"), "--input", str(tmp / "in"), "--output", str(tmp / "out"),
            "--checkpoint", str(tmp / "ck"), *STREAM_ARGS, "--master", "local[2]", "--partitions", "3",
            "--available-now", *extra]  # fmt: skip
    rc = main(args)
    err = capsys.readouterr().err
    assert code is None or rc == code, err
    return err


def summary(err: str) -> str:
    return next(x for x in err.splitlines() if x.startswith("summary: "))


def late_lines(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for f in sorted(directory.glob("late-*.jsonl")) for x in f.read_text().splitlines()]


@pytest.fixture
def tmp(spark: Any, tmp_path: Path) -> Path:
    """The pattern file in ``tmp_path``; the shared session (each ``stream`` uses it rather
    than starting and stopping a JVM of its own)."""
    (tmp_path / "p.pcep").write_text(PATTERNS)
    return tmp_path


def test_a_restart_inside_a_tie_group_loses_nothing(tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Defect 1: three runs over files arriving 3, 1 and 2 at a time (the last flushes);
    each run stops inside a group of equal timestamps."""
    want, stats = embedded(tmp / "p.pcep", write_all(tmp / "all.csv", N), tmp)
    assert len(want) == 4744 and stats["events"]["read"] == N
    reads = 0
    for names, extra in (({1, 2, 3}, []), ({4}, []), ({5, 6}, ["--flush", "--progress"])):
        write_parts(tmp / "in", N, SIZE, names)
        err = stream(tmp, capsys, "--max-files-per-trigger", "1", *extra)
        n = len(names) * SIZE
        assert f"summary: {n} events read = {n} processed + 0 rejected + 0 late" in err
        if available():  # each restart restores the keys' kernel arrays from the checkpoint
            assert "\n  engine: kernel\n" in err
        batches = [x for x in err.splitlines() if x.startswith("batch ")]
        assert sum(int(x.split()[2]) for x in batches) == n  # "batch B: N events read = ..."
        reads += n
    assert canonical(output_lines(tmp / "out")) == canonical(want)
    assert reads == N
    progress = [x for x in err.splitlines() if x.startswith("progress: ")]
    assert any("; micro-batch " in x and f"; {2 * SIZE} events, " in x for x in progress), progress
    assert late_lines(tmp / "out") == []


def test_files_read_out_of_order_are_counted_late(tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Defect 2: parts 4, 5 and 3 are read in that order (part 3 is the newest file): part
    3's events are behind the watermark. They are counted, written to the late files
    (each once, as ``run --late`` writes them) and the matches are those of the embedded
    run over the other events — as ``run --slack 0`` over the rows in arrival order."""
    write_parts(tmp / "in", N, SIZE, {1, 2})
    stream(tmp, capsys, "--max-files-per-trigger", "1")
    write_parts(tmp / "in", N, SIZE, {3, 4, 5})
    set_mtime(tmp / "in" / "part-3.csv", 6)
    err = stream(tmp, capsys, "--max-files-per-trigger", "1", "--late", str(tmp / "late"), code=3)
    assert summary(err).startswith(f"summary: {3 * SIZE} events read = {2 * SIZE} processed + 0 rejected + {SIZE} late")
    assert f"late events written to {tmp / 'late'}" in err
    write_parts(tmp / "in", N, SIZE, {6})
    stream(tmp, capsys, "--max-files-per-trigger", "1", "--flush")

    late = late_lines(tmp / "late")
    assert [x["pos"] for x in late] == list(range(2 * SIZE, 3 * SIZE))
    header, lines = rows(N)
    first = dict(zip(header.split(","), lines[2 * SIZE].split(",")))
    assert late[0]["id"] == int(first["_id"]) and late[0]["attrs"]["avgSpeed"] == int(first["avgSpeed"])
    arrival = write_all(tmp / "arrival.csv", N, order=[1, 2, 4, 5, 3, 6], size=SIZE)
    want, stats = embedded(tmp / "p.pcep", arrival, tmp, "--slack", "0", "--late", str(tmp / "run-late.jsonl"))
    assert stats["events"]["late"] == SIZE
    assert [json.loads(x)["pos"] for x in (tmp / "run-late.jsonl").read_text().splitlines()] == list(
        range(4 * SIZE, 5 * SIZE)  # positions in the arrival-order file
    )
    assert canonical(output_lines(tmp / "out")) == canonical(want)
    assert len(want) < 4744


def test_same_modification_times_are_read_in_name_order(tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Defect 3, and issue 39's burst copy: files copied at once (one modification time),
    two per micro-batch, are read in name order (Spark's own file source read them in the
    order the directory listed them: events of a later file first, the earlier ones
    late), so nothing is late and the matches are exactly ``petricep run``'s over the
    files in name order."""
    for p in write_parts(tmp / "in", N, SIZE):
        set_mtime(p, 0)
    err = stream(tmp, capsys, "--max-files-per-trigger", "2", "--flush", "--stats", str(tmp / "stats.json"))
    stats = json.loads((tmp / "stats.json").read_text())
    assert stats["events"] == {"read": N, "processed": N, "rejected": 0, "late": 0}
    assert [b["read"] for b in stats["batches"] if b["read"]] == [2 * SIZE] * 3
    assert f"summary: {N} events read = {N} processed + 0 rejected + 0 late" in summary(err)
    assert late_lines(tmp / "out") == []
    want, _ = embedded(tmp / "p.pcep", write_all(tmp / "all.csv", N), tmp)
    assert canonical(output_lines(tmp / "out")) == canonical(want)
    assert sum(stats["patterns"][p]["matches"] for p in stats["patterns"]) == len(want) == 4744


def test_negation_ties_do_not_depend_on_micro_batches(tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Defect 3: the same files in order, in micro-batches of 2 files (boundaries inside
    tie groups within and between micro-batches), over two runs that stop inside a
    micro-batch's pair: exactly the embedded matches (negations included), nothing late."""
    per_trigger = 2
    want, _ = embedded(tmp / "p.pcep", write_all(tmp / "all.csv", N), tmp)
    write_parts(tmp / "in", N, SIZE, {1, 2, 3})
    stream(tmp, capsys, "--max-files-per-trigger", str(per_trigger))
    write_parts(tmp / "in", N, SIZE, {4, 5, 6})
    err = stream(tmp, capsys, "--max-files-per-trigger", str(per_trigger), "--flush")
    assert "+ 0 late;" in summary(err)
    got = canonical(output_lines(tmp / "out"))
    assert got == canonical(want)
    assert sum('"pattern": "no_recovery"' in x or '"pattern": "dip"' in x for x in got) == 2803


def test_a_restart_keeps_the_checkpoints_partitions_and_buckets(tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A new checkpoint's state partitions are the session's cores unless ``--partitions``
    says otherwise, and its key buckets a few per core: both fixed by its first run. A
    restart with the defaults (2 partitions, 8 buckets on local[2]) on a checkpoint first
    run with 3 partitions and 5 buckets keeps 3 and 5, and loses nothing."""
    from petricep.spark.keygroups import LAYOUT_FILE

    want, _ = embedded(tmp / "p.pcep", write_all(tmp / "all.csv", N), tmp)
    base = ["stream", str(tmp / "p.pcep"), "--input", str(tmp / "in"), "--output", str(tmp / "out"),
            "--checkpoint", str(tmp / "ck"), *STREAM_ARGS, "--master", "local[2]", "--available-now"]  # fmt: skip
    write_parts(tmp / "in", N, SIZE, {1, 2, 3})
    assert main([*base, "--partitions", "3", "--key-buckets", "5"]) == 0, capsys.readouterr().err
    write_parts(tmp / "in", N, SIZE, {4, 5, 6})
    assert main([*base, "--flush"]) == 0, capsys.readouterr().err
    ck = tmp / "ck"
    assert json.loads((ck / LAYOUT_FILE).read_text())["buckets"] == 5
    last = max((p for p in (ck / "offsets").iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    meta = json.loads(last.read_text().splitlines()[1])
    assert meta["conf"]["spark.sql.shuffle.partitions"] == "3"
    assert sorted(p.name for p in (ck / "state" / "0").iterdir() if p.name.isdigit()) == ["0", "1", "2"]
    assert canonical(output_lines(tmp / "out")) == canonical(want)
