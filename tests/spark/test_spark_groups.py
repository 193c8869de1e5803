"""Repeated groups (issue 42) on Spark batch: the keyed runner over two firing partitions
gives the reference's matches, the group's ids a list of {step: id}; a group as a SEQ's step
inside AND, with a negation between its steps, with a gap FROM a step; bounded, and of no
iteration, stopped by UNTIL. Optional and Kleene steps inside groups (first, between, last,
``C*``, a negation beside an optional one, UNTIL and RELUCTANT beside a list), merged in one net,
on batch and streaming, under the tie rules arrival and either."""

from __future__ import annotations

import json
from typing import Any

import pytest

from petricep.lang.parser import parse_text
from tests.engines import run_embedded
from tests.features.scenario import stream
from tests.reference import reference_run
from tests.spark.engines import run_spark_batch, run_spark_stream

pytestmark = pytest.mark.spark

CASES = [
    (
        "PATTERN p: SEQ(A a, SEQ(B b, C c)+ g[], D d) WHERE [k] AND g[i].b.x < g[i].c.x WITHIN 10 RETURN R(n = count(g[]))",
        "A@0:k=1 B@1:k=1,x=1 A@1:k=2 C@2:k=1,x=2 B@2:k=2,x=0 B@3:k=1,x=5 C@3:k=2,x=1 C@4:k=1,x=3 D@5:k=1 D@5:k=2",
        [{"a": 0, "g": [{"b": 1, "c": 3}], "d": 8}, {"a": 0, "g": [{"b": 1, "c": 7}], "d": 8}, {"a": 2, "g": [{"b": 4, "c": 6}], "d": 9}],
    ),
    (  # inside AND: key 2's d3 before its group, key 1's d6 between b1 c4 and c8
        "PATTERN p: SEQ(A a, AND(SEQ(B b, C c)+ g[], D d)) WHERE [k] AND count(g[]) <= 2 WITHIN 10",
        "A@0:k=1 B@1:k=1 A@1:k=2 D@2:k=2 C@2:k=1 B@2:k=2 D@3:k=1 C@3:k=2 C@4:k=1",
        [{"a": 0, "g": [{"b": 1, "c": 4}], "d": 6}, {"a": 2, "g": [{"b": 5, "c": 7}], "d": 3}, {"a": 0, "g": [{"b": 1, "c": 8}], "d": 6}],
    ),
    (  # a negation inside: key 1's x4 x5 break its b2..c6; key 2's b3..c7 sees no X of its key
        "PATTERN p: SEQ(A a, SEQ(B b, !(X x), C c)+ g[]) WHERE [k] WITHIN 10",
        "A@0:k=1 A@0:k=2 B@1:k=1 B@2:k=2 X@3:k=1 X@4:k=1 C@5:k=1 C@5:k=2",
        [{"a": 1, "g": [{"b": 3, "c": 7}]}],
    ),
    (  # bounds (two or three iterations) on key 1; none on key 2 of a group of no iteration
        "PATTERN p: SEQ(A a, SEQ(B b, C c){2,3} g[], D d) WHERE [k] AND skip-till-next-match WITHIN 10\n"
        "PATTERN q: SEQ(A a, SEQ(B b, C c)? g[], D d) WHERE [k] AND skip-till-next-match WITHIN 10",
        "A@0:k=1 A@0:k=2 B@1:k=1 D@1:k=2 C@2:k=1 B@3:k=1 C@4:k=1 B@5:k=1 C@6:k=1 D@7:k=1",
        [{"a": 0, "g": [{"b": 2, "c": 4}, {"b": 5, "c": 6}, {"b": 7, "c": 8}], "d": 9}, {"a": 1, "d": 3}, {"a": 0, "g": [{"b": 2, "c": 4}], "d": 9}],
    ),
    (  # a stop event of key 1 ends its group after (b, c); key 2's group goes on past it
        "PATTERN p: SEQ(A a, SEQ(B b, C c)+ g[] UNTIL U u, D d) WHERE [k] AND count(g[]) = 2 WITHIN 10",
        "A@0:k=1 A@0:k=2 B@1:k=1 B@1:k=2 C@2:k=1 C@2:k=2 U@3:k=1 B@4:k=1 B@4:k=2 C@5:k=1 C@5:k=2 D@6:k=1 D@6:k=2",
        [{"a": 1, "g": [{"b": 3, "c": 5}, {"b": 8, "c": 10}], "d": 12}],
    ),
    (  # a gap FROM the iteration's b: key 1's c4 (2 after b2) holds, c6 (4) not; key 2's c5 (3) not
        "PATTERN p: SEQ(A a, SEQ(B b, C c AFTER 0 TO 2 FROM b)+ g[]) WHERE [k] WITHIN 10",
        "A@0:k=1 A@0:k=2 B@1:k=1 B@2:k=2 C@3:k=1 C@5:k=2 C@5:k=1",
        [{"a": 0, "g": [{"b": 2, "c": 4}]}],
    ),
]


