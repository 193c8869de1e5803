"""Per-step gaps on Spark (issue 42): batch and streaming fire the chooser's matcher, which is
now the kernel for gapped nets; a gapped pattern merged with one saying other gaps, keyed,
over a stream split into micro-batches, gives the brute-force reference's matches."""

from __future__ import annotations

import json
from typing import Any

import pytest

from petricep.kernel import supports
from petricep.lang.ast import EventRef, Gap
from petricep.merge import build_net
from tests.features.scenario import SEQ, neg, pat, ref, stream, within
from tests.reference import reference_run
from tests.spark.engines import run_spark_batch, run_spark_stream

SHORT = pat(
    SEQ(ref("A", "a"), EventRef("B", "b", gap=Gap(1, 3, None, None)), neg("C", "c")),
    partition=("k",), window=within(6), name="short",
)
LONG = pat(
    SEQ(ref("A", "a"), EventRef("B", "b", gap=Gap(1, 5, None, None)), EventRef("D", "d", gap=Gap(0, 4, None, "a"))),
    partition=("k",), window=within(9), name="long",
)
EVENTS = stream(
    "A@0:k=1 A@1:k=2 B@2:k=1 B@3:k=2 C@4:k=2 D@4:k=1 A@5:k=1 B@7:k=1 B@8:k=2 D@9:k=1 A@10:k=2 B@12:k=2 D@13:k=2"
)


def _sorted(matches: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(m, sort_keys=True) for m in matches)


@pytest.mark.parametrize("runner", [run_spark_batch, run_spark_stream], ids=["batch", "stream"])
def test_gapped_patterns_on_spark(spark: Any, runner: Any) -> None:
    assert supports(build_net([SHORT, LONG])) == (True, "covered")
    want = reference_run([SHORT, LONG], EVENTS)
    assert want  # the stream is made to match
    assert _sorted(runner([SHORT, LONG], EVENTS)) == _sorted(want)
