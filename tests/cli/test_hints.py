"""What ``petricep run`` says where a run could silently be wrong or find nothing (issue 18,
items 3, 4 and 8): epoch milliseconds under a duration window, hints for patterns without
matches, and messages that name the option fixing the problem."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from petricep import kernel
from petricep.api import time_unit_warning
from petricep.cli import main
from petricep.io.textfiles import use_stdin
from petricep.lang.parser import parse_text

JAM = "PATTERN jam: SEQ(A a, B b)\nWHERE [k]\nWITHIN 30 min\n"
MS = "type,ts,k\nA,1406889000000,1\nB,1406889600000,1\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["run", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def write(tmp_path: Path, pattern: str, events: str, name: str = "ev.csv") -> tuple[str, str]:
    (tmp_path / "p.pcep").write_text(pattern)
    (tmp_path / name).write_text(events)
    return str(tmp_path / "p.pcep"), str(tmp_path / name)


def test_epoch_milliseconds_under_a_duration_window_warn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = write(tmp_path, JAM, MS)
    rc, out, err = run(capsys, pattern, "--events", events, "--type-field", "type", "--time-field", "ts")
    assert (rc, out) == (0, "")
    assert err.splitlines()[0] == (
        "warning: timestamps in 'ts' look like epoch milliseconds (1406889000000) while pattern 'jam' has a "
        "window of 30 min (in seconds): give --time-unit ms"
    )
    rc, out, err = run(capsys, pattern, "--events", events, "--type-field", "type", "--time-field", "ts", "--time-unit", "ms")
    assert rc == 0 and "warning" not in err
    assert out == '{"pattern": "jam", "ids": {"a": 0, "b": 1}, "start": 1406889000, "end": 1406889600, "attrs": {}}\n'


def test_epoch_microseconds_and_seconds() -> None:
    pats = list(parse_text(JAM, "<p>").patterns)
    assert time_unit_warning(pats, [], "ts", 1406889000000000) == (
        "warning: timestamps in 'ts' look like epoch microseconds (1406889000000000) while pattern 'jam' has a "
        "window of 30 min (in seconds): give --time-unit us"
    )
    assert time_unit_warning(pats, [], "ts", "1406889000") is None  # epoch seconds
    assert time_unit_warning(pats, [], "ts", "x") is None


def test_no_warning_for_a_window_in_timestamp_units(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = write(tmp_path, JAM.replace("30 min", "1800000"), MS)
    rc, out, err = run(capsys, pattern, "--events", events, "--type-field", "type", "--time-field", "ts")
    assert rc == 0 and "warning" not in err and out.count("\n") == 1


TRAFFIC = "PATTERN p: SEQ(Traffic a, Traffic b)\nWHERE b.x > a.x\nWITHIN 10\n"
SMALL_PEAK = (
    "  partial matches: 0 alive when the input ended, 0 left at the end, 0 dropped by limits"
)


def test_a_pattern_type_never_read_is_named_with_the_types_seen(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = write(tmp_path, TRAFFIC, "ts,x\n1,1\n2,3\n")
    rc, out, err = run(capsys, pattern, "--events", events, "--type", "traffic", "--time-field", "ts", "--engine", "python")
    assert (rc, out) == (0, "")
    assert err.splitlines()[1:] == [
        "  p: 0 matches",
        "    pattern 'p': no event of type 'Traffic' was read (types seen: traffic); the input has 'traffic', "
        "which differs only in case (type names match exactly)",
        SMALL_PEAK,
        "  engine: python (asked for)",
    ]


@pytest.mark.parametrize("extra", [[], ["--no-prefilter"], ["--with-events"]])
def test_types_seen_include_rows_the_prefilter_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    pattern, events = write(tmp_path, TRAFFIC, "type,ts,x\ntraffic,1,1\ncar,2,3\n")
    rc, _, err = run(capsys, pattern, "--events", events, "--type-field", "type", "--time-field", "ts", *extra)
    assert rc == 0
    assert (
        "    pattern 'p': no event of type 'Traffic' was read (types seen: car, traffic); the input has 'traffic', "
        "which differs only in case (type names match exactly)"
    ) in err.splitlines()


@pytest.mark.parametrize(("engine", "last"), [("python", "python (asked for)"), ("local", "kernel")])
def test_no_type_hint_for_types_read(tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str, last: str) -> None:
    """Both Traffic events were read: no type hint, but the condition nothing met is named,
    in the same words on either engine (from the input read again, not from an engine)."""
    if engine == "local" and not kernel.available():
        pytest.skip("the compiled kernel is not built or switched off")
    pattern, events = write(tmp_path, TRAFFIC, "type,ts,x\nTraffic,1,1\nTraffic,2,0\n")
    rc, _, err = run(capsys, pattern, "--events", events, "--type-field", "type", "--time-field", "ts", "--engine", engine)
    assert rc == 0 and err.splitlines()[1:] == [
        "  p: 0 matches",
        "    pattern 'p': no events satisfy its condition b.x > a.x: without it, it would match",
        SMALL_PEAK.replace(": 0 alive", ": 2 alive"),
        f"  engine: {last}",
    ]
    _, events = write(tmp_path, TRAFFIC, "type,ts,x\nCar,1,1\nCar,2,0\n")  # the type hint
    rc, _, err = run(capsys, pattern, "--events", events, "--type-field", "type", "--time-field", "ts", "--engine", engine)
    assert rc == 0 and err.splitlines()[2] == "    pattern 'p': no event of type 'Traffic' was read (types seen: Car)"


@pytest.mark.parametrize(
    ("engine", "sampled", "last"), [("python", "counted every 2,048 events", "python (asked for)"), ("local", "counted every 4,096 events", "kernel")]
)
def test_the_peak_line_of_a_run_that_swept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str, sampled: str, last: str
) -> None:
    """The peak is sampled at the Python engine's sweeps, after each of the kernel's batches."""
    if engine == "local" and not kernel.available():
        pytest.skip("the compiled kernel is not built or switched off")
    rows = "".join(f"Traffic,{i},{i % 7}\n" for i in range(5000))
    pattern, events = write(tmp_path, TRAFFIC.replace("WITHIN 10", "WITHIN 2"), "type,ts,x\n" + rows)
    argv = ["--events", events, "--type-field", "type", "--time-field", "ts", "-o", str(tmp_path / "m.jsonl")]
    rc, _, err = run(capsys, pattern, *argv, "--engine", engine)
    assert rc == 0
    assert err.splitlines()[-2].startswith("  partial matches: at most ")
    assert err.splitlines()[-2].endswith(f" alive at once ({sampled}), 0 left at the end, 0 dropped by limits")
    assert err.splitlines()[-1] == f"  engine: {last}"


def test_unsorted_input_names_slack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = write(tmp_path, TRAFFIC, "type,ts,x\nTraffic,28186.94,1\nTraffic,28186.912,3\n")
    rc, out, err = run(capsys, pattern, "--events", events, "--type-field", "type", "--time-field", "ts")
    assert (rc, out) == (3, "")
    assert err == (
        f"{events}:3: field 'ts': error: timestamp 28186.912 is before the previous event's 28186.94 "
        "(use --slack D to accept events up to D late)\n"
    )


@pytest.mark.parametrize("option,name", [("--time-field", "timestamp"), ("--type-field", "kind"), ("--id-field", "eid")])
def test_a_missing_column_lists_the_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, name: str
) -> None:
    pattern, events = write(tmp_path, TRAFFIC, "type,ts,x\nTraffic,1,1\n")
    argv = {"--time-field": "ts", "--type-field": "type"}
    argv[option] = name
    flat = [w for kv in argv.items() for w in kv]
    rc, out, err = run(capsys, pattern, "--events", events, *flat)
    assert (rc, out) == (3, "")
    assert err == f"{events}:1: field {name!r}: error: missing column {name!r} (the columns: type, ts, x)\n"


def test_a_missing_jsonl_time_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = write(tmp_path, TRAFFIC, '{"type": "Traffic", "ts": 1, "x": 1}\n', "ev.jsonl")
    rc, _, err = run(capsys, pattern, "--events", events, "--type-field", "type", "--time-field", "time")
    assert rc == 3
    assert err.startswith(f"{events}:1: field 'time': error: ")


def test_a_condition_no_event_satisfies_is_named_from_standard_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Standard input cannot be read again: the Python engine's marking of the net says
    which step nothing took and what it asked (the default run, on the kernel, says to run
    with --engine python for it)."""
    events = "type,ts,k,x\nA,1,1,5\nA,2,2,5\nB,3,1,7\nB,4,2,4\nB,5,1,9\n"
    (tmp_path / "never.pcep").write_text("PATTERN rise: SEQ(A a, B b)\nWHERE [k] AND b.x > a.x + 100\nWITHIN 10\n")
    (tmp_path / "first.pcep").write_text("PATTERN big: SEQ(A a, B b)\nWHERE a.x > 1000\nWITHIN 10\n")
    argv = ["--events", "-", "--format", "csv", "--type-field", "type", "--time-field", "ts", "--no-progress"]
    use_stdin(io.BytesIO(events.encode()))
    try:
        assert main(["run", str(tmp_path / "never.pcep"), *argv]) == 0
    finally:
        use_stdin(None)
    assert capsys.readouterr().err.splitlines()[2] == (
        "    pattern 'rise': run with --engine python to see which step no event could take, and its conditions"
    )
    argv += ["--engine", "python"]
    use_stdin(io.BytesIO(events.encode()))
    try:
        assert main(["run", str(tmp_path / "never.pcep"), *argv]) == 0
    finally:
        use_stdin(None)
    err = capsys.readouterr().err.splitlines()
    assert err[1:3] == [
        "  rise: 0 matches",
        "    pattern 'rise': events of type 'B' were read, but none could bind b after the partial matches before it "
        "(its conditions: [k] AND b.x > a.x + 100)",
    ]
    use_stdin(io.BytesIO(events.encode()))
    try:
        assert main(["run", str(tmp_path / "first.pcep"), *argv]) == 0
    finally:
        use_stdin(None)
    err = capsys.readouterr().err.splitlines()
    assert err[2] == (
        "    pattern 'big': events of type 'A' were read, but none could start a match as a (its conditions: a.x > 1000)"
    )


