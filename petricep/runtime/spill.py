"""Partial-match spilling (paper 004): a memory budget for live partial matches.

When the partial matches held in memory exceed the budget, whole keys' markings (a key's
partial matches, as paper 004 manages them per object id) are written to disk and read back
when an event of that key arrives — a *miss*. Which keys go is the policy:

* ``tpm`` (temporal): in time order — the key whose oldest partial match started first goes
  first, whatever its activity;
* ``stpm`` (spatio-temporal): the key least likely to advance soon goes first. Paper 004's
  definition 7 weighs a partial match at state ``s`` whose last event came at ``t`` by when it
  is expected to advance, ``t + gap(s)``, with ``gap(s)`` the mean time extensions out of ``s``
  have taken and ``p(s)`` the rate at which partial matches at ``s`` were extended, both
  measured as the run goes. We rank by the distance between now and that expected advance,
  divided by ``p(s)``: far in the future, long overdue (its object has most likely left: a
  skip-till-any-match prefix that already completed, say) or at a rarely left state all mean
  unlikely to be needed soon. A key ranks as its most urgent partial match; the least urgent
  keys are spilled first.

Spilling never changes results: a spilled key is read back, whole, before any event of its
key is fired. Keys with references held outside their marking (matches waiting for a window
to close, timeouts, limits) are never spilled; expired spilled keys are forgotten at sweeps.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any

from petricep.errors import ConfigError
from petricep.runtime.state import INF, Partition

POLICIES = ("tpm", "stpm")


@dataclass
class SpillStats:
    spilled: int = 0  # keys written out
    misses: int = 0  # keys read back because an event needed them
    bytes_written: int = 0
    forgotten: int = 0  # spilled keys dropped because every window in them closed


class PlaceStats:
    """Per place of a shared net: how long extensions take and how often they happen."""

    __slots__ = ("gap", "extended", "created")

    def __init__(self, nplaces: int) -> None:
        self.gap = [0.0] * nplaces  # running mean of (extension ts - last ts)
        self.extended = [0] * nplaces
        self.created = [0] * nplaces

    def advanced(self, place: int, gap: float) -> None:
        n = self.extended[place] + 1
        self.extended[place] = n
        self.gap[place] += (gap - self.gap[place]) / n

    def urgency(self, place: int, last_ts: float, now: float) -> float:
        """How far (in time, stretched by rarity) the partial match is from its expected advance."""
        created = self.created[place]
        p = self.extended[place] / created if created else 1.0
        return abs(last_ts + self.gap[place] - now) / max(p, 1e-3)


class Spiller:
    """Keeps at most ``budget`` partial matches in memory (see the module docstring)."""

    def __init__(self, budget: int, policy: str = "stpm", directory: str | None = None) -> None:
        if policy not in POLICIES:
            raise ConfigError(f"unknown spill policy {policy!r} (use tpm or stpm)")
        if budget < 1:
            raise ConfigError("the spill budget must be at least 1 partial match")
        self.budget = budget
        self.policy = policy
        self._own_dir = directory is None
        self.dir = directory or tempfile.mkdtemp(prefix="petricep-spill-")
        os.makedirs(self.dir, exist_ok=True)
        self.spilled: dict[tuple[int, Any], tuple[str, float]] = {}  # (group, key) -> (file, expires)
        self.sizes: dict[tuple[int, Any], int] = {}  # in-memory partial matches per (group, key)
        self.total = 0
        self.stats = SpillStats()

    # ------------------------------------------------------------------ accounting

    def touched(self, group: int, key: Any, part: Partition) -> None:
        """``part`` changed: update the in-memory count."""
        n = part.live_tokens()
        k = (group, key)
        self.total += n - self.sizes.get(k, 0)
        self.sizes[k] = n

    def over(self) -> bool:
        return self.total > self.budget

    # ------------------------------------------------------------------ out and back

    def choose(
        self, candidates: list[tuple[int, Any, Partition]], places: list[PlaceStats], now: float
    ) -> list[tuple[int, Any]]:
        """Keys to spill, most expendable first, until the budget holds."""
        ranked = []
        for g, key, part in candidates:
            tokens = [t for m in part.marking for t in m]
            if not tokens:
                continue
            if self.policy == "tpm":
                score = -min(t.first_ts for t in tokens)  # oldest partial match first
            else:
                ps = places[g]
                score = min(ps.urgency(t.place, t.last_ts, now) for t in tokens)
            ranked.append((score, g, key, len(tokens)))
        ranked.sort(key=lambda r: r[0], reverse=True)
        out = []
        # down to 90% of the budget: spilling in batches (paper 004's archiving step) keeps the
        # ranking off the per-event path
        excess = self.total - int(self.budget * 0.9)
        for _, g, key, n in ranked:
            if excess <= 0:
                break
            out.append((g, key))
            excess -= n
        return out

    def write(self, group: int, key: Any, part: Partition, expires: float) -> None:
        data = pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)
        name = os.path.join(self.dir, f"{group}-{hashlib.sha1(repr(key).encode()).hexdigest()}.pkl")
        with open(name, "wb") as fh:
            fh.write(data)
        self.spilled[(group, key)] = (name, expires)
        self.total -= self.sizes.pop((group, key), 0)
        self.stats.spilled += 1
        self.stats.bytes_written += len(data)

    def read(self, group: int, key: Any) -> Partition | None:
        entry = self.spilled.pop((group, key), None)
        if entry is None:
            return None
        name, _ = entry
        with open(name, "rb") as fh:
            part: Partition = pickle.load(fh)
        os.remove(name)
        self.stats.misses += 1
        return part

    def forget_expired(self, now_ts: Any) -> None:
        for k, (name, expires) in list(self.spilled.items()):
            if expires < now_ts:
                del self.spilled[k]
                os.remove(name)
                self.stats.forgotten += 1

    def close(self) -> None:
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def expiry(part: Partition, window: float | None) -> float:
    """When every partial match of ``part`` has passed its time window (INF without one)."""
    if window is None:
        return INF
    firsts = [t.first_ts for m in part.marking for t in m]
    return (max(firsts) + window) if firsts else -INF


__all__ = ["POLICIES", "PlaceStats", "SpillStats", "Spiller", "expiry"]
