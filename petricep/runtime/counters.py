"""The marking a run leaves on its nets: per state place the partial matches created there
and the peak alive, per transition its firings (issue 18: ``--stats`` and ``draw --stats``
colour the net by them, so a user sees where state piles up).

Counting costs a pass over each event's new tokens, so it is chosen once when the engine is
built (``Engine(count_marking=True)``, which ``--stats`` asks for), never per event.

A new token's firing is found from the token itself: it sits in the transition's output
place, its predecessor in the input place (none: the net's start place) and it bound the
transition's variable slot. In a merged net a (input, output, slot) triple names one
transition; where several share one (two event types bound by one variable of an OR), the
firing is counted on the first of them, and the peak of alive partial matches is sampled at
every sweep, as the run's own peak is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from petricep.compile.net import GroupNet
from petricep.runtime.state import Partition, Token


class _Group(Protocol):
    net: GroupNet


class MarkingCounters:
    """Per shared net (by its index in the engine), counts keyed by place and transition id."""

    def __init__(self, groups: Sequence[_Group]) -> None:
        # plain lists indexed by place / transition id: the count per new token is two
        # list increments (a dict lookup only where several transitions enter one place)
        self.created: list[list[int]] = [[0] * len(g.net.places) for g in groups]
        self.fired: list[list[int]] = [[0] * len(g.net.transitions) for g in groups]
        self.peak: list[dict[int, int]] = [{} for _ in groups]
        self.starts = [g.net.start for g in groups]
        self.into: list[list[int]] = []  # per place: the one transition entering it, or -1
        self.firing: list[dict[tuple[int, int, int], int]] = []
        for g in groups:
            entering: dict[int, list[int]] = {}
            by_arc: dict[tuple[int, int, int], int] = {}
            for tr in g.net.transitions:
                entering.setdefault(tr.dst, []).append(tr.id)
                by_arc.setdefault((tr.src, tr.dst, tr.slot), tr.id)
            self.into.append([ts[0] if len(ts := entering.get(p.id, [])) == 1 else -1 for p in g.net.places])
            self.firing.append(by_arc)

    def count(self, group: int, tokens: Iterable[Token]) -> None:
        """New tokens of one shared net: a partial match created in each one's place, and a
        firing of the transition that made it."""
        created, fired, into = self.created[group], self.fired[group], self.into[group]
        for t in tokens:
            place = t.place
            created[place] += 1
            tid = into[place]
            if tid < 0:
                src = t.prev.place if t.prev is not None else self.starts[group]
                tid = self.firing[group].get((src, place, t.slot), -1)
                if tid < 0:
                    continue
            fired[tid] += 1

    def sample(self, states: Sequence[Mapping[object, Partition]]) -> None:
        """The alive partial matches per place now (after a sweep): raise each place's peak."""
        for group, parts in enumerate(states):
            alive: Counter[int] = Counter()
            for part in parts.values():
                for place, tokens in enumerate(part.marking):
                    if tokens:
                        alive[place] += len(tokens)
            peak = self.peak[group]
            for place, n in alive.items():
                if n > peak.get(place, 0):
                    peak[place] = n

    def places(self) -> dict[tuple[int, int], tuple[int, int]]:
        """``(group, place) -> (created, peak alive)``, for every place that held something."""
        out: dict[tuple[int, int], tuple[int, int]] = {}
        for group, (created, peak) in enumerate(zip(self.created, self.peak)):
            for place, n in enumerate(created):
                if n or peak.get(place):
                    out[(group, place)] = (n, peak.get(place, 0))
        return out

    def transitions(self) -> dict[tuple[int, int], int]:
        """``(group, transition) -> firings``, for every transition that fired."""
        return {(group, tid): n for group, fired in enumerate(self.fired) for tid, n in enumerate(fired) if n}


__all__ = ["MarkingCounters"]
