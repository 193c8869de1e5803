"""``petricep run --engine spark`` writes what ``--engine local`` writes; missing Java or
PySpark is one message saying what to install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from petricep.cli import build_parser, main
from petricep.kernel import available

ROOT = Path(__file__).resolve().parents[2]
STOCKS = [
    str(ROOT / "nets" / "sase_equal_price.pcep"),
    "--events", str(ROOT / "examples" / "data" / "stocks.csv"),
    "--type-field", "type", "--time-field", "ts", "--id-field", "id",
]  # fmt: skip


@pytest.mark.spark
def test_run_on_spark_writes_the_same_json_lines(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local, remote = tmp_path / "local.jsonl", tmp_path / "spark.jsonl"
    assert main(["run", *STOCKS, "-o", str(local)]) == 0
    capsys.readouterr()
    assert main(["run", *STOCKS, "-o", str(remote), "--engine", "spark", "--master", "local[2]"]) == 0
    err = capsys.readouterr().err
    assert remote.read_bytes() == local.read_bytes()
    assert "summary: 20000 events read = 20000 processed + 0 rejected + 0 late; 6525 matches" in err
    assert "sase_equal_price: 6525 matches" in err
    assert ("  engine: kernel\n" if available() else "  engine: python (the compiled kernel is not built)\n") in err
    assert spark.range(1).count() == 1  # the session the test shares is still up


@pytest.mark.spark
def test_run_on_spark_writes_date_times_as_the_input_wrote_them(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "ev.csv"
    events.write_text("type,ts\nA,2000-01-01\nB,2000-01-02\nA,2000-01-03T10:00:00\nB,2000-01-03T11:30:00.25\n")
    pattern = tmp_path / "p.pcep"
    pattern.write_text("PATTERN ab: SEQ(A a, B b) WITHIN 2 d\n")
    argv = ["run", str(pattern), "--events", str(events), "--type-field", "type", "--time-field", "ts"]
    local, remote = tmp_path / "local.jsonl", tmp_path / "spark.jsonl"
    assert main([*argv, "-o", str(local)]) == 0
    assert main([*argv, "-o", str(remote), "--engine", "spark", "--master", "local[2]"]) == 0
    capsys.readouterr()
    assert remote.read_text() == local.read_text() == (
        '{"pattern": "ab", "ids": {"a": 0, "b": 1}, "start": "2000-01-01", "end": "2000-01-02", "attrs": {}}\n'
        '{"pattern": "ab", "ids": {"a": 2, "b": 3}, "start": "2000-01-03T10:00:00", "end": "2000-01-03T11:30:00.25", '
        '"attrs": {}}\n'
    )


@pytest.mark.spark
def test_run_on_spark_accounts_and_shows_progress(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stats = tmp_path / "stats.json"
    args = ["run", *STOCKS, "-o", str(tmp_path / "m.jsonl"), "--engine", "spark", "--master", "local[2]"]
    assert main([*args, "--stats", str(stats), "--progress"]) == 0
    err = capsys.readouterr().err
    assert "progress: " in err and "20000 events parsed" in err
    report = json.loads(stats.read_text())
    assert report["events"] == {"read": 20000, "processed": 20000, "rejected": 0, "late": 0}
    assert report["patterns"] == {"sase_equal_price": {"matches": 6525}}
    if available():
        assert report["engine"] == {
            "name": "kernel", "why": "covered",
            "groups": [{"patterns": ["sase_equal_price"], "name": "kernel", "why": "covered"}],
        }  # fmt: skip
    assert main([*args, "--no-progress"]) == 0
    assert "progress: " not in capsys.readouterr().err


@pytest.mark.spark
def test_bad_rows_and_options_on_spark(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    lines = (ROOT / "examples" / "data" / "stocks.csv").read_text().splitlines()
    fields = lines[1234].split(",")
    lines[1234] = ",".join([fields[0], "later", *fields[2:]])  # ts: no timestamp
    bad.write_text("\n".join(lines) + "\n")
    args = ["run", STOCKS[0], "--events", str(bad), *STOCKS[3:], "-o", str(tmp_path / "out.jsonl")]
    assert main(args) == 3
    local = capsys.readouterr().err.strip().splitlines()[-1]
    assert main([*args, "--engine", "spark"]) == 3
    remote = capsys.readouterr().err.strip().splitlines()[-1]
    assert remote == local
    assert main([*args, "--engine", "spark", "--on-error", "skip"]) == 2
    assert "--on-error skip and --rejects are not supported" in capsys.readouterr().err


def test_master_needs_the_spark_engine(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", *STOCKS, "--master", "local[2]"]) == 2
    assert capsys.readouterr().err.strip() == "--master needs --engine spark"


def test_without_java_one_message_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("pyspark")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["run", *STOCKS, "--engine", "spark"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("the Spark engine needs a Java runtime (17 or 21) and none was found: install one")
    assert "\n" not in err


def test_without_pyspark_one_message_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)
    assert main(["run", *STOCKS, "--engine", "spark"]) == 1
    assert capsys.readouterr().err.strip() == (
        'the Spark engine needs PySpark: install it with  pip install "petricep[spark]"  (PySpark 4, protobuf)'
    )


def test_stream_command_line() -> None:
    args = build_parser().parse_args(
        ["stream", "p.pcep", "--input", "in", "--output", "out", "--checkpoint", "ck", "--type", "t",
         "--time-field", "ts", "--pos-field", "seq", "--watermark", "30", "--available-now", "--flush"]
    )  # fmt: skip
    assert (args.command, args.input, args.watermark, args.pos_field, args.flush) == (
        "stream",
        "in",
        30.0,
        "seq",
        True,
    )
    with pytest.raises(SystemExit):
        build_parser().parse_args(["stream", "p.pcep", "--input", "in", "--output", "out", "--type", "t"])


@pytest.mark.spark
def test_stream_stops_at_a_bad_row_with_one_message(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.csv").write_text("type,ts,seq,k\nA,1,0,1\nB,2,1,1\n")
    (tmp_path / "in" / "b.csv").write_text("type,ts,seq,k\nA,3,2,1\nB,oops,3,1\n")
    (tmp_path / "p.pcep").write_text("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 5\n")
    args = [
        "stream", str(tmp_path / "p.pcep"), "--input", str(tmp_path / "in"), "--output", str(tmp_path / "out"),
        "--checkpoint", str(tmp_path / "ck"), "--type-field", "type", "--time-field", "ts", "--pos-field", "seq",
        "--available-now", "--flush",
    ]  # fmt: skip
    assert main(args) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"{tmp_path / 'in' / 'b.csv'}:3: field 'ts': error: cannot parse timestamp 'oops'"
    (tmp_path / "in" / "b.csv").write_text("type,ts,seq,k\nA,3,2,1\nB,4,3,1\n")
    assert main([*args[:7], str(tmp_path / "ck2"), *args[8:]]) == 0
    lines = [
        json.loads(x)
        for f in sorted((tmp_path / "out").glob("part-*.jsonl"))
        for x in f.read_text().splitlines()
    ]
    assert sorted(m["ids"]["a"] for m in lines) == [0, 0, 2]


TWO_EVENTS_MATCH = '{"pattern": "p", "ids": {"a": 1, "b": 2}, "start": 1, "end": 2, "attrs": {}}\n'


def _two_event_process(tmp_path: Path, *extra: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``petricep run --engine spark`` over a 2-event file in a fresh process (its own JVM),
    with ``env`` set beside this process's (less PETRICEP_SPARK_LOG, PETRICEP_SPARK_CDS)."""
    events = tmp_path / "two.csv"
    events.write_text("id,type,ts,k,x\n1,A,1,1,1\n2,B,2,1,2\n")
    pattern = tmp_path / "p.pcep"
    pattern.write_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 500\n")
    args = [sys.executable, "-m", "petricep", "run", str(pattern), "--events", str(events), "--type-field", "type",
            "--time-field", "ts", "--id-field", "id", "--engine", "spark", "--master", "local[1]", *extra]  # fmt: skip
    ours = {k: v for k, v in os.environ.items() if k not in ("PETRICEP_SPARK_LOG", "PETRICEP_SPARK_CDS")}
    return subprocess.run(args, capture_output=True, text=True, env={**ours, "PYTHONPATH": str(ROOT), **env}, timeout=600)


