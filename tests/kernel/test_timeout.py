"""ON TIMEOUT and LIMIT on the kernel against the Python engine (the reference): the same
matches and timeouts in the same order, the same composite events (timeouts read by other
patterns), the same counts of timeouts and of partial matches a LIMIT dropped.

Hand cases pin the exact outputs; the randomized tests draw patterns of every strategy and
window kind with a timeout and sometimes a limit, alone, merged, and read by a second pattern."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.cli import main
from petricep.errors import EvaluationError, StateLimitError
from petricep.events import Event
from petricep.kernel import KernelRun, supports
from petricep.kernel.engine import KernelEngine
from petricep.lang import ast as A
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.kernel.compare import check, ev, fresh, same
from tests.runtime.test_timeouts import CART
from tests.spark.test_partition import keyed_streams, same_pairs
from tests.strategies import patterns, streams

NETS = Path(__file__).resolve().parents[2] / "nets"
SETTINGS = settings(
    max_examples=examples(200, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
WINDOWED = (A.WIN_TIME, A.WIN_COUNT, A.WIN_DURATION)


def test_a_partial_match_times_out_when_a_later_event_passes_its_window() -> None:
    events = [ev("Add", 0, 0, user="u"), ev("Add", 1, 1, user="v"), ev("Pay", 5, 2, user="v"), ev("Add", 11, 3, user="w")]
    assert same(CART, events) == [
        {"pattern": "checkout", "ids": {"a": 1, "b": 2}, "start": 1, "end": 5, "attrs": {}},
        {"pattern": "checkout", "ids": {"a": 0}, "start": 0, "end": 0,
         "attrs": {"user": "u", "added": 0, "paid": None}, "timeout": {"type": "Abandoned", "deadline": 10}},
        {"pattern": "checkout", "ids": {"a": 3}, "start": 11, "end": 11,
         "attrs": {"user": "w", "added": 11, "paid": None}, "timeout": {"type": "Abandoned", "deadline": 21}},
    ]


def test_timeouts_become_events_a_second_pattern_reads() -> None:
    text = CART + "PATTERN twice: SEQ(Abandoned x, Abandoned y) WHERE [user] WITHIN 100\n"
    events = [ev("Add", 0, 0, user="u"), ev("Add", 12, 1, user="u"), ev("Add", 40, 2, user="w")]
    out = same(text, events)
    assert [(m["pattern"], m["ids"]) for m in out] == [
        ("checkout", {"a": 0}),
        ("checkout", {"a": 1}),
        ("twice", {"x": "checkout@timeout[0]", "y": "checkout@timeout[1]"}),
        ("checkout", {"a": 2}),
    ]


def test_only_never_extended_partial_matches_time_out() -> None:
    text = "PATTERN p: SEQ(A a, B b, C c) WITHIN 5 ON TIMEOUT RETURN T(a = a.id)"
    out = same(text, [ev("A", 0, 0), ev("B", 1, 1), ev("A", 2, 2), ev("X", 9, 3)])
    assert [(m["ids"], m["timeout"]["deadline"]) for m in out] == [({"a": 0, "b": 1}, 5), ({"a": 2}, 7)]


def test_count_window_deadlines_are_positions() -> None:
    text = "PATTERN p: SEQ(A a, B b) WITHIN 2 EVENTS ON TIMEOUT RETURN T()"
    out = same(text, [ev("A", 0, 0), ev("A", 0, 1), ev("B", 0, 2), ev("C", 5, 3)])
    assert [(m["ids"], m.get("timeout")) for m in out] == [
        ({"a": 1, "b": 2}, None),
        ({"a": 0}, {"type": "T", "deadline": 2}),  # closed by B2 (position 2): after B2's match
    ]


LIMITED = "PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 10 LIMIT 2 PARTIAL MATCHES {policy} ON TIMEOUT RETURN T()"


def test_drop_oldest_drops_the_first_and_it_does_not_time_out() -> None:
    events = [ev("A", 0, 0, k=1), ev("A", 1, 1, k=1), ev("A", 2, 2, k=1), ev("B", 3, 3, k=1), ev("X", 20, 4, k=1)]
    out = same(LIMITED.format(policy="DROP OLDEST"), events)
    assert [(m["ids"], "timeout" in m) for m in out] == [({"a": 1, "b": 3}, False), ({"a": 2, "b": 3}, False)]


def test_reject_new_keeps_the_old_ones() -> None:
    events = [ev("A", 0, 0, k=1), ev("A", 1, 1, k=1), ev("A", 2, 2, k=1), ev("B", 3, 3, k=1), ev("A", 4, 4, k=2)]
    out = same(LIMITED.format(policy="REJECT NEW"), events)
    assert [(m["ids"], "timeout" in m) for m in out] == [
        ({"a": 0, "b": 3}, False), ({"a": 1, "b": 3}, False), ({"a": 4}, True),
    ]


def test_either_is_covered() -> None:
    assert supports(compile_text(CART), "either") == (True, "covered")


def test_kernel_engine_reports_timeouts_and_drops_as_the_engine() -> None:
    text = LIMITED.format(policy="DROP OLDEST") + "\nPATTERN q: SEQ(T x, T y) WITHIN 50"
    events = [ev("A", i, i, k=i % 2) for i in range(6)] + [ev("B", 6, 6, k=0), ev("X", 30, 7, k=0)]
    net = compile_text(text)
    engine, kernel = Engine(net), KernelEngine(net, batch=3)
    py = [m.to_dict() for e in fresh(events) for m in engine.push(e)] + [m.to_dict() for m in engine.flush()]
    k = [m.to_dict() for e in fresh(events) for m in kernel.push(e)] + [m.to_dict() for m in kernel.flush()]
    assert k == py
    assert kernel.report()["patterns"] == {
        name: {key: v for key, v in counts.items() if key != "alive"} for name, counts in engine.report()["patterns"].items()
    }
    assert kernel.report()["partial_matches"]["dropped"] == 2


def test_kernel_run_table_has_a_timeout_column() -> None:
    net = compile_text(CART)
    run = KernelRun(net, type_field="type", id_field="id")
    from tests.kernel.compare import table

    got = run.push(table([ev("Add", 0, 0, user="u"), ev("Add", 20, 1, user="u")]))
    assert got.column("timeout").to_pylist() == [{"type": "Abandoned", "deadline": 10}]
    assert run.flush().column("timeout").to_pylist() == [{"type": "Abandoned", "deadline": 30}]


# ------------------------------------------------------------------ randomized


def _with_timeout(draw: Any, p: A.Pattern, name: str, ttype: str, limit: bool) -> A.Pattern:
    """``p`` with ON TIMEOUT (fields reading its variables, maybe unbound) and maybe a LIMIT."""
    positives = [r.var for r in A.events_of(p.structure) if not r.negated]
    fields = tuple(
        A.ReturnField(f"{field}_{v}", A.Attr(v, field))
        for v in draw(st.lists(st.sampled_from(positives), max_size=2, unique=True))
        for field in [draw(st.sampled_from(("x", "ts", "k")))]
    )
    lim = None
    if limit and draw(st.booleans()):
        lim = A.Limit(draw(st.integers(1, 3)), draw(st.sampled_from(("drop-oldest", "reject-new"))))
        # (FAIL: test_fail_* below; here every run must finish)
    return dataclasses.replace(p, name=name, timeout=A.Return(ttype, fields), limit=lim)


def _timeout_patterns(draw: Any, name: str, strategies: tuple[str, ...] = A.STRATEGIES, **kw: Any) -> A.Pattern:
    p = draw(patterns(kleene=False, returns=True, windows=WINDOWED, strategies=strategies, name=name, **kw))
    return _with_timeout(draw, p, name, f"T{name}", limit=True)


def _tie(data: st.DataObject) -> str:
    return data.draw(st.sampled_from(("arrival", "strict")))


@SETTINGS
@given(st.data())
def test_timeouts_and_limits_of_one_pattern(data: st.DataObject) -> None:
    """Every strategy, window kind and tie rule (arrival, strict), negations included."""
    p = _timeout_patterns(data.draw, "p")
    events = data.draw(streams(max_size=14))
    check([p], events, _tie(data), data.draw(st.integers(0, len(events))))


@SETTINGS
@given(st.data())
def test_merged_patterns_with_timeouts_and_limits(data: st.DataObject) -> None:
    """Patterns sharing a net: each times out and is limited as alone (a limit binds only
    its own pattern), emitted in the engine's order."""
    strategy = data.draw(st.sampled_from(A.STRATEGIES))
    part = data.draw(st.booleans())
    pats = [
        _timeout_patterns(data.draw, f"p{i}", (strategy,), max_depth=1, partition=part, types=("A", "B", "C"))
        for i in range(data.draw(st.integers(2, 3)))
    ]
    events = data.draw(streams(types=("A", "B", "C"), max_size=14))
    check(pats, events, _tie(data), data.draw(st.integers(0, len(events))))


