"""The kernel's matches as record batches (issue 16): ``run --engine kernel`` writes its JSON
Lines, CSV and Parquet files from them, byte for byte the files the Python engine writes,
without a :class:`Match` per match where a batch holds the matches exactly."""

from __future__ import annotations

import csv
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from petricep import kernel
from petricep.api import compile_text
from petricep.api.runner import Run
from petricep.cli import main
from petricep.events import Event
from petricep.io import InputSpec
from petricep.kernel import supports
from petricep.kernel.engine import KernelEngine
from petricep.kernel.matchobjects import MatchObjects
from petricep.lang.parser import parse_text
from petricep.merge import build_net
from petricep.output.jsonl import JsonlBatches, json_line, match_json_parts
from petricep.output.table import batch_matches, batches_table, layout_of, to_table
from petricep.runtime.engine import Engine
from petricep.runtime.match import Match
from tests.engines import run_embedded, run_kernel
from tests.kernel.test_composite import odd_events, producer_and_consumer
from tests.kernel.test_engine import SETTINGS, distinct_patterns, odd_streams
from tests.strategies import pattern_text, patterns

pytestmark = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built")

ROOT = Path(__file__).resolve().parents[2]
NETS = ROOT / "nets"
STOCKS = ("--events", str(ROOT / "examples/data/stocks.csv"), "--type-field", "type", "--time-field", "ts")
# text that JSON escapes: a quote, a backslash, control characters, non-ASCII, U+2028
ODD = ('q"1', "b\\s", "é", "x\x01y", "t\tab", "\u2028", "😀", "plain")

RETURNS = """
PATTERN up: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 6
RETURN Up(k = a.k, gain = b.x - a.x, ratio = b.x / a.x, s = a.s, at = b.ts, ok = b.x >= 3)
PATTERN cart: SEQ(C c, !(D d), B b) WHERE [k] WITHIN 5
ON TIMEOUT RETURN Lost(s = c.s, x = c.x)
PATTERN back: SEQ(B b, A a) WHERE [k] AND a.s = b.s WITHIN 4
"""
KLEENE = """
PATTERN rises: SEQ(A a, B+ r[], C c) WHERE [k] AND r[i].x > max(r[..i-1].x) WITHIN 8
PATTERN pair: SEQ(D d, A e) WHERE e.x > d.x WITHIN 3
"""


def _rows(seed: int, n: int, types: str, text_ids: bool, float_x: bool) -> list[dict[str, Any]]:
    """Events of ``types`` with ids (ints, or text needing escapes), int times, ``k`` a key,
    ``x`` ints (and floats), ``s`` text needing escapes."""
    rnd = random.Random(seed)
    rows, ts = [], 0
    for i in range(n):
        ts += rnd.choice((0, 1, 1, 2))
        x: Any = rnd.choice((1, 2, 3, 7)) + (rnd.choice((0, 0.5)) if float_x else 0)
        ident: Any = f"{rnd.choice(ODD)}{i}" if text_ids else i * 3
        rows.append({"type": rnd.choice(types), "ts": ts, "id": ident, "k": rnd.randrange(3), "x": x, "s": rnd.choice(ODD)})
    return rows


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def _traffic(path: Path) -> tuple[str, ...]:
    rnd = random.Random(3)
    rows = [
        {"REPORT_ID": rnd.randrange(4), "TIMESTAMP": 300 * i, "avgSpeed": rnd.choice((5, 8.5, 50, 70, 120)),
         "vehicleCount": rnd.randrange(0, 9)}
        for i in range(3000)
    ]  # fmt: skip
    _write_csv(path, rows)
    return ("--events", str(path), "--type", "traffic", "--time-field", "TIMESTAMP")


def _typed(path: Path, types: tuple[str, ...], fields: dict[str, Any], step: Any, n: int = 3000) -> tuple[str, ...]:
    rnd = random.Random(len(types))
    rows, ts = [], 0
    for i in range(n):
        ts += rnd.choice(step)
        rows.append({"type": rnd.choice(types), "ts": ts, "id": f"{rnd.choice(ODD)}{i}"} | {
            f: rnd.choice(values) for f, values in fields.items()})  # fmt: skip
    _write_csv(path, rows)
    return ("--events", str(path), "--type-field", "type", "--time-field", "ts", "--id-field", "id")