@pytest.mark.parametrize(
    ("rows", "hint"),
    [
        (
            "type,ts,x\n Traffic,1,1\n",
            "    pattern 'p': no event of type 'Traffic' was read (types seen: ' Traffic'); the input has ' Traffic', "
            "which differs only in spaces around it (type names match exactly)",
        ),
        (
            "type,ts,x\nTRAFFIC ,1,1\ncar,2,1\n",
            "    pattern 'p': no event of type 'Traffic' was read (types seen: 'TRAFFIC ', car); the input has 'TRAFFIC ', "
            "which differs only in spaces around it and case (type names match exactly)",
        ),
        ("type,ts,x\ntraffik,1,1\n", "    pattern 'p': no event of type 'Traffic' was read (types seen: traffik)"),
    ],
)
def test_a_type_differing_only_in_case_or_spaces_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rows: str, hint: str
) -> None:
    """The likely mistake named: a type column whose names carry spaces (``id, A,1``) or
    another case; the seen names quoted where their spaces would not show."""
    pattern, events = write(tmp_path, TRAFFIC, rows)
    rc, _, err = run(capsys, pattern, "--events", events, "--type-field", "type", "--time-field", "ts")
    assert rc == 0 and err.splitlines()[2] == hint


@pytest.mark.parametrize(
    ("where", "rows", "hint"),
    [
        (
            "b.sym = 1",
            "type,ts,sym\nTraffic,1,x\nTraffic,2,y\n",
            "    pattern 'p': no events satisfy its condition b.sym = 1: without it, it would match; "
            "b.sym holds text ('x'), 1 is a number",
        ),
        (
            "'20' = b.x",
            "type,ts,x\nTraffic,1,20\nTraffic,2,20\n",
            "    pattern 'p': no events satisfy its condition '20' = b.x: without it, it would match; "
            "b.x holds numbers (20), '20' is text",
        ),
        (  # one event has a number there: no clash to name
            "b.sym = 1",
            "type,ts,sym\nTraffic,1,x\nTraffic,2,2\n",
            "    pattern 'p': no events satisfy its condition b.sym = 1: without it, it would match",
        ),
    ],
)
@pytest.mark.parametrize("engine", ["python", "local"])
def test_a_field_compared_with_a_literal_of_the_other_kind_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, rows: str, hint: str, engine: str
) -> None:
    """``b.sym = 1`` over text: never true, which the hint says along with the field's kind."""
    if engine == "local" and not kernel.available():
        pytest.skip("the compiled kernel is not built or switched off")
    pattern, events = write(tmp_path, f"PATTERN p: SEQ(Traffic a, Traffic b)\nWHERE {where}\nWITHIN 10\n", rows)
    rc, _, err = run(capsys, pattern, "--events", events, "--type-field", "type", "--time-field", "ts", "--engine", engine)
    assert rc == 0 and err.splitlines()[2] == hint