@SETTINGS
@given(st.data())
def test_timeouts_read_by_another_pattern(data: st.DataObject) -> None:
    """Timeouts re-enter as events of their type (ids ``p@timeout[...]``): a second pattern
    over them and the input types, without a partition or keyed by a copied attribute."""
    p = data.draw(patterns(kleene=False, returns=False, windows=WINDOWED, max_depth=1, types=("A", "B"), name="p"))
    # fields copied from the SEQ's first positive variable: bound in every partial match (a
    # null would make q's conditions an error on both engines)
    assume(isinstance(p.structure, A.Seq))
    assert isinstance(p.structure, A.Seq)
    first = next(c for c in p.structure.children if not (isinstance(c, A.EventRef) and c.negated))
    assume(isinstance(first, A.EventRef))
    assert isinstance(first, A.EventRef)
    keyed = bool(p.partition) and data.draw(st.booleans())
    fields = (A.ReturnField("k", A.Attr(first.var, "k")), A.ReturnField("x", A.Attr(first.var, "x")))
    p = dataclasses.replace(p, timeout=A.Return("T", fields))
    q = data.draw(patterns(kleene=False, negation=False, returns=False, max_depth=1, types=("T", "A"), name="q",
                           partition=keyed))
    events = data.draw(streams(types=("A", "B", "C"), max_size=14))
    net = build_net([p, q])
    assume(supports(net, "arrival")[0])
    check([p, q], events, _tie(data), data.draw(st.integers(0, len(events))))


