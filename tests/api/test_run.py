"""The library's :class:`petricep.api.Run`: the same matches as the engine, the accounting
of ``petricep run`` (events read = processed + rejected + late), errors located at the
input and the event, the header read once, and a stop that keeps what was found."""

from __future__ import annotations

from pathlib import Path

import pytest

import petricep.api.runner as runner
from petricep import kernel
from petricep.api import compile_files, compile_text, load_patterns, net_of, sharing_lines, warnings_for
from petricep.api.runner import Run
from petricep.errors import EvaluationError, EventError
from petricep.io import InputSpec, open_events
from petricep.runtime.engine import Engine

RISE = "PATTERN rise: SEQ(A a, B b)\nWHERE [k] AND b.x > a.x\nWITHIN 10\n"
# C rows: no pattern reads them (the prefilter drops them); one bad row (x is not a number)
EVENTS = "type,ts,k,x\nA,1,1,5\nC,2,1,0\nA,2,2,5\nB,3,1,7\nC,4,1,0\nB,4,2,4\nB,5,1,oops\nB,6,1,9\n"


def files(tmp_path: Path, pattern: str = RISE, events: str = EVENTS) -> tuple[Path, Path]:
    (tmp_path / "rise.pcep").write_text(pattern)
    (tmp_path / "ev.csv").write_text(events)
    return tmp_path / "rise.pcep", tmp_path / "ev.csv"


def spec(path: Path, **kw: object) -> InputSpec:
    return InputSpec(str(path), type_field="type", time_field="ts", numeric={"*": frozenset({"x"})}, **kw)  # type: ignore[arg-type]


def test_run_gives_the_engines_matches_and_accounts_for_every_row(tmp_path: Path) -> None:
    pattern, events = files(tmp_path, events=EVENTS.replace("B,5,1,oops\n", ""))
    net = compile_files([pattern])
    run = Run(net, spec(events))
    got = [m.to_dict() for m in run]
    want = [m.to_dict() for m in Engine(net).run(open_events(spec(events)))]
    assert got == want == [
        {"pattern": "rise", "ids": {"a": 0, "b": 3}, "start": 1, "end": 3, "attrs": {}},
        {"pattern": "rise", "ids": {"a": 0, "b": 6}, "start": 1, "end": 6, "attrs": {}},
    ]
    assert run.prefilter is not None and (run.prefilter.rows_in, run.prefilter.rows_kept) == (7, 5)
    report = run.report()
    assert report["events"] == {"read": 7, "processed": 7, "rejected": 0, "late": 0, "composite": 0}
    assert report["patterns"]["rise"]["matches"] == 2
    assert not run.incomplete
    # without the prefilter: the same matches and the same accounting
    plain = Run(net, spec(events), prefilter=False)
    assert [m.to_dict() for m in plain] == got
    assert plain.prefilter is None and plain.report()["events"] == report["events"]


def test_rejected_rows_are_counted(tmp_path: Path) -> None:
    pattern, events = files(tmp_path)
    run = Run(compile_files([pattern]), spec(events, on_error="skip"))
    assert [m.ids for m in run] == [{"a": 0, "b": 3}, {"a": 0, "b": 7}]
    assert run.report()["events"] == {"read": 8, "processed": 7, "rejected": 1, "late": 0, "composite": 0}
    assert run.incomplete


def test_an_evaluation_error_names_the_input_and_the_event(tmp_path: Path) -> None:
    pattern, events = files(tmp_path, "PATTERN p: A a RETURN T(v = a.s)\nPATTERN q: T t WHERE t.v < 5\n", "type,ts,s\nA,1,1\nA,2,two\n")
    run = Run(compile_files([pattern]), InputSpec(str(events), type_field="type", time_field="ts"))
    with pytest.raises(EvaluationError) as err:
        list(run)
    assert str(err.value) == f"{events}: event at position 1 (id 1): cannot compare 'two' < 5"


def test_a_missing_column_names_the_events_and_the_pattern_and_the_header_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pattern, events = files(tmp_path)
    opened: list[InputSpec] = []

    def counting(s: InputSpec) -> object:
        opened.append(s)
        return open_events(s)

    monkeypatch.setattr(runner, "open_events", counting)
    parsed = load_patterns([pattern])
    list(Run(net_of(parsed), spec(events, on_error="skip"), files=parsed))
    assert len(opened) == 1  # a good input: its header is read once
    (tmp_path / "ev.csv").write_text("type,ts,k,y\nA,1,1,5\n")
    with pytest.raises(EventError) as err:  # the events' error (exit 3), as a missing time column
        Run(net_of(parsed), spec(events), files=parsed)
    assert (err.value.file, err.value.row, err.value.field, err.value.exit_code) == (str(events), 1, "x", 3)
    assert str(err.value).splitlines() == [
        f"{events}:1: field 'x': error: missing column 'x' (the columns: type, ts, k, y), read at {pattern}:2:15: "
        "event type 'B' has no field 'x'",
        "    WHERE [k] AND b.x > a.x",
        "                  ^",
        f"{pattern}:2:21: error: event type 'A' has no field 'x'",
        "    WHERE [k] AND b.x > a.x",
        "                        ^",
    ]


