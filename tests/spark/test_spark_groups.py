"""Repeated groups (issue 42) on Spark batch: the keyed runner over two firing partitions
gives the reference's matches, the group's ids a list of {step: id}."""

from __future__ import annotations

import json
from typing import Any

import pytest

from petricep.lang.parser import parse_text
from tests.features.scenario import stream
from tests.reference import reference_run
from tests.spark.engines import run_spark_batch

pytestmark = pytest.mark.spark

TEXT = "PATTERN p: SEQ(A a, SEQ(B b, C c)+ g[], D d) WHERE [k] AND g[i].b.x < g[i].c.x WITHIN 10 RETURN R(n = count(g[]))"
EVENTS = "A@0:k=1 B@1:k=1,x=1 A@1:k=2 C@2:k=1,x=2 B@2:k=2,x=0 B@3:k=1,x=5 C@3:k=2,x=1 C@4:k=1,x=3 D@5:k=1 D@5:k=2"


def test_grouped_pattern_on_spark_batch(spark: Any) -> None:
    patterns = parse_text(TEXT).patterns
    events = stream(EVENTS)
    got = run_spark_batch(patterns, events)
    assert sorted(json.dumps(m, sort_keys=True) for m in got) == sorted(
        json.dumps(m, sort_keys=True) for m in reference_run(patterns, events)
    )
    assert sorted(json.dumps(m["ids"], sort_keys=True) for m in got) == sorted(
        json.dumps(ids, sort_keys=True)
        for ids in (
            {"a": 0, "g": [{"b": 1, "c": 3}], "d": 8},
            {"a": 0, "g": [{"b": 1, "c": 7}], "d": 8},
            {"a": 2, "g": [{"b": 4, "c": 6}], "d": 9},
        )
    )
