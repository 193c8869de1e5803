"""The run's dictionaries of codes (values and partition keys) kept to what its live state holds.

The kernel holds a text value as its code in :class:`~petricep.kernel.run.KernelRun`'s string
dictionary and an int beyond 2**53 as its code in ``Kernel.bigs``. Both only grew: a run over
a million events of distinct card numbers or user ids kept a million entries, and every
snapshot carried them, though only the events the live partial matches bind are ever read
again. :class:`ValueCodes` compacts them in the live run: when a dictionary has outgrown
twice what the state held at the last compaction plus a slack, the kernel says which codes its
state still holds (``Kernel.value_codes``: the stored events' values, the Kleene lists'
running aggregates), those are renumbered densely in the order of their old codes after the
codes the lowering fixed (the net's constants, in its bytecode), the rest is dropped, and the
kernel rewrites its codes in place (``Kernel.recode_value_codes``, ``_valuecodes.pxi``).

Semantics are kept exactly: ``=`` / ``!=`` on text compare codes, one per distinct string
still; ordering compares ranks in the sorted dictionary (:func:`string_ranks`), computed anew
for the kept strings, which keeps their order among themselves. A string read again after its
code was dropped gets a new code, as any new string does. It runs between batches only, when
no match is buffered and no coded column is in flight; the firing loop is unchanged.

The partition-key dictionaries (``KernelRun.key_dicts``, one per key class) grew the same way
with every key ever seen (a card number, a user id), and the kernel's per-key arrays with
them. Their codes live in many places of the kernel (token lists per key and place, negative
events, waiting matches, deadlines, quotas, contiguity floors); the snapshot re-codes them
already (keycodes.py, issue 39), so :func:`compact_keys` lets the snapshot do it: the run's
state is taken and restored into a fresh kernel of the same net, as a snapshot and its
restore would (tested to go on as the uninterrupted run), when the key dictionaries hold
more than twice the keys the state held last time plus ``key_slack`` (65,536: rarer than the
values' compaction, as it costs the whole live state).
"""

from __future__ import annotations

from typing import Any

import numpy as np

VALUE_SLACK = 4096  # entries a dictionary may grow past twice its live ones before a compaction
KEY_SLACK = 65_536  # ... a key dictionary (a compaction rebuilds the kernel: rarer)


def string_ranks(strings: dict[str, int]) -> np.ndarray:
    """Per code the string's rank in the sorted dictionary (what the kernel's ordering of
    text compares); one zero for an empty dictionary (the kernel's array is never empty)."""
    ranks = np.zeros(max(len(strings), 1), dtype=np.float64)
    for rank, s in enumerate(sorted(strings)):
        ranks[strings[s]] = rank
    return ranks