def test_stop_keeps_the_matches_so_far_and_counts_rows_up_to_the_last_event(tmp_path: Path) -> None:
    """On the Python engine the stop comes after the event being matched."""
    rows = "".join(f"{'AB'[i % 2]},{i},1,{i}\n" for i in range(3000))
    pattern, events = files(tmp_path, "PATTERN rise: SEQ(A a, B b)\nWHERE [k] AND b.x > a.x\nWITHIN 3\n", "type,ts,k,x\n" + rows)
    run = Run(compile_files([pattern]), spec(events), engine="python")
    got = []
    for m in run:
        got.append(m.to_dict())
        if len(got) == 10:
            run.stop()
    assert run.stopped
    full = [m.to_dict() for m in Engine(compile_files([pattern])).run(open_events(spec(events)))]
    last_b = got[-1]["ids"]["b"]
    # the stop comes after the current event: every match it completed, none later
    assert got == [m for m in full if m["ids"]["b"] <= last_b] == full[: len(got)]
    assert len(got) == 11
    assert run.report()["events"] == {"read": last_b + 1, "processed": last_b + 1, "rejected": 0, "late": 0, "composite": 0}


@pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built or switched off")
def test_on_the_kernel_a_stop_comes_after_the_batch(tmp_path: Path) -> None:
    """The kernel (the default engine) fires a batch at a time (a reader's checked batch of
    rows at once): a stop asked for while a batch's matches are read ends the run after that
    batch; every match yielded is one of the whole run, those of the batch's events all, and
    the accounting counts the rows up to the batch's last event."""
    rows = "".join(f"{'AB'[i % 2]},{i},1,{i}\n" for i in range(150_000))
    pattern, events = files(tmp_path, "PATTERN rise: SEQ(A a, B b)\nWHERE [k] AND b.x > a.x\nWITHIN 3\n", "type,ts,k,x\n" + rows)
    run = Run(compile_files([pattern]), spec(events))
    got = []
    for m in run:
        got.append(m.to_dict())
        if len(got) == 10:
            run.stop()
    assert run.stopped and run.report()["engine"] == {"name": "kernel", "why": "covered"}
    read = run.report()["events"]["read"]
    assert 65_536 <= read < 150_000  # a whole batch (csvstream.ROWS rows at least), not the input
    full = [m.to_dict() for m in Engine(compile_files([pattern])).run(open_events(spec(events)))]
    assert got == [m for m in full if m["ids"]["b"] < read]
    assert run.report()["events"] == {"read": read, "processed": read, "rejected": 0, "late": 0, "composite": 0}


def test_progress_is_called_every_so_many_events_and_with_the_rest(tmp_path: Path) -> None:
    rows = "".join(f"A,{i},1,{i}\n" for i in range(runner.PROGRESS_EVERY + 7))
    pattern, events = files(tmp_path, events="type,ts,k,x\n" + rows)
    ticks: list[int] = []
    run = Run(compile_files([pattern]), spec(events), prefilter=False, progress=ticks.append)
    assert list(run) == []
    assert ticks == [runner.PROGRESS_EVERY, 7]


def test_warnings_and_sharing_come_from_the_api() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WITHIN 5\nPATTERN q: SEQ(A a, B b, C c) WITHIN 5\n")
    assert sharing_lines(net) == [
        "  shared (front combination): place 'a' by p, q",
        "  shared (front combination): place 'a;b' by p, q",
        "  shared whole: every place of p serves other patterns too",
    ]
    net = compile_text("PATTERN p: SEQ(A a, B b)\nPATTERN q: SEQ(A a, B+ b[]) LIMIT 3 PARTIAL MATCHES\nPATTERN r: A a\n")
    assert warnings_for([p.source for p in net.patterns]) == [
        "warning: pattern 'p' has no WITHIN window: its partial matches may grow without bound "
        "(add WITHIN, or LIMIT n PARTIAL MATCHES)",
        "warning: pattern 'q': Kleene variable b[] has no WITHIN window: one partial match may grow without bound",
    ]


@pytest.mark.parametrize(("pattern", "row", "field"), [
    ("PATTERN p: SEQ(A a, B b) WHERE b.x > a.x WITHIN 10", 2, "x"),
    ("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 10", 3, "k"),
    ("PATTERN p: SEQ(A a, B b) WHERE b.x = a.x WITHIN 10", 2, "x"),
])  # fmt: skip
@pytest.mark.parametrize("engine", ["kernel", "python"])
def test_a_spec_without_rules_reads_by_the_patterns_rules(tmp_path: Path, pattern: str, row: int, field: str,
                                                           engine: str) -> None:
    """Run checks every field its net's patterns read, whatever rules its spec gives: a list
    where a condition or key reads one is the row's error on both engines (issue 43)."""
    events = tmp_path / "ev.jsonl"
    events.write_text('{"type": "A", "ts": 1, "x": 1, "k": "a"}\n{"type": "B", "ts": 3, "x": [5], "k": "a"}\n'
                      '{"type": "B", "ts": 4, "x": 7, "k": [1]}\n')
    run = Run(compile_text(pattern), InputSpec(str(events), type_field="type", time_field="ts"), engine=engine)
    with pytest.raises(EventError) as e:
        list(run)
    assert str(e.value) == f"{events}:{row}: field {field!r}: error: expected a single value, got a list"