def test_abandoned_carts_cli_output_is_byte_identical(tmp_path: Path) -> None:
    """``petricep run nets/abandoned_carts.pcep --engine kernel`` writes exactly the Python
    engine's bytes (timeouts re-entering as Abandoned events for the second pattern)."""
    rng = random.Random(7)
    lines, ts = ["type,ts,user,item"], 0
    for _ in range(3000):
        ts += rng.choice((0, 60, 600, 1500, 3600))
        lines.append(f"{rng.choice(('AddToCart', 'AddToCart', 'Payment'))},{ts},u{rng.randint(1, 12)},{rng.randint(1, 9)}")
    events = tmp_path / "carts.csv"
    events.write_text("\n".join(lines) + "\n")
    outputs = []
    for engine in ("python", "kernel"):
        out = tmp_path / f"{engine}.jsonl"
        args = ["run", str(NETS / "abandoned_carts.pcep"), "--events", str(events), "--type-field", "type",
                "--time-field", "ts", "--engine", engine, "-o", str(out)]
        assert main(args) == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert b'"timeout"' in outputs[0] and b"serial_abandoner" in outputs[0]


@SETTINGS
@given(st.data())
def test_key_partitions_give_the_engines_pairs(data: st.DataObject) -> None:
    """Spark's firing stage on the kernel (KeyRunner over the kernel, now chosen for these nets): per
    task the (match or timeout, emission position) pairs of the Python engine, with other
    keys' window-closing points as ticks."""
    p = _timeout_patterns(data.draw, "p", partition=True)
    events = data.draw(keyed_streams())
    same_pairs([p], events, _tie(data), data.draw(st.integers(1, 3)), data.draw(st.sampled_from([1, 2, 5, 64])))