def _case(name: str, tmp: Path) -> tuple[Path, tuple[str, ...]]:
    """A net (a file of nets/, or one of this module's) and the options of its input."""
    ev = tmp / "ev.csv"
    if name == "sase_equal_price":
        return NETS / "sase_equal_price.pcep", (*STOCKS, "--id-field", "id")
    if name == "sase_kleene_min":
        fields = {"symbol": ("S1", "S2"), "price": (500, 1000, 501.5, 600, 700, 900), "volume": (100, 200, 300)}
        return NETS / "sase_kleene_min.pcep", _typed(ev, ("stock",), fields, (0, 1, 2))
    if name in ("aarhus_speed_collapse", "aarhus_congestion", "timed_stall_recovery", "stop_and_go"):
        return NETS / f"{name}.pcep", _traffic(ev)
    if name == "nasdaq_rising_peaks":
        return NETS / f"{name}.pcep", _typed(ev, ("MSFT", "DRIV", "CBRL"), {"peak": (1, 2.5, 3, 4.25)}, (0, 30, 60))
    if name == "shoplifting":
        types = ("SHELF_READING", "COUNTER_READING", "EXIT_READING")
        return NETS / f"{name}.pcep", _typed(ev, types, {"tag": ODD}, (0, 3600, 7200))
    if name == "abandoned_carts":
        return NETS / f"{name}.pcep", _typed(ev, ("AddToCart", "Payment"), {"user": ODD, "item": (1, 2)}, (0, 600, 3600))
    if name == "trades_rising":
        return NETS / f"{name}.pcep", _typed(ev, ("Trade",), {"symbol": ("A", "B"), "price": (1, 1.5, 2.25, 3)}, (0, 0.125, 0.5))
    pf = tmp / f"{name}.pcep"
    pf.write_text(RETURNS if name.startswith("returns") else KLEENE)
    _write_csv(ev, _rows(len(name), 4000, "ABCD", text_ids=name.endswith("text"), float_x=name.endswith("float")))
    return pf, ("--events", str(ev), "--type-field", "type", "--time-field", "ts", "--id-field", "id")


CASES = [
    "sase_equal_price", "sase_kleene_min", "aarhus_speed_collapse", "aarhus_congestion", "nasdaq_rising_peaks",
    "shoplifting", "abandoned_carts", "trades_rising", "timed_stall_recovery", "stop_and_go", "returns_text", "returns_float", "kleene_text", "kleene_float",
]  # fmt: skip


def _files(net: Path, opts: tuple[str, ...], tmp: Path, engine: str) -> dict[str, bytes]:
    out = {}
    for fmt in ("jsonl", "csv", "parquet"):
        target = tmp / f"{engine}.{fmt}"
        rc = main(["run", str(net), *opts, "--engine", engine, "--max-partial-matches", "none", "-o", str(target)])
        assert rc == 0
        out[fmt] = target.read_bytes()
    return out


def test_every_covered_net_is_in_the_cases() -> None:
    covered = sorted(p.stem for p in NETS.glob("*.pcep") if supports(compile_text(p.read_text()), "arrival")[0])
    assert covered == sorted(c for c in CASES if (NETS / f"{c}.pcep").exists())


