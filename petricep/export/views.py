"""Views of a diagram: one pattern's part of the shared net, and a run's marking on it.

Both are pure functions of the :class:`~petricep.export.model.Diagram` (and of counts a
run reported), so the DOT writer draws them like any diagram and tests check them as data.

*One pattern's view* (:func:`pattern_view`, ``draw --pattern NAME``) keeps the places and
transitions the pattern uses, the input places that feed them and its output place; the
rest of the shared net is **left out** rather than greyed, because with 10-50 patterns the
greyed rest would still set the picture's size. A node the pattern shares keeps its
bold border and its users' colours, and says with whom it is shared.

*A run's marking* (:class:`Marking`, ``draw --stats run.json``) colours state places by
the partial matches a run put there (peak alive, or created) and transitions and
emissions by how often they fired, on Tol's sequential scale (:mod:`.palette`), so a
user sees where state piles up. The counts are keyed by diagram node id —
``g{group}.p{place}`` (a shared net's place), ``g{group}.t{transition}``,
``emit.{pattern}`` (``emit.{pattern}.{n}`` for a pattern with several accepting places),
``r{query}.p{place}`` / ``r{query}.t{transition}`` for SQL queries — the ids of
:func:`~petricep.export.model.build_diagram`'s merged view, which are the runtime's own
group, place and transition indices.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from petricep.errors import ConfigError
from petricep.export.colors import text_color
from petricep.export.model import EMIT, INPUT, STATE, TRANSITION, Diagram, Node

# Counts (partial matches, firings) use Tol's sequential YlOrBr scale — light for few, dark
# for many, readable in grey and by colour-blind readers — on a logarithmic scale, since
# counts on one net span orders of magnitude.
# Tol's YlOrBr, light to dark: levels 1..9 of a count scale (0 has no colour)
SEQUENTIAL = (
    "#FFFFE5",
    "#FFF7BC",
    "#FEE391",
    "#FEC44F",
    "#FB9A29",
    "#EC7014",
    "#CC4C02",
    "#993404",
    "#662506",
)
ZERO_FILL = "#ffffff"  # a node a run never reached


def level(count: int, top: int) -> int:
    """The step of ``count`` on a logarithmic scale up to ``top``: 0 for none, else 1..9;
    ``top`` is on 9, and ``count`` on the step ``s`` with ``top**((s-1)/9) < count <=
    top**(s/9)`` (1 is on step 1)."""
    steps = len(SEQUENTIAL)
    if count <= 0 or top <= 0:
        return 0
    if count >= top:
        return steps
    if count == 1:
        return 1
    return max(1, math.ceil(steps * math.log(count) / math.log(top) - 1e-9))


def level_color(step: int) -> str:
    """The fill of a step of :func:`level` (white for 0)."""
    return ZERO_FILL if step == 0 else SEQUENTIAL[step - 1]


def level_bounds(step: int, top: int) -> tuple[int, int] | None:
    """The counts (lowest, highest) on ``step`` of a scale up to ``top``, for a legend;
    None where no whole count falls on it (small ``top``)."""
    steps = len(SEQUENTIAL)
    if step <= 0 or top <= 0:
        return None
    lo = 1 if step == 1 else int(top ** ((step - 1) / steps)) + 1
    hi = top if step == steps else int(top ** (step / steps))
    while lo > 1 and level(lo - 1, top) == step:  # float edges
        lo -= 1
    while lo <= hi and level(lo, top) < step:
        lo += 1
    while hi < top and level(hi + 1, top) == step:
        hi += 1
    while hi >= lo and level(hi, top) > step:
        hi -= 1
    return (lo, hi) if lo <= hi else None


PLACE_MEASURES = ("peak", "created")


def pattern_view(d: Diagram, name: str) -> Diagram:
    """The part of ``d`` that pattern ``name`` uses (see the module docstring)."""
    names = [e.pattern for e in d.legend]
    if name not in names:
        raise ConfigError(f"no pattern named {name!r} in the net; its patterns: {', '.join(names)}")
    keep = {n.id for n in d.nodes if n.kind != INPUT and name in n.users}
    keep |= {a.src for a in d.arcs if a.dst in keep and d.node(a.src).kind == INPUT}
    nodes = []
    for n in d.nodes:
        if n.id not in keep:
            continue
        others = [u for u in n.users if u != name]
        if n.shared and others:
            n = replace(n, label=(*n.label, f"shared with {', '.join(others)}"))
        nodes.append(n)
    sharing = {u for n in nodes if n.shared for u in n.users}
    clusters = tuple(c for c in d.clusters if any(n.cluster == c.id for n in nodes))
    return Diagram(
        d.title,
        d.merged,
        tuple(nodes),
        tuple(a for a in d.arcs if a.src in keep and a.dst in keep),
        clusters,
        tuple(e for e in d.legend if e.pattern == name or e.pattern in sharing),
        focus=name,
    )


@dataclass(frozen=True)
class Marking:
    """What a run left on the net: per state place (partial matches created, peak alive),
    per transition or emission its firings; keyed by diagram node id (module docstring).
    ``measure`` says which place count colours the places."""

    places: Mapping[str, tuple[int, int]]
    transitions: Mapping[str, int]
    measure: str = "peak"

    def __post_init__(self) -> None:
        if self.measure not in PLACE_MEASURES:
            raise ConfigError(f"unknown place measure {self.measure!r} (use {' or '.join(PLACE_MEASURES)})")

    def place_count(self, node_id: str) -> int:
        created, peak = self.places.get(node_id, (0, 0))
        return peak if self.measure == "peak" else created


@dataclass(frozen=True)
class Heat:
    """A marking laid on a diagram: per node its fill and text colour, and the two scales."""

    fill: Mapping[str, str]
    font: Mapping[str, str]
    place_top: int
    transition_top: int


def marking_from_stats(report: Mapping[str, Any], measure: str = "peak") -> Marking:
    """The marking in a run's ``--stats`` JSON: its ``"net"`` section, ``{"places":
    {id: {"created": n, "peak": m}}, "transitions": {id: n}}``."""
    net = report.get("net")
    if not isinstance(net, Mapping) or "places" not in net or "transitions" not in net:
        engine = report.get("engine")
        how = (
            "the run was on the compiled kernel, which counts none: run with --engine python --stats FILE"
            if isinstance(engine, Mapping) and engine.get("name") == "kernel"
            else "write them with a petricep that records them (--stats FILE)"
        )
        raise ConfigError(
            "the run's statistics have no per-place and per-transition counts (a \"net\" section "
            f"with \"places\" and \"transitions\"): {how}"
        )
    try:
        places = {k: (int(v["created"]), int(v["peak"])) for k, v in net["places"].items()}
        transitions = {k: int(v) for k, v in net["transitions"].items()}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"the run's statistics have a malformed \"net\" section: {exc}") from None
    return Marking(places, transitions, measure)


def heat(d: Diagram, marking: Marking) -> Heat:
    """Colours of ``marking`` on ``d`` (the whole net: a one-pattern view takes its nodes'
    colours from it, so both views agree): places and transitions each on their own scale up
    to their largest count; nodes the run never reached white. Counts for nodes ``d`` does
    not have (statistics of another net) are an error naming them."""
    kinds = {n.id: n.kind for n in d.nodes}
    bad = sorted(
        [k for k in marking.places if kinds.get(k) != STATE]
        + [k for k in marking.transitions if kinds.get(k) not in (TRANSITION, EMIT)]
    )
    if bad:
        shown = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        raise ConfigError(f"the run's statistics do not fit this net: it has no such place or transition: {shown}")
    places = [n.id for n in d.nodes if n.kind == STATE]
    trans = [n.id for n in d.nodes if n.kind in (TRANSITION, EMIT)]
    ptop = max((marking.place_count(k) for k in places), default=0)
    ttop = max((marking.transitions.get(k, 0) for k in trans), default=0)
    fill = {k: level_color(level(marking.place_count(k), ptop)) for k in places}
    fill.update({k: level_color(level(marking.transitions.get(k, 0), ttop)) for k in trans})
    return Heat(fill, {k: text_color(v) for k, v in fill.items()}, ptop, ttop)


def count_lines(n: Node, marking: Marking) -> tuple[str, ...]:
    """The counts written on a node of a marked diagram."""
    if n.kind == STATE:
        created, peak = marking.places.get(n.id, (0, 0))
        return (f"created {created:,}, peak {peak:,}",)
    if n.kind in (TRANSITION, EMIT):
        return (f"fired {marking.transitions.get(n.id, 0):,}",)
    return ()


def scale(top: int) -> list[tuple[str, str]]:
    """(fill, "lo-hi") per step of a count scale up to ``top`` (steps no count falls on left out)."""
    out = []
    for step in range(1, 10):
        bounds = level_bounds(step, top)
        if bounds is not None:
            lo, hi = bounds
            out.append((level_color(step), f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"))
    return out


def stats_section(
    d: Diagram,
    places: Mapping[tuple[int, int], tuple[int, int]],
    transitions: Mapping[tuple[int, int], int],
    matches: Mapping[str, int],
) -> dict[str, Any]:
    """The ``"net"`` section of a run's statistics, keyed as :func:`marking_from_stats`
    reads it, from the engine's own indices: ``places[(group, place)] = (created, peak)``,
    ``transitions[(group, transition)] = firings``, ``matches[pattern]`` (its emission's
    firings; a pattern with several accepting places — an OR — is counted on its first).
    ``d``: the merged diagram of the net run, which decides the ids; counts of nodes it
    does not draw (the empty start place) are left out."""
    kinds = {n.id: n.kind for n in d.nodes}
    out_places = {
        f"g{g}.p{p}": {"created": c, "peak": k}
        for (g, p), (c, k) in sorted(places.items())
        if kinds.get(f"g{g}.p{p}") == STATE
    }
    out_trans = {f"g{g}.t{t}": n for (g, t), n in sorted(transitions.items()) if f"g{g}.t{t}" in kinds}
    for name, n in matches.items():
        emit = f"emit.{name}" if f"emit.{name}" in kinds else f"emit.{name}.1"
        if emit in kinds:
            out_trans[emit] = n
    return {"places": out_places, "transitions": out_trans}
