"""The kernel behind the engine's interface (``KernelEngine``, ``run --engine kernel``): the
Python engine's matches, in its order and with the input's own ids and timestamps (ints stay
ints, text ids stay text), the same located errors, and the run saying which engine ran."""

from __future__ import annotations

import ast
import io
import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep import kernel
from petricep.api import compile_text
from petricep.errors import EvaluationError, SnapshotError
from petricep.events import Event, EventColumns
from petricep.io.textfiles import use_stdin
from petricep.kernel import supports
from petricep.kernel.engine import KernelEngine
from petricep.lang import ast as A
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.cli.rise import EVENTS as RISE_EVENTS
from tests.cli.rise import RISE
from tests.strategies import pattern_text, patterns, streams

pytestmark = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built")

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = settings(
    max_examples=examples(150, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def exact(matches: list[Any]) -> list[str]:
    """Matches as text: ``1`` and ``1.0`` differ, as they do in the output files."""
    return [repr(m.to_dict()) for m in matches]


def drive(engine: Any, events: list[Event]) -> list[Any]:
    out = []
    for e in events:
        out += engine.push(Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)))
    return out + engine.flush()


@st.composite
def odd_streams(draw: Any) -> list[Event]:
    """Streams whose ids are ints, text or huge ints, whose times mix ints and floats
    (1.0 beside 1), and whose ``x`` is sometimes text (the kernel's string codes)."""
    events = draw(streams(max_size=14))
    out = []
    for e in events:
        idv = draw(st.sampled_from((e.id, f"e{e.id}", e.id + (1 << 63), -e.id)))
        ts = draw(st.sampled_from((e.ts, float(e.ts), e.ts + 0.5))) if draw(st.booleans()) else e.ts
        out.append(Event(e.type, ts, e.pos, idv, dict(e.attrs)))
    ordered = [out[0]]
    for e in out[1:]:  # keep time order: a .5 never goes past the next whole step
        ordered.append(e if e.ts >= ordered[-1].ts else Event(e.type, ordered[-1].ts, e.pos, e.id, e.attrs))
    return ordered


def distinct_patterns(data: st.DataObject, most: int, draw_one: Callable[[], A.Pattern]) -> list[A.Pattern]:
    """One to ``most`` patterns from ``draw_one``, each name once (a net's patterns are
    named apart), noted for a failing example."""
    pats = [draw_one() for _ in range(data.draw(st.integers(1, most)))]
    pats = [p for i, p in enumerate(pats) if p.name not in {q.name for q in pats[:i]}]
    for p in pats:
        note(pattern_text(p))
    return pats


@SETTINGS
@given(st.data())
def test_kernel_engine_gives_the_engines_matches(data: st.DataObject) -> None:
    pats = distinct_patterns(
        data, 3, lambda: data.draw(patterns(kleene=False, returns=False, negation=data.draw(st.booleans())))
    )
    events = data.draw(odd_streams())
    batch = data.draw(st.integers(1, 5))
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts!r} id={e.id!r} {e.attrs}" for e in events))
    net = build_net(pats)
    ok, reason = supports(net, "arrival")
    if not ok:
        assert reason  # a refusal always says why
        return
    want = exact(drive(Engine(net), events))
    got = exact(drive(KernelEngine(net, batch=batch), events))
    assert got == want


def bound_events(matches: list[Any]) -> list[str]:
    """Each match with the events it binds (a Kleene list's in order): what a history join
    and ``--with-events`` read."""
    def one(v: Any) -> Any:
        return [one(x) for x in v] if isinstance(v, list) else (v.type, v.ts, v.pos, v.id, v.attrs)
    return [repr((m.to_dict(), {k: one(v) for k, v in m.bindings().items()})) for m in matches]


