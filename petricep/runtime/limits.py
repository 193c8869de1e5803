"""Bounded state: ``LIMIT n PARTIAL MATCHES [PER KEY] [DROP OLDEST | REJECT NEW | FAIL]``.

A pattern's live partial matches per key are counted exactly: a partial match counts from
the moment it is stored until it can no longer be extended — its window passed, a pushed
negation cancelled it, skip-till-next-match consumed it, contiguity broke, or a limit dropped
it. Each key keeps, per limited pattern, a :class:`Quota`: a heap of its partial matches,
oldest first (by first event), and the live count. The firing loop reports the deaths it
causes (``uncount``); expired ones are found at the top of the heap, since expiry follows
the first event's order (those past a per-step gap, issue 42, anywhere: a full quota walks). Contiguity breaks on every event of the key, so those quotas are
re-validated (they only ever hold the partial matches of the latest event).

When a new partial match would be one too many, the pattern's policy decides: *drop oldest*
removes the partial match whose first event is earliest (ties: whose events, in stream
order, come first in the stream), *reject new* does not keep the new
one (a match it completes now is still emitted), *fail* stops the run with
:class:`~petricep.errors.StateLimitError`. Drops are counted per pattern.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from petricep.errors import StateLimitError
from petricep.events import Event
from petricep.runtime.state import Partition, Token, gap_over


class Quota:
    """One pattern's partial matches in one key: heap of (first ts, first pos, the bound
    events' sequence numbers in stream order, n, token) — oldest first, whatever layout a
    shared net gives the partial matches (``n``, the arrival in the quota, only breaks ties
    between the same events bound in the same order)."""

    __slots__ = ("heap", "live", "n")

    def __init__(self) -> None:
        self.heap: list[tuple[Any, int, tuple[int, ...], int, Token]] = []
        self.live = 0
        self.n = 0


class LimitSpec:
    """What the engine needs of one limited pattern of a shared net."""

    __slots__ = ("pattern", "name", "bit", "count", "policy", "window", "count_window", "gaps")

    def __init__(
        self, pattern: int, name: str, bit: int, count: int, policy: str, window: Any, count_window: bool,
        gaps: dict[int, tuple[tuple[int, Any], ...]] | None = None,
    ):
        self.pattern = pattern
        self.name = name
        self.bit = bit
        self.count = count
        self.policy = policy
        self.window = window
        self.count_window = count_window
        # per place the pattern's own per-step gaps ahead (Place.gap_ends): a partial match
        # past one stops counting (issue 42), wherever it is in the quota's heap
        self.gaps = gaps or {}

    def gap_passed(self, t: Token, now: Event) -> bool:
        gaps = self.gaps.get(t.place)
        return gaps is not None and gap_over(t.slots, gaps, now.ts, now.pos)

    def expired(self, t: Token, now: Event) -> bool:
        w = self.window
        if w is None:
            return False
        if self.count_window:
            return bool(now.pos - t.first_pos >= w)
        return bool(now.ts - t.first_ts > w)


def age(t: Token) -> tuple[Any, int, tuple[int, ...]]:
    """What "oldest" means: first event's (ts, pos), then the bound events in stream order
    (their binding order under the tie rules arrival and strict, where every firing binds
    the latest event; under either a timestamp group's fixpoint binds its events in any
    order, and may reach one partial match by several)."""
    return (t.first_ts, t.first_pos, tuple(sorted(ev.seq for _, ev in t.chain())))


def counted(t: Token) -> int:
    """The patterns whose quota counts ``t`` (unset on tokens no quota ever saw)."""
    return getattr(t, "counted", 0)  # type: ignore[no-any-return]


def uncount(part: Partition, t: Token, bits: int, limits: list[LimitSpec]) -> None:
    """``t`` stopped being a live partial match of the patterns in ``bits``."""
    gone = counted(t) & bits
    if not gone:
        return
    t.counted &= ~gone
    for spec in limits:
        if gone & spec.bit:
            part.quotas[spec.pattern].live -= 1


def admit(
    part: Partition,
    nt: Token,
    bits: int,
    order: tuple[Any, ...],
    now: Event,
    limits: list[LimitSpec],
    broken: Callable[[Token], bool] | None,
    key: Any,
    dropped: dict[str, int],
) -> None:
    """Count the newly stored ``nt`` against the limits of the patterns in ``bits`` (those it
    is a partial match of), applying each pattern's policy when it is one too many. ``broken``: contiguity strategies' test of
    partial matches an event in between made unextendable."""
    for spec in limits:
        bit = spec.bit
        if not bits & bit:
            continue
        quota = part.quotas.get(spec.pattern)
        if quota is None:
            quota = part.quotas[spec.pattern] = Quota()
        heap = quota.heap
        if quota.live >= spec.count:
            _settle(part, quota, spec, now, broken, limits)
        if quota.live >= spec.count:
            if spec.policy == "fail":
                raise StateLimitError(
                    f"pattern {spec.name!r}: more than {spec.count} live partial matches for key {key!r} "
                    f"at event {now.id!r} (LIMIT {spec.count} PARTIAL MATCHES FAIL)"
                )
            dropped[spec.name] += 1
            if spec.policy == "reject-new":
                _drop(part, nt, bit, limits)
                continue
            victim = heapq.heappop(heap)[4]  # _settle left a live one on top
            _drop(part, victim, bit, limits)
        quota.n += 1
        heapq.heappush(heap, (*order, quota.n, nt))
        nt.counted = counted(nt) | bit
        quota.live += 1


def _settle(
    part: Partition,
    quota: Quota,
    spec: LimitSpec,
    now: Event,
    broken: Callable[[Token], bool] | None,
    limits: list[LimitSpec],
) -> None:
    """Make ``quota.live`` exact at ``now`` and leave a live partial match on top: contiguity
    and per-step gaps end partial matches in any order of age, so those quotas are walked."""
    if broken is not None or spec.gaps:
        for entry in quota.heap:
            t = entry[4]
            if counted(t) & spec.bit and (broken is not None and broken(t) or spec.gap_passed(t, now)):
                uncount(part, t, spec.bit, limits)
    _pop_dead(part, quota, spec, now, limits)


def _pop_dead(part: Partition, quota: Quota, spec: LimitSpec, now: Event, limits: list[LimitSpec]) -> None:
    """Pop the partial matches at the top that no longer count (expired ones stop counting)."""
    heap, bit = quota.heap, spec.bit
    while heap:
        t = heap[0][4]
        if counted(t) & bit and spec.expired(t, now):
            uncount(part, t, bit, limits)
        if counted(t) & bit:
            break
        heapq.heappop(heap)


def prune(part: Partition, now: Event, limits: list[LimitSpec]) -> None:
    """Housekeeping: forget the partial matches at the top of each quota that no longer
    count (expired, or already uncounted), so a quota holds at most a window's worth."""
    for spec in limits:
        quota = part.quotas.get(spec.pattern)
        if quota is not None:
            _pop_dead(part, quota, spec, now, limits)


def _drop(part: Partition, t: Token, bit: int, limits: list[LimitSpec]) -> None:
    uncount(part, t, bit, limits)
    t.users &= ~bit
    if not t.users:
        t.alive = False


__all__ = ["LimitSpec", "Quota", "admit", "age", "prune", "uncount"]
