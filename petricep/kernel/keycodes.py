"""A kernel snapshot's partition keys, only those that hold something (issue 39).

The kernel codes each partition key the first time it sees it (``KernelRun.key_dicts``: one
dictionary per key class) and never forgets a code: a streaming bucket that met 100,000 keys
kept 100,000 keys in every snapshot, though the windows of almost all of them had closed
(``run.keys*`` was ~9 bytes a key: a snapshot grew with the keys ever seen, not with the
partial matches). :func:`compact_keys` rewrites a snapshot's state so that a key holding
nothing costs nothing: only the keys that something of the state refers to stay in their
dictionary, re-coded densely in the order of their old codes (so that every order by key
code among them is kept), and every array that holds a key code is re-coded with them.

What refers to a key (``_snapshot.pxi``): per shared net its tokens (``tk.lid`` = key *
places + place), negative-event buffers (``nb.lid`` = key * negations + negation), waiting
matches (``pd.key``), deadlines (``dl.key``, zombies included) and LIMIT quotas
(``q.key``). A key's contiguity floor (``floors``) is read only against that key's tokens
and is overwritten by the key's next event before any token of it exists again, so a key
with nothing else drops its floor too. While a timestamp group is open or strict
cancellations are pending (``grp.keys``, ``kills.key``) the codes are left as they are: a
snapshot there is rare (mid-group, tie rules strict and either) and those hold codes too.

The string dictionary (``run.strings``) and the ints beyond 2**53 (``run.bigs``) grew the
same way with every value ever read (a user's name, a card number): the live run compacts
those itself before a snapshot (``KernelRun.compact_values``, valuecodes.py), so a snapshot
carries only the values its state holds.

Only the snapshot's keys are re-coded; the live run compacts its own by a snapshot's round
trip into a fresh kernel when its key dictionaries outgrow the live keys
(``KernelRun.compact_keys``, valuecodes.py). A restored engine codes keys it has not kept
anew, after the kept ones, as it codes any new one -- which is what the Python engine does
with a key whose partition it dropped.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from petricep.kernel.lowering import Lowered

NO_KEY = -(1 << 62)  # a key without a contiguity floor (_kernel.pyx)


def compact_codes(state: dict[str, Any], lowered: Lowered, key_dicts: list[dict[Any, int]]) -> None:
    """``KernelRun.snapshot_state``'s state re-coded in place to the keys that hold something
    (:func:`compact_keys`; its values the run compacted before: valuecodes.py)."""
    compact_keys(state, lowered, key_dicts)


def compact_keys(state: dict[str, Any], lowered: Lowered, key_dicts: list[dict[Any, int]]) -> None:
    """Re-code ``state`` (``KernelRun.snapshot_state``, its ``kernel.*`` and ``run.keys*``
    entries) in place to hold only the keys something refers to (see the module docstring)."""
    if len(state["kernel.grp.keys"]) or len(state["kernel.kills.key"]):
        return
    firsts: dict[int, int] = {}  # id of a dictionary -> the first group coding with it
    members: dict[int, list[int]] = {}
    for gi, keys in enumerate(key_dicts):
        firsts.setdefault(id(keys), gi)
        members.setdefault(id(keys), []).append(gi)
    for ident, groups in members.items():
        if not all(lowered.groups[gi].partition for gi in groups):
            continue  # (an unpartitioned group codes every event 0)
        first = firsts[ident]
        values = state[f"run.keys{first}"]
        used = np.unique(np.concatenate([_codes(state, lowered, gi) for gi in groups]))
        if len(used) == len(values):
            continue
        remap = np.full(len(values), -1, dtype=np.int64)
        remap[used] = np.arange(len(used), dtype=np.int64)
        state[f"run.keys{first}"] = [values[i] for i in used.tolist()]
        for gi in groups:
            _recode(state, lowered, gi, remap)


def _shape(lowered: Lowered, gi: int) -> tuple[int, int]:
    g = lowered.groups[gi]
    return max(g.nplaces, 1), max(len(g.neg_type), 1)


def _codes(state: dict[str, Any], lowered: Lowered, gi: int) -> np.ndarray:
    """The key codes group ``gi``'s state refers to (with repeats)."""
    p = f"kernel.g{gi}."
    nplaces, nnegs = _shape(lowered, gi)
    lids = np.asarray(state[p + "tk.lid"], dtype=np.int64)
    parts = [
        lids[lids >= 0] // nplaces,
        np.asarray(state[p + "nb.lid"], dtype=np.int64) // nnegs,
        *(np.asarray(state[p + name], dtype=np.int64) for name in ("pd.key", "dl.key", "q.key")),
    ]
    return np.concatenate(parts)


def _recode(state: dict[str, Any], lowered: Lowered, gi: int, remap: np.ndarray) -> None:
    """Group ``gi``'s key codes through ``remap`` (old code -> new; every code it refers to
    has one), its floors laid out by the new codes."""
    p = f"kernel.g{gi}."
    nplaces, nnegs = _shape(lowered, gi)
    lids = np.asarray(state[p + "tk.lid"], dtype=np.int64)
    live = lids >= 0
    out = lids.copy()
    out[live] = remap[lids[live] // nplaces] * nplaces + lids[live] % nplaces
    state[p + "tk.lid"] = out
    nb = np.asarray(state[p + "nb.lid"], dtype=np.int64)
    state[p + "nb.lid"] = remap[nb // nnegs] * nnegs + nb % nnegs
    for name in ("pd.key", "dl.key", "q.key"):
        state[p + name] = remap[np.asarray(state[p + name], dtype=np.int64)]
    floors = np.asarray(state[p + "floors"], dtype=np.int64)
    kept = np.flatnonzero(remap[: len(floors)] >= 0)
    kept = kept[floors[kept] != NO_KEY]
    # as kernel_state lays them out: up to the last key with a token or a floor (one at least)
    n = max(1, int(out[live].max()) // nplaces + 1 if live.any() else 1, int(remap[kept].max()) + 1 if len(kept) else 1)
    new = np.full(n, NO_KEY, dtype=np.int64)
    new[remap[kept]] = floors[kept]
    state[p + "floors"] = new