@SETTINGS
@given(st.data())
def test_matches_with_their_events_are_the_engines(data: st.DataObject) -> None:
    # with_events: the kernel's matches carry their bound events (Kleene lists in stream
    # order; composite events, RETURN, as the engine makes them), pushed one by one or as a
    # checked batch's columns
    pats = distinct_patterns(
        data, 2,
        lambda: data.draw(patterns(
            kleene=data.draw(st.booleans()), returns=data.draw(st.booleans()), negation=data.draw(st.booleans())
        )),
    )
    events = data.draw(odd_streams())
    net = build_net(pats)
    if not supports(net, "arrival")[0]:
        return
    want = bound_events(drive(Engine(net), events))
    got = bound_events(drive(KernelEngine(net, batch=data.draw(st.integers(1, 5)), with_events=True), events))
    assert got == want
    names = sorted({name for e in events for name in e.attrs})
    columns = EventColumns(
        [e.type for e in events], [e.ts for e in events], [e.pos for e in events], [e.id for e in events],
        {name: [e.attrs.get(name) for e in events] for name in names},
    )
    engine = KernelEngine(net, with_events=True)
    assert bound_events(engine.push_columns(columns) + engine.flush()) == bound_events(drive(Engine(net), list(columns.events())))


def test_matches_carry_their_composite_events_and_no_snapshot() -> None:
    """A match binding a composite event carries the event its match made (the RETURN
    values its fields, its emitter's time and position), as the engine's; a run whose
    matches carry their events takes no snapshot."""
    net = compile_text("PATTERN p: SEQ(A a, B b) RETURN C(x = a.x)\nPATTERN q: SEQ(C c, B b)")
    events = [Event("A", 1, 0, "a", {"x": 5}), Event("B", 2, 1, "b1"), Event("B", 3, 2, "b2")]
    got = bound_events(drive(KernelEngine(net, with_events=True), events))
    assert got == bound_events(drive(Engine(net), events))
    assert got[-1] == repr((
        {"pattern": "q", "ids": {"c": "p[a,b1]", "b": "b2"}, "start": 2, "end": 3, "attrs": {}},
        {"c": ("C", 2, 1, "p[a,b1]", {"x": 5}), "b": ("B", 3, 2, "b2", {})},
    ))
    engine = KernelEngine(compile_text("PATTERN p: SEQ(A a, B b)"), with_events=True)
    with pytest.raises(SnapshotError, match="carry their events"):
        engine.snapshot_state()


def test_text_values_order_and_equality() -> None:
    """Text is compared by dictionary codes (=) and ranks (<), as the engine compares str."""
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE a.s < b.s AND a.t = b.t")
    rows = [("A", "m", "x"), ("B", "z", "x"), ("B", "a", "x"), ("A", "b", "y"), ("B", "c", "y"), ("B", "n", "x")]
    events = [Event(t, i, i, i, {"s": s, "t": u}) for i, (t, s, u) in enumerate(rows)]
    want = exact(drive(Engine(net), events))
    assert exact(drive(KernelEngine(net, batch=2), events)) == want
    assert [m["ids"] for m in map(eval_dict, want)] == [{"a": 0, "b": 1}, {"a": 3, "b": 4}, {"a": 0, "b": 5}]


def eval_dict(text: str) -> dict[str, Any]:
    """The test's own repr of a match dict read back (ids and times are plain literals)."""
    return ast.literal_eval(text)  # type: ignore[no-any-return]


def test_error_after_the_matches_before_it() -> None:
    """A failing comparison mid-batch: the matches of earlier events come first, then the
    error, attached to the failing event, in the engine's words."""
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE a.x < b.x")
    events = [Event("A", 0, 0, 0, {"x": 1}), Event("B", 1, 1, 1, {"x": 2}), Event("B", 2, 2, 2, {"x": "u"})]
    k = KernelEngine(net, batch=8)
    got: list[Any] = []
    with pytest.raises(EvaluationError) as caught:
        for e in events:
            got += k.push(e)
        got += k.drain()
        k.flush()
    assert [m.ids for m in got] == [{"a": 0, "b": 1}]
    assert str(caught.value) == "cannot compare 1 < 'u'"
    assert caught.value.event.pos == 2  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- the CLI


STOCKS = ("--events", str(ROOT / "examples/data/stocks.csv"), "--type-field", "type", "--time-field", "ts")


NASDAQ = ROOT.parent / "shared/data/opencep_events/NASDAQ_MEDIUM.txt"
AARHUS = ROOT.parent / "shared/data/aarhus_traffic/aarhus_traffic_2014-08-01_to_14.csv.gz"
RUNS = {
    "aarhus": (
        "aarhus_speed_collapse.pcep",
        *("--events", str(AARHUS), "--type", "traffic", "--time-field", "TIMESTAMP", "--id-field", "_id"),
    ),
    "sase": ("sase_equal_price.pcep", *STOCKS, "--id-field", "id"),
    "nasdaq": (
        "nasdaq_rising_peaks.pcep",
        *("--events", str(NASDAQ), "--columns", "ticker,ts,open,peak,low,close,volume"),
        *("--type-field", "ticker", "--time-field", "ts", "--time-format", "%Y%m%d%H%M"),
    ),
}