@pytest.mark.parametrize(("text", "spec", "expected"), CASES)
def test_grouped_pattern_on_spark_batch(spark: Any, text: str, spec: str, expected: list[dict[str, Any]]) -> None:
    patterns = parse_text(text).patterns
    events = stream(spec)
    got = run_spark_batch(patterns, events)
    assert sorted(json.dumps(m, sort_keys=True) for m in got) == sorted(
        json.dumps(m, sort_keys=True) for m in reference_run(patterns, events)
    )
    assert sorted(json.dumps(m["ids"], sort_keys=True) for m in got) == sorted(json.dumps(ids, sort_keys=True) for ids in expected)


STEP_FORMS = (
    "PATTERN gopt: SEQ(A a, SEQ(B b, C? c, D d)+ g[], E e) WHERE [k] AND g[i].b.x <= g[i].d.x WITHIN 10",
    "PATTERN glist: SEQ(A a, SEQ(B b, C+ cs[], D d)+ h[], E e) WHERE [k] AND skip-till-next-match WITHIN 10 "
    "RETURN L(n = count(h[]), s = sum(h[].cs.x))",
    "PATTERN gfirst: SEQ(A a, SEQ(C+ cs[], D d)+ h[], E e) WHERE [k] AND skip-till-next-match WITHIN 10",
    "PATTERN gstar: SEQ(A a, SEQ(B b, C* cs[], D d){2,} h[], E e) WHERE [k] AND skip-till-next-match WITHIN 10",
    "PATTERN gneg: SEQ(A a, SEQ(B b, !(X x), C? c, D d)+ g[], E e) WHERE [k] WITHIN 10",
    "PATTERN guntil: SEQ(A a, SEQ(B b, C* cs[], D d)+ h[] UNTIL X u, E e) WHERE [k] WITHIN 10",
    "PATTERN greluctant: SEQ(A a, SEQ(B b, C* cs[], D d)+ h[] RELUCTANT, B f, E e) WHERE [k] AND skip-till-next-match WITHIN 10",
    "PATTERN gkopt: SEQ(A a, SEQ(B b, C? c, D+ ds[])+ h[], E e) WHERE [k] AND skip-till-next-match WITHIN 10",
    "PATTERN gkneg: SEQ(A a, SEQ(B b, C* cs[], !(X x), D d)+ h[], E e) WHERE [k] WITHIN 10",
    "PATTERN gkgap: SEQ(A a, SEQ(B b, C+ cs[] AFTER 0 TO 2, D d AFTER 0 TO 2)+ h[], E e) WHERE [k] WITHIN 10",
    "PATTERN gkiter: SEQ(A a, SEQ(B b, C+ cs[], D d)+ h[], E e) WHERE [k] AND h[i].cs.x > h[i].b.x WITHIN 10",
    "PATTERN gklast: SEQ(A a, SEQ(B b, C+ cs[]){1,2} h[] GREEDY, D f, E e) WHERE [k] AND skip-till-next-match WITHIN 10",
    "PATTERN gand: SEQ(A a, AND(SEQ(SEQ(B b, D d)+ h[] RELUCTANT, E f), C c)) WHERE [k] AND skip-till-next-match WITHIN 10",
    "PATTERN gogap: SEQ(A a, SEQ(B b, C? c, D d AFTER 0 TO 2)+ g[], E e) WHERE [k] WITHIN 10",
    "PATTERN gsgap: SEQ(A a, SEQ(B b, C* cs[], D d AFTER 0 TO 1)+ h[], E e) WHERE [k] AND skip-till-next-match WITHIN 10",
)
STEP_EVENTS = (
    "A@0:k=1,x=0 A@0:k=2,x=0 B@1:k=1,x=1 B@1:k=2,x=2 C@2:k=1,x=3 X@2:k=2,x=0 C@3:k=1,x=4 D@3:k=2,x=2 D@4:k=1,x=5 "
    "B@5:k=1,x=1 B@5:k=2,x=0 D@6:k=1,x=0 C@6:k=2,x=7 D@7:k=2,x=1 E@8:k=1,x=0 E@8:k=2,x=0"
)


