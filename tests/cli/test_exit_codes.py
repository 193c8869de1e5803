"""The exit status contract (README "Exit status", issue 15): 0 ok, 2 the command line or a
pattern, 3 the events (or a run that finished with rejected or late rows), 1 an output that
cannot be written; the class of the error decides it, in one place (petricep.errors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from petricep import kernel
from petricep.cli import main
from petricep.errors import (
    ConfigError,
    EvaluationError,
    EventError,
    EventOrderError,
    OutputError,
    PatternError,
    PatternLimitError,
    PetricepError,
    StateLimitError,
)
from tests.cli.rise import LINES, opts, run


def test_each_error_class_carries_its_exit_status() -> None:
    assert PetricepError("x").exit_code == 1
    assert OutputError("x").exit_code == 1
    assert PatternError("x").exit_code == PatternLimitError("x").exit_code == 2
    assert ConfigError("x").exit_code == 2
    assert EventError("x").exit_code == EventOrderError("x").exit_code == 3
    assert EvaluationError("x").exit_code == StateLimitError("x").exit_code == 3


def test_ok_is_0(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = files
    rc, out, _ = run(capsys, pattern, *opts(events), "--no-progress")
    assert (rc, out) == (0, LINES)


def test_a_usage_error_is_2(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = files
    with pytest.raises(SystemExit) as info:
        main(["run", pattern, *opts(events), "--tie", "sometimes"])
    assert info.value.code == 2
    capsys.readouterr()
    rc, out, err = run(capsys, pattern, *opts(events), "--late", "late.jsonl")
    assert (rc, out, err) == (2, "", "--late needs --slack\n")


@pytest.mark.parametrize(
    "name,text,code,prefix",
    [
        ("bad.pcep", "PATTERN p: SEQ(A a, B b) WITHIN\n", 2, "bad.pcep:1:"),  # a pattern error
        ("bad.csv", "type,ts,k,x\nA,1,1,5\nA,x,2,5\n", 3, "bad.csv:3: field 'ts': error:"),  # a data error
    ],
)
def test_pattern_errors_are_2_and_data_errors_3(
    tmp_path: Path, files: tuple[str, str], capsys: pytest.CaptureFixture[str], name: str, text: str, code: int,
    prefix: str,
) -> None:
    pattern, events = files
    bad = tmp_path / name
    bad.write_text(text)
    argv = [str(bad), *opts(events)] if name.endswith(".pcep") else [pattern, *opts(str(bad))]
    rc, out, err = run(capsys, *argv)
    assert (rc, out) == (code, "") and err.startswith(str(tmp_path / prefix))


def test_missing_inputs(tmp_path: Path, files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    """A missing pattern file is the command line's mistake (2), a missing events file the data's (3)."""
    pattern, events = files
    assert main(["check", str(tmp_path / "missing.pcep")]) == 2
    capsys.readouterr()
    rc, _, err = run(capsys, str(tmp_path / "missing.pcep"), *opts(events))
    assert (rc, err) == (2, f"{tmp_path / 'missing.pcep'}: error: cannot read pattern file: No such file or directory\n")
    rc, _, err = run(capsys, pattern, *opts(str(tmp_path / "none.csv")))
    assert (rc, err) == (3, f"{tmp_path / 'none.csv'}: error: cannot open file: no such file\n")


def test_a_finished_run_with_rejected_rows_is_3(
    tmp_path: Path, files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    pattern, _ = files
    bad = tmp_path / "bad.csv"
    bad.write_text("type,ts,k,x\nA,1,1,5\nA,x,2,5\nB,3,1,7\n")
    rc, out, _ = run(capsys, pattern, *opts(str(bad)), "--on-error", "skip")
    assert rc == 3
    assert out == '{"pattern": "rise", "ids": {"a": 0, "b": 2}, "start": 1, "end": 3, "attrs": {}}\n'


def test_an_unwritable_output_is_1(
    tmp_path: Path, files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    pattern, events = files
    target = tmp_path / "no" / "such" / "dir" / "out.jsonl"
    rc, out, err = run(capsys, pattern, *opts(events), "-o", str(target))
    assert (rc, out) == (1, "")
    assert err == f"cannot write {target}: No such file or directory\n"


# every non-empty subset of the As 1..9 before the B at 10; the As 11..19 then hold 2**18 - 1
# partial matches (over a budget of 1000 at the 10th A, event 11)
NO_BUDGET_MATCHES = 511
EXPLOSIVE = "PATTERN burst: SEQ(A+ a[], B b) WHERE [k] WITHIN 100000\n"


BUDGET_ERROR = (
    "pattern 'burst': 1023 live partial matches, over the run's budget of 1000 (key 'k1' holds 1023) at "
    "event 11; bound the pattern with LIMIT n PARTIAL MATCHES, or raise the budget (--max-partial-matches N, "
    "Engine(max_partial_matches=N))"
)


@pytest.mark.parametrize("engine", ["local", "python"])
def test_the_memory_budget_option(tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str) -> None:
    if engine == "local" and not kernel.available():
        pytest.skip("the compiled kernel is not built or switched off")
    (tmp_path / "burst.pcep").write_text(EXPLOSIVE)
    rows = "".join(f"{'B' if i % 10 == 0 else 'A'},{i},k1,0\n" for i in range(20))
    (tmp_path / "ev.csv").write_text("type,ts,k,x\n" + rows)
    argv = [str(tmp_path / "burst.pcep"), *opts(str(tmp_path / "ev.csv")), "--no-progress", "--engine", engine]
    rc, out, err = run(capsys, *argv, "--max-partial-matches", "1000")
    # standard output is a stream: the 511 matches before the stop were written; both engines
    # stop at the event that goes over the budget (the kernel counts within its batch)
    assert (rc, len(out.splitlines())) == (3, 511)
    assert err.splitlines()[-1] == BUDGET_ERROR
    rc, out, _ = run(capsys, *argv, "--max-partial-matches", "none")
    assert (rc, len(out.splitlines())) == (0, NO_BUDGET_MATCHES)
    for bad in ("0", "-3", "many"):
        with pytest.raises(SystemExit) as info:
            main(["run", *argv, "--max-partial-matches", bad])
        assert info.value.code == 2
        assert (
            f"expected a positive number of partial matches or 'none', not '{bad}'" in capsys.readouterr().err
        )


def test_a_missing_tool_is_1(
    files: tuple[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Graphviz's dot not installed: the installation's problem, exit 1, one line saying what to install."""
    pattern, _ = files
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot on it
    assert main(["draw", pattern, "-o", str(tmp_path / "n.png")]) == 1
    assert capsys.readouterr().err.startswith(
        "rendering PNG needs Graphviz's 'dot' program, which is not installed"
    )


def test_the_budget_is_refused_where_it_is_not_applied(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    pattern, events = files
    rc, _, err = run(capsys, pattern, *opts(events), "--engine", "spark", "--max-partial-matches", "10")
    assert (rc, err) == (2, "--max-partial-matches is not applied with --engine spark (yet): run embedded\n")