@pytest.mark.spark
def test_a_small_run_says_petricep_s_lines_only_spark_s_with_verbose(spark: Any, tmp_path: Path) -> None:
    """A fresh process (its own JVM): stderr is the summary, no JVM or log4j line;
    ``--verbose`` adds Spark's (the JVM's module warning, which Spark 4 always causes)."""
    quiet = _two_event_process(tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == TWO_EVENTS_MATCH
    lines = quiet.stderr.splitlines()
    assert lines[0].startswith("summary: 2 events read = 2 processed + 0 rejected + 0 late; 1 matches in ")
    assert lines[1:] == ["  p: 1 matches", "  engine: kernel" if available() else "  engine: python (the compiled kernel is not built)"]
    verbose = _two_event_process(tmp_path, "--verbose")
    assert verbose.returncode == 0 and verbose.stdout == quiet.stdout
    assert "WARNING: Using incubator modules: jdk.incubator.vector" in verbose.stderr


@pytest.mark.spark
@pytest.mark.slow  # a JVM that records the ~170 MB class archive at exit (~20 s)
def test_the_first_spark_run_of_an_installation_writes_only_matches_to_stdout(tmp_path: Path) -> None:
    """The first run records the JVM's class archive (an empty cache here), and the JVM
    warned about hundreds of classes it cannot archive on *stdout*, among the matches:
    its log goes to stderr now, where the quiet run drops it; the archive is still kept."""
    first = _two_event_process(tmp_path, XDG_CACHE_HOME=str(tmp_path / "cache"))
    assert first.returncode == 0, first.stderr
    assert first.stdout == TWO_EVENTS_MATCH
    assert "[cds]" not in first.stderr and len(first.stderr.splitlines()) == 3
    assert [p.suffix for p in (tmp_path / "cache" / "petricep").glob("spark-classes-*")] == [".jsa"]


@pytest.mark.spark
def test_run_on_spark_says_why_a_pattern_found_nothing(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hints ``--engine local`` gives (a type in another case, a condition no event
    meets), from the local file's first events read on the driver."""
    events = tmp_path / "ev.csv"
    events.write_text("type,ts,x\na,1,1\nB,2,0\n")
    pattern = tmp_path / "p.pcep"
    pattern.write_text("PATTERN ab: SEQ(A a, B b) WITHIN 5\nPATTERN bb: SEQ(B a, B b) WITHIN 5\n")
    argv = ["run", str(pattern), "--events", str(events), "--type-field", "type", "--time-field", "ts"]
    assert main([*argv, "--engine", "spark", "--master", "local[2]"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[err.index("  ab: 0 matches") + 1] == (
        "    pattern 'ab': no event of type 'A' was read (types seen: B, a); the input has 'a', "
        "which differs only in case (type names match exactly)"
    )
    assert err[err.index("  bb: 0 matches") + 1] == (
        "    pattern 'bb': its events never come in its order, whatever its window, strategy, keys and conditions"
    )
