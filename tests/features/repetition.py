"""Shared by test_bounded.py, test_optional.py and test_until.py (issue 42): hand cases run on
every engine (the brute-force reference, the Python engine, the compiled kernel when it is
built), and the hypothesis strategies that turn a random pattern's steps into bounded Kleene
lists (``T{n,m} v[]``, ``T{n,} v[]``) and optional steps (``T? v``), and give its lists stop
events (``UNTIL U u``), where the language allows them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from petricep.events import Event
from petricep.kernel import run as kernel_run
from petricep.lang import ast as A
from petricep.lang.check import flatten_seq
from petricep.lang.parser import parse_text
from tests.budget import examples
from tests.engines import run_embedded
from tests.features import scenario
from tests.reference import reference_run

ENGINES = ("reference", "python", "kernel")
# the properties of test_bounded and test_optional (the default profile's share of 120 examples)
SETTINGS = settings(
    max_examples=examples(120, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def kernel_built() -> bool:
    return kernel_run._kernel is not None


def run_on(engine: str, patterns: Sequence[A.Pattern], events: Sequence[Event], tie: str = "arrival") -> list[dict[str, Any]]:
    """The matches of ``patterns`` on one engine; for the kernel, the Python engine's too, and
    both must agree in everything (matches in order, partial matches created, completed, live)."""
    if engine == "reference":
        return reference_run(patterns, events, tie)
    if engine == "python":
        return run_embedded(patterns, events, tie)
    if not kernel_built():
        pytest.skip("the compiled kernel is not built")
    from petricep.kernel.lowering import supports
    from petricep.merge import build_net
    from tests.kernel.compare import both

    net = build_net(list(patterns))
    ok, reason = supports(net, tie)
    if not ok:
        pytest.skip(f"the kernel refuses this net: {reason}")
    out = both(net, events, tie, cut=len(events) // 2, sweep_every=1 + len(events) % 3)
    assert out["kernel"] == out["python"]
    return list(out["kernel"][0])


def matcher_of(engine: str) -> Callable[..., list[dict[str, Any]]]:
    """``engine`` as the matcher of tests/features/scenario.py (``scenario.CURRENT``)."""
    return functools.partial(run_on, engine)


def matches(text: str, events: Sequence[Event], tie: str = "arrival") -> list[dict[str, Any]]:
    """The matches of the patterns of ``text`` on the matcher under test (``scenario.CURRENT``:
    these hand cases run on Spark too, tests/spark/test_partition.py)."""
    return scenario.MATCH(list(parse_text(text).patterns), list(events), tie)


def ids_on(text: str, events: Sequence[Event], tie: str = "arrival") -> set[str]:
    """The ids of every match of the patterns of ``text``, as sorted JSON texts."""
    return {json.dumps(m["ids"], sort_keys=True) for m in matches(text, events, tie)}


def use_engine(request: pytest.FixtureRequest) -> Iterator[None]:
    """The body of the test modules' ``matcher`` fixture (params: ``ENGINES``): hand cases on
    every engine (the kernel too, beside tests/features/conftest.py's two); the hypothesis
    properties name their engines themselves and run once."""
    if getattr(request.function, "is_hypothesis_test", False) and request.param != ENGINES[0]:
        pytest.skip("a property runs once")
    scenario.CURRENT = matcher_of(request.param)
    yield
    scenario.CURRENT = reference_run


def want(*ids: dict[str, Any]) -> set[str]:
    return {json.dumps(i, sort_keys=True) for i in ids}


def sorted_matches(matches: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(m, sort_keys=True) for m in matches)


# ----------------------------------------------------------------------------- random forms


def repetitions(draw: Any, p: A.Pattern, optional: bool = True, bounded: bool = True) -> A.Pattern:
    """``p`` with some Kleene lists given bounds (1-3 at least, at most unbounded or up to two
    more; a list that is a step of a SEQ may also take least 0: ``T* v[]``, ``T{0,m} v[]``)
    and some single steps of a SEQ made optional, where the language allows it: beside a
    negation or read by a negation condition too, every SEQ keeping a required step."""
    p = replace(p, structure=flatten_seq(p.structure))  # as the language reads it

    def visit(node: A.Node) -> A.Node:
        if isinstance(node, A.EventRef):
            if bounded and node.kleene and draw(st.integers(0, 2)) > 0:
                least = draw(st.integers(1, 3))
                most = draw(st.sampled_from([None, least, least + 1, least + 2]))
                return replace(node, least=least, most=most)
            return node
        if isinstance(node, A.Group):
            return node  # (a repeated group's steps: not drawn here)
        kids = [visit(c) for c in node.children]
        if isinstance(node, A.Seq):
            for i, c in enumerate(kids):
                required = [k for k in kids if not ((isinstance(k, A.EventRef) and k.negated) or A.skippable(k))]
                if not (isinstance(c, A.EventRef) and not c.negated and len(required) > 1):
                    continue
                if optional and not c.kleene and draw(st.integers(0, 2)) == 0:
                    kids[i] = replace(c, optional=True)
                elif bounded and c.kleene and draw(st.integers(0, 2)) == 0:  # no event or more
                    kids[i] = replace(c, least=0, most=None if c.most is None else max(c.most, 1))
        return type(node)(tuple(kids), span=node.span)

    out = replace(p, structure=visit(p.structure))
    if bounded and not has_forms(out):
        # no list drawn: a single step nothing reads becomes a bounded one
        read = {v for e in A.pattern_exprs(p) for v in A.vars_of(e)}
        free = [r.var for r in A.events_of(out.structure) if not (r.negated or r.kleene or r.optional) and r.var not in read]
        if free:
            pick = draw(st.sampled_from(free))
            least = draw(st.integers(1, 3))
            most = draw(st.sampled_from([None, least, least + 1]))
            out = replace(out, structure=_retyped(out.structure, pick, least, most))
    return out


def _retyped(node: A.Node, var: str, least: int, most: int | None) -> A.Node:
    """``node`` with the step of ``var`` made a Kleene list of those bounds."""
    if isinstance(node, A.EventRef):
        return replace(node, kleene=True, least=least, most=most) if node.var == var else node
    if isinstance(node, A.Group):
        return node
    return type(node)(tuple(_retyped(c, var, least, most) for c in node.children), span=node.span)


def has_forms(p: A.Pattern) -> bool:
    """Whether a pattern has a bounded list or an optional step (what these tests are about)."""
    return any(r.bounded or r.optional for r in A.events_of(p.structure))


def with_modes(draw: Any, p: A.Pattern) -> A.Pattern:
    """``p`` with GREEDY or RELUCTANT on the Kleene steps of its SEQs (the pattern's, or one
    inside AND or OR) that have a step after them (where the language takes them: under
    skip-till-next-match)."""
    if p.strategy != A.Strategy.NEXT:
        return p

    def visit(node: A.Node) -> A.Node:
        if isinstance(node, (A.EventRef, A.Group)):
            return node
        kids = [visit(c) for c in node.children]
        if isinstance(node, A.Seq):
            for i, c in enumerate(kids):
                after = any(not (isinstance(k, A.EventRef) and k.negated) for k in kids[i + 1 :])
                if isinstance(c, A.EventRef) and c.kleene and after:
                    kids[i] = replace(c, mode=draw(st.sampled_from(["", "greedy", "reluctant"])))
        return type(node)(tuple(kids), span=node.span)

    return replace(p, structure=visit(p.structure))


def with_until(draw: Any, p: A.Pattern, types: Sequence[str] = ("A", "B", "C", "D")) -> A.Pattern:
    """``p`` with stop events (``UNTIL U u``) on some of its Kleene lists, wherever they stand
    (a SEQ's step, the whole pattern, inside AND / OR), each with no condition, one on the
    stop event alone (``u.x > c``), one comparing it with a required single step before the
    list in a SEQ on the way down to it (always bound while the list grows) or one reading
    the list so far (``v[k]``, ``v[last]``, ``count(v[])``, an aggregate over ``v[].x``)."""
    conditions = list(p.conditions)

    def visit(node: A.Node, before: tuple[str, ...]) -> A.Node:
        if isinstance(node, A.Group):
            return node
        if isinstance(node, A.EventRef):
            if not (node.kleene and not node.negated) or draw(st.integers(0, 2)) == 0:
                return node
            stop = A.EventRef(draw(st.sampled_from(tuple(types))), f"s{node.var}")
            kind = draw(st.sampled_from(["none", "const", "list", "list"] + (["before"] if before else [])))
            op = draw(st.sampled_from(("=", "!=", "<", "<=", ">", ">=")))
            if kind == "const":
                conditions.append(A.Compare(op, A.Attr(stop.var, "x"), A.Num(draw(st.integers(0, 5)))))
            elif kind == "before":
                conditions.append(A.Compare(op, A.Attr(stop.var, "x"), A.Attr(draw(st.sampled_from(before)), "x")))
            elif kind == "list":
                conditions.append(A.Compare(op, A.Attr(stop.var, "x"), _list_read(draw, node.var)))
            return replace(node, until=stop)
        kids: list[A.Node] = []
        for i, c in enumerate(node.children):
            mine = before
            if isinstance(node, A.Seq):
                mine += tuple(
                    k.var for k in node.children[:i] if isinstance(k, A.EventRef) and not (k.negated or k.optional or k.kleene)
                )
            kids.append(visit(c, mine))
        return type(node)(tuple(kids), span=node.span)

    structure = visit(p.structure, ())
    return replace(p, structure=structure, conditions=tuple(conditions))


def _list_read(draw: Any, var: str) -> A.Expr:
    """A read of the list so far a stop condition may make: its k-th (1-3) or last element's
    x, its count (plus 0-2), an aggregate of its x."""
    kind = draw(st.sampled_from(["k", "last", "count", "sum", "avg", "min", "max"]))
    if kind in ("k", "last"):
        return A.Attr(var, "x", A.Index(A.IDX_CONST, draw(st.integers(1, 3))) if kind == "k" else A.Index(A.IDX_LAST))
    if kind == "count":
        return A.BinOp("+", A.Agg("count", var, None), A.Num(draw(st.integers(0, 2))))
    return A.Agg(kind, var, "x")


def has_until(p: A.Pattern) -> bool:
    return bool(A.stops_of(p.structure))
