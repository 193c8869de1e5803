"""The fuzz suite of issue 15: hostile pattern text through ``petricep check`` and the library
(``compile_text`` + ``Engine``), hostile event files through ``petricep run``. Every input
gives a result or a typed petricep error within a deadline (tests/fuzz/harness.py); with
``--on-error skip``, processed + rejected == read, and the matches over the good rows equal a
run over the file without the rejected rows.

``PETRICEP_FUZZ=N`` sets the examples per test (default: about a minute in all);
``python -m bench fuzz`` is the long run, recorded in bench/RESULTS.md.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tests.fuzz.harness import RESULT, TYPED, check_text, run_events, run_library
from tests.fuzz.strategies import RUN_PATTERNS, csv_files, jsonl_files, pattern_texts, token_mutations, tokens


def fuzz(default: int) -> settings:
    return settings(
        max_examples=int(os.environ.get("PETRICEP_FUZZ", str(default))),
        deadline=None,  # the harness's own deadline (SIGALRM) catches hangs
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


@fuzz(150)
@given(pattern_texts())
def test_check_command(text: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        assert check_text(text.encode("utf-8"), Path(d)) in (RESULT, TYPED)


@fuzz(60)
@given(pattern_texts(), st.binary(min_size=1, max_size=4), st.integers(0, 10_000))
def test_check_command_on_bytes_that_are_not_utf8(text: str, junk: bytes, at: int) -> None:
    data = text.encode("utf-8")
    k = at % (len(data) + 1)
    with tempfile.TemporaryDirectory() as d:
        assert check_text(data[:k] + b"\xff" + junk + data[k:], Path(d)) in (RESULT, TYPED)


@fuzz(150)
@given(pattern_texts())
def test_library_compile_and_run(text: str) -> None:
    assert run_library(text) in (RESULT, TYPED)


@fuzz(40)
@given(st.sampled_from(RUN_PATTERNS), csv_files())
def test_run_over_hostile_csv(pattern: str, data: bytes) -> None:
    note(data.decode("utf-8", "replace"))
    assert run_events(pattern, data, ".csv", data) in (RESULT, TYPED)


@fuzz(40)
@given(st.sampled_from(RUN_PATTERNS), jsonl_files())
def test_run_over_hostile_json_lines(pattern: str, data: bytes) -> None:
    note(data.decode("utf-8", "replace"))
    assert run_events(pattern, data, ".jsonl", data) in (RESULT, TYPED)


@fuzz(20)
@given(st.sampled_from(RUN_PATTERNS).flatmap(token_mutations), csv_files())
def test_run_mutated_patterns_over_hostile_csv(pattern: str, data: bytes) -> None:
    note(pattern)
    assert run_events(pattern, data, ".csv", None) in (RESULT, TYPED)


def test_tokens_cover_the_text() -> None:
    text = "PATTERN p: SEQ(A a, B b) WHERE a.x < 1e3 AND a.s = 'q r' WITHIN 5"
    assert "".join(tokens(text)) == text
    assert "1e3" in tokens(text) and "'q r'" in tokens(text)
