"""A run that finds nothing says why, in the same words on the kernel and on the Python
engine (issue 41): the window, the strategy (naming partition-contiguity), the keys,
a negation, the order of the events; and a window without a unit over date-times warns."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from petricep import kernel
from petricep.api.explain import unitless_window_warnings
from petricep.cli import main
from petricep.io.textfiles import use_stdin
from petricep.lang.parser import parse_text

ENGINES = [("python", "python (asked for)"), ("local", "kernel")]
DAILY = "type,ts,k\nA,2020-01-01,1\nB,2020-01-02,1\nA,2020-01-03,1\nB,2020-01-04,1\n"
# five symbols a month apart, interleaved: the months of each rise, the symbols between them
MONTHLY = "type,ts,symbol,close\n" + "".join(
    f"Price,2020-{m:02d}-01,{s},{10 + m + i}\n" for m in range(1, 13) for i, s in enumerate("ABCDE")
)


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], pattern: str, events: str, engine: str) -> tuple[int, list[str]]:
    if engine == "local" and not kernel.available():
        pytest.skip("the compiled kernel is not built or switched off")
    (tmp_path / "p.pcep").write_text(pattern)
    (tmp_path / "ev.csv").write_text(events)
    argv = ["run", str(tmp_path / "p.pcep"), "--events", str(tmp_path / "ev.csv"), "--type-field", "type"]
    rc = main([*argv, "--time-field", "ts", "--no-progress", "--engine", engine])
    return rc, capsys.readouterr().err.splitlines()


@pytest.mark.parametrize(("engine", "last"), ENGINES)
def test_a_window_without_unit_over_dates_warns_and_explains(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str, last: str
) -> None:
    rc, err = run(tmp_path, capsys, "PATTERN p: SEQ(A a, B b)\nWHERE [k]\nWITHIN 3\n", DAILY, engine)
    assert rc == 0
    assert err[0] == (
        "warning: pattern 'p': WITHIN 3 has no unit and the events' times are date-times: it means 3 seconds; "
        "the events are ~1 day apart: did you mean WITHIN 3 DAYS?"
    )
    assert err[2:5] == [
        "  p: 0 matches",
        "    pattern 'p': no match fits in its window WITHIN 3: without it, the shortest spans 86,400 s (~1 day)",
        "  partial matches: 0 alive when the input ended, 0 left at the end, 0 dropped by limits",
    ]
    assert err[-1] == f"  engine: {last}"
    assert sum("warning" in line for line in err) == 1


@pytest.mark.parametrize(("engine", "last"), ENGINES)
def test_a_duration_window_too_short_is_named_with_its_seconds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str, last: str
) -> None:
    rc, err = run(tmp_path, capsys, "PATTERN p: SEQ(A a, B b)\nWHERE [k]\nWITHIN 2 h\n", DAILY, engine)
    assert rc == 0 and "warning" not in err[0]
    assert err[1:3] == [
        "  p: 0 matches",
        "    pattern 'p': no match fits in its window WITHIN 2 h (7,200 s): without it, the shortest spans 86,400 s (~1 day)",
    ]


@pytest.mark.parametrize(("engine", "last"), ENGINES)
def test_strict_contiguity_over_interleaved_keys_names_partition_contiguity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str, last: str
) -> None:
    pattern = "PATTERN rise: SEQ(Price a, Price b)\nWHERE [symbol] AND strict-contiguity AND b.close > a.close\nWITHIN 90 d\n"
    rc, err = run(tmp_path, capsys, pattern, MONTHLY, engine)
    assert rc == 0 and err[1:3] == [
        "  rise: 0 matches",
        "    pattern 'rise': strict-contiguity needs its events next to each other in the whole input, and events of "
        "other [symbol] values come in between: partition-contiguity (next to each other within one [symbol]) would match",
    ]
    assert err[-1] == f"  engine: {last}"
    rc, err = run(tmp_path, capsys, pattern.replace("strict-contiguity", "partition-contiguity"), MONTHLY, engine)
    assert rc == 0 and err[1] == "  rise: 55 matches"


@pytest.mark.parametrize(("engine", "last"), ENGINES)
def test_keys_negations_and_order_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str, last: str
) -> None:
    rc, err = run(tmp_path, capsys, "PATTERN p: SEQ(A a, B b)\nWHERE [k]\nWITHIN 10\n", "type,ts,k\nA,1,1\nB,2,2\n", engine)
    assert err[1:3] == [
        "  p: 0 matches",
        "    pattern 'p': no key [k] has a match: without [k], events of different k values would match",
    ]
    events = "type,ts\nA,1\nC,2\nB,3\n"
    rc, err = run(tmp_path, capsys, "PATTERN n: SEQ(A a, !(C c), B b)\nWITHIN 10\n", events, engine)
    assert err[1:3] == [
        "  n: 0 matches",
        "    pattern 'n': an event its negation !(C c) forbids comes in every candidate: without it, it would match",
    ]
    # a list of two Bs at least: the C between them stops it (UNTIL C c)
    twice = "type,ts\nA,1\nB,2\nC,3\nB,4\nD,5\n"
    rc, err = run(tmp_path, capsys, "PATTERN u: SEQ(A a, B{2,} b[] UNTIL C c, D d)\nWITHIN 10\n", twice, engine)
    at = err.index("  u: 0 matches")  # (after the warning about the list's subsets)
    assert err[at + 1] == "    pattern 'u': a stop event (UNTIL C c) ends every candidate's list too early: without it, it would match"
    rc, err = run(tmp_path, capsys, "PATTERN o: SEQ(B b, A a)\nWITHIN 10\n", events, engine)
    assert err[1:3] == [
        "  o: 0 matches",
        "    pattern 'o': its events never come in its order, whatever its window, strategy, keys and conditions",
    ]
    assert err[-1] == f"  engine: {last}"


def test_the_explanation_says_it_read_a_prefix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = "type,ts,x\n" + "".join(f"A,{i},1\n" for i in range(10_001)) + "B,20000,0\n"
    rc, err = run(tmp_path, capsys, "PATTERN p: SEQ(A a, B b)\nWITHIN 10\n", events, "python")
    assert err[2] == "    pattern 'p': its events never come in its order, whatever its window, strategy, keys and conditions (in the first 10,000 events)"


def test_no_warning_over_numbers_or_with_a_unit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, err = run(tmp_path, capsys, "PATTERN p: SEQ(A a, B b)\nWITHIN 3\n", "type,ts\nA,1\nB,2\n", "python")
    assert rc == 0 and err[1] == "  p: 1 matches" and not any("warning" in line for line in err)
    rc, err = run(tmp_path, capsys, "PATTERN p: SEQ(A a, B b)\nWITHIN 3 d\n", DAILY, "python")
    assert rc == 0 and err[1] == "  p: 3 matches" and not any("warning" in line for line in err)


def test_over_standard_input_the_warning_names_no_spacing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.pcep").write_text("PATTERN p: SEQ(A a, B b)\nWITHIN 3\n")
    use_stdin(io.BytesIO(DAILY.encode()))
    try:
        rc = main(["run", str(tmp_path / "p.pcep"), "--events", "-", "--format", "csv", "--type-field", "type", "--time-field", "ts", "--no-progress"])
    finally:
        use_stdin(None)
    err = capsys.readouterr().err.splitlines()
    assert rc == 0 and err[0] == (
        "warning: pattern 'p': WITHIN 3 has no unit and the events' times are date-times: it means 3 seconds "
        "(write a unit: WITHIN 3 s, min, h or DAYS)"
    )


def test_unitless_window_warnings_from_the_spacing() -> None:
    (p,) = parse_text("PATTERN p: SEQ(A a, B b) WITHIN 1\n", "<p>").patterns
    head = "warning: pattern 'p': WITHIN 1 has no unit and the events' times are date-times: it means 1 second"
    assert unitless_window_warnings([p], [0, 0, 3600, 7200, 10800]) == [
        f"{head}; the events are ~1 hour apart: did you mean WITHIN 1 HOURS?"
    ]
    assert unitless_window_warnings([p], [0, 2, 4]) == [f"{head}; the events are ~2 seconds apart (write WITHIN 1 s to say so)"]
    assert unitless_window_warnings([p], [0, 90, 180]) == [f"{head}; the events are ~1.5 minutes apart: did you mean WITHIN 1 MINUTES?"]
    (q,) = parse_text("PATTERN q: SEQ(A a, B b) WITHIN 3600\n", "<p>").patterns
    assert unitless_window_warnings([q], [0, 300, 600]) == []  # an hour over events 5 minutes apart: meant
    assert unitless_window_warnings([q], None) == [
        "warning: pattern 'q': WITHIN 3600 has no unit and the events' times are date-times: it means 3600 seconds "
        "(write a unit: WITHIN 3600 s, min, h or DAYS)"
    ]


def test_a_pattern_that_matches_alone_names_what_it_shares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern = "PATTERN c1: SEQ(A a, B b) WITHIN 10\nPATTERN c2: SEQ(A a, C c) WITHIN 10\nCONFLICT g: c1, c2\n"
    rc, err = run(tmp_path, capsys, pattern, "type,ts\nA,1\nB,2\nC,3\n", "python")
    assert err[1:4] == [
        "  c1: 1 matches",
        "  c2: 0 matches",
        "    pattern 'c2': alone over the same events it matches: in this run the matches of other patterns consume "
        "its events (CONSUME, CONFLICT), or its LIMIT drops its partial matches",
    ]


def test_the_tie_rule_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.pcep").write_text("PATTERN t: SEQ(A a, B b)\nWITHIN 10\n")
    (tmp_path / "ev.csv").write_text("type,ts\nA,1\nB,1\n")
    argv = ["--events", str(tmp_path / "ev.csv"), "--type-field", "type", "--time-field", "ts", "--tie", "strict"]
    assert main(["run", str(tmp_path / "p.pcep"), *argv]) == 0
    assert capsys.readouterr().err.splitlines()[2] == (
        "    pattern 't': under --tie strict no match: events at equal times are not ordered there, and --tie arrival would match"
    )
