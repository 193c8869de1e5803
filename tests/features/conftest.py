"""The ``matcher`` fixture: every hand case in tests/features runs on every matcher."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engines import matcher_run
from tests.features import scenario
from tests.reference import reference_run


@pytest.fixture(autouse=True, params=["reference", "embedded"])
def matcher(request: pytest.FixtureRequest) -> Any:
    """Hand cases run on every matcher; hypothesis properties only on the reference."""
    if getattr(request.function, "is_hypothesis_test", False):
        if request.param != "reference":
            pytest.skip("property of the reference matcher")
        scenario.CURRENT = reference_run
        yield
        return
    scenario.CURRENT = reference_run if request.param == "reference" else matcher_run(request.param)
    yield
    scenario.CURRENT = reference_run