FAIL = "PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 100 LIMIT 2 PARTIAL MATCHES FAIL"


def test_fail_stops_the_run_as_the_engine_words_it() -> None:
    events = [ev("A", 0, 0, k=1), ev("B", 1, 1, k=1), ev("A", 2, 2, k=1), ev("A", 3, 3, k=1)]
    events = [Event(e.type, e.ts, e.pos, f"{e.type}{e.pos}", e.attrs) for e in events]
    net = compile_text(FAIL)
    engine = Engine(net)
    py: list[dict[str, Any]] = []
    with pytest.raises(StateLimitError) as want:
        for e in fresh(events):
            py += [m.to_dict() for m in engine.push(e)]
    kernel = KernelEngine(net)
    k = [m.to_dict() for e in fresh(events) for m in kernel.push(e)]
    with pytest.raises(StateLimitError) as got:
        k += [m.to_dict() for m in kernel.drain()]
        kernel.flush()
    assert k == py == [{"pattern": "p", "ids": {"a": "A0", "b": "B1"}, "start": 0, "end": 1, "attrs": {}}]
    assert str(got.value) == str(want.value) == (
        "pattern 'p': more than 2 live partial matches for key 1 at event 'A3' (LIMIT 2 PARTIAL MATCHES FAIL)"
    )
    assert supports(compile_text(FAIL + " RETURN T()")) == (True, "covered")


def _limit_outputs(engine: Any, events: list[Event]) -> tuple[list[dict[str, Any]], str | None]:
    """The matches a run returns (the kernel's last batch before an error drained, as Run
    drains it), then the error that stopped it (None: it finished)."""
    out: list[dict[str, Any]] = []
    try:
        for e in fresh(events):
            out += [m.to_dict() for m in engine.push(e)]
        if isinstance(engine, KernelEngine):
            out += [m.to_dict() for m in engine.drain()]
        out += [m.to_dict() for m in engine.flush()]
    except (StateLimitError, EvaluationError) as err:  # (the kernel returned the matches before it first)
        return out, f"{type(err).__name__}: {err}"
    return out, None


COMPOSITE_FAIL = (
    "PATTERN p: SEQ(A a, B b) WITHIN 100 RETURN T(x = a.x)\n"
    "PATTERN q: SEQ(T t, C c) WITHIN 100 LIMIT 1 PARTIAL MATCHES FAIL\n"
)


