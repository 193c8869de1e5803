"""The compiled columnar kernel: a shared net fired at native speed on Arrow batches.

One generic interpreter, written in Cython (``_kernel.pyx``, compiled when petricep is
installed), runs any net :func:`lower` can lay out as flat arrays; nothing is generated per
query. The Python engine (:mod:`petricep.runtime`) stays the reference: the kernel gives
exactly its matches, in its order, and is tested against it on random patterns and streams.

Public API (for the CLI, the library API and Spark to wire in):

* :func:`available` -- whether the extension is built; if not, warns once that the Python
  engine runs; :func:`switched_off` -- whether ``PETRICEP_NO_KERNEL=1`` turns it off;
* :func:`supports` ``(net, tie) -> (bool, reason)`` -- whether the kernel covers every shared
  net of ``net``; if not, the reason (run the Python engine then);
* :func:`petricep.kernel.choice.choose` ``(net, options) -> Choice`` -- the one place that
  decides which engine fires a run (every runner asks it), and
  :func:`~petricep.kernel.choice.matcher` builds that engine (the matcher contract,
  :mod:`petricep.runtime.matcher`);
* :func:`lower` ``(net) -> Lowered`` -- the frozen arrays the kernel interprets;
* :class:`KernelRun` ``(net, tie=, type_field= | event_type=, time_field=, id_field=)`` with
  ``push(table_or_batch) -> pa.Table`` of the matches that batch completed (columns
  ``pattern``, ``start``, ``end``, one id column per variable name -- int64, null where the
  pattern has no such variable or an OR left it unbound, text where composite events are
  bound, a list of ids for a Kleene variable -- with RETURN or ON TIMEOUT an ``attrs`` struct of the fields, with ON TIMEOUT a
  ``timeout`` struct of type and deadline, null for a match), ``flush()``, ``stats`` and
  ``live_partial_matches()``;
* :func:`to_matches` ``(table, net) -> list[Match]`` -- the engine's match objects;
* :class:`~petricep.kernel.engine.KernelEngine` -- the kernel behind the matcher contract
  (``push`` / ``push_columns``, ``advance``, ``drain``, ``flush``, ``snapshot`` / ``restore``), over checked events (``Run``'s and ``petricep run``'s default engine);
  ``drain_pairs()`` fires what it collected (before a snapshot), ``collected`` counts it;
* :mod:`petricep.kernel.snapshot` -- a KernelEngine's state as bytes, for a streaming state
  store: ``dumps(engine) -> bytes`` (an Arrow IPC stream of the kernel's arrays and the Python
  side's values; only the live part; deterministic) and ``restore(engine, data)``; another net or tie rule, truncated or damaged
  bytes, collected events not fired or a pending error: :class:`~petricep.errors.SnapshotError`
  (``KernelEngine.snapshot()`` / ``restore(data)`` / ``KernelEngine.restored(data, net, tie)``).

Covered this far: SEQ / AND / OR over single variables with guards (numbers and text; ints
beyond 2**53 exact, ``_bigint.pxi``; an int time beyond 2**53 is the row's error),
``[attr]`` partitions, time, duration and count windows, the four strategies, the three tie
rules (``either`` closes each timestamp group with the engine's fixpoint), merged nets with
per-pattern roles and windows (any number of patterns: merge cuts a class of compatible
patterns into shared nets of at most ``merge.MAX_SHARED`` = 62 patterns and negations, the
bits of the kernel's int64 masks), negation at start, middle and end (under ``either`` applied
once the group's keys reach their fixpoints, count windows closing between them),
RETURN with composite events re-entering the net (under ``either`` they join their timestamp
group at their creator event's position, seen by the shared nets after their own, as
ties.run_group; a reading pattern's partition must copy the producer's), ON TIMEOUT (timeouts in the match table with a
``timeout`` struct column, re-entering as events of their type; under ``either`` a count
window that events of a timestamp group close times out between its negative events) and
LIMIT with DROP OLDEST / REJECT NEW / FAIL (under ``either`` a key's fixpoint admitted before
its matches emit, at the key's last event of the group, negative events included; FAIL's
StateLimitError worded as the engine's, a composite event named by its match's id), Kleene closure (``T+ v[]``) with
iteration conditions (``v[i]``, ``v[i-1]``, ``v[k]``, ``v[last]``, ``count|sum|avg|min|max`` of
the whole list or of ``v[..i-1]``; its ids a ``list<int64>`` column, text ids for a list of
composite events; lists share prefixes in an element arena, see ``_kleene.pxi``; with negation,
RETURN and ON TIMEOUT fields over lists, LIMIT and consumption; under ``either`` a list grows
in arrival order inside a timestamp group, each event once; a name
that is a list in one pattern and an event in another is a list column of the match table (an
event's id a one-element list);
merging never puts a list and another pattern's event in one slot (merge._placed); ``min`` / ``max``
of texts compare their ranks, as the engine compares strings, while ``sum`` / ``avg`` of texts
and a text beside a number stop both engines with one error (runtime/expr.py ``aggregate_message``); GREEDY / RELUCTANT lists choose between a take and the step after
it as runtime firing._prefer, ``_firing.pxi`` prefer), consumption
(``CONSUME``, ``CONFLICT`` groups: matches of one emission point taken in the engine's order;
under ``either`` a shared net's matches of a timestamp group), SQL ``MATCH_RECOGNIZE`` queries: the kernel's row matcher
(``_rowmatch.pyx``, a module of its own, :mod:`~petricep.kernel.rowlowering`,
:class:`~petricep.kernel.rowengine.RowKernelEngine`): the search in C, DEFINEs that read the
current row and ``PREV`` rows as bytecode (a value the bytecode cannot hold exactly, and a
DEFINE reading the rows matched so far, evaluated by the Python runtime's compiled condition),
MEASURES per match by the Python runtime's code; beside patterns inside the one
:class:`~petricep.kernel.engine.KernelEngine` (:mod:`~petricep.kernel.sqlside`), under every
tie rule (under ``either`` beside end negations and ON TIMEOUT too: what a timestamp group
closes carries the position that emits it, as ``ties._join`` emits it). A history runner
(:class:`~petricep.archive.join.HistoryRunner`) fires its live net here, the matches
carrying their bound events (``KernelEngine(with_events=True)``). Refused with a reason: a
net with ARCHIVED variables itself, one pattern with more than 62 negations, and two limits
of the layout (a condition deeper than 32 values, more than 256 transitions of one type from
one place). A
refused net runs wholly on the Python engine, the reason said once
(:func:`~petricep.kernel.choice.choose`): a run never mixes the two engines. Per-step gaps
(``T v AFTER lo TO hi``, issue 42) run here: the lower bound in the step's guard, the upper
bound in a token's expiry (``Group.expired``), so a partial match leaves when its next step's
gap ends, as in the Python engine, and an ON TIMEOUT partial match times out then (its
deadline the first of its pattern's gap ends ahead, ``gap_deadline``) and stops counting
against a LIMIT (``settle_quota``); a net without
gaps pays nothing for them (its expiry kind is fixed at binding). A gap measured from a Kleene
list (a list's chain, the step after a list) reads the list's last element: its slot holds the
list's node, whose event is that element (``gap_base``). A gap in EVENTS (under a count window)
compares the store's input positions: its guard's attribute operand ``POS_CODE`` (bytecode.py)
loads an event's position, its expiry entry's slot is ``~slot`` (compile/net.py gap_slot) and
its ON TIMEOUT deadline the first position it refuses.
Repeated groups (``SEQ(B b, C c)+ g[]``, issue 42) run here as the net the compiler makes
of them (compile/groups.py): each step a Kleene list in the element arena, the iteration
conditions guards reading several lists (``g[i-1].c`` of a later step is that list's last
element, vacuous while it is empty), the strict tie rule's order slots the step before; the
group's ids, its steps' lists zipped into one binding per iteration (Match objects, a
``list<struct>`` column of the match table, ``b;c`` iterations in composite ids: texts.py);
a group inside AND or OR is the same places in the AND's / OR's configurations; a negation
between two of its steps a pushed negation with no Q slot (Q's list holds the earlier
iterations'), open at the places where an iteration waits for Q, so it ends the partial
matches there that its event violates; one at the group's start or end (between iterations)
a stop negation open where an iteration is complete, blocking the loop back to the first step;
a per-step gap inside a group (``FROM`` an earlier step of the iteration or a variable before
the group too) an iteration condition in the guard bytecode. An optional step inside a group
(``SEQ(B b, C? c, D d)+ g[]``) is the net's skip arc per iteration; its lists are not aligned
by iteration, so a match's elements are placed into iterations by input position
(runtime.match.group_bindings: matchobjects.py, tableplan.group_column, texts.py), a deferred
iteration condition replays the steps' elements in arrival order (a negative step count in
its spec: _kleene.pxi check_iterations_in_order), and ``g[last].c`` / ``g[k].c`` / ``g[i-1].c``
load the element only where it lies in that iteration, delimited by the first required step's
list (``OP_KATTR_IN``: _kleene.pxi kleene_in_iteration, else unbound).
Stop conditions (``T+ v[] UNTIL U u``, issue 42) run here as the compiler makes them
(compile/until.py): pushed negations that block the list's takes for the tokens they hit;
such a token still goes on and, with ON TIMEOUT, times out at its window's end
(``Group.stop_mask``: expire and killed_in_group pass its bits over). Refused with a caret
by the language, for both engines alike (lang/until.py): a stop condition reading an ARCHIVED
variable (a live list's stop event runs here in the history runner's live net). A stop
condition reading the list so far (``v[k]``, ``v[last]``, aggregates) is a negation condition
on the token's list, and on the list's takes an iteration condition (``v[i]``, ``v[i-1]``,
``v[..i-1]``) in the guard bytecode. A list inside AND / OR stops as a SEQ's step does
(its stop negation open at every place where the list grows).
"""

