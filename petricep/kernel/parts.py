"""Which embedded engine runs which part of a net: the compiled kernel where it covers a part,
the Python engine for the rest (``petricep run``, :class:`~petricep.api.runner.Run`,
``petricep check``), asked by :func:`petricep.kernel.choice.choose`.

A net the kernel covers whole runs on it; otherwise its patterns are split into the
components :func:`~petricep.merge.connected_patterns` gives (a pattern that reads another's
composite events, or shares a consumption domain with it, runs in that pattern's engine: only
there do its matches come out right), joined where they share a net of the merged net (a
shared net runs whole on one engine: the order of its patterns' matches at one event is its
own, :func:`_components`). Components the kernel covers run on one kernel (the
sub-net of their patterns, :func:`~petricep.merge.sub_net`), the others and the SQL queries on
one Python engine; both see every event (``petricep.api.split`` merges their matches). The
SQL queries run on the kernel's row matcher inside that engine where the kernel covers them
all (:func:`~petricep.kernel.rowlowering.rows_refusal`; ``rows_on_kernel``). A net the kernel
covers whole, SQL queries beside patterns included (under every tie rule), is no split: one
:class:`~petricep.kernel.engine.KernelEngine` runs it (:mod:`petricep.kernel.sqlside`).

When the merged matches are exactly the single Python engine's, in its order
-----------------------------------------------------------------------------
The Python engine emits the matches of one event in rounds (``runtime/emission.py``): the
windows the event closes and its firing form round 0, sorted by (pattern, is-timeout, then
insertion order -- or, where the round holds a match of a pattern with RETURN, ON TIMEOUT or
consumption, the matches' event positions); the composite events of a round, fired, form the
next round; the SQL queries' matches of the event come after every round, and the end of the
stream closes the pending windows the same way. So:

* a kernel running every pattern beside a Python engine running only SQL queries is exact
  whatever the patterns are: an event's pattern matches, all rounds, in the kernel's order
  (the single engine's), then the queries' (:data:`SPLIT_ROWS`);
* two engines running patterns are exact by a merge on (emitting position, pattern index in the
  whole net, is-timeout) -- each engine keeping its own order inside one key, where only it has
  matches -- when every event emits in one round and both engines order a round's matches the
  way the single engine does: no pattern reads a composite event (no later rounds), and either
  no pattern has RETURN, ON TIMEOUT or consumption (every round in insertion order) or every
  pattern has RETURN or consumption (every round by positions; ON TIMEOUT alone orders only
  the rounds where a timeout is emitted). A mix would order one engine's round by insertion
  where the single engine orders it by positions, since the other engine's pattern made it
  so: that run, and any net under the tie rule ``either`` (timestamp groups matched as a
  whole, rounds across them), runs whole on the Python engine, saying why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from petricep.compile.net import Net, PatternNet
from petricep.merge import connected_patterns, sub_net

from .lowering import supports as kernel_supports
from .rowlowering import rows_refusal

KERNEL, PYTHON, SPLIT = "kernel", "python", "kernel+python"
SPLIT_ROWS, SPLIT_PATTERNS = "rows", "patterns"  # what the Python engine of a split run holds


@dataclass(frozen=True)
class Part:
    """A component of the net (or its SQL queries): its patterns' names, the engine that runs
    it and why (``covered`` on the kernel)."""

    patterns: tuple[str, ...]
    engine: str
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"patterns": list(self.patterns), "engine": self.engine, "why": self.why}


@dataclass(frozen=True)
class EnginePlan:
    """How a run's net is fired: ``name`` ``kernel`` (the whole net), ``python`` (the whole
    net: ``why``) or ``kernel+python`` (``parts``; the kernel's net and the Python engine's,
    ``mode`` :data:`SPLIT_ROWS` or :data:`SPLIT_PATTERNS`, see the module docstring)."""

    name: str
    why: str
    parts: tuple[Part, ...] = ()
    kernel_net: Net | None = None
    python_net: Net | None = None
    mode: str = ""
    rows_on_kernel: bool = False  # the SQL queries run on the kernel's row matcher

    def report(self) -> dict[str, Any]:
        """The run report's ``"engine"`` entry: ``name`` and ``why`` (for a split run, which
        engine runs which patterns and why), and a split run's ``parts``."""
        out: dict[str, Any] = {"name": self.name, "why": self.why}
        if self.parts:
            out["parts"] = [p.to_dict() for p in self.parts]
        return out


def whole(name: str, why: str) -> EnginePlan:
    """One engine runs the whole net."""
    return EnginePlan(name, why)


def plan_engines(net: Net, tie: str = "arrival") -> EnginePlan:
    """Which engine fires which part of ``net`` under ``tie`` (see the module docstring):
    the kernel for the whole net where it covers it, else a split where the kernel covers some
    component and the merged matches are provably the single Python engine's, else the Python
    engine for the whole net (``why``: the kernel's reason, and why it is not split)."""
    ok, why = kernel_supports(net, tie)
    if ok:  # (SQL queries beside patterns: the row matcher inside the one KernelEngine)
        return EnginePlan(KERNEL, why, rows_on_kernel=bool(net.rows))

    if net.history:
        return whole(PYTHON, why)
    rows_ok = rows_refusal(net, tie) is None
    parts = _parts(net, tie)
    rows = frozenset(r.name for r in net.rows)
    on_kernel = [n for p in parts if p.engine == KERNEL for n in p.patterns if n not in rows]
    if not on_kernel:
        return whole(PYTHON, why)
    if tie == "either":
        return whole(PYTHON, f"{why}; not split: the tie rule 'either' matches timestamp groups as a whole")
    mine = frozenset(on_kernel)
    rest = [p for p in net.patterns if p.name not in mine]
    if rest:
        refusal = interleave_refusal(net.patterns)
        if refusal is not None:
            return whole(PYTHON, f"{why}; not split: {refusal}")
    python_net = Net((), (), net.rows)
    if rest:
        sub = sub_net(net, frozenset(p.name for p in rest))
        python_net = Net(sub.patterns, sub.groups, net.rows)
    mode = SPLIT_PATTERNS if rest else SPLIT_ROWS
    return EnginePlan(SPLIT, split_text(parts), tuple(parts), sub_net(net, mine), python_net, mode, rows_ok)