@pytest.mark.parametrize("name", CASES)
def test_kernel_files_are_the_engines_bytes(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """JSON Lines, CSV and Parquet match files of the kernel (its record batches where they
    hold the matches, Match objects where a net binds composite events) and of the engine."""
    net, opts = _case(name, tmp_path)
    local = _files(net, opts, tmp_path, "python")
    kern = _files(net, opts, tmp_path, "kernel")
    assert capsys.readouterr().err.splitlines()[-1] == "  engine: kernel"
    assert local["jsonl"].count(b"\n") > 3
    assert kern == local


def test_no_match_object_is_made_for_a_plain_net(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The columnar path is the one taken: the kernel run makes no Match, whatever the format."""
    net, opts = _case("sase_equal_price", tmp_path)
    want = _files(net, opts, tmp_path, "python")

    def no_match(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a Match was made")

    monkeypatch.setattr(Match, "__init__", no_match)
    assert _files(net, opts, tmp_path, "kernel") == want


def test_matches_leave_the_kernel_in_slices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel call stops after the row at which ``max_out`` matches are buffered, the run
    writes them, then fires on (an explosive pattern's matches reach the file a slice at a
    time): the same bytes, in more batches than the reader's."""
    net, opts = _case("sase_equal_price", tmp_path)
    want = _files(net, opts, tmp_path, "python")
    monkeypatch.setattr(kernel.engine, "MAX_OUT", 3)
    assert _files(net, opts, tmp_path, "kernel") == want
    spec = InputSpec(opts[1], type_field="type", time_field="ts", id_field="id")
    chunks = list(Run(compile_text(net.read_text()), spec, max_partial_matches=None).match_batches())
    rows = [c.num_rows for c in chunks if isinstance(c, pa.RecordBatch)]
    assert len(rows) == len(chunks)  # record batches only
    # slices of 3 matches or more: the row reaching 3 may complete several (up to 17 here)
    assert (len(chunks), min(rows), max(rows)) == (1442, 3, 17)
    assert sum(rows) == want["jsonl"].count(b"\n") == 6525


def test_run_match_batches_hold_the_runs_matches(tmp_path: Path) -> None:
    """``Run.match_batches``: record batches whose matches are those of iterating the run."""
    pf, opts = _case("returns_text", tmp_path)
    net = compile_text(pf.read_text())
    spec = InputSpec(opts[1], type_field="type", time_field="ts", id_field="id")
    want = [m.to_dict() for m in Run(net, spec, engine="kernel", max_partial_matches=None)]
    chunks = list(Run(net, spec, engine="kernel", max_partial_matches=None).match_batches())
    assert chunks and all(isinstance(c, pa.RecordBatch) for c in chunks)
    assert [m.to_dict() for c in chunks for m in batch_matches(c, net)] == want


def test_ids_of_several_kinds_fall_back_to_match_objects() -> None:
    """A batch binding ids of two kinds, or an int beyond int64, is given as Match objects; a
    batch of one kind as a record batch. (A None id is the event's position: ``Event``.)"""
    net = compile_text("PATTERN p: SEQ(A a, B b) WITHIN 5")
    events = [Event("A", 0, 0, 1), Event("B", 1, 1, "x"), Event("A", 2, 2, 5), Event("B", 3, 3, 6)]
    events += [Event("A", 4, 4, 1 << 70), Event("B", 5, 5, None)]
    k = KernelEngine(net, batch=2)
    chunks = [c for e in events for c in k.push_chunks(e)] + k.flush_chunks()
    assert [type(c).__name__ for c in chunks] == ["list", "RecordBatch", "list"]
    got = [m.to_dict() for c in chunks for m in (c if isinstance(c, list) else batch_matches(c, net))]
    engine = Engine(net)
    assert got == [m.to_dict() for e in events for m in engine.push(e)] + [m.to_dict() for m in engine.flush()]
    assert [d["ids"] for d in got][-3:] == [{"a": 1, "b": 5}, {"a": 5, "b": 5}, {"a": 1 << 70, "b": 5}]


def parts_of(chunks: list[Any], lines: JsonlBatches) -> list[tuple[str, str, str]]:
    """Each match's (line, ids text, attrs text): a record batch's from :meth:`JsonlBatches.parts`."""
    out = []
    for c in chunks:
        if isinstance(c, pa.RecordBatch):
            ids, attrs, line = (a.to_pylist() for a in lines.parts(c))
            out += list(zip(line, ids, attrs))
        else:
            out += [match_json_parts(m) for m in c]
    return out


@SETTINGS
@given(st.data())
def test_batches_give_the_engines_lines_and_table(data: st.DataObject) -> None:
    """Any covered net over odd streams (text ids, huge ints, ``1`` beside ``1.0``): the
    chunks' JSON Lines are the engine's lines, and where the batches give a table it is the
    engine's matches' table."""
    pats = distinct_patterns(
        data, 2,
        lambda: data.draw(patterns(kleene=data.draw(st.booleans()), returns=data.draw(st.booleans()), negation=False)),
    )
    events = data.draw(odd_streams())
    net = build_net(pats)
    if not supports(net, "arrival")[0]:
        return
    engine = Engine(net)
    want = [m for e in events for m in engine.push(Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)))] + engine.flush()
    k = KernelEngine(net, batch=data.draw(st.integers(1, 5)))
    chunks = [c for e in events for c in k.push_chunks(Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)))]
    chunks += k.drain_chunks() + k.flush_chunks()
    lines = JsonlBatches(net)
    text = "".join(lines.text(c) if isinstance(c, pa.RecordBatch) else "".join(json_line(m.to_dict()) + "\n" for m in c) for c in chunks)
    assert text == "".join(json_line(m.to_dict()) + "\n" for m in want)
    assert parts_of(chunks, lines) == [match_json_parts(m) for m in want]
    batches = [c for c in chunks if isinstance(c, pa.RecordBatch)]
    table = batches_table(batches, layout_of(net)) if len(batches) == len(chunks) else None
    if table is not None:
        assert table.equals(to_table(want, layout_of(net)), check_metadata=True)
        assert table.schema == to_table(want, layout_of(net)).schema


