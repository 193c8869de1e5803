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


# the later forms (tests/features/test_gaps_more.py): a list's chain, a gap after a list and
# after an optional step, a gap after an AND FROM a step inside it; keyed, over micro-batches
MORE = [
    ("chain", "SEQ(A a, B+ b[] AFTER 1 TO 2, C c AFTER 0 TO 3) WHERE [k] AND skip-till-next-match WITHIN 9"),
    ("optional", "SEQ(A a, B? b AFTER 1 TO 2, C c AFTER 0 TO 3) WHERE [k] WITHIN 9"),
    ("after_and", "SEQ(A a, AND(B b, D d), C c AFTER 0 TO 2 FROM b) WHERE [k] WITHIN 9"),
]
MORE_EVENTS = stream(
    "A@0:k=1 A@1:k=2 B@2:k=1 B@3:k=2 D@3:k=1 C@4:k=1 B@4:k=1 C@5:k=2 C@6:k=1 A@7:k=2 B@8:k=2 D@9:k=2 C@10:k=2"
)


@pytest.mark.parametrize("runner", [run_spark_batch, run_spark_stream], ids=["batch", "stream"])
def test_the_later_gap_forms_on_spark(spark: Any, runner: Any) -> None:
    from petricep.lang.parser import parse_text

    pats = [parse_text(f"PATTERN {name}: {text}").patterns[0] for name, text in MORE]
    assert supports(build_net(pats)) == (True, "covered")
    want = reference_run(pats, MORE_EVENTS)
    assert {m["pattern"] for m in want} == {"chain", "optional", "after_and"}  # the stream is made to match
    assert _sorted(runner(pats, MORE_EVENTS)) == _sorted(want)


# the last forms (tests/features/test_gaps_rest.py): a gap in EVENTS under a count window, a
# step right after an AND without FROM, FROM a repeated group's step; keyed, one batch job
LAST = [
    ("counted", "SEQ(A a, B b AFTER 1 TO 3 EVENTS) WHERE [k] WITHIN 8 EVENTS"),
    ("after_and", "SEQ(A a, AND(B b, D d), C c AFTER 0 TO 2) WHERE [k] WITHIN 9"),
    ("from_step", "SEQ(A a, SEQ(B b, D d)+ g[], C c AFTER 0 TO 3 FROM b) WHERE [k] WITHIN 9"),
]


def test_the_last_gap_forms_on_spark_batch(spark: Any) -> None:
    from petricep.lang.parser import parse_text

    pats = [parse_text(f"PATTERN {name}: {text}").patterns[0] for name, text in LAST]
    assert supports(build_net(pats)) == (True, "covered")
    want = reference_run(pats, MORE_EVENTS)
    assert {m["pattern"] for m in want} == {"counted", "after_and", "from_step"}  # the stream is made to match
    assert _sorted(run_spark_batch(pats, MORE_EVENTS)) == _sorted(want)
