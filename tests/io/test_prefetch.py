"""Reading ahead on a thread (:mod:`petricep.io.prefetch`): the same items in the same
order, a reader's error where the next item would have been (the same exception: file,
line and field), and a reader stopped and closed when the caller stops early."""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

import petricep.api.runner as runner
from petricep.api import compile_text
from petricep.api.runner import Run
from petricep.errors import EventError
from petricep.io import InputSpec
from petricep.io.prefetch import ReadAhead


def _numbers(n: int, fail_at: int | None, closed: list[str]) -> Iterator[int]:
    try:
        for i in range(n):
            if i == fail_at:
                raise EventError("cannot parse timestamp 'zz'", "ev.csv", i + 2, "ts")
            yield i
    finally:
        closed.append(threading.current_thread().name)


def test_items_in_order_then_the_end() -> None:
    closed: list[str] = []
    assert list(ReadAhead(_numbers(1000, None, closed))) == list(range(1000))
    assert closed == ["petricep-read-ahead"]  # the reader is closed by the thread that reads it


def test_a_generator_s_return_value_comes_back() -> None:
    def made() -> Generator[int, None, str]:
        yield from range(3)
        return "the end"

    got = iter(ReadAhead(made()))
    assert [next(got) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(StopIteration) as info:
        next(got)
    assert info.value.value == "the end"


def test_an_error_comes_after_every_item_before_it() -> None:
    got: list[int] = []
    with pytest.raises(EventError) as info:
        for i in ReadAhead(_numbers(100, 57, [])):
            got.append(i)
    assert got == list(range(57))
    e = info.value
    assert (e.message, e.file, e.row, e.field) == ("cannot parse timestamp 'zz'", "ev.csv", 59, "ts")


def test_leaving_early_stops_and_closes_the_reader() -> None:
    closed: list[str] = []
    ahead = ReadAhead(_numbers(10**9, None, closed), ahead=2)
    for i in ahead:
        if i == 5:
            break
    assert closed == ["petricep-read-ahead"]
    assert not any(t.name == "petricep-read-ahead" for t in threading.enumerate())


NET = compile_text("PATTERN p: SEQ(A a, B b) WHERE b.x > a.x + 5 WITHIN 10")


def _csv(path: Path, rows: int, bad: dict[int, str]) -> None:
    lines = ["type,ts,id,x"]
    for i in range(rows):
        lines.append(bad.get(i, f"{'AB'[i % 2]},{i // 2},{i},{i % 7}"))
    path.write_text("\n".join(lines) + "\n")


def _outcome(path: Path, monkeypatch: pytest.MonkeyPatch, ahead: bool) -> tuple[list[str], tuple[object, ...] | None, int]:
    with monkeypatch.context() as m:
        m.setattr(runner.Run, "_read_ahead", lambda self: ahead)
        run = Run(NET, InputSpec(str(path), type_field="type", time_field="ts", id_field="id"))
        found: list[str] = []
        error = None
        try:
            for match in run:
                found.append(repr(match.to_dict()))
        except EventError as e:
            error = (type(e).__name__, str(e), e.file, e.row, e.field)
        threads = sum(t.name == "petricep-read-ahead" for t in threading.enumerate())
    return found, error, threads


@pytest.mark.parametrize("bad", ["A,zz,1,2", "A,1,1", "A,0,1,2", "A,3,,1"])
def test_a_bad_row_late_in_the_file_is_reported_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    """A bad row some batches in (the reader is ahead of the engine when it meets it): the
    matches before it, then its error with the file, the line and the field, as reading in
    step gives them."""
    p = tmp_path / "ev.csv"
    _csv(p, 200_000, {150_000: bad})
    ahead = _outcome(p, monkeypatch, True)
    assert ahead[1] is not None and ahead[1][3] == 150_002 and len(ahead[0]) > 10_000
    assert ahead == _outcome(p, monkeypatch, False)
    assert ahead[2] == 0


def test_the_run_reads_ahead_except_from_stdin_or_when_skipping(tmp_path: Path) -> None:
    p = tmp_path / "ev.csv"
    _csv(p, 10, {})
    assert Run(NET, InputSpec(str(p), type_field="type", time_field="ts"))._read_ahead()
    skip = InputSpec(str(p), type_field="type", time_field="ts", on_error="skip")
    assert not Run(NET, skip)._read_ahead()
