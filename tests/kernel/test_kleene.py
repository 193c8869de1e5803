"""Kleene closure on the kernel against the Python engine (the reference): the same matches
(a Kleene variable's ids as a list in stream order) in the same order, the same partial
matches created and completed, under every strategy, window kind and tie rule it covers.

Hand cases pin exact lists; the randomized tests draw patterns with up to two Kleene
variables and iteration conditions (``v[i]``, ``v[i-1]``, ``v[1]``, ``v[last]``, aggregates
of the whole list and of ``v[..i-1]``), alone and merged into shared nets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import petricep
from petricep.api import compile_text
from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.kernel import KernelRun, supports, to_matches
from petricep.kernel.engine import KernelEngine
from petricep.lang import ast as A
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.kernel.compare import check, ev, fresh, same, table
from tests.spark.test_partition import keyed_streams, same_pairs
from tests.strategies import patterns, streams

SETTINGS = settings(
    max_examples=examples(200, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)



SASE = """
PATTERN p: SEQ(stock+ a[], stock b)
WHERE skip-till-next-match AND [symbol] AND a[1].price % 500 = 0
AND a[i].price > min(a[..i-1].price) AND b.volume < 150
WITHIN 500
"""


def test_the_sase_query_on_a_small_stream() -> None:
    rows = [(500, 900), (600, 900), (550, 900), (700, 100), (1000, 900), (900, 100)]
    events = [ev("stock", i, i, symbol="s", price=p, volume=v) for i, (p, v) in enumerate(rows)]
    out = same(SASE, events)
    # 700 (volume 100) both ends [0, 1, 2] and extends it; 1000 extends [0..3] (skip-till-next-
    # match consumes [0..3]) and starts [4]
    assert [m["ids"] for m in out] == [
        {"a": [0, 1, 2], "b": 3},
        {"a": [0, 1, 2, 3, 4], "b": 5},  # (one point's matches by their events' positions)
        {"a": [4], "b": 5},
    ]


def test_skip_till_any_match_every_subsequence() -> None:
    text = "PATTERN p: SEQ(A a, B+ b[], C c) WHERE b[i].x >= b[i-1].x AND count(b[]) <= 2 WITHIN 10"
    events = [ev("A", 0, 0, x=0), ev("B", 1, 1, x=1), ev("B", 2, 2, x=0), ev("B", 3, 3, x=2), ev("C", 4, 4, x=0)]
    out = same(text, events)
    assert [m["ids"]["b"] for m in out] == [[1, 3], [1], [2, 3], [2], [3]]  # (by their events' positions)


def test_aggregates_avg_sum_max_and_constant_elements() -> None:
    text = (
        "PATTERN p: SEQ(A+ a[], B b) WHERE a[i].x <= avg(a[..i-1].x) + 2 AND sum(a[].x) >= 3 "
        "AND max(a[].x) = a[last].x AND NOT (a[2].x = 1) WITHIN 4 EVENTS"
    )
    events = [ev("A", 0, i, x=x) for i, x in enumerate((1, 2, 1, 3))] + [ev("B", 1, 4, x=0)]
    same(text, events)
    same(text, events, tie="strict")


def test_a_later_variable_closes_the_list_under_next_match() -> None:
    text = "PATTERN p: SEQ(A+ a[], B b, C c) WHERE skip-till-next-match AND sum(a[].x) > b.x WITHIN 9"
    events = [ev("A", 0, 0, x=1), ev("A", 1, 1, x=2), ev("B", 2, 2, x=2), ev("B", 3, 3, x=0), ev("C", 4, 4, x=0)]
    assert [m["ids"] for m in same(text, events)] == [{"a": [0, 1], "b": 2, "c": 4}, {"a": [1], "b": 3, "c": 4}]


def test_tables_and_matches_hold_lists() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B+ b[]) WHERE b[i].x > a.x WITHIN 3")
    events = [ev("A", 0, 0, x=0), ev("B", 1, 1, x=1), ev("B", 2, 2, x=2)]
    run = KernelRun(net, id_field="id")
    got = run.push(table(events))
    assert got.column("b").to_pylist() == [[1], [1, 2], [2]]
    assert [m.ids for m in to_matches(got, net)] == [{"a": 0, "b": [1]}, {"a": 0, "b": [1, 2]}, {"a": 0, "b": [2]}]
    kernel = KernelEngine(net, batch=2)
    got_k = [m.to_dict() for e in fresh(events) for m in kernel.push(e)] + [m.to_dict() for m in kernel.flush()]
    assert got_k == [m.to_dict() for m in Engine(net).run(fresh(events))]


def test_min_and_max_of_texts_as_the_engine() -> None:
    """min / max of texts compare their ranks, as the engine compares the strings."""
    text = "PATTERN p: SEQ(A+ a[], B b) WHERE max(a[].s) >= b.s WITHIN 3 RETURN R(lo = min(a[].s), hi = max(a[].s))"
    events = [ev("A", 0, 0, s="u"), ev("A", 1, 1, s="b"), ev("A", 2, 2, s="w"), ev("B", 3, 3, s="v")]
    got = same(text, events)
    assert [(m["ids"], m["attrs"]) for m in got] == [
        ({"a": [0, 1, 2], "b": 3}, {"lo": "b", "hi": "w"}), ({"a": [0, 2], "b": 3}, {"lo": "u", "hi": "w"}),
        ({"a": [1, 2], "b": 3}, {"lo": "b", "hi": "w"}), ({"a": [2], "b": 3}, {"lo": "w", "hi": "w"})]  # fmt: skip


@pytest.mark.parametrize("agg", ["sum", "avg"])
def test_a_sum_of_texts_stops_both_engines_alike(agg: str) -> None:
    """A text in a sum or an average stops both engines with one error (SQL's type error, not
    Python's concatenation); read from a file, the field is typed a number and the row refused."""
    net = compile_text(f"PATTERN p: SEQ(A+ a[], B b) WHERE {agg}(a[].s) = b.s WITHIN 3")
    events = [ev("A", 0, 0, s="u"), ev("A", 1, 1, s="v"), ev("B", 2, 2, s="u")]
    with pytest.raises(EvaluationError) as kernel_error:
        KernelRun(net, id_field="id").push(table(events))
    with pytest.raises(EvaluationError) as python_error:
        list(Engine(net).run(fresh(events)))
    assert str(kernel_error.value) == str(python_error.value)
    assert str(kernel_error.value).endswith(f"{agg}() over field 's': 'u' is a text, not a number"), str(kernel_error.value)


@pytest.mark.parametrize(
    ("agg", "values", "message"),
    [("max", ["u", 5], "max() over field 's': cannot compare 5 with 'u'"),
     ("min", [5, "u"], "min() over field 's': cannot compare 'u' with 5")],  # fmt: skip
)
def test_min_of_a_text_beside_a_number_stops_both_engines_alike(
    agg: str, values: list[Any], message: str, tmp_path: Path
) -> None:
    """A JSON field holding a text in one event and a number in another: min / max stop both
    engines with the same error, naming the event, the field and the two values."""
    rows = [{"type": "A", "ts": 0, "id": 0, "s": values[0]}, {"type": "A", "ts": 1, "id": 1, "s": values[1]},
            {"type": "B", "ts": 2, "id": 2, "s": "u"}]  # fmt: skip
    path = tmp_path / "e.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = f"PATTERN p: SEQ(A+ a[], B b) WHERE {agg}(a[].s) = b.s WITHIN 3"
    words = []
    for engine in ("kernel", "python"):
        with pytest.raises(EvaluationError) as err:
            petricep.match(str(path), text, type_field="type", time_field="ts", id_field="id", engine=engine)
        words.append(str(err.value))
    assert words[0] == words[1] == f"{path}: event at position 1 (id 1): {message}"


# ------------------------------------------------------------------ randomized


def _kleene(**kw: Any) -> st.SearchStrategy[A.Pattern]:
    kw.setdefault("negation", False)
    return patterns(kleene=True, returns=False, **kw)  # type: ignore[arg-type]


def _has_kleene(pats: list[A.Pattern]) -> bool:
    return any(r.kleene for p in pats for r in A.events_of(p.structure))


@SETTINGS
@given(st.data())
def test_kleene_patterns_every_strategy(data: st.DataObject) -> None:
    """SEQ/AND/OR with Kleene variables and iteration conditions, every strategy and window
    kind, ties arrival and strict."""
    p = data.draw(_kleene(max_kleene=2))
    assume(_has_kleene([p]))
    events = data.draw(streams(max_size=12))
    check([p], events, data.draw(st.sampled_from(("arrival", "strict"))), data.draw(st.integers(0, len(events))))


@SETTINGS
@given(st.data())
def test_kleene_flat_sequences_longer_streams(data: st.DataObject) -> None:
    """Flat SEQs with Kleene variables over longer streams (long lists, shared prefixes,
    sweeps collecting the element arena)."""
    strategy = data.draw(st.sampled_from(A.STRATEGIES))
    p = data.draw(_kleene(max_depth=1, max_vars=4, strategies=(strategy,), types=("A", "B")))
    assume(_has_kleene([p]))
    events = data.draw(streams(types=("A", "B"), max_size=24))
    check([p], events, data.draw(st.sampled_from(("arrival", "strict"))), data.draw(st.integers(0, len(events))))


@SETTINGS
@given(st.data())
def test_merged_sets_with_kleene(data: st.DataObject) -> None:
    """Patterns with Kleene variables merged into shared nets: each gets its matches, in the
    engine's order."""
    strategy = data.draw(st.sampled_from(A.STRATEGIES))
    part = data.draw(st.booleans())
    pats = [
        data.draw(_kleene(name=f"p{i}", max_depth=1, strategies=(strategy,), partition=part, types=("A", "B", "C")))
        for i in range(data.draw(st.integers(2, 3)))
    ]
    assume(_has_kleene(pats) and supports(build_net(pats))[0])
    events = data.draw(streams(types=("A", "B", "C"), max_size=14))
    check(pats, events, data.draw(st.sampled_from(("arrival", "strict"))), data.draw(st.integers(0, len(events))))


def _matches(net: Any, events: list[Event], tie: str) -> list[dict[str, Any]]:
    engine = Engine(net, tie=tie)
    return [m.to_dict() for e in fresh(events) for m in [*engine.push(e)]] + [m.to_dict() for m in engine.flush()]


def _mixed_slots(net: Any) -> list[int]:
    """Slots of a shared net where one pattern keeps a Kleene list and another an event."""
    return [
        v.slot for g in net.groups for pi in g.patterns for v in net.patterns[pi].vars
        if g.slot_kleene[v.slot] is not None and not v.kleene
    ]


def test_a_list_and_an_event_never_share_a_slot() -> None:
    """Merging moves a pattern's slots from the first where its event would sit in another's
    list slot (the kernel reads a list slot as its element arena's node) past the slots used
    before, the shared prefix kept: the merged net runs on the kernel, each pattern's matches
    as alone."""
    text = "PATTERN p: SEQ(C c, A+ a[], B b) WITHIN 10\nPATTERN q: SEQ(C c, A a, B b) WITHIN 10\n"
    net = compile_text(text)
    assert _mixed_slots(net) == [] and [v.slot for v in net.patterns[1].vars] == [0, 3, 4]
    assert [(t.event_type, t.slot) for t in net.groups[0].transitions if len(t.users) == 2] == [("C", 0)]
    events = [ev(t, i, i, x=i) for i, t in enumerate("CAABAB")]
    out = same(text, events)
    assert [(m["pattern"], m["ids"]) for m in out][:5] == [
        ("p", {"c": 0, "a": [1, 2], "b": 3}), ("p", {"c": 0, "a": [1], "b": 3}), ("p", {"c": 0, "a": [2], "b": 3}),
        ("q", {"c": 0, "a": 1, "b": 3}), ("q", {"c": 0, "a": 2, "b": 3}),
    ]
    assert len(out) == 15


@SETTINGS
@given(st.data())
def test_lists_beside_events_merged_equal_unmerged(data: st.DataObject) -> None:
    """Sets where a pattern with Kleene lists shares a net with patterns without (a list and
    an event would meet in one slot): the kernel covers the merged net, equal to the Python
    engine's (matches in order, counts), whose matches are those of the patterns unmerged."""
    strategy = data.draw(st.sampled_from(A.STRATEGIES))
    part = data.draw(st.booleans())
    kw: dict[str, Any] = {"max_depth": 1, "strategies": (strategy,), "partition": part, "types": ("A", "B", "C")}
    pats = [data.draw(_kleene(name="p0", **kw))] + [
        data.draw(patterns(kleene=False, returns=False, name=f"p{i}", **kw)) for i in range(1, data.draw(st.integers(2, 3)))
    ]
    assume(_has_kleene(pats))
    tie = data.draw(st.sampled_from(("arrival", "strict")))
    net = build_net(pats)
    assert _mixed_slots(net) == []
    events = data.draw(streams(types=("A", "B", "C"), max_size=14))
    check(pats, events, tie, data.draw(st.integers(0, len(events))))
    # the same matches as unmerged, in the same order (a pattern's order does not depend on
    # what it is merged with: emission._ordered)
    assert list(map(repr, _matches(net, events, tie))) == list(map(repr, _matches(build_net(pats, share=False), events, tie)))


OPS = ("=", "!=", "<", "<=", ">", ">=")


@st.composite
def list_patterns(draw: Any) -> A.Pattern:
    """SEQ(A a?, B+ k[], C c?) (types drawn) with one to three conditions on the list: every
    form of element access and aggregate the language has, against constants and ``a``."""
    k = "k"
    cur, prev = A.Attr(k, "x", A.Index(A.IDX_CUR)), A.Attr(k, "x", A.Index(A.IDX_PREV))

    def num() -> A.Num:
        return A.Num(draw(st.integers(0, 5)))

    def cond() -> A.Expr:
        op = draw(st.sampled_from(OPS))
        func = draw(st.sampled_from(("min", "max", "sum", "avg", "count")))
        forms: list[A.Expr] = [
            A.Compare(op, cur, prev),
            A.Compare(op, cur, A.BinOp("+", prev, A.Num(1))),
            A.Compare(op, cur, A.Agg(func, k, "x", upto_prev=True)),
            A.Compare(op, A.Attr(k, "x", A.Index(A.IDX_CONST, draw(st.integers(1, 3)))), num()),
            A.Compare(op, A.Attr(k, "x", A.Index(A.IDX_LAST)), num()),
            A.Compare(op, A.Agg(func, k, None if func == "count" else "x"), A.Num(draw(st.integers(0, 12)))),
            A.Compare(op, cur, num()),
            A.Compare(op, A.Attr(k, "ts", A.Index(A.IDX_CUR)), A.Attr(k, "ts", A.Index(A.IDX_PREV))),
        ]
        if first:
            forms.append(A.Compare(op, cur, A.Attr("a", "x")))
            forms.append(A.Compare(op, A.Agg(func, k, "x"), A.Attr("a", "x")))
        return draw(st.sampled_from(forms))

    types = ("A", "B", "C")
    first, last = draw(st.booleans()), draw(st.booleans())
    kids = [A.EventRef(draw(st.sampled_from(types)), "a")] if first else []
    kids.append(A.EventRef(draw(st.sampled_from(types)), k, kleene=True))
    if last:
        kids.append(A.EventRef(draw(st.sampled_from(types)), "c"))
    conds = tuple(cond() for _ in range(draw(st.integers(1, 3))))
    kind = draw(st.sampled_from((A.WIN_TIME, A.WIN_COUNT)))
    window = A.Window(kind, draw(st.integers(1, 6)) if kind == A.WIN_TIME else draw(st.integers(2, 8)))
    return A.Pattern(
        "p", A.Seq(tuple(kids)), conds, ("k",) if draw(st.booleans()) else (),
        A.Strategy(draw(st.sampled_from(A.STRATEGIES))), window,
    )


@SETTINGS
@given(list_patterns(), streams(types=("A", "B", "C"), max_size=14), st.sampled_from(("arrival", "strict")), st.data())
def test_iteration_conditions_and_aggregates(p: A.Pattern, events: list[Event], tie: str, data: st.DataObject) -> None:
    """Every element access and aggregate on a list, under every strategy."""
    check([p], events, tie, data.draw(st.integers(0, len(events))))


@SETTINGS
@given(st.data())
def test_key_partitions_give_the_engines_pairs(data: st.DataObject) -> None:
    """Spark's firing stage on the kernel (KeyRunner over the kernel): Kleene matches and their
    emission positions per task are the Python engine's."""
    p = data.draw(_kleene(partition=True))
    assume(_has_kleene([p]))
    events = data.draw(keyed_streams())
    same_pairs([p], events, data.draw(st.sampled_from(("arrival", "strict"))), data.draw(st.integers(1, 3)), data.draw(st.sampled_from([1, 2, 5, 64])))
