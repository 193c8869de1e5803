"""The one place that decides which engine fires a net: :func:`choose`.

Every runner asks here -- ``Run`` (``petricep run``, the library), the history runner's live
net, a Spark group's key engines (batch and streaming), ``petricep check`` -- and reports the
:class:`Choice` it gets: the engine's name and why. The compiled kernel runs wherever it
covers the net exactly (:func:`~petricep.kernel.lowering.supports`) and the run's options
let it; else the Python engine, the reference, runs the whole net -- never a mix: a run
fires wholly on one engine, and its report says which and why (the kernel's reason once).
Deciding here once, from the net and the options alone, keeps every runner's answer (and
its wording) the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from petricep.compile.net import Net
from petricep.runtime.engine import MAX_PARTIAL_MATCHES, Engine
from petricep.runtime.matcher import Matcher, Reordered
from petricep.runtime.ordering import LateHandler

from . import available, supports, switched_off
from .engine import BATCH, KernelEngine
from .rowengine import RowKernelEngine

KERNEL, PYTHON = "kernel", "python"  # the engines a run fires on (Choice.engine)
# events the kernel collects at a time from standard input where they come one by one (rows
# checked one by one, a history runner's live net): each line's matches leave as it is read.
# Batches the reader checks whole come as columns, what one read gave (Run: push_columns)
STDIN_BATCH = 1
SWITCHED_OFF = "PETRICEP_NO_KERNEL=1 switches the compiled kernel off"
NOT_BUILT = "the compiled kernel is not built"
# why bound events keep a net with composite events off the kernel, by who needs them
# (Options.bindings; EVENTS, --with-events and Match.bindings(): the kernel's matches carry them)
EVENTS, ARCHIVE, GROUP_ARCHIVE = "events", "archive", "group-archive"
_BINDINGS_WHY = {
    ARCHIVE: "composite events in a run over an archive (the kernel's matches carry their events only without them)",
    GROUP_ARCHIVE: "its matches join the archive, which needs their bound events (not with composite events)",
}


@dataclass(frozen=True)
class Options:
    """What a run asks of its engine, as far as the choice goes.

    ``engine``: ``"kernel"`` (the kernel where it covers the run) or ``"python"`` (the
    reference, ``python_why`` said for it). ``slack``: the run re-orders events (the
    kernel behind a reorder stage, :class:`~petricep.runtime.matcher.Reordered`);
    ``stdin``: it reads standard input (each line's matches leave as it is read: the kernel
    fires what each read of the input gave, :data:`STDIN_BATCH`). ``bindings``: who needs the matches' bound events (None: nobody;
    :data:`EVENTS`, :data:`ARCHIVE`, :data:`GROUP_ARCHIVE`). ``archive_order``: a history
    runner's live net, and its history order. ``rows_why``: why SQL queries keep the net off
    the kernel for this runner (None: the kernel's row matcher may run them). ``anywhere``: decide from
    the net alone, not from whether this process has the kernel (a distributed run's stages
    agree on the net's layout wherever they run)."""

    tie: str = "arrival"
    engine: str = "kernel"
    python_why: str = "asked for"
    slack: float | int | None = None
    stdin: bool = False
    bindings: str | None = None
    archive_order: str | None = None
    rows_why: str | None = None
    anywhere: bool = False


@dataclass(frozen=True)
class Choice:
    """The engine that fires a whole net (``kernel`` or ``python``) and why (``covered`` on
    the kernel)."""

    engine: str
    why: str

    @property
    def kernel(self) -> bool:
        """Whether the kernel fires the whole net."""
        return self.engine == KERNEL

    def report(self) -> dict[str, Any]:
        """The run report's ``"engine"`` entry."""
        return {"name": self.engine, "why": self.why}


def choose(net: Net, options: Options = Options()) -> Choice:
    """Which engine fires ``net`` under ``options`` (see the module docstring): what only
    the Python engine serves first, then whether the kernel is there, then what it covers."""
    refusal = _refusal(net, options)
    if refusal is not None:
        return Choice(PYTHON, refusal)
    ok, why = supports(net, options.tie)
    return Choice(KERNEL, "covered") if ok else Choice(PYTHON, why)


def check_lines(choice: Choice) -> list[str]:
    """``petricep check``'s line on the kernel for the chooser's ``choice`` of a net: whether
    ``run`` fires it there (a run may still fall back whole for its options)."""
    if choice.kernel:
        return ["kernel: covers this net (run fires it on the kernel)"]
    return [f"kernel: not used, the Python engine runs ({choice.why})"]


@dataclass(frozen=True)
class Budget:
    """What a matcher is built with besides the net and the options: the budgets of live
    partial matches and of bytes (:mod:`petricep.runtime.memory`), whether the Python engine
    counts its marking (``--stats``), and where a slack's late events go."""

    max_partial_matches: int | None = MAX_PARTIAL_MATCHES
    max_memory: int | None = None
    count_marking: bool = False
    on_late: LateHandler | None = None


def matcher(choice: Choice, net: Net, options: Options, budget: Budget = Budget()) -> Matcher:
    """The matcher ``choice`` names for ``net`` (:mod:`petricep.runtime.matcher`): the kernel
    (its row matcher for a net of SQL queries alone; beside patterns, inside the one
    :class:`KernelEngine`), or the Python engine."""
    mpm, memory = budget.max_partial_matches, budget.max_memory
    if choice.engine == KERNEL and net.rows and not net.patterns:
        return RowKernelEngine(
            net, tie=options.tie, slack=options.slack, on_late=budget.on_late, max_partial_matches=mpm, max_memory=memory
        )
    if choice.engine == KERNEL:
        with_events = options.bindings is not None
        kernel = KernelEngine(
            net, tie=options.tie, max_partial_matches=mpm, with_events=with_events, max_memory=memory,
            batch=STDIN_BATCH if options.stdin else BATCH, live=options.stdin,
        )
        if options.slack is None:
            return kernel
        return Reordered(kernel, options.slack, budget.on_late, memory, kernel.kernel.memory)
    if choice.engine != PYTHON:
        raise ValueError(f"no engine named {choice.engine!r}: the kernel or the Python engine")
    return Engine(
        net, tie=options.tie, slack=options.slack, on_late=budget.on_late, max_partial_matches=mpm,
        max_memory=memory, count_marking=budget.count_marking,
    )


def _refusal(net: Net, o: Options) -> str | None:
    """Why the options or the net keep the whole run on the Python engine, where they do
    before the kernel's coverage is asked (None: ask it)."""
    if o.engine != KERNEL:
        return o.python_why
    if o.archive_order is not None and o.archive_order != "live-first":
        return f"the {o.archive_order} history order admits events one by one from the matches so far"
    if switched_off() and not o.anywhere:
        return SWITCHED_OFF
    if not o.anywhere and not available():
        return NOT_BUILT
    if o.bindings in _BINDINGS_WHY and any(p.produces for p in net.patterns):
        return _BINDINGS_WHY[o.bindings]
    if o.rows_why is not None and net.rows:
        return o.rows_why
    return None


__all__ = [
    "ARCHIVE", "EVENTS", "GROUP_ARCHIVE", "KERNEL", "NOT_BUILT", "PYTHON", "SWITCHED_OFF",
    "Budget", "Choice", "Options", "check_lines", "choose", "matcher",
]