@SETTINGS
@given(st.data())
def test_batches_of_a_net_binding_composite_events(data: st.DataObject) -> None:
    """A producer and a pattern over its composite events (ON TIMEOUT too, through the
    RETURNS net's shapes): the chunks are record batches holding the composite events' ids
    (``p[1,e2]``), and their JSON Lines are the engine's, whatever the ids' and times' kinds."""
    pats = producer_and_consumer(data)
    events = odd_events(data)
    tie = data.draw(st.sampled_from(("arrival", "strict")))
    for p in pats:
        note(pattern_text(p))
    net = build_net(pats)
    engine = Engine(net, tie=tie)
    want = [m for e in events for m in engine.push(Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)))] + engine.flush()
    k = KernelEngine(net, tie=tie, batch=data.draw(st.integers(1, 5)))
    chunks = [c for e in events for c in k.push_chunks(Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)))]
    chunks += k.drain_chunks() + k.flush_chunks()
    lines = JsonlBatches(net)
    text = "".join(lines.text(c) if isinstance(c, pa.RecordBatch) else "".join(json_line(m.to_dict()) + "\n" for m in c) for c in chunks)
    assert text == "".join(json_line(m.to_dict()) + "\n" for m in want)
    assert parts_of(chunks, lines) == [match_json_parts(m) for m in want]


def test_composite_ids_leave_the_kernel_in_a_record_batch() -> None:
    """The consumer's variables that bind composite events are text columns of their ids."""
    net = compile_text(
        "PATTERN p: SEQ(A a, B b) WHERE [k] RETURN T(k = a.k, x = b.x)\n"
        "PATTERN q: SEQ(T s, T t) WHERE [k] AND t.x > s.x"
    )
    rows = [("A", 1, 1), ("B", 1, 2), ("A", 1, 3), ("B", 1, 5)]
    events = [Event(t, i, i, 10 + i, {"k": k, "x": x}) for i, (t, k, x) in enumerate(rows)]
    k = KernelEngine(net)
    chunks = [c for e in events for c in k.push_chunks(e)] + k.drain_chunks() + k.flush_chunks()
    assert [type(c).__name__ for c in chunks] == ["RecordBatch"]
    assert isinstance(chunks[0], pa.RecordBatch)
    assert chunks[0].column("s").to_pylist() == [None, None, None, "p[10,11]", "p[10,11]"]
    assert [m.to_dict()["ids"] for m in batch_matches(chunks[0], net)] == [
        {"a": 10, "b": 11}, {"a": 10, "b": 13}, {"a": 12, "b": 13},
        {"s": "p[10,11]", "t": "p[10,13]"}, {"s": "p[10,11]", "t": "p[12,13]"},
    ]  # fmt: skip


def test_integer_ids_make_composite_ids_and_batches_as_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file's int ids and times: the composite events' ids (``p[10,11]``) are made by Arrow
    and the batches' id and time columns taken from the remembered arrays, no Python value
    per bound input event (``_bound_values`` is never called); the matches are the engine's."""
    net = compile_text(
        "PATTERN p: SEQ(A a, B b) WHERE [k] RETURN T(k = a.k, x = b.x)\n"
        "PATTERN q: SEQ(T s, T t) WHERE [k] AND t.x > s.x"
    )
    rows = [("A", 1, 1), ("B", 1, 2), ("A", 1, 3), ("B", 1, 5), ("A", 2, 1), ("B", 2, 7)]
    path = tmp_path / "events.csv"
    path.write_text("type,ts,id,k,x\n" + "".join(f"{t},{i},{10 + i},{k},{x}\n" for i, (t, k, x) in enumerate(rows)))
    spec = InputSpec(str(path), type_field="type", time_field="ts", id_field="id")
    want = [m.to_dict() for m in Run(net, spec, engine="python")]
    monkeypatch.setattr(MatchObjects, "_bound_values", None)  # (a call would fail)
    chunks = list(Run(net, spec, engine="kernel").match_batches())
    assert chunks and all(isinstance(c, pa.RecordBatch) for c in chunks)
    got = [m.to_dict() for c in chunks for m in batch_matches(c, net)]
    assert got == want
    assert {"s": "p[10,11]", "t": "p[12,13]"} in [m["ids"] for m in got]


