"""History-aware (ARCHIVED) patterns on Spark (issue 14): ``run --engine spark --archive DIR``
writes the archive from the executors and joins every live match with it, giving the lines an
embedded ``--history-mode llaa`` run writes, over archives written by either engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings

from petricep.archive.store import Archive
from petricep.cli import main
from petricep.events import Event
from petricep.lang import ast as A
from petricep.lang.printer import pattern_text
from tests.archive.test_join import history_patterns, two_streams
from tests.budget import examples

pytestmark = pytest.mark.spark

OPTS = ["--type-field", "type", "--time-field", "ts", "--id-field", "id"]


def write_csv(path: Path, events: list[Event]) -> str:
    path.write_text("type,ts,id,x,k\n" + "".join(f"{e.type},{e.ts},{e.id},{e.attrs['x']},{e.attrs['k']}\n" for e in events))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], pf: Path, events: str, archive: Path, *extra: str) -> list[str]:
    rc = main(["run", str(pf), "--events", events, *OPTS, "--archive", str(archive), *extra])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out.splitlines()


SPARK = ("--engine", "spark", "--master", "local[2]")


@settings(max_examples=examples(6), deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(history_patterns(), two_streams())
def test_two_runs_on_spark_equal_two_embedded_runs(
    spark: Any, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str],
    p: A.Pattern, streams: tuple[list[Event], list[Event]],
) -> None:
    """Run 1 archives the history (and finds what it finds in it), run 2 the live events:
    each Spark run writes the embedded run's lines, whichever engine wrote the archive."""
    history, live = streams
    if not history:
        return
    note(pattern_text(p))
    tmp = tmp_path_factory.mktemp("h")
    pf = tmp / "p.pcep"
    pf.write_text(pattern_text(p) + "\n")
    h, lv = write_csv(tmp / "h.csv", history), write_csv(tmp / "l.csv", live)
    embedded = [run(capsys, pf, f, tmp / "emb", "--history-mode", "llaa") for f in (h, lv)]
    on_spark = [run(capsys, pf, f, tmp / "spk", *SPARK) for f in (h, lv)]
    assert on_spark == embedded
    # an archive an embedded run wrote, read by a Spark run (and the run numbers go on)
    run(capsys, pf, h, tmp / "mixed", "--history-mode", "llaa")
    assert run(capsys, pf, lv, tmp / "mixed", *SPARK) == embedded[1]
    assert Archive(tmp / "mixed").run == Archive(tmp / "spk").run == 2


def test_the_spark_archive_holds_every_event_once(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pf = tmp_path / "p.pcep"
    pf.write_text("PATTERN h: SEQ(ARCHIVED A old, A a) WHERE [k] AND a.x > old.x AND a.ts - old.ts <= 20 AND a.ts - old.ts >= 1\n")
    events = [Event("ABC"[i % 3], i // 2, i, f"e{i}", {"x": i % 5, "k": i % 2}) for i in range(40)]
    path = write_csv(tmp_path / "ev.csv", events)
    lines = run(capsys, pf, path, tmp_path / "spk", *SPARK, "--stats", str(tmp_path / "stats.json"))
    assert lines == run(capsys, pf, path, tmp_path / "emb", "--history-mode", "llaa")
    assert len(lines) == 24
    # the live part fired on the kernel, its matches carrying their events for the join
    assert json.loads((tmp_path / "stats.json").read_text())["engine"]["name"] == "kernel"
    rows = spark.read.parquet(str(tmp_path / "spk")).orderBy("__pos").collect()
    assert [(r["__run"], r["__pos"], json.loads(r["__id"])) for r in rows] == [(0, i, f"e{i}") for i in range(40)]


def test_spark_refuses_archive_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pf = tmp_path / "p.pcep"
    pf.write_text("PATTERN h: SEQ(ARCHIVED A old, A a) WHERE a.ts - old.ts <= 20\n")
    ev = write_csv(tmp_path / "ev.csv", [Event("A", 1, 0, "e0", {"x": 1, "k": 0})])
    rc = main(["run", str(pf), "--events", ev, *OPTS, "--archive", str(tmp_path / "a"), *SPARK,
               "--history-order", "archive-first"])  # fmt: skip
    assert rc == 2
    assert capsys.readouterr().err == (
        "--history-order archive-first runs embedded only: on Spark every live match is joined with the "
        "archive (live-first)\n"
    )