# the nets/ files over examples/data (sase_kleene_min over the stream its comment names)
RUNS_HERE = {
    "sase": ("sase_equal_price.pcep", *STOCKS, "--id-field", "id"),
    "sase_kleene_min": ("sase_kleene_min.pcep", "--events", "KLEENE_STOCKS", "--type", "stock", "--time-field", "ts"),
    "stock_v_shape": ("stock_v_shape.sql", *STOCKS[:2], "--type", "stock", "--time-field", "ts", "--id-field", "id"),
}
ENGINE_LINES: dict[str, str] = {}  # every net here runs on the kernel


@pytest.mark.parametrize("name", sorted(RUNS.keys() - RUNS_HERE.keys()) + sorted(RUNS_HERE))
def test_the_default_run_writes_the_python_engines_file(run_cli: Any, name: str, tmp_path: Path) -> None:
    """``run`` (``--engine local``, the default) and its synonym ``--engine kernel`` write
    byte for byte what ``--engine python`` writes, on the kernel where it covers the net."""
    net, *opts = RUNS_HERE.get(name) or RUNS[name]
    if name not in RUNS_HERE and not (NASDAQ.exists() and AARHUS.exists()):
        pytest.skip("the shared data is not beside the repository")
    if "KLEENE_STOCKS" in opts:
        stream = tmp_path / "stocks1000.csv"
        generator = [sys.executable, str(ROOT / "examples/generate_stocks.py"), "--events", "20000", "--max-price", "1000"]
        subprocess.run([*generator, "-o", str(stream)], check=True)
        opts[opts.index("KLEENE_STOCKS")] = str(stream)
    rc_py, py, err_py = run_cli("run", str(ROOT / "nets" / net), *opts, "--engine", "python")
    rc_d, default, err = run_cli("run", str(ROOT / "nets" / net), *opts)
    rc_k, ker, err_k = run_cli("run", str(ROOT / "nets" / net), *opts, "--engine", "kernel")
    assert rc_py == rc_d == rc_k == 0
    assert default == ker == py and py.count("\n") > 0
    assert err_py.splitlines()[-1] == "  engine: python (asked for)"
    assert err.splitlines()[-1] == err_k.splitlines()[-1] == ENGINE_LINES.get(name, "  engine: kernel")
    assert err.splitlines()[0].split(" in ")[0] == err_py.splitlines()[0].split(" in ")[0]  # the accounting


def test_run_engine_kernel_runs_timeouts_under_either(run_cli: Any, tmp_path: Path) -> None:
    pf = tmp_path / "k.pcep"
    pf.write_text("PATTERN rises: SEQ(stock a, stock+ b[]) WHERE b[i].price > a.price WITHIN 5\nON TIMEOUT RETURN R(n = count(b[]))\n")
    rc, out, err = run_cli("run", str(pf), *STOCKS, "--engine", "kernel", "--max-partial-matches", "none", "--tie", "either")
    assert rc == 0
    assert err.splitlines()[-1] == "  engine: kernel"
    _, py, _ = run_cli("run", str(pf), *STOCKS, "--max-partial-matches", "none", "--engine", "python", "--tie", "either")
    assert out == py


def test_run_engine_kernel_runs_kleene_closure(run_cli: Any, tmp_path: Path) -> None:
    pf = tmp_path / "k.pcep"
    pf.write_text("PATTERN rises: SEQ(stock2 a, stock2+ b[]) WHERE [symbol] AND b[i].price > max(b[..i-1].price) WITHIN 5\n")
    rc, out, err = run_cli("run", str(pf), *STOCKS, "--engine", "kernel", "--max-partial-matches", "none")
    assert rc == 0
    assert err.splitlines()[-1] == "  engine: kernel"
    _, py, _ = run_cli("run", str(pf), *STOCKS, "--max-partial-matches", "none", "--engine", "python")
    assert out == py
    assert '"b": [' in out