class ValueCodes:
    """When a run's value dictionaries are due for a compaction, and doing it: ``fixed_*``
    codes (the lowering's constants) are always kept; ``slack``: entries a dictionary may
    hold past twice the live ones of the last compaction."""

    def __init__(self, fixed_strings: int, fixed_bigs: int, slack: int = VALUE_SLACK, key_slack: int = KEY_SLACK) -> None:
        self.fixed_strings = fixed_strings
        self.fixed_bigs = fixed_bigs
        self.slack = slack
        self.key_slack = key_slack
        self.live_strings = 0  # entries past the fixed ones the state held at the last compaction
        self.live_bigs = 0
        self.live_keys = 0  # partition keys the state held at the last key compaction
        self.compactions = 0
        self.key_compactions = 0

    def limit(self, live: int) -> int:
        """Entries past the fixed ones a dictionary may hold before it is compacted."""
        return 2 * live + self.slack

    def due(self, nstrings: int, nbigs: int) -> bool:
        """Whether a dictionary of these sizes has outgrown its limit (a cheap test per batch)."""
        return (
            nstrings - self.fixed_strings > self.limit(self.live_strings)
            or nbigs - self.fixed_bigs > self.limit(self.live_bigs)
        )

    def keys_due(self, key_dicts: list[dict[Any, int]]) -> bool:
        """Whether the key dictionaries hold more than twice their live keys plus the slack."""
        return key_count(key_dicts) > 2 * self.live_keys + self.key_slack

    def restored(self, nstrings: int, nbigs: int, key_dicts: list[dict[Any, int]]) -> None:
        """A restored run's dictionaries hold what its snapshot's state held."""
        self.live_strings = max(nstrings - self.fixed_strings, 0)
        self.live_bigs = max(nbigs - self.fixed_bigs, 0)
        self.live_keys = key_count(key_dicts)

    def compact(self, kernel: Any, strings: dict[str, int]) -> dict[str, int] | None:
        """``kernel``'s values re-coded to the strings and big ints its state holds: the new
        string dictionary (``kernel.bigs`` replaced in place), None where matches are buffered
        (nothing done then)."""
        bigs = kernel.bigs
        masks = kernel.value_codes(len(strings), len(bigs))
        if masks is None:
            return None
        used_s, used_b = masks
        used_s[: self.fixed_strings] = 1
        used_b[: self.fixed_bigs] = 1
        keep_s, keep_b = np.flatnonzero(used_s), np.flatnonzero(used_b)
        self.live_strings = len(keep_s) - min(self.fixed_strings, len(strings))
        self.live_bigs = len(keep_b) - min(self.fixed_bigs, len(bigs))
        if len(keep_s) == len(strings) and len(keep_b) == len(bigs):
            return strings
        self.compactions += 1
        texts = [""] * len(strings)
        for text, code in strings.items():
            texts[code] = text
        kernel.recode_value_codes(_remap(keep_s, len(strings)), _remap(keep_b, len(bigs)), [bigs[c] for c in keep_b.tolist()])
        return {texts[c]: i for i, c in enumerate(keep_s.tolist())}

    def stats(self, nstrings: int, nbigs: int, key_dicts: list[dict[Any, int]]) -> dict[str, int]:
        """The dictionaries' figures: entries now, entries past the live ones of the last
        compaction (``dict_slack``), the size at which the next one runs, compactions run."""
        return {
            "dict_size": nstrings,
            "dict_slack": nstrings - self.fixed_strings - self.live_strings,
            "dict_limit": self.fixed_strings + self.limit(self.live_strings),
            "bigs_size": nbigs,
            "bigs_slack": nbigs - self.fixed_bigs - self.live_bigs,
            "value_compactions": self.compactions,
            "keys_size": key_count(key_dicts),
            "keys_slack": key_count(key_dicts) - self.live_keys,
            "key_compactions": self.key_compactions,
        }


def key_count(key_dicts: list[dict[Any, int]]) -> int:
    """Keys coded in all, a dictionary shared by several groups (a key class) once."""
    return sum(len(d) for d in {id(d): d for d in key_dicts}.values())


def compact_values(run: Any) -> bool:
    """``KernelRun.compact_values``: ``run``'s values re-coded to those its state holds, the
    ranks computed anew; False where matches are buffered (nothing done)."""
    strings = run.values.compact(run.kernel, run._strings)
    if strings is None:
        return False
    if strings is not run._strings:
        run._strings = strings
        run._ranked = -1
        run.update_ranks()
    return True


def compact_keys(run: Any) -> bool:
    """``KernelRun.compact_keys``: the partition keys nothing holds dropped, by the snapshot's
    own machinery (``KernelRun.snapshot_state`` re-codes the keys that hold something:
    keycodes.py): ``run``'s state taken and restored into a fresh kernel of the same net,
    its budget set again -- what a snapshot and its restore do, so the run goes on as the
    uninterrupted one (tests/kernel/test_snapshot.py checks those agree). Rare (the key
    dictionaries doubled and outgrew the slack since the last time): the cost is the live
    state's. False where matches are buffered (nothing done)."""
    k = run.kernel
    if k.buffered:
        return False
    state = run.snapshot_state()
    run.kernel = type(k)(run.lowered, run.tie, k.sweep_every, k.compact_slack)
    run.restore_state(state)
    run.kernel.set_budget(*run.budget)
    run.values.key_compactions += 1
    return True


def compact_due(run: Any) -> None:
    """After a batch (no coded column in flight, the matches taken): the compactions whose
    dictionaries outgrew their limits -- values (cheap: a pass over the store) and keys."""
    if run.values.due(len(run._strings), len(run.kernel.bigs)):
        compact_values(run)
    if run.values.keys_due(run.key_dicts):
        compact_keys(run)


def _remap(keep: np.ndarray, n: int) -> np.ndarray:
    """Old code -> new for the kept codes (ascending), -1 for the dropped ones."""
    remap = np.full(n, -1, dtype=np.int64)
    remap[keep] = np.arange(len(keep), dtype=np.int64)
    return remap


__all__ = ["KEY_SLACK", "VALUE_SLACK", "ValueCodes", "compact_due", "compact_keys", "compact_values", "key_count", "string_ranks"]
