"""The run's dictionaries of value codes kept to what its live state holds.

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
"""

from __future__ import annotations

from typing import Any

import numpy as np

VALUE_SLACK = 4096  # entries a dictionary may grow past twice its live ones before a compaction


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

    def __init__(self, fixed_strings: int, fixed_bigs: int, slack: int = VALUE_SLACK) -> None:
        self.fixed_strings = fixed_strings
        self.fixed_bigs = fixed_bigs
        self.slack = slack
        self.live_strings = 0  # entries past the fixed ones the state held at the last compaction
        self.live_bigs = 0
        self.compactions = 0

    def limit(self, live: int) -> int:
        """Entries past the fixed ones a dictionary may hold before it is compacted."""
        return 2 * live + self.slack

    def due(self, nstrings: int, nbigs: int) -> bool:
        """Whether a dictionary of these sizes has outgrown its limit (a cheap test per batch)."""
        return (
            nstrings - self.fixed_strings > self.limit(self.live_strings)
            or nbigs - self.fixed_bigs > self.limit(self.live_bigs)
        )

    def restored(self, nstrings: int, nbigs: int) -> None:
        """A restored run's dictionaries hold what its snapshot's state held."""
        self.live_strings = max(nstrings - self.fixed_strings, 0)
        self.live_bigs = max(nbigs - self.fixed_bigs, 0)

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

    def stats(self, nstrings: int, nbigs: int) -> dict[str, int]:
        """The dictionaries' figures: entries now, entries past the live ones of the last
        compaction (``dict_slack``), the size at which the next one runs, compactions run."""
        return {
            "dict_size": nstrings,
            "dict_slack": nstrings - self.fixed_strings - self.live_strings,
            "dict_limit": self.fixed_strings + self.limit(self.live_strings),
            "bigs_size": nbigs,
            "bigs_slack": nbigs - self.fixed_bigs - self.live_bigs,
            "value_compactions": self.compactions,
        }


def _remap(keep: np.ndarray, n: int) -> np.ndarray:
    """Old code -> new for the kept codes (ascending), -1 for the dropped ones."""
    remap = np.full(n, -1, dtype=np.int64)
    remap[keep] = np.arange(len(keep), dtype=np.int64)
    return remap


__all__ = ["VALUE_SLACK", "ValueCodes", "string_ranks"]
