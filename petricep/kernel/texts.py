"""Composite events' ids as text (``pattern[ids...]``, :func:`~petricep.runtime.match.composite_id`)
for :class:`~petricep.kernel.run.KernelRun`'s tables: a column at a time where a pattern binds
single events and Kleene lists, row by row where it has repeated groups (each iteration
``b;c``, iterations joined by ``+``). Its own module so that the run's table code does not
carry the text rules; every engine names a composite event the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petricep.kernel.lowering import LoweredPattern
from petricep.kernel.remembered import Composites
from petricep.runtime.arrow import scalar, string_array
from petricep.runtime.match import composite_id, group_bindings

# per match and slot a list's length (-1: none), the list buffer, and each element's binding order
Lists = tuple[np.ndarray, np.ndarray, np.ndarray]


def composite_texts(
    name: str, p: LoweredPattern, ids: np.ndarray, bound: np.ndarray, lists: Lists, composites: Composites
) -> list[str]:
    """The composite ids of ``p``'s matches (rows of ``ids`` / ``bound``, per slot a ref or
    a list's offset into ``lists[1]``), named ``name``."""
    if p.groups:
        return _group_texts(name, p, ids, bound, lists, composites)
    parts = [
        _list_texts(ids[:, s], lists[0][:, s], lists[1], composites) if v in p.kleene
        else _id_texts(ids[:, s], bound[:, s], composites)
        for v, s in p.vars
    ]
    empty = scalar("", pa.string())  # (Arrow scalars: a Python str makes pyarrow import pandas)
    if not parts:
        joined = string_array([""] * len(ids))
    elif len(parts) == 1:
        joined = parts[0].fill_null(empty)
    else:
        joined = pc.binary_join_element_wise(*parts, scalar(",", pa.string()), null_handling="skip")
    ends = scalar(f"{name}[", pa.string()), scalar("]", pa.string())
    return pc.binary_join_element_wise(ends[0], joined, ends[1], empty).to_pylist()  # type: ignore[no-any-return]


def _group_texts(
    name: str, p: LoweredPattern, ids: np.ndarray, bound: np.ndarray, lists: Lists, composites: Composites
) -> list[str]:
    """:func:`composite_texts` of a pattern with repeated groups, row by row: its ids with each
    group's steps as the group's bindings."""
    id_of, flat, order = composites.id_of, lists[1].tolist(), lists[2].tolist()
    steps = dict(p.groups)
    out = []
    for row, b, lens in zip(ids.tolist(), bound.tolist(), lists[0].tolist()):
        got: dict[str, Any] = {}
        for v, s in p.vars:
            if v in p.kleene and lens[s] >= 0:
                got[v] = [id_of(i) if i < 0 else i for i in flat[row[s] : row[s] + lens[s]]]
            elif v not in p.kleene and b[s]:
                got[v] = id_of(row[s]) if row[s] < 0 else row[s]
        # (a group with optional or Kleene steps: its elements placed by the order they were bound in)
        keys = {v: order[row[s] : row[s] + lens[s]] for v, s in p.vars if v in p.kleene and lens[s] >= 0}
        out.append(composite_id(name, group_bindings(steps, got, keys, p.ordered_groups, p.repeating_steps)))
    return out


def _id_texts(refs: np.ndarray, bound: np.ndarray, composites: Composites) -> pa.Array:
    """Ids as text (a composite event's its own), null where unbound."""
    mask = bound == 0
    if not (refs[~mask] < 0).any():
        return pc.cast(pa.array(refs, pa.int64(), mask=mask), pa.string())
    id_of = composites.id_of
    return pa.array([None if m else id_of(r) if r < 0 else str(r) for r, m in zip(refs.tolist(), mask.tolist())], pa.string())


def _list_texts(offsets: np.ndarray, lengths: np.ndarray, flat: np.ndarray, composites: Composites) -> pa.Array:
    """Kleene lists' ids as text joined by ``+`` (a composite element's its own), null where
    unbound (length -1)."""
    id_of = composites.id_of
    elems = flat.tolist()
    return string_array([
        None if n < 0 else "+".join(id_of(i) if i < 0 else str(i) for i in elems[at : at + n])
        for at, n in zip(offsets.tolist(), lengths.tolist())
    ])


__all__ = ["composite_texts"]