@pytest.mark.parametrize("engine", [[], ["--engine", "local"], ["--engine", "kernel"]])
def test_the_default_engine_is_the_kernel_and_stats_name_it(run_cli: Any, tmp_path: Path, engine: list[str]) -> None:
    stats = tmp_path / "s.json"
    rc, _, err = run_cli("run", str(ROOT / "nets/sase_equal_price.pcep"), *STOCKS, *engine, "--stats", str(stats))
    assert rc == 0
    report = json.loads(stats.read_text())
    assert report["engine"] == {"name": "kernel", "why": "covered"}
    assert report["events"]["read"] == report["events"]["processed"] == 20000
    assert "net" not in report  # the marking is the Python engine's
    assert err.splitlines()[-1] == "  engine: kernel"


def test_engine_python_forces_the_reference_engine(run_cli: Any, tmp_path: Path) -> None:
    """``--engine python``: the Python engine although the kernel covers the net; its
    ``--stats`` hold the net's marking."""
    stats = tmp_path / "s.json"
    net = str(ROOT / "nets/sase_equal_price.pcep")
    rc, out, err = run_cli("run", net, *STOCKS, "--engine", "python", "--stats", str(stats))
    assert rc == 0 and out.count("\n") == 6525
    report = json.loads(stats.read_text())
    assert report["engine"] == {"name": "python", "why": "asked for"}
    assert sorted(report["net"]) == ["places", "transitions"]
    assert err.splitlines()[-1] == "  engine: python (asked for)"


