"""``petricep run`` with event-time options: --slack, --late, --stats; accounting and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from petricep.cli import main
from petricep.errors import ConfigError

CART = """PATTERN checkout: SEQ(Add a, Pay b)
WHERE [user]
WITHIN 10
LIMIT 1 PARTIAL MATCHES PER KEY DROP OLDEST
ON TIMEOUT RETURN Abandoned(user = a.user)
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


EVENTS = "type,ts,user\nAdd,3,u\nAdd,1,v\nPay,4,v\nAdd,0,w\nAdd,5,u\nPay,6,u\nAdd,30,x\n"


def test_slack_late_file_stats_and_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern = write(tmp_path, "cart.pcep", CART)
    events = write(tmp_path, "ev.csv", EVENTS)
    late, stats = tmp_path / "late.jsonl", tmp_path / "stats.json"
    rc, out, err = run(
        capsys, "run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts",
        "--slack", "2", "--late", str(late), "--stats", str(stats), "--engine", "python",
    )
    assert rc == 3  # finished; one event was late
    lines = [json.loads(line) for line in out.splitlines()]
    # Add@0 (row 3) arrives when the watermark is 4 - 2 = 2: late. u's Add@3 is dropped by
    # Add@5 (LIMIT 1); x's Add@30 is still open at the end: it times out when the stream ends.
    assert [(m["ids"], "timeout" in m) for m in lines] == [
        ({"a": 1, "b": 2}, False),
        ({"a": 4, "b": 5}, False),
        ({"a": 6}, True),
    ]
    assert [json.loads(line) for line in late.read_text().splitlines()] == [
        {"pos": 3, "id": 3, "type": "Add", "ts": 0, "watermark": 2, "attrs": {"type": "Add", "ts": 0, "user": "w"}}
    ]
    assert json.loads(stats.read_text()) == {
        "events": {"read": 7, "processed": 6, "rejected": 0, "late": 1, "composite": 1},
        "patterns": {"checkout": {"matches": 2, "timeouts": 1, "dropped": 1, "alive": 0}},
        "partial_matches": {"alive": 0, "peak": 1, "dropped": 1},
        "engine": {"name": "python", "why": "asked for"},  # (the marking below is the Python engine's)
        # the run's marking on its net (draw --stats): 4 Adds started a partial match, 2 checked out
        "net": {
            "places": {"g0.p1": {"created": 4, "peak": 1}, "g0.p2": {"created": 2, "peak": 0}},
            "transitions": {"g0.t0": 4, "g0.t1": 2, "emit.checkout": 2},
        },
    }
    assert "summary: 7 events read = 6 processed + 0 rejected + 1 late; 2 matches" in err
    assert "  checkout: 2 matches, 1 timeouts, 1 partial matches dropped" in err
    assert f"  late events written to {late}" in err


def test_out_of_order_input_without_slack_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern = write(tmp_path, "cart.pcep", CART)
    events = write(tmp_path, "ev.csv", EVENTS)
    rc, _, err = run(capsys, "run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts")
    assert rc == 3
    assert err.strip().endswith(
        "ev.csv:3: field 'ts': error: timestamp 1 is before the previous event's 3 (use --slack D to accept events up to D late)"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--slack", "soon"], "--slack: expected a number >= 0, optionally with a unit (ms, s, min, h, d), got 'soon'"),
        (["--slack", "2 weeks"], "--slack: expected a number >= 0, optionally with a unit (ms, s, min, h, d), got '2 weeks'"),
        (["--late", "x.jsonl"], "--late needs --slack"),
    ],
)
def test_bad_event_time_options(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    pattern = write(tmp_path, "cart.pcep", CART)
    events = write(tmp_path, "ev.csv", EVENTS)
    rc, _, err = run(capsys, "run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts", *argv)
    assert rc == 2
    assert err.strip() == message


def test_slack_units_are_seconds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from petricep.cli import parse_duration

    assert [parse_duration(t) for t in ("2", "0.5", "500ms", "2s", "1min", "1.5h")] == [2, 0.5, 0.5, 2, 60, 5400]
    with pytest.raises(ConfigError, match=r"^--latency: expected a number >= 0, optionally with a unit"):
        parse_duration("soon", "--latency")


def test_check_shows_timeouts_and_limits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern = write(tmp_path, "cart.pcep", CART + "PATTERN open: SEQ(Add a, Pay+ b[]) LIMIT 5 PARTIAL MATCHES FAIL\n")
    rc, out, _ = run(capsys, "check", pattern)
    assert rc == 0
    lines = out.splitlines()
    assert lines[1] == (
        "  checkout: 2 state places, 2 transitions; inputs Add, Pay; window 10; partition [user]; skip-till-any-match; "
        "timeouts return Abandoned; at most 1 partial matches per key (drop-oldest)"
    )
    # a LIMIT bounds how many partial matches there are, not how long a Kleene list grows
    assert lines[-1] == (
        "warning: pattern 'open': Kleene variable b[] has no WITHIN window: one partial match may grow without bound"
    )
    assert not any("has no WITHIN window: its partial" in line for line in lines)


def test_an_evaluation_error_names_the_held_event_not_the_arriving_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pattern = write(tmp_path, "p.pcep", "PATTERN p: A a RETURN T(v = a.s)\nPATTERN q: T t WHERE t.v < 5\n")
    # the string compared with a number comes from row 1 (ts 5); it is fired only when row 2
    # (ts 9) moves the watermark past it
    events = write(tmp_path, "ev.jsonl", '{"t":"A","ts":4,"s":1}\n{"t":"A","ts":5,"s":"two"}\n{"t":"A","ts":9,"s":3}\n')
    rc, _, err = run(capsys, "run", pattern, "--events", events, "--type-field", "t", "--time-field", "ts", "--slack", "3")
    assert rc == 3
    assert err == f"{events}: event at position 1 (id 1): cannot compare 'two' < 5\n"


def test_a_slack_runs_on_the_kernel_with_the_python_engines_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The default run with a slack fires the kernel behind a reorder stage: the matches,
    the late file, the exit status and the summary's accounting are ``--engine python``'s
    (the peak of partial matches aside: each engine samples it at its own points);
    the summary's last line says kernel."""
    pytest.importorskip("petricep.kernel._kernel")
    pattern = write(tmp_path, "cart.pcep", CART)
    events = write(tmp_path, "ev.csv", EVENTS)
    got = {}
    for engine in ("kernel", "python"):
        late, stats = tmp_path / f"late-{engine}.jsonl", tmp_path / f"stats-{engine}.json"
        rc, out, err = run(
            capsys, "run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts",
            "--slack", "2", "--late", str(late), "--engine", engine, "--stats", str(stats),
        )
        report = json.loads(stats.read_text())
        counts = {n: (p["matches"], p["timeouts"], p["dropped"]) for n, p in report["patterns"].items()}
        got[engine] = (rc, out, late.read_text(), report["events"], counts, err.splitlines())
    k, py = got["kernel"], got["python"]
    assert k[:5] == py[:5] and k[0] == 3 and k[3]["late"] == 1
    assert k[5][0].split(" in ")[0] == py[5][0].split(" in ")[0] == (
        "summary: 7 events read = 6 processed + 0 rejected + 1 late; 2 matches"
    )
    # (but the peak of partial matches, which each engine samples at its own points)
    skip = ("  partial matches: ", "  engine: ")
    assert [x for x in k[5][1:] if not x.startswith(skip)] == [
        x.replace("late-python", "late-kernel") for x in py[5][1:] if not x.startswith(skip)
    ]
    assert "  engine: kernel" in k[5] and "  engine: python (asked for)" in py[5]
