"""``petricep.match`` says what ``petricep run`` says beside its matches: a pattern that
found nothing and why, epoch milliseconds read as seconds -- as :class:`PetricepWarning`,
in the command line's words (petricep.api.notes), on either engine."""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

import petricep
from petricep import kernel
from petricep.errors import PetricepWarning

LIBRARY_ENGINES = [
    "python",
    pytest.param("kernel", marks=pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built")),
]


def notes(events: object, pattern: str, **options: Any) -> tuple[int, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = petricep.match(events, pattern, type_field="type", time_field="ts", id_field="id", **options)
    assert all(w.category is PetricepWarning for w in caught)
    return len(found), [str(w.message) for w in caught]


@pytest.mark.parametrize("engine", LIBRARY_ENGINES)
def test_a_type_in_another_case_is_named(engine: str) -> None:
    df = pd.DataFrame({"type": ["a", "b"], "ts": [1, 2], "id": [0, 1]})
    assert notes(df, "PATTERN p: SEQ(A a, B b) WITHIN 10", engine=engine) == (
        0,
        [
            "pattern 'p': no event of type 'A' was read (types seen: a, b); the input has 'a', "
            "which differs only in case (type names match exactly)",
            "pattern 'p': no event of type 'B' was read (types seen: a, b); the input has 'b', "
            "which differs only in case (type names match exactly)",
        ],
    )


@pytest.mark.parametrize("engine", LIBRARY_ENGINES)
def test_epoch_milliseconds_under_a_duration_window(engine: str) -> None:
    table = pa.table({"type": ["A", "B"], "ts": [1_700_000_000_000, 1_700_000_001_000], "id": [0, 1]})
    assert notes(table, "PATTERN p: SEQ(A a, B b) WITHIN 10 s", engine=engine) == (
        0,
        [
            "timestamps in 'ts' look like epoch milliseconds (1700000000000) while pattern 'p' has a window "
            "of 10 s (in seconds): give time_unit='ms'",
            "pattern 'p': no match fits in its window WITHIN 10 s: without it, the shortest spans 1,000",
        ],
    )
    assert notes(table, "PATTERN p: SEQ(A a, B b) WITHIN 10 s", engine=engine, time_unit="ms") == (1, [])


@pytest.mark.parametrize("engine", LIBRARY_ENGINES)
def test_a_condition_no_event_meets(engine: str) -> None:
    df = pd.DataFrame({"type": ["A", "B"], "ts": [1, 2], "id": [0, 1], "sym": ["x", "y"]})
    assert notes(df, "PATTERN p: SEQ(A a, B b) WHERE b.sym = 1 WITHIN 10", engine=engine) == (
        0,
        ["pattern 'p': no events satisfy its condition b.sym = 1: without it, it would match; b.sym holds text ('y'), 1 is a number"],
    )


def test_a_run_with_matches_says_nothing() -> None:
    df = pd.DataFrame({"type": ["A", "B"], "ts": [1, 2], "id": [0, 1]})
    assert notes(df, "PATTERN p: SEQ(A a, B b) WITHIN 10") == (1, [])