from __future__ import annotations

import os
import warnings

from petricep.kernel.bytecode import Unsupported
from petricep.kernel.lowering import Lowered, lower, supports
from petricep.kernel.run import KernelRun, _kernel
from petricep.kernel.tableplan import to_matches

try:
    from petricep.kernel import _rowmatch  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - the extension is optional
    _rowmatch = None

_warned = False


def switched_off() -> bool:
    """Whether the environment variable ``PETRICEP_NO_KERNEL=1`` switches the kernel off (for
    comparisons: every run then says it ran the Python engine, without a warning)."""
    return os.environ.get("PETRICEP_NO_KERNEL") == "1"


def available() -> bool:
    """Whether the compiled kernel is built (and not :func:`switched_off`); the first time
    it is not built, one warning says so."""
    global _warned
    if switched_off():
        return False
    built = _kernel is not None and _rowmatch is not None  # the firing kernel and the row matcher
    if not built and not _warned:
        _warned = True
        warnings.warn(
            "petricep: the compiled kernel is not built (no C compiler or Cython at install time); "
            "the Python engine runs",
            RuntimeWarning,
            stacklevel=2,
        )
    return built


__all__ = ["KernelRun", "Lowered", "Unsupported", "available", "lower", "supports", "switched_off", "to_matches"]
