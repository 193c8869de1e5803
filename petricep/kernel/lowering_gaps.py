"""Lowering of per-step gaps (issue 42): the gaps ahead of each place's tokens as the flat
arrays of :class:`~petricep.kernel.lowering.LoweredGroup` (its ``*gap*`` fields), apart from
lowering.py so that it stays a readable size."""

from __future__ import annotations

from typing import Any

import numpy as np

from petricep.compile.net import GroupNet


def _frozen(values: Any, dtype: Any) -> np.ndarray:
    arr = np.array(values, dtype=dtype)
    arr.flags.writeable = False
    return arr


def _csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Lists of ints as (start offsets, flat values), int32."""
    start = [0]
    for xs in lists:
        start.append(start[-1] + len(xs))
    return _frozen(start, np.int32), _frozen([x for xs in lists for x in xs], np.int32)


def gap_arrays(g: GroupNet) -> dict[str, np.ndarray]:
    """The gaps every pattern of a place agrees on (a token's expiry, ``Group.expired``:
    ``place_gap_start``, ``gap_slot``, ``gap_hi``) and each pattern's own (its ON TIMEOUT
    deadline, ``gap_deadline``: ``place_tgap_start``, ``tgap_bit`` -- the pattern's bit in
    the group --, ``tgap_slot``, ``tgap_hi``), per place [start, end)."""
    start, slot = _csr([[sl for sl, _ in p.gap_expiry] for p in g.places])
    bit_index = {pi: k for k, pi in enumerate(g.patterns)}
    own = [[(bit_index[pi], sl, hi) for pi, gaps in p.gap_ends for sl, hi in gaps] for p in g.places]
    own_start, own_bit = _csr([[b for b, _, _ in x] for x in own])
    return {
        "place_gap_start": start,
        "gap_slot": slot,
        "gap_hi": _frozen([float(hi) for p in g.places for _, hi in p.gap_expiry], np.float64),
        "place_tgap_start": own_start,
        "tgap_bit": own_bit,
        "tgap_slot": _frozen([sl for x in own for _, sl, _ in x], np.int32),
        "tgap_hi": _frozen([float(hi) for x in own for _, _, hi in x], np.float64),
    }