@pytest.mark.parametrize("size", [1, 2, 5])
@pytest.mark.parametrize("text_ids", [False, True])
def test_chunks_of_a_composite_chain(size: int, text_ids: bool) -> None:
    """Composite events binding composite events (``q[p[0,1],p[0,3]]``), remembered a column
    at a time (int ids) or match by match (text ids): the engine's lines."""
    net = compile_text(
        "PATTERN p: SEQ(A a, B b) WHERE [k] RETURN P(k = a.k, x = b.x)\n"
        "PATTERN q: SEQ(P p1, P p2) WHERE [k] AND p2.x > p1.x RETURN Q(k = p1.k, gain = p2.x - p1.x)\n"
        "PATTERN r: SEQ(A a, Q q) WHERE [k] AND q.gain >= 2"
    )
    rows = [("A", "u", 0), ("B", "u", 1), ("A", "v", 0), ("B", "u", 3), ("B", "v", 9), ("B", "u", 7)]
    events = [Event(t, i, i, f"e{i}" if text_ids else i, {"k": k, "x": x}) for i, (t, k, x) in enumerate(rows)]
    engine = Engine(net)
    want = [m for e in events for m in engine.push(e)] + engine.flush()
    k = KernelEngine(net, batch=size)
    chunks = [c for e in events for c in k.push_chunks(e)] + k.drain_chunks() + k.flush_chunks()
    lines = JsonlBatches(net)
    text = "".join(lines.text(c) if isinstance(c, pa.RecordBatch) else "".join(json_line(m.to_dict()) + "\n" for m in c) for c in chunks)
    assert text == "".join(json_line(m.to_dict()) + "\n" for m in want)
    assert parts_of(chunks, lines) == [match_json_parts(m) for m in want]
    assert '"q":"q[p[0,1],p[0,3]]"' in text.replace(" ", "") or text_ids


def test_iterating_a_run_fires_a_slice_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``for m in Run(...)`` on the kernel: the first matches come out before the rest of the
    reader's batch is fired (an explosive pattern's matches are held a slice at a time)."""
    net, opts = _case("sase_equal_price", tmp_path)
    monkeypatch.setattr(kernel.engine, "MAX_OUT", 3)
    spec = InputSpec(opts[1], type_field="type", time_field="ts", id_field="id")
    run = Run(compile_text(net.read_text()), spec, max_partial_matches=None)
    matches = iter(run)
    first = next(matches)
    engine = run.engine
    assert isinstance(engine, KernelEngine)
    fired = engine.kernel.kernel.cur_row
    assert first.ids and 0 < fired < 200
    assert 1 + sum(1 for _ in matches) == 6525


def test_two_patterns_naming_one_group_keep_their_step_order() -> None:
    """One table column ``g`` serves both patterns (struct fields in the first's order): the
    kernel's Match objects list each iteration's steps in its own pattern's order, as the
    Python engine's do (dict equality would not see it; the JSON text does)."""
    text = "PATTERN p: SEQ(A a, SEQ(B b, C c)+ g[], D d) WITHIN 20\nPATTERN q: SEQ(A a, SEQ(C c, B b)+ g[], D d) WITHIN 20"
    events = [Event(t, i, i, i, {"x": i}) for i, t in enumerate("ABCBCDACBD")]
    pats = parse_text(text).patterns
    got = [json_line(m) for m in run_kernel(pats, events)]
    assert got == [json_line(m) for m in run_embedded(pats, events)]
    assert '"g": [{"c": 2, "b": 3}]' in "".join(got) and '"g": [{"b": 1, "c": 2}]' in "".join(got)