def _parts(net: Net, tie: str) -> list[Part]:
    """The components of ``net`` (in pattern order) with the engine each runs on: the kernel
    where it covers the component alone and beside the other components it covers (all of
    them together where it can, else each with those before it), then the SQL queries."""
    names = [tuple(net.patterns[i].name for i in members) for members in _components(net)]
    alone = [kernel_supports(sub_net(net, frozenset(n)), tie) for n in names]
    covered = frozenset(x for n, (ok, _) in zip(names, alone) if ok for x in n)
    together = not covered or kernel_supports(sub_net(net, covered), tie)[0]
    parts: list[Part] = []
    kernel: set[str] = set()
    for n, (ok, why) in zip(names, alone):
        if ok and kernel and not together:
            ok, why = kernel_supports(sub_net(net, frozenset(kernel.union(n))), tie)
            why = why if ok else f"beside the kernel's other patterns: {why}"
        if ok:
            kernel.update(n)
        parts.append(Part(n, KERNEL if ok else PYTHON, why))
    if net.rows:
        rows_why = rows_refusal(net, tie)
        parts.append(Part(tuple(r.name for r in net.rows), PYTHON if rows_why else KERNEL, rows_why or "covered"))
    return parts


def _components(net: Net) -> list[list[int]]:
    """The parts a split may put on different engines: :func:`connected_patterns`'s components,
    joined where their patterns share a net of the merged net. The Python engine emits a
    pattern's matches at one point in the order its shared net's tokens are found, which other
    patterns in that shared net change; so a shared net runs whole in one engine (then each
    pattern keeps the order it has in the whole net: the merge forms the same shared nets of
    a subset made of whole shared nets)."""
    return connected_patterns(net.patterns, [g.patterns for g in net.groups])[0]


def interleave_refusal(patterns: Sequence[PatternNet]) -> str | None:
    """Why the matches of two engines running patterns cannot be merged into the single
    engine's order (None: they can), see the module docstring."""
    made = {t for p in patterns for t in p.produces}
    reader = next((p for p in patterns if p.input_types & made), None)
    if reader is not None:
        return (
            f"pattern {reader.name!r} reads composite events another pattern returns: the matches they complete "
            "at an event come in later rounds, which cannot be told apart across two engines"
        )
    if all(orders_by_positions(p) for p in patterns):
        return None
    mixed = next((p for p in patterns if p.timeout is not None and not orders_by_positions(p)), None)
    if mixed is not None:
        return (
            f"pattern {mixed.name!r} has ON TIMEOUT: the matches emitted at one event are ordered by their positions "
            "only where a timeout is emitted there"
        )
    special = [p.name for p in patterns if orders_by_positions(p)]
    if special:
        plain = next(p.name for p in patterns if not orders_by_positions(p))
        return (
            f"pattern {special[0]!r} has RETURN or consumption and {plain!r} has neither: the matches emitted at "
            "one event are ordered by their positions only where such a pattern emits there"
        )
    return None


def orders_by_positions(p: PatternNet) -> bool:
    """Whether every round ``p`` emits in is ordered by the matches' event positions: it has
    RETURN or consumption (``runtime/emission.py``, ``_ordered``; ON TIMEOUT orders only the
    rounds where a timeout is emitted)."""
    return p.returns is not None or p.conflict is not None


def split_text(parts: Sequence[Part]) -> str:
    """A split run's engines in a line: ``kernel for 'a', 'b'; python for 'c' (why)``."""
    kernel = [n for p in parts if p.engine == KERNEL for n in p.patterns]
    by_why: dict[str, list[str]] = {}
    for p in parts:
        if p.engine == PYTHON:
            by_why.setdefault(p.why, []).extend(p.patterns)
    text = [f"kernel for {_names(kernel)}"]
    text += [f"python for {_names(names)} ({why})" for why, names in by_why.items()]
    return "; ".join(text)


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names)


def check_lines(plan: EnginePlan) -> list[str]:
    """``petricep check``'s lines on the kernel for the chooser's ``plan`` of a net: whether
    ``run`` fires the net on it, all of it or which parts (a run may still fall back whole
    for its options)."""
    if plan.name == KERNEL:
        return ["kernel: covers this net (run fires it on the kernel)"]
    if plan.name == PYTHON:
        return [f"kernel: not used, the Python engine runs ({plan.why})"]
    lines = ["kernel: covers part of this net (run fires each part on its engine)"]
    for p in plan.parts:
        lines.append(f"  {p.engine}: {_names(p.patterns)}" + (f" ({p.why})" if p.engine == PYTHON else ""))
    return lines


__all__ = [
    "KERNEL",
    "PYTHON",
    "SPLIT",
    "SPLIT_PATTERNS",
    "SPLIT_ROWS",
    "EnginePlan",
    "Part",
    "check_lines",
    "interleave_refusal",
    "orders_by_positions",
    "plan_engines",
    "split_text",
    "whole",
]
