"""Hypothesis properties of the brute-force reference matcher itself (tests/reference.py).

They call ``reference_run`` directly (``ids`` goes to the reference too: no fixture here).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from petricep.events import Event
from petricep.lang.ast import (
    WIN_COUNT,
    WIN_DURATION,
    WIN_TIME,
    BoolOp,
    EventRef,
    Not,
    Pattern,
    Seq,
    Strategy,
    Window,
    vars_of,
)
from tests.budget import examples
from tests.features.scenario import (
    NEXT,
    PART,
    SEQ,
    STRICT,
    _key,
    agg,
    arith,
    cmp,
    f,
    ids,
    neg,
    pat,
    plus,
    ref,
    returns,
    within,
    within_events,
)
from tests.reference import TIES, Binding, Item, Matcher, all_items, env_of, reference_run
from tests.reference_conditions import holds
from tests.strategies import negation_seqs, pattern_text, patterns, streams, tied_streams


def _set(matches: list[dict]) -> set[str]:
    return {json.dumps(m, sort_keys=True) for m in matches}


def _has_negation(p: Pattern) -> bool:
    return "!(" in pattern_text(p)


SETTINGS = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(patterns(), streams())
def test_strategies_only_remove_matches(p, evs):
    any_match = _set(reference_run([dataclasses.replace(p, strategy=Strategy.ANY)], evs))
    nxt = _set(reference_run([dataclasses.replace(p, strategy=NEXT)], evs))
    part = _set(reference_run([dataclasses.replace(p, strategy=PART)], evs))
    strict = _set(reference_run([dataclasses.replace(p, strategy=STRICT)], evs))
    assert nxt <= any_match
    assert strict <= part <= any_match


@SETTINGS
@given(patterns(negation=False, strategies=("skip-till-any-match",)), streams())
def test_tie_rules_nest_without_negation(p, evs):
    strict = _set(reference_run([p], evs, "strict"))
    arrival = _set(reference_run([p], evs, "arrival"))
    either = _set(reference_run([p], evs, "either"))
    assert strict <= arrival <= either


@SETTINGS
@given(patterns(negation=False, strategies=("skip-till-any-match",)), streams())
def test_windows_and_conditions_only_remove_matches_without_negation(p, evs):
    base = _set(reference_run([dataclasses.replace(p, window=None, conditions=())], evs))
    assert _set(reference_run([dataclasses.replace(p, conditions=())], evs)) <= base
    assert _set(reference_run([dataclasses.replace(p, window=None)], evs)) <= base


@settings(SETTINGS, max_examples=examples(100))
@given(negation_seqs(types=("A", "B", "C")), tied_streams(types=("A", "B", "C", "X")), st.sampled_from(TIES))
def test_negations_only_remove_matches(p, evs, tie):
    kept = tuple(c for c in p.structure.children if not c.negated)
    negated = {c.var for c in p.structure.children if c.negated}
    conditions = tuple(c for c in p.conditions if not vars_of(c) & negated)
    bare = dataclasses.replace(p, structure=Seq(kept), conditions=conditions)
    assert _set(reference_run([p], evs, tie)) <= _set(reference_run([bare], evs, tie))


@settings(SETTINGS, max_examples=examples(100))
@given(
    negation_seqs(windows=(WIN_TIME, "none")), tied_streams(types=("A", "B", "X")), st.sampled_from(TIES)
)
def test_events_of_other_types_tying_with_a_patterns_events_change_nothing_without_a_count_window(p, evs, tie):
    """X is no type of the pattern: leaving its events out (positions renumbered, ids kept)
    keeps every match, under every tie rule, with time windows or none."""
    assert all(isinstance(c, EventRef) and c.type != "X" for c in p.structure.children)
    rest = [e for e in evs if e.type != "X"]
    renumbered = [Event(e.type, e.ts, pos, e.id, dict(e.attrs)) for pos, e in enumerate(rest)]
    assert _set(reference_run([p], renumbered, tie)) == _set(reference_run([p], evs, tie))


@SETTINGS
@given(patterns(), streams(), st.sampled_from(("arrival", "strict")))
def test_every_match_is_well_formed(p, evs, tie):
    by_id = {e.id: e for e in evs}
    for m in reference_run([p], evs, tie):
        assert m["pattern"] == "p"
        bound = [by_id[i] for v in m["ids"].values() for i in (v if isinstance(v, list) else [v])]
        assert len({e.pos for e in bound}) == len(bound)
        assert m["start"] == min(e.ts for e in bound) and m["end"] == max(e.ts for e in bound)
        if p.partition:
            assert len({e.attrs["k"] for e in bound}) == 1
        if p.window is not None and p.window.kind == WIN_COUNT:
            assert max(e.pos for e in bound) - min(e.pos for e in bound) < p.window.value
        elif p.window is not None:
            assert m["end"] - m["start"] <= p.window.value
        for v in m["ids"].values():
            if isinstance(v, list):
                assert v == sorted(v)
        assert set(m["attrs"]) == ({f.name for f in p.returns.fields} if p.returns else set())


@SETTINGS
@given(patterns(), streams())
def test_pattern_text_prints_every_pattern(p, evs):
    text = pattern_text(p)
    assert text.startswith("PATTERN p: ")
    assert ("WITHIN" in text) == (p.window is not None)
    assert ("RETURN" in text) == (p.returns is not None)
    if _has_negation(p):
        assert any(r in text for r in ("!(A", "!(B", "!(C", "!(D"))


def test_pattern_text_example():
    p = pat(
        SEQ(ref("A", "a"), plus("B", "b"), neg("C", "c"), ref("D", "d")),
        cmp(f("b", "x", "i"), ">", f("b", "x", "i-1")),
        cmp(f("a"), "=", 3),
        BoolOp("or", (cmp(arith(f("a"), "+", 1), "<", f("d")), Not(cmp(agg("min", "b", prev=True), "=", 2)))),
        partition=("k",),
        strategy=NEXT,
        window=within(5),
        returns=returns("T", x=f("a")),
    )
    assert pattern_text(p) == (
        "PATTERN p: SEQ(A a, B+ b[], !(C c), D d)\n"
        "WHERE skip-till-next-match AND [k] AND b[i].x > b[i-1].x AND a.x = 3"
        " AND (a.x + 1 < d.x OR NOT (min(b[..i-1].x) = 2))\n"
        "WITHIN 5\n"
        "RETURN T(x = a.x)"
    )
    assert "WITHIN 5 EVENTS" in pattern_text(dataclasses.replace(p, window=within_events(5)))
    assert "WITHIN 5 s" in pattern_text(dataclasses.replace(p, window=Window(WIN_DURATION, 5, "s")))


def _unpruned_bindings(pattern: Pattern, events: list[Event], tie: str) -> set[str]:
    """The plain cross product of every variable's candidates, filtered once at the end:
    checks that the pruned search of the reference loses nothing."""
    items = [Item(e, ((e.pos, 0),), i) for i, e in enumerate(events)]
    m = Matcher(pattern, items, tie)
    out = set()
    for shape in m.shapes:
        options: list[Sequence[Item | tuple[Item, ...]]] = []  # a Kleene variable's candidates are tuples
        for r in shape.refs:
            cands = m.by_type.get(r.type, [])
            if r.kleene:
                subsets: list[tuple[Item, ...]] = []
                for size in range(1, len(cands) + 1):
                    subsets.extend(itertools.combinations(cands, size))
                options.append(subsets)
            else:
                options.append(cands)
        for combo in itertools.product(*options):
            binding: Binding = {r.var: v for r, v in zip(shape.refs, combo)}
            bound = all_items(binding)
            if len({i.idx for i in bound}) != len(bound):
                continue
            if any(
                not m.before(a, b)
                for u, w in shape.prec
                for a in (binding[u] if isinstance(binding[u], tuple) else (binding[u],))
                for b in (binding[w] if isinstance(binding[w], tuple) else (binding[w],))
            ):
                continue
            if any(
                not m.before(a, b) for v in binding.values() if isinstance(v, tuple) for a, b in zip(v, v[1:])
            ):
                continue
            if not m.in_window(bound) or not m.same_partition(bound):
                continue
            env = env_of(binding)
            if not all(holds(c, env) for c in m.positive_conj if c.vars <= shape.vars):
                continue
            if m.negations_ok(shape, binding) and m.strategy_ok(binding):
                out.add(
                    _key(
                        {
                            v: [i.ev.id for i in x] if isinstance(x, tuple) else x.ev.id
                            for v, x in binding.items()
                        }
                    )
                )
    return out


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patterns(max_vars=4), streams(max_size=7), st.sampled_from(("arrival", "strict", "either")))
def test_pruned_search_equals_plain_cross_product(p, evs, tie):
    if tie == "either":
        p = dataclasses.replace(p, strategy=Strategy.ANY)
    assert ids(p, evs, tie) == _unpruned_bindings(p, evs, tie)
