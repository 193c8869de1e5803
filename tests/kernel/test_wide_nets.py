"""Nets wider than the kernel once ordered (more than 64 variables in a shared net with
RETURN): the matches emitted at one event are ordered by their events' positions, every
position compared (runtime/emission.py ``_ordered``), as the Python engine orders them --
matches whose first 64 positions agree included."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.events import Event
from petricep.kernel import supports
from petricep.kernel.lowering import MAX_ORDERED_SLOTS
from tests.kernel.compare import both

SETTINGS = settings(
    max_examples=int(os.environ.get("PETRICEP_EXAMPLES", "30")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
WIDE = MAX_ORDERED_SLOTS + 2  # variables a0 .. a65


def wide(name: str = "p", extra: str = "") -> str:
    """A chain of ``WIDE`` A events with x = 0, 1, 2, ... then a B: one match per choice of
    the A events where an x value repeats."""
    names = [f"a{i}" for i in range(WIDE)]
    seq = ", ".join(f"A {v}" for v in names)
    chain = " AND ".join(f"{b}.x = {a}.x + 1" for a, b in zip(names, names[1:]))
    return (
        f"PATTERN {name}: SEQ({seq}, B b) WHERE a0.x = 0 AND {chain}{extra} WITHIN 200 EVENTS "
        f"RETURN R{name}(n = b.x)\n"
    )


def chain_events(repeats: dict[int, int], noise: list[int], ts_step: list[int]) -> list[Event]:
    """x = 0 .. WIDE-1 (value ``i`` ``repeats.get(i, 1)`` times), noise C events after the
    rows at ``noise``, then two B events; timestamps rise by ``ts_step`` (cycled: ties)."""
    rows: list[tuple[str, int]] = []
    for i in range(WIDE):
        rows += [("A", i)] * repeats.get(i, 1)
        if i in noise:
            rows.append(("C", i))
    rows += [("B", 1), ("B", 2)]
    out, ts = [], 0
    for pos, (t, x) in enumerate(rows):
        ts += ts_step[pos % len(ts_step)]
        out.append(Event(t, ts, pos, pos, {"x": x}))
    return out


def test_a_wide_net_with_return_is_covered() -> None:
    net = compile_text(wide())
    assert net.groups[0].nslots > MAX_ORDERED_SLOTS
    assert supports(net) == (True, "covered")


@SETTINGS
@given(
    st.dictionaries(st.integers(0, WIDE - 1), st.integers(2, 3), max_size=3),
    st.lists(st.integers(0, WIDE - 1), max_size=3),
    st.lists(st.integers(0, 1), min_size=1, max_size=4),
    st.sampled_from(("arrival", "strict", "either")),
    st.booleans(),
)
def test_wide_nets_order_matches_by_every_position(
    repeats: dict[int, int], noise: list[int], ts_step: list[int], tie: str, two: bool
) -> None:
    """One or two wide patterns (in one shared net), many matches at one B event: the same
    matches in the same order, counts and composite events as the Python engine."""
    text = wide() + (wide("q", " AND b.x > 1") if two else "")
    events = chain_events(repeats, noise, [1] if tie == "strict" else ts_step)  # (strict: equal times never match)
    note(f"repeats={repeats} noise={noise} ts_step={ts_step} tie={tie} two={two}")
    net = compile_text(text)
    assert supports(net, tie) == (True, "covered")
    out = both(net, events, tie, len(events) // 2, sweep_every=7)
    assert out["kernel"] == out["python"]
    assert len(out["python"][0]) >= 2