EITHER_FORMS = (
    "PATTERN gopt: SEQ(A a, SEQ(B b, C? c, D d)+ g[], E e) WHERE [k] AND count(g[]) = 2 WITHIN 10",
    "PATTERN glist: SEQ(A a, SEQ(B b, C+ cs[], D d)+ h[], E e) WHERE [k] WITHIN 10 RETURN L(n = count(h[]), k = a.k)",
    "PATTERN after: SEQ(L l, E e) WHERE [k] WITHIN 10",
)
# per key one timestamp for the groups' events: under either c may lie in either iteration
EITHER_EVENTS = (
    "A@0:k=1 A@0:k=2 B@1:k=1 B@1:k=2 C@1:k=1 D@1:k=1 C@1:k=2 B@1:k=1 D@1:k=2 D@1:k=1 B@1:k=2 C@1:k=2 D@1:k=2 "
    "E@2:k=1 E@2:k=2 E@3:k=1"
)


def test_under_either_an_optional_event_of_one_timestamp_lies_in_either_iteration() -> None:
    want = reference_run(list(parse_text("\n".join(EITHER_FORMS)).patterns), stream(EITHER_EVENTS), "either")
    # key 1 up to e13: b2 c4 d5 b7 d9 -- c4 in the first iteration or the second (or left out)
    assert sorted(json.dumps(m["ids"]["g"]) for m in want if m["pattern"] == "gopt" and m["ids"]["e"] == 13) == [
        '[{"b": 2, "c": 4, "d": 5}, {"b": 7, "d": 9}]',
        '[{"b": 2, "d": 5}, {"b": 7, "c": 4, "d": 9}]',
        '[{"b": 2, "d": 5}, {"b": 7, "d": 9}]',
    ]


@pytest.mark.parametrize("runner", [run_spark_batch, run_spark_stream], ids=["batch", "stream"])
@pytest.mark.parametrize(
    ("forms", "events", "tie", "names"),
    [
        (STEP_FORMS, STEP_EVENTS, "arrival", {"gopt", "glist", "gfirst", "gstar", "gneg", "guntil", "greluctant", "gkopt", "gkneg", "gkgap", "gkiter", "gklast", "gand", "gogap", "gsgap"}),
        (EITHER_FORMS, EITHER_EVENTS, "either", {"gopt", "glist", "after"}),
    ],
    ids=["arrival", "either"],
)
def test_optional_and_kleene_steps_in_groups_on_spark(
    spark: Any, runner: Any, forms: tuple[str, ...], events: str, tie: str, names: set[str]
) -> None:
    patterns = list(parse_text("\n".join(forms)).patterns)
    evs = stream(events)
    want = reference_run(patterns, evs, tie)
    assert {m["pattern"] for m in want} == names  # every form matches
    embedded = run_embedded(patterns, evs, tie)
    assert sorted(json.dumps(m, sort_keys=True) for m in embedded) == sorted(json.dumps(m, sort_keys=True) for m in want)
    got = runner(patterns, evs, tie)
    assert sorted(json.dumps(m, sort_keys=True) for m in got) == sorted(json.dumps(m, sort_keys=True) for m in embedded)
