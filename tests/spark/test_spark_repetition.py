"""Bounded lists (``T{0,m} v[]`` too), optional steps (a negation beside one too) and stop conditions (issue 42)
on Spark batch and streaming: each form, keyed, fired by the chooser's matcher (the kernel: it
covers them all) over key buckets (batch) or micro-batches (stream), gives the embedded
engine's matches, which are the brute-force reference's.

One parametrized test, a case per mode, each one small run on the session's Spark of the
forms at once (one merged net); the embedded engine's timeouts, which the reference has none
of, are Spark's too."""

from __future__ import annotations

import json
from typing import Any

import pytest

from petricep.kernel import supports
from petricep.lang.parser import parse_text
from petricep.merge import build_net
from tests.engines import run_embedded
from tests.features.scenario import stream
from tests.reference import reference_run
from tests.spark.engines import run_spark_batch, run_spark_stream

EVENTS = stream(
    "A@0:k=1,x=0 A@1:k=2,x=0 B@2:k=1,x=1 B@3:k=2,x=2 B@3:k=1,x=3 C@4:k=1,x=9 B@5:k=1,x=4 B@5:k=2,x=5 D@6:k=1,x=0 D@7:k=2,x=0"
)
FORMS = (
    "PATTERN bounded: SEQ(A a, B{2,3} b[], D d) WHERE [k] AND b[i].x > b[i-1].x WITHIN 10",
    "PATTERN optional: SEQ(A a, B{1,2} b[], C? c, D d) WHERE [k] WITHIN 10",
    "PATTERN until: SEQ(A a, B+ b[] UNTIL C s, D d) WHERE [k] AND s.x > a.x WITHIN 10",
    # a negation beside an optional step: between c and d, or a and d where c is left out
    "PATTERN optneg: SEQ(A a, C? c, !(B n), D d) WHERE [k] AND n.x > 4 WITHIN 10",
    # a list inside AND, its stop condition reading the list so far, its stopped partial
    # matches timing out (C@4 stops [2,4] and [4] of key 1)
    "PATTERN until_and: AND(A a, B+ b[] UNTIL C s) WHERE [k] AND s.x > b[last].x WITHIN 3 "
    "ON TIMEOUT RETURN Stopped(n = count(b[]))",
    # a list of no event or more: key 1's matches without b read null for it
    "PATTERN star: SEQ(A a, B{0,2} b[], C c) WHERE [k] WITHIN 10 RETURN Star(n = count(b[]), f = b[1].x)",
)
PATTERNS = list(parse_text("\n".join(FORMS)).patterns)


def _sorted(matches: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(m, sort_keys=True) for m in matches)


@pytest.mark.parametrize("runner", [run_spark_batch, run_spark_stream], ids=["batch", "stream"])
def test_repetition_forms_on_spark(spark: Any, runner: Any) -> None:
    """The forms in one run (one merged net, the kernel's), each pattern with matches."""
    assert supports(build_net(PATTERNS)) == (True, "covered")
    want = reference_run(PATTERNS, EVENTS)
    assert {m["pattern"] for m in want} == {"bounded", "optional", "until", "until_and", "optneg", "star"}  # the stream matches every form
    embedded = run_embedded(PATTERNS, EVENTS)
    timeouts = [m for m in embedded if "timeout" in m]  # (the reference has none)
    assert {json.dumps(m["ids"]["b"]) for m in timeouts if m["ids"].get("a") is None} >= {"[2, 4]", "[4]"}
    assert _sorted([m for m in embedded if "timeout" not in m]) == _sorted(want)
    assert _sorted(runner(PATTERNS, EVENTS)) == _sorted(embedded)