@pytest.mark.parametrize(("text", "types", "stamps", "tie", "want"), [
    # the second composite event (p's match at B3 binding A0) is one too many for q
    (COMPOSITE_FAIL, "ABABC", "01234", "arrival", "at event 'p[A0,B3]'"),
    (COMPOSITE_FAIL, "ABABC", "01224", "strict", "at event 'p[A0,B3]'"),
    # a timeout re-entering (ON TIMEOUT) is the event that fails
    ("PATTERN p: SEQ(A a, B b) WITHIN 2 ON TIMEOUT RETURN T(x = a.x)\n"
     "PATTERN q: SEQ(T t, C c) WITHIN 100 LIMIT 1 PARTIAL MATCHES FAIL\n", "AAAAC", "01234", "arrival",
     "at event 'p@timeout[A1]'"),
    # tie rule either: a timestamp group fires at the next timestamp's row, the last one at
    # the end of the stream -- the failing event is the group's, not that row's
    (FAIL, "AAAA", "0011", "either", "at event 'A3'"),
    (FAIL, "AAAB", "0012", "either", "at event 'A2'"),
])
def test_fail_at_a_composite_event_names_its_match(text: str, types: str, stamps: str, tie: str, want: str) -> None:
    """LIMIT ... FAIL at a composite event names it by its match's id (``pattern[ids...]``),
    as the engine does, in every batch size; the matches before the failing event are the
    engine's, those of its row none."""
    events = [Event(t, int(ts), i, f"{t}{i}", {"x": i, "k": 1}) for i, (t, ts) in enumerate(zip(types, stamps))]
    net = compile_text(text)
    assert supports(net, tie) == (True, "covered")
    py = _limit_outputs(Engine(net, tie=tie), events)
    assert py[1] is not None and want in py[1]
    for batch in (1, 2, 5):
        assert _limit_outputs(KernelEngine(net, tie=tie, batch=batch), events) == py


@SETTINGS
@given(st.data())
def test_fail_on_random_patterns(data: st.DataObject) -> None:
    """LIMIT n ... FAIL: the kernel (KernelEngine, small batches) returns the engine's matches
    up to the failing event and stops with its error, or finishes as it does."""
    p = data.draw(patterns(kleene=False, returns=False, windows=WINDOWED, name="p", types=("A", "B", "C")))
    p = dataclasses.replace(p, limit=A.Limit(data.draw(st.integers(1, 3)), "fail"))
    events = [Event(e.type, e.ts, e.pos, f"e{e.pos}", e.attrs) for e in data.draw(streams(types=("A", "B", "C"), max_size=14))]
    tie = data.draw(st.sampled_from(("arrival", "strict", "either")))
    net = build_net([p])
    assume(supports(net, tie)[0])
    kernel = KernelEngine(net, tie=tie, batch=data.draw(st.integers(1, 5)))
    assert _limit_outputs(kernel, events) == _limit_outputs(Engine(net, tie=tie), events)


@SETTINGS
@given(st.data())
def test_fail_at_composite_events_on_random_patterns(data: st.DataObject) -> None:
    """LIMIT ... FAIL in a net with composite events: ``p``'s matches (RETURN) or timeouts
    (ON TIMEOUT) re-enter as T events that ``q`` reads under a limit of its own (``p``
    maybe limited too); every tie rule, merged or not. The same matches up to the failing
    event and the same error, a composite event named by its match's id."""
    p = data.draw(patterns(kleene=False, returns=False, windows=WINDOWED, max_depth=1, types=("A", "B"), name="p"))
    fields = tuple(A.ReturnField(f, A.Attr(v, f)) for v in [next(r.var for r in A.events_of(p.structure) if not r.negated)] for f in ("k", "x"))
    made = A.Return("T", fields)
    p = dataclasses.replace(p, returns=made) if data.draw(st.booleans()) else dataclasses.replace(p, timeout=made)
    if data.draw(st.booleans()):
        p = dataclasses.replace(p, limit=A.Limit(data.draw(st.integers(1, 3)), "fail"))
    q = data.draw(patterns(kleene=False, negation=False, returns=False, max_depth=1, types=("T", "C"), name="q",
                           partition=False))
    q = dataclasses.replace(q, limit=A.Limit(data.draw(st.integers(1, 2)), "fail"))
    tie = data.draw(st.sampled_from(("arrival", "strict", "either")))
    net = build_net([p, q], share=data.draw(st.booleans()))
    assume(supports(net, tie)[0])
    events = [Event(e.type, e.ts, e.pos, f"e{e.pos}", e.attrs) for e in data.draw(streams(types=("A", "B", "C"), max_size=14))]
    kernel = KernelEngine(net, tie=tie, batch=data.draw(st.integers(1, 5)))
    assert _limit_outputs(kernel, events) == _limit_outputs(Engine(net, tie=tie), events)
