"""`petricep run` / `check` end to end: exact output, exact errors, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from petricep import kernel
from petricep.cli import main

ROOT = Path(__file__).resolve().parents[1]


def write(tmp: Path, name: str, text: str) -> str:
    p = tmp / name
    p.write_text(text)
    return str(p)


@pytest.fixture
def pattern(tmp_path: Path) -> str:
    return write(tmp_path, "rise.pcep", "PATTERN rise: SEQ(A a, B b)\nWHERE [k] AND b.x > a.x\nWITHIN 10\n")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_run_writes_jsonl_and_summary(tmp_path: Path, pattern: str, capsys: pytest.CaptureFixture[str]) -> None:
    events = write(tmp_path, "ev.csv", "type,ts,k,x\nA,1,1,5\nA,2,2,5\nB,3,1,7\nB,4,2,4\nB,5,1,9\n")
    rc, out, err = run(capsys, "run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts")
    assert rc == 0
    assert [json.loads(line) for line in out.splitlines()] == [
        {"pattern": "rise", "ids": {"a": 0, "b": 2}, "start": 1, "end": 3, "attrs": {}},
        {"pattern": "rise", "ids": {"a": 0, "b": 4}, "start": 1, "end": 5, "attrs": {}},
    ]
    assert "summary: 5 events read = 5 processed + 0 rejected + 0 late; 2 matches" in err
    assert "  rise: 2 matches" in err


def test_output_file_and_ids(tmp_path: Path, pattern: str, capsys: pytest.CaptureFixture[str]) -> None:
    events = write(tmp_path, "ev.jsonl", '{"t":"A","ts":1,"k":1,"x":1,"eid":"e1"}\n{"t":"B","ts":2,"k":1,"x":2,"eid":"e2"}\n')
    out_file = tmp_path / "m.jsonl"
    rc, out, _ = run(
        capsys, "run", pattern, "--events", events, "--type-field", "t", "--time-field", "ts", "--id-field", "eid", "-o", str(out_file)
    )
    assert rc == 0 and out == ""
    assert json.loads(out_file.read_text()) == {"pattern": "rise", "ids": {"a": "e1", "b": "e2"}, "start": 1, "end": 2, "attrs": {}}


def test_headerless_csv_with_columns(tmp_path: Path, pattern: str, capsys: pytest.CaptureFixture[str]) -> None:
    events = write(tmp_path, "ev.csv", "A,1,1,5\nB,3,1,7\n")
    rc, out, _ = run(capsys, "run", pattern, "--events", events, "--columns", "type,ts,k,x", "--type-field", "type", "--time-field", "ts")
    assert rc == 0
    assert json.loads(out)["ids"] == {"a": 0, "b": 1}


@pytest.mark.parametrize(
    "text,message",
    [
        ("PATTERN SEQ(A a B b)", ":1:17: error: unexpected 'B'"),
        ("PATTERN SEQ(A a, B b) WHERE a.x > zz.x", ":1:35: error: unknown variable 'zz'"),
        ("PATTERN SEQ(A a, B b) WITHIN 0", ":1:30: error: window must be positive, got 0"),
    ],
)
def test_bad_pattern_file_exit_2_with_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    p = write(tmp_path, "bad.pcep", text)
    events = write(tmp_path, "ev.csv", "type,ts\nA,1\n")
    rc, out, err = run(capsys, "run", p, "--events", events, "--type-field", "type", "--time-field", "ts")
    assert rc == 2 and out == ""
    assert err.startswith(p + message)
    assert "Traceback" not in err
    assert err.rstrip("\n").endswith("^")


@pytest.mark.parametrize(
    "csv,message",
    [
        ("type,ts,k,x\nA,1,1,5\nB,2,1,abc\n", "ev.csv:3: field 'x': error: expected a number, got 'abc'"),
        ("type,ts,k,x\nA,1,1,5\nB,2014-13-45,1,6\n", "ev.csv:3: field 'ts': error: cannot parse timestamp '2014-13-45'"),
        (
            "type,ts,k,x\nA,03/12/2026 10:00,1,5\n",
            "ev.csv:2: field 'ts': error: cannot parse timestamp '03/12/2026 10:00'; give --time-format '%d/%m/%Y %H:%M' "
            "(or '%m/%d/%Y %H:%M', month first)",
        ),
        ("type,ts,k,x\nA,5,1,5\nB,3,1,6\n", "ev.csv:3: field 'ts': error: timestamp 3 is before the previous event's 5 (use --slack D to accept events up to D late)"),
    ],
)
def test_bad_event_file_exit_3_naming_row_and_field(
    tmp_path: Path, pattern: str, capsys: pytest.CaptureFixture[str], csv: str, message: str
) -> None:
    events = write(tmp_path, "ev.csv", csv)
    rc, out, err = run(capsys, "run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts")
    assert rc == 3
    assert err.strip().endswith(message), err
    assert "Traceback" not in err


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_a_header_with_another_separator_names_the_delimiter(
    tmp_path: Path, pattern: str, capsys: pytest.CaptureFixture[str], sep: str
) -> None:
    events = write(tmp_path, "ev.csv", sep.join(["type", "ts", "k", "x"]) + "\n" + sep.join("A151") + "\n")
    rc, out, err = run(capsys, "run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts")
    header = sep.join(["type", "ts", "k", "x"])
    assert (rc, out) == (3, "")
    assert err == f"{events}:1: field 'type': error: missing column 'type' (the columns: {header}; the header holds {sep!r}: give --delimiter {sep!r})\n"
    rc, out, err = run(capsys, "run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts", "--delimiter", sep)
    assert rc == 0, err


def test_pattern_reading_a_missing_column_is_the_events_error_naming_the_pattern(
    tmp_path: Path, pattern: str, capsys: pytest.CaptureFixture[str]
) -> None:
    events = write(tmp_path, "ev.csv", "type,ts,k,y\nA,1,1,5\n")
    rc, _, err = run(capsys, "run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts")
    assert rc == 3  # as a missing time column (issue 43)
    assert err.splitlines() == [
        f"{events}:1: field 'x': error: missing column 'x' (the columns: type, ts, k, y), read at {pattern}:2:15: "
        "event type 'B' has no field 'x'",
        "    WHERE [k] AND b.x > a.x",
        "                  ^",
        f"{pattern}:2:21: error: event type 'A' has no field 'x'",
        "    WHERE [k] AND b.x > a.x",
        "                        ^",
    ]


def test_jsonl_row_missing_a_field(tmp_path: Path, pattern: str, capsys: pytest.CaptureFixture[str]) -> None:
    events = write(tmp_path, "ev.jsonl", '{"type":"A","ts":1,"k":1,"x":1}\n{"type":"B","ts":2,"k":1}\n')
    rc, _, err = run(capsys, "run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts")
    assert rc == 3
    assert err.strip().endswith("ev.jsonl:2: field 'x': error: missing field 'x'")


def test_skip_bad_rows_counts_and_writes_them(tmp_path: Path, pattern: str, capsys: pytest.CaptureFixture[str]) -> None:
    events = write(tmp_path, "ev.csv", "type,ts,k,x\nA,1,1,5\nB,2,1,abc\nB,3,1,7\nA,2,1,1\nB,4,1,2\n")
    rejects = tmp_path / "rejects.jsonl"
    rc, out, err = run(
        capsys, "run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts",
        "--on-error", "skip", "--rejects", str(rejects),
    )
    assert rc == 3  # finished, but rows were rejected
    assert [json.loads(line)["ids"] for line in out.splitlines()] == [{"a": 0, "b": 2}]
    assert "summary: 5 events read = 3 processed + 2 rejected + 0 late; 1 matches" in err
    bad = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert [(b["row"], b["field"]) for b in bad] == [(3, "x"), (5, "ts")]


def test_check_prints_net_and_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, "two.pcep", "PATTERN p: SEQ(A a, B b) WITHIN 5\nPATTERN q: SEQ(A a, B+ b[]) WHERE [k]\n")
    rc, out, _ = run(capsys, "check", p)
    assert rc == 0
    assert out.splitlines() == [
        f"{p}: 2 patterns",
        "  p: 2 state places, 2 transitions; inputs A, B; window 5; partition none; skip-till-any-match",
        "  q: 2 state places, 3 transitions; inputs A, B; window none; partition [k]; skip-till-any-match",
        "net before merging: 2 patterns, 2 input places, 4 state places, 5 transitions",
        "net after merging: 2 shared nets, 2 input places, 4 state places, 5 transitions",
        kernel_line(None),
        "warning: pattern 'q' has no WITHIN window: its partial matches may grow without bound "
        "(add WITHIN, or LIMIT n PARTIAL MATCHES)",
        "warning: pattern 'q': Kleene variable b[] has no WITHIN window: one partial match may grow without bound",
    ]


def test_check_prints_a_stop_event(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, "u.pcep", "PATTERN u: SEQ(A a, B+ b[] UNTIL C c, D d) WHERE c.x > a.x AND skip-till-next-match WITHIN 5\n")
    rc, out, _ = run(capsys, "check", p)
    assert rc == 0
    assert out.splitlines() == [
        f"{p}: 1 pattern",
        "  u: 3 state places, 4 transitions; inputs A, B, C, D; window 5; partition none; skip-till-next-match; b[] until C c",
        "net before merging: 1 patterns, 4 input places, 3 state places, 4 transitions",
        "net after merging: 1 shared net, 4 input places, 3 state places, 4 transitions",
        kernel_line(None),
    ]


def test_check_shows_what_merging_shares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(
        tmp_path,
        "many.pcep",
        "PATTERN p1: SEQ(A a, B b, C c) WITHIN 10\n"
        "PATTERN p2: SEQ(A x, B y, D z) WITHIN 20\n"
        "PATTERN p3: SEQ(A a, B b) WITHIN 5\n",
    )
    rc, out, _ = run(capsys, "check", p)
    assert rc == 0
    assert out.splitlines()[-6:] == [
        "net before merging: 3 patterns, 4 input places, 8 state places, 8 transitions",
        "net after merging: 1 shared net, 4 input places, 4 state places, 4 transitions",
        "  shared (front combination): place 'a' by p1, p2, p3",
        "  shared (front combination): place 'a;b' by p1, p2, p3",
        "  shared whole: every place of p3 serves other patterns too",
        kernel_line(None),
    ]


def test_shipped_readme_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "matches.jsonl"
    rc, _, err = run(
        capsys, "run", str(ROOT / "nets/sase_equal_price.pcep"), "--events", str(ROOT / "examples/data/stocks.csv"),
        "--type-field", "type", "--time-field", "ts", "--id-field", "id", "-o", str(out_file),
    )
    assert rc == 0
    lines = out_file.read_text().splitlines()
    assert len(lines) == 6525
    assert json.loads(lines[0]) == {"pattern": "sase_equal_price", "ids": {"a": 18, "b": 119, "c": 141}, "start": 18, "end": 141, "attrs": {}}
    assert "20000 events read = 20000 processed + 0 rejected + 0 late; 6525 matches" in err


def kernel_line(why: str | None) -> str:
    """``check``'s kernel line: for a net the kernel covers (``why`` None) or does not, when
    it is built and not switched off."""
    if kernel.switched_off():
        return "kernel: switched off by PETRICEP_NO_KERNEL=1 (the Python engine runs every net)"
    if not kernel.available():
        return "kernel: not built (the Python engine runs every net)"
    return "kernel: covers this net (run fires it on the kernel)" if why is None else f"kernel: not used, the Python engine runs ({why})"