def test_no_kernel_environment_variable_falls_back_saying_why(run_cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``PETRICEP_NO_KERNEL=1``: the Python engine, named with the reason on the summary's
    last line (no warning: it was asked for); the same file."""
    net = str(ROOT / "nets/sase_equal_price.pcep")
    _, want, _ = run_cli("run", net, *STOCKS)
    monkeypatch.setenv("PETRICEP_NO_KERNEL", "1")
    rc, out, err = run_cli("run", net, *STOCKS)
    assert (rc, out) == (0, want)
    assert err.splitlines()[-1] == "  engine: python (PETRICEP_NO_KERNEL=1 switches the compiled kernel off)"
    assert [line for line in err.splitlines() if not line.startswith(" ")] == [err.splitlines()[0]]  # the summary only
    assert err.splitlines()[0].startswith("summary: 20000 events read")
    rc, out, _ = run_cli("check", net)
    assert out.splitlines()[-1] == "kernel: switched off by PETRICEP_NO_KERNEL=1 (the Python engine runs every net)"


def test_without_the_extension_a_run_says_so_once(run_cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The extension not built: ``run`` goes on on the Python engine, with one line saying so
    (once per process, not Python's warning format) and the reason on the summary's last line."""
    net = str(ROOT / "nets/sase_equal_price.pcep")
    _, want, _ = run_cli("run", net, *STOCKS)
    monkeypatch.setattr(kernel, "_kernel", None)
    monkeypatch.setattr(kernel, "_warned", False)
    monkeypatch.setattr(kernel.run, "_kernel", None)
    warning = "petricep: the compiled kernel is not built (no C compiler or Cython at install time); the Python engine runs"
    for first in (True, False):
        rc, out, err = run_cli("run", net, *STOCKS)
        assert (rc, out) == (0, want)
        lines = err.splitlines()
        assert lines.count(warning) == (1 if first else 0)
        assert lines[-1] == "  engine: python (the compiled kernel is not built)"
        assert lines[1 if first else 0].startswith("summary: 20000 events read")


def test_run_engine_kernel_keeps_the_matches_before_a_bad_row(run_cli: Any, tmp_path: Path) -> None:
    """A row the reader fails on ends the run; the matches of the rows before it are written
    (the kernel still held them in its batch)."""
    pf = tmp_path / "p.pcep"
    pf.write_text("PATTERN up: SEQ(A a, B b) WHERE a.x < b.x\n")
    ev = tmp_path / "e.jsonl"
    ev.write_text('{"type":"A","ts":0,"x":1}\n{"type":"B","ts":1,"x":2}\n{"type":"B","ts":2,"x":"u"}\n')
    opts = ("--events", str(ev), "--type-field", "type", "--time-field", "ts")
    rc_py, out_py, err_py = run_cli("run", str(pf), *opts, "--engine", "python")
    rc_k, out_k, err_k = run_cli("run", str(pf), *opts, "--engine", "kernel")
    assert rc_py == rc_k == 3
    assert out_k == out_py == '{"pattern": "up", "ids": {"a": 0, "b": 1}, "start": 0, "end": 1, "attrs": {}}\n'
    assert err_k.splitlines()[-1] == err_py.splitlines()[-1] == f"{ev}:3: field 'x': error: expected a number, got 'u'"


def _random_csv(path: Path, rows: int, seed: int, bad: int | None) -> None:
    """``bad``: from this row on, 2,000 rows with a few bad numbers (rejected in skip mode)."""
    rnd = random.Random(seed)
    lines, ts = ["type,ts,id,k,x,s"], 0
    for i in range(rows):
        ts += rnd.choice((0, 0, 1, 2))
        broken = bad is not None and bad <= i < bad + 2_000 and i % 97 == 13
        x = "oops" if broken else rnd.choice(("1", "2.5", "3", "7"))
        stamp = str(ts) if rnd.random() < 0.9 else f"{ts}.0"
        lines.append(f"{rnd.choice('ABCD')},{stamp},e{i},{rnd.randrange(5)},{x},{rnd.choice(('u', 'v', 'w'))}")
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("rows,bad", [(60_000, None), (300_000, 140_000)])
def test_checked_batches_as_columns_give_the_engines_file(run_cli: Any, tmp_path: Path, rows: int, bad: int | None) -> None:
    """The reader hands the kernel whole checked batches as columns (the prefilter's rows),
    and the rows it checks one by one (a bad row's chunk, skipped) as events: the same
    file as the Python engine, with text ids, text values and mixed int / float times."""
    pf = tmp_path / "p.pcep"
    pf.write_text(
        "PATTERN up: SEQ(A a, B b, C c) WHERE [k] AND b.x > a.x AND c.s != a.s WITHIN 6\n"
        "PATTERN same: SEQ(D d, B b) WHERE d.s = b.s AND b.x >= d.x WITHIN 3\n"
    )
    ev = tmp_path / "e.csv"
    _random_csv(ev, rows, rows, bad)  # with bad rows: columns before them, events around them, columns after
    opts = ("--events", str(ev), "--type-field", "type", "--time-field", "ts", "--id-field", "id", "--on-error", "skip")
    rc_py, out_py, err_py = run_cli("run", str(pf), *opts, "--engine", "python")
    rc_k, out_k, err_k = run_cli("run", str(pf), *opts, "--engine", "kernel")
    assert rc_py == rc_k == (0 if bad is None else 3)
    assert out_k == out_py and out_py.count("\n") > 100
    assert err_k.splitlines()[0].split(" in ")[0] == err_py.splitlines()[0].split(" in ")[0]  # the accounting


def test_composite_events_through_the_cli_give_the_engines_file(run_cli: Any, tmp_path: Path) -> None:
    """RETURN and a pattern over its composite events, on checked batches as columns: text
    ids, text values and mixed int / float times in the RETURN values and composite ids."""
    pf = tmp_path / "p.pcep"
    pf.write_text(
        "PATTERN up: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 6\n"
        "RETURN Up(k = a.k, gain = b.x - a.x, s = a.s, at = b.ts, ok = b.x >= 3)\n"
        "PATTERN twice: SEQ(Up u1, !(C c), Up u2) WHERE [k] AND u2.gain >= u1.gain AND c.s = u1.s WITHIN 10\n"
    )
    ev = tmp_path / "e.csv"
    _random_csv(ev, 40_000, 7, None)
    opts = ("--events", str(ev), "--type-field", "type", "--time-field", "ts", "--id-field", "id")
    rc_py, out_py, err_py = run_cli("run", str(pf), *opts, "--engine", "python")
    rc_k, out_k, err_k = run_cli("run", str(pf), *opts, "--engine", "kernel")
    assert rc_py == rc_k == 0
    assert out_k == out_py and '"pattern": "twice"' in out_py
    py_lines, k_lines = err_py.splitlines(), err_k.splitlines()
    assert k_lines[0].split(" in ")[0] == py_lines[0].split(" in ")[0]  # the accounting
    assert k_lines[1:4] == py_lines[1:4] == ["  up: 1661 matches", "  twice: 454 matches", "  composite events: 1661"]


@pytest.mark.parametrize(("text", "engine"), [
    (RISE, "  engine: kernel"),
    (RISE + "PATTERN up: SEQ(A a, B b) RETURN U(x = b.x)\n", "  engine: kernel"),
])
def test_with_events_runs_on_the_kernel_where_its_matches_carry_them(
    run_cli: Any, tmp_path: Path, text: str, engine: str
) -> None:
    pf, ev = tmp_path / "rise.pcep", tmp_path / "ev.csv"
    pf.write_text(text)
    ev.write_text(RISE_EVENTS)
    opts = ["--events", str(ev), "--type-field", "type", "--time-field", "ts", "--with-events"]
    rc, out, err = run_cli("run", str(pf), *opts)
    rc_py, out_py, _ = run_cli("run", str(pf), *opts, "--engine", "python")
    assert (rc, out) == (rc_py, out_py) and rc == 0 and '"events": {"a": {' in out
    assert err.splitlines()[-1] == engine


def test_a_run_over_an_archive_fires_the_live_part_on_the_kernel(run_cli: Any, tmp_path: Path) -> None:
    """``--archive``: the live net on the kernel (the summary says so), the join in Python,
    the file byte for byte the Python engine's; from standard input too."""
    pf, ev = tmp_path / "slower.pcep", tmp_path / "ev.csv"
    pf.write_text(
        "PATTERN slower: SEQ(ARCHIVED S then, S now)\n"
        "WHERE [sensor] AND now.ts - then.ts >= 95 AND now.ts - then.ts <= 105 AND now.speed < then.speed / 2\n"
    )
    rows = [(t, 1 + t % 3, 90 if t < 50 else 20) for t in range(0, 200, 2)]
    ev.write_text("ts,type,sensor,speed\n" + "".join(f"{t},S,{s},{v}\n" for t, s, v in rows))
    got = {}
    for engine in ("local", "python"):
        out = tmp_path / f"{engine}.jsonl"
        rc, _, err = run_cli("run", str(pf), "--events", str(ev), "--type-field", "type", "--time-field", "ts",
                             "--archive", str(tmp_path / engine), "--engine", engine, "-o", str(out))
        assert rc == 0
        got[engine] = (out.read_bytes(), err.splitlines()[-1])
    assert got["local"][1] == "  engine: kernel" and got["python"][1] == "  engine: python (asked for)"
    assert got["local"][0] == got["python"][0] and got["local"][0].count(b"\n") == 50
    use_stdin(io.BytesIO(ev.read_bytes()))
    try:
        rc, out_text, err = run_cli("run", str(pf), "--events", "-", "--format", "csv", "--type-field", "type",
                                    "--time-field", "ts", "--archive", str(tmp_path / "stdin"))
    finally:
        use_stdin(None)
    assert rc == 0 and out_text.encode() == got["python"][0]
    assert err.splitlines()[-1] == "  engine: kernel"  # (the live net an event at a time)


@pytest.mark.parametrize(("extra", "want"), [
    (["--slack", "2"], "kernel"),
    (["--events", "-", "--format", "csv"], "kernel"),
])
def test_a_slack_and_standard_input_run_on_the_kernel(
    run_cli: Any, tmp_path: Path, extra: list[str], want: str
) -> None:
    """A slack (the kernel behind a reorder stage) and standard input (the kernel a read's
    lines at a time) run the default ``run`` on the kernel, each with the matches of
    ``--engine python``; the summary's last line says so."""
    pf, ev = tmp_path / "rise.pcep", tmp_path / "ev.csv"
    pf.write_text(RISE)
    ev.write_text(RISE_EVENTS)
    opts = ["--type-field", "type", "--time-field", "ts", *(["--events", str(ev)] if "-" not in extra else []), *extra]
    results = []
    for engine in ([], ["--engine", "python"]):
        if "-" in extra:
            use_stdin(io.BytesIO(RISE_EVENTS.encode()))
        try:
            results.append(run_cli("run", str(pf), *opts, *engine))
        finally:
            use_stdin(None)
    (rc, out, err), (rc_py, out_py, _) = results
    assert (rc, out) == (rc_py, out_py) == (0, out_py) and out.count("\n") == 2
    assert err.splitlines()[-1] == f"  engine: {want}"
