"""How many examples a hypothesis test tries, by profile.

The README's test command (``python -m pytest``) must finish in ten minutes on two cores
(issue 41), so its default profile tries a share of each test's full count; CI runs the
suite again with ``HYPOTHESIS_PROFILE=deep``, which tries the full counts (the counts the
tests carried before the profiles). The properties and their assertions are the same in
both: only how many random cases each sees differs. An environment variable named at a
call (``PETRICEP_EXAMPLES``, ``PETRICEP_FUZZ``, ...) still sets the count outright.
"""

from __future__ import annotations

import os

from hypothesis import settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")
DEEP = PROFILE == "deep"
# the default profile's share of a full count; counts up to FLOOR stay whole (a test with
# a handful of examples, each a Spark job or a process, already runs only what it needs)
SHARE = 1.0 if DEEP else 0.25
FLOOR = 10


def examples(full: int, env: str | None = None) -> int:
    """The examples to try where the full (deep) count is ``full``: the variable ``env``
    where it is set, else ``full`` under the deep profile and a quarter of it (at least
    ``min(full, FLOOR)``) under the default one."""
    if env and env in os.environ:
        return int(os.environ[env])
    return max(min(full, FLOOR), round(full * SHARE))


def load_profile() -> None:
    """Register both profiles and load the one ``HYPOTHESIS_PROFILE`` names: they set the
    count of the tests that name none (hypothesis's 100 in the deep one)."""
    settings.register_profile("default", max_examples=examples(100))
    settings.register_profile("deep", max_examples=100)
    if PROFILE not in ("default", "deep"):
        raise ValueError(f"HYPOTHESIS_PROFILE={PROFILE!r}: the profiles are 'default' and 'deep'")
    settings.load_profile(PROFILE)
