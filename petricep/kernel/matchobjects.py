"""The kernel's match arrays as the Python engine's :class:`Match` objects, in the same order,
with the input's own ids and timestamps (:class:`~petricep.kernel.engine.KernelEngine`'s
output where a record batch cannot hold the matches exactly, or the caller asks for objects).

The kernel binds events by position; :class:`MatchObjects` looks each bound position up in
the events remembered for as long as the kernel may bind them (:class:`Remembered`), so a
match reports exactly what the input said (text ids, ints beyond float64, ``1`` vs ``1.0``),
start / end the timestamps of its first and last bound events as the engine's tokens keep
them. A composite event (RETURN, ON TIMEOUT) is bound as ``-1 - n`` (match ``n`` of the run):
its id and timestamp are remembered here when match ``n`` is converted, for the matches that
bind it later. Kept apart from the engine adapter because it is the only part that builds
Python objects per match: the record-batch path never calls it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petricep.events import Event
from petricep.kernel.batches import sorted_unique
from petricep.kernel.remembered import Remembered
from petricep.kernel.run import KernelRun
from petricep.kernel.tableplan import python_value
from petricep.runtime.arrow import number_array, scalar
from petricep.runtime.match import Match, composite_id, group_bindings


class MatchObjects:
    """Match objects of one :class:`KernelRun`'s match arrays. ``known``: the ids and
    timestamps of the events the kernel may still bind (the engine adds and forgets them);
    ``last_input``: (position, ts) of the last input event, the emitter of a composite event
    emitted at a clock tick or flush."""

    def __init__(self, run: KernelRun, known: Remembered, with_events: bool = False) -> None:
        self.kernel = run
        self.known = known
        lowered = run.lowered
        # matches carry their bound events (Match.bindings(): a history join, --with-events);
        # ``known`` then keeps the Event objects, and no pattern binds composite events
        self.with_events = with_events
        self._net_vars = {p.name: p.vars for p in run.net.patterns} if with_events else {}
        self._vars = [(p.name, p.vars) for p in lowered.patterns]
        # composite events (RETURN, ON TIMEOUT): matches converted one by one
        self._returns = any(p.has_return or p.timeout_type for p in lowered.patterns)
        self._kleene = {p.name: frozenset(p.kleene) for p in lowered.patterns if p.kleene}  # list-valued ids
        # repeated groups: their steps' lists zipped into the group's bindings (group_bindings)
        self._groups = {p.name: dict(p.groups) for p in lowered.patterns if p.groups}
        # (those with optional or Kleene steps: placed into iterations by binding order)
        self._ordered = {p.name: (p.ordered_groups, dict(p.vars), p.repeating_steps) for p in lowered.patterns if p.ordered_groups}
        # per pattern: its variables' names distinct (a composite id is then its ids joined in order)
        self._plain = [len({v for v, _ in p.vars}) == len(p.vars) for p in lowered.patterns]
        # the match arrays' slots some variable occupies (register_composites reads no other),
        # and per pattern its variables as (name, slot, index among those slots)
        self._slot_cols = sorted({sl for p in lowered.patterns for _, sl in p.vars})
        column = {sl: i for i, sl in enumerate(self._slot_cols)}
        self._vars_at = [[(v, sl, column[sl]) for v, sl in p.vars] for p in lowered.patterns]
        self.last_input: tuple[int, Any] | None = None

    def matches_at(self, arrays: tuple[np.ndarray, ...]) -> tuple[list[Match], list[int]]:
        return self.matches(arrays), arrays[5].tolist()

    def matches(self, arrays: tuple[np.ndarray, ...]) -> list[Match]:
        """The kernel's match arrays as :class:`Match` objects with the input's ids and times,
        the composite events some pattern reads remembered first."""
        if self._returns:
            self.register_composites(arrays)
        return self.match_objects(arrays)

    def match_objects(self, arrays: tuple[np.ndarray, ...]) -> list[Match]:
        """:meth:`matches` once the call's composite events are remembered."""
        pattern, _start, _end, positions, bound = arrays[:5]
        if not len(pattern):
            return []
        if self._returns:
            return self._composite_matches(arrays)
        if self.with_events:
            return self._event_matches(arrays)
        if self._kleene:
            return self._kleene_matches(arrays)
        # each bound position -> its index in the remembered events (one vectorized search)
        at_arr = self.known.index_of(positions)
        mask = bound.astype(bool)
        ids, stamps = self._bound_values(at_arr[mask])
        if len(self.known.ts_types) == 1:  # one kind of timestamp: the first and last bound events' own
            first = np.where(mask, at_arr, np.iinfo(np.int64).max).min(axis=1).tolist()
            last = np.where(mask, at_arr, -1).max(axis=1).tolist()
            spans = [(stamps[i], stamps[j]) for i, j in zip(first, last)]
        else:
            spans = [span_of(stamps, sorted(a[b].tolist())) for a, b in zip(at_arr, mask)]
        at = at_arr.tolist()
        out = []
        for r, (pi, b) in enumerate(zip(pattern.tolist(), bound.tolist())):
            name, slots = self._vars[pi]
            row = at[r]
            start, end = spans[r]
            out.append(Match(name, {v: ids[row[s]] for v, s in slots if b[s]}, start, end, {}))
        return out

    def _bound_values(self, *index: np.ndarray) -> tuple[list[Any], list[Any]]:
        """The remembered ids and timestamps as lists indexed like :attr:`Remembered.positions`,
        filled only at ``index`` (the events some match binds; indices past the end are not
        events): a batch's other events never become Python values."""
        known = self.known
        n = len(known)
        used = sorted_unique(np.concatenate([np.ravel(i) for i in index])) if index else np.zeros(0, dtype=np.int64)
        used = used[(used >= 0) & (used < n)]
        ids: list[Any] = [None] * n
        stamps: list[Any] = [None] * n
        at = used.tolist()
        for i, v, t in zip(at, known.ids_at(used), known.ts_at(used)):
            ids[i] = v
            stamps[i] = t
        return ids, stamps

    def _kleene_matches(self, arrays: tuple[np.ndarray, ...]) -> list[Match]:
        """:meth:`matches` for a net with Kleene closure: a list variable's ids in stream
        order; start / end over every bound event, lists' elements included."""
        pattern, refs, bound, klen, klist = arrays[0], arrays[3], arrays[4], arrays[9], arrays[10]
        where_arr, in_arr = self.known.index_of(refs), self.known.index_of(klist)
        ids, stamps = self._bound_values(where_arr, in_arr)
        where, in_lists = where_arr.tolist(), in_arr.tolist()
        out = []
        for r, (pi, row, b, k_row, lens) in enumerate(zip(pattern.tolist(), refs.tolist(), bound.tolist(), where, klen.tolist())):
            name, slots = self._vars[pi]
            lists = self._kleene.get(name, frozenset())
            got: dict[str, Any] = {}
            at: list[int] = []
            for v, sl in slots:
                if not b[sl]:
                    continue
                if v in lists:
                    elems = in_lists[row[sl] : row[sl] + lens[sl]]
                    got[v] = [ids[i] for i in elems]
                    at.extend(elems)
                else:
                    got[v] = ids[k_row[sl]]
                    at.append(k_row[sl])
            start, end = span_of(stamps, sorted(at))
            out.append(Match(name, self._grouped(name, got, arrays, r), start, end, {}))
        return out

    def _event_matches(self, arrays: tuple[np.ndarray, ...]) -> list[Match]:
        """:meth:`match_objects` carrying the bound events, as the engine's matches do: each
        match's chain is its (slot, event) pairs in stream order (a Kleene list's elements
        too), so ``Match.bindings()`` gives the same events and ids; start / end are the
        first and last bound events' timestamps."""
        pattern, refs, bound, klen, klist = arrays[0], arrays[3], arrays[4], arrays[9], arrays[10]
        where, in_lists = self.known.index_of(refs).tolist(), self.known.index_of(klist).tolist()
        rows = []
        need: set[int] = set()
        for pi, b, k_row, lens, row in zip(pattern.tolist(), bound.tolist(), where, klen.tolist(), refs.tolist()):
            name, slots = self._vars[pi]
            lists = self._kleene.get(name, frozenset())
            at: list[tuple[int, str]] = []  # (index into known, variable)
            order = []  # the bound variables in slot order (the ids' order, as the engine's)
            for v, sl in slots:
                if not b[sl]:
                    continue
                elems = in_lists[row[sl] : row[sl] + lens[sl]] if v in lists else [k_row[sl]]
                at.extend((i, v) for i in elems)
                order.append(v)
            need.update(i for i, _ in at)
            rows.append((name, sorted(at), order))
        index = sorted(need)
        event_at = dict(zip(index, self.known.events_at(index)))
        out = []
        for r, (name, at, order) in enumerate(rows):
            by_name = {v.name: v for v in self._net_vars[name]}
            chain = [(by_name[v].slot, event_at[i]) for i, v in at]
            ids: dict[str, Any] = {v: [] if by_name[v].kleene else None for v in order}
            for (_, ev), (_, v) in zip(chain, at):
                if by_name[v].kleene:
                    ids[v].append(ev.id)
                else:
                    ids[v] = ev.id
            start, end = span_of([ev.ts for _, ev in chain], list(range(len(chain))))
            out.append(Match(name, self._grouped(name, ids, arrays, r), start, end, {}, vars_=self._net_vars[name], chain=chain))
        return out

    def _list_binding(
        self,
        arrays: tuple[np.ndarray, ...],
        r: int,
        sl: int,
        bound_events: list[tuple[tuple[int, int, int], Any, int]],
        remembered: tuple[list[Any], list[Any], list[int]],
    ) -> list[Any]:
        """Match ``r``'s Kleene list in slot ``sl`` (:meth:`_composite_matches`,
        :meth:`register_composites`): its ids in stream order (a composite element's its own);
        each element is appended to ``bound_events`` as (arrival order, ts, where: its index
        among the remembered events, or its composite ref), for the match's span and chain.
        ``remembered``: the remembered ids and times (:meth:`_bound_values`) and each list
        element's index there."""
        at, n = int(arrays[3][r, sl]), int(arrays[9][r, sl])
        known_id, known_ts, in_lists = remembered
        composites = self.kernel.composites
        ids = []
        for ref, k in zip(arrays[10][at : at + n].tolist(), in_lists[at : at + n]):
            if ref < 0:
                ids.append(composites.id_of(ref))
                bound_events.append(((composites.pos_of(ref), 1, -1 - ref), composites.ts_of(ref), ref))
            else:
                ids.append(known_id[k])
                bound_events.append(((ref, 0, 0), known_ts[k], k))
        return ids

    def _composite_matches(self, arrays: tuple[np.ndarray, ...]) -> list[Match]:
        """:meth:`match_objects` for a net with RETURN, match by match in emission order:
        RETURN values become the match's attrs (the composite events bound are remembered:
        :meth:`register_composites`); with :attr:`with_events` each match carries its bound
        events (:meth:`_carrying`)."""
        pattern, _start, _end, refs, bound, _at, values, kinds = arrays[:8]
        where_arr = self.known.index_of(refs)  # (meaningless for composite refs and lists: not read)
        in_arr = self.known.index_of(arrays[10])  # (Kleene lists' elements)
        known_id, known_ts = self._bound_values(where_arr, in_arr)
        where = where_arr.tolist()
        remembered = (known_id, known_ts, in_arr.tolist())
        strings = self.kernel.strings()
        bigs = self.kernel.kernel.bigs
        composites = self.kernel.composites
        out = []
        chains: list[tuple[Match, list[tuple[tuple[int, int, int], Any, int, str]]]] = []
        npatterns = len(self.kernel.lowered.patterns)
        for r, (vp, row, b, vs, ks, k_row) in enumerate(
            zip(pattern.tolist(), refs.tolist(), bound.tolist(), values.tolist(), kinds.tolist(), where)
        ):
            p = self.kernel.lowered.patterns[vp % npatterns]
            timeout = vp >= npatterns  # a timed-out partial match (ON TIMEOUT)
            lists = self._kleene.get(p.name, frozenset())
            ids: dict[str, Any] = {}
            bound_events: list[tuple[tuple[int, int, int], Any, int]] = []  # (arrival order, ts, where) per bound event
            variables: list[str] = []  # each bound event's variable, as bound_events
            for v, sl in p.vars:
                if not b[sl]:
                    continue
                ref = row[sl]
                if v in lists:  # ref: the list's offset in the list buffer
                    ids[v] = self._list_binding(arrays, r, sl, bound_events, remembered)
                elif ref < 0:
                    ids[v] = composites.id_of(ref)
                    bound_events.append(((composites.pos_of(ref), 1, -1 - ref), composites.ts_of(ref), ref))
                else:
                    k = k_row[sl]
                    ids[v] = known_id[k]
                    bound_events.append(((ref, 0, 0), known_ts[k], k))
                variables.extend([v] * (len(bound_events) - len(variables)))
            ordered = sorted(((*e, v) for e, v in zip(bound_events, variables)), key=lambda x: x[0])
            start, end = span_of([e[1] for e in ordered], list(range(len(ordered))))
            attrs = {f: python_value(v, k, strings, bigs) for f, v, k in zip(p.timeouts if timeout else p.returns, vs, ks)}
            ids = self._grouped(p.name, ids, arrays, r)
            if timeout:
                first_pos = min(e[0][0] for e in ordered)  # (count windows)
                deadline = (first_pos if p.count_window else start) + p.window
                m = Match(p.name, ids, start, end, attrs, timeout=(p.timeout_type, deadline))  # type: ignore[arg-type]
            else:
                m = Match(p.name, ids, start, end, attrs)
            out.append(m)
            if self.with_events:
                chains.append((m, ordered))
        return self._carrying(arrays, chains) if self.with_events else out

    def _carrying(
        self, arrays: tuple[np.ndarray, ...], chains: list[tuple[Match, list[tuple[tuple[int, int, int], Any, int, str]]]]
    ) -> list[Match]:
        """The matches of :meth:`_composite_matches` carrying their bound events, as the
        Python engine's do (``Match.bindings()``, ``--with-events``): each one's chain is its
        (slot, event) pairs in arrival order, an input event the one remembered, a composite
        event the one its match made (``pattern[ids]``, its emitter's time and position, the
        RETURN or ON TIMEOUT values as its fields), kept for the matches that bind it."""
        index = sorted({e[2] for _, ordered in chains for e in ordered if e[2] >= 0})
        event_at = dict(zip(index, self.known.events_at(index)))
        composites, first = self.kernel.composites, self.kernel.first_taken
        lowered = self.kernel.lowered
        npatterns = len(lowered.patterns)
        out = []
        for r, (m, ordered) in enumerate(chains):
            net_vars = self._net_vars[m.pattern]
            slot = {v.name: v.slot for v in net_vars}
            chain = [(slot[v], event_at[w] if w >= 0 else composites.event_of(w)) for _, _, w, v in ordered]
            carried = Match(m.pattern, m.ids, m.start, m.end, m.attrs, vars_=net_vars, chain=chain, timeout=m.timeout)
            out.append(carried)
            vp = int(arrays[0][r])
            p = lowered.patterns[vp % npatterns]
            code = p.to_type if vp >= npatterns else p.ret_type
            if code >= 0:  # (a composite event some pattern reads: registered by register_composites)
                ref = -1 - (r + first)
                made = Event(lowered.types[code], composites.ts_of(ref), composites.pos_of(ref), composites.id_of(ref), m.attrs)
                composites.put_event(r + first, made)
        return out

    def register_composites(self, arrays: tuple[np.ndarray, ...]) -> None:
        """Remember the composite events of a kernel call's matches that some pattern reads:
        their ids (``pattern[ids]``, :func:`composite_id`), times and positions (where they
        entered the stream: their emitter's, under the tie rule either their creator's) by
        match number, for the matches that bind them later -- in this call too (a row binds
        only composite events of rows before it) -- without a :class:`Match` for the others.
        Only the slots some variable occupies are made Python values (:attr:`_slot_cols`)."""
        pattern, at, placed = arrays[0], arrays[5], arrays[11]
        lowered = self.kernel.lowered.patterns
        npatterns = len(lowered)
        emits = np.array([p.ret_type >= 0 for p in lowered] + [p.to_type >= 0 for p in lowered], dtype=bool)
        rows = np.flatnonzero(emits[pattern]) if len(pattern) else pattern
        if not len(rows):
            return
        refs, bound = arrays[3][rows][:, self._slot_cols], arrays[4][rows][:, self._slot_cols]
        known = self.known
        where_arr, emitted_arr = known.index_of(refs), known.index_of(placed[rows])
        in_arr = known.index_of(arrays[10])  # (Kleene lists' elements)
        composites, first = self.kernel.composites, self.kernel.first_taken
        names = [p.name for p in lowered] + [f"{p.name}@timeout" for p in lowered]
        vps = pattern[rows]
        plain: list[tuple[int, np.ndarray]] = []  # (pattern, its rows) of single input events only
        slow: list[int] = []  # rows made one by one, in order (they may bind this call's composite events)
        for vp in sorted_unique(vps).tolist():
            sel = np.flatnonzero(vps == vp)
            if (lowered[vp % npatterns].name in self._kleene or not self._plain[vp % npatterns]
                    or ((refs[sel] < 0) & (bound[sel] != 0)).any()):
                slow.extend(sel.tolist())
            else:
                plain.append((vp, sel))
        n_known = len(self.known)
        ts_kind = self.known.number_kind(2)
        if slow or self.known.number_kind(1) != np.int64 or ts_kind is None or not n_known:
            known_id, known_ts = self._bound_values(where_arr, emitted_arr, in_arr)
            remembered = (known_id, known_ts, in_arr.tolist() if self._kleene else [])
            stamps = [known_ts[k] if k < len(known_ts) else None for k in emitted_arr.tolist()]
        else:  # (integer ids: their texts made by Arrow, no Python value per bound event)
            known_id = None
            remembered = ([], [], [])
            stamps = self.known.numbers_at(2, np.minimum(emitted_arr, n_known - 1)).tolist()  # type: ignore[union-attr]
            for i in np.flatnonzero(emitted_arr >= n_known).tolist():
                stamps[i] = None
        idents: list[str] = [""] * len(rows)
        for vp, sel in plain:
            cols = [(where_arr[sel, c], bound[sel, c]) for _, _, c in self._vars_at[vp % npatterns]]
            head = names[vp] + "["
            if known_id is not None:
                made = _id_texts(head, cols, known_id)
            else:
                made = _int_id_texts(head, cols, self.known, len(sel))
            for i, ident in zip(sel.tolist(), made):
                idents[i] = ident
        numbers = (rows + first).tolist()
        emitted, entered = at[rows].tolist(), placed[rows].tolist()
        for i in np.flatnonzero(placed[rows] < 0).tolist():  # (entered at the end of the stream)
            assert self.last_input is not None
            entered[i], stamps[i] = self.last_input
        for i in np.flatnonzero(at[rows] < 0).tolist():  # (emitted at the end of the stream)
            emitted[i] = self.last_input[0]  # type: ignore[index]
        done = 0
        for i in sorted(slow):
            composites.add_many(numbers[done:i], emitted[done:i], idents[done:i], stamps[done:i], entered[done:i])
            idents[i] = self._composite_ident(arrays, vps[i], rows[i], refs[i], bound[i], where_arr[i], names, remembered)
            done = i
        composites.add_many(numbers[done:], emitted[done:], idents[done:], stamps[done:], entered[done:])

    def _composite_ident(
        self, arrays: tuple[np.ndarray, ...], vp: int, r: int, refs: np.ndarray, bound: np.ndarray, where: np.ndarray,
        names: list[str], remembered: tuple[list[Any], list[Any], list[int]],
    ) -> str:
        """The id of match ``r``'s composite event (pattern ``vp``), its bindings made one by
        one: Kleene lists, repeated variables, composite events bound."""
        npatterns = len(self._vars_at)
        lists = self._kleene.get(self.kernel.lowered.patterns[vp % npatterns].name, frozenset())
        composites, known_id = self.kernel.composites, remembered[0]
        row, b, k_row = refs.tolist(), bound.tolist(), where.tolist()
        ids = {
            v: self._list_binding(arrays, int(r), sl, [], remembered) if v in lists
            else composites.id_of(row[c]) if row[c] < 0 else known_id[k_row[c]]
            for v, sl, c in self._vars_at[vp % npatterns] if b[c]
        }
        return composite_id(names[vp], self._grouped(self.kernel.lowered.patterns[vp % npatterns].name, ids, arrays, int(r)))

    def _grouped(self, name: str, ids: dict[str, Any], arrays: tuple[np.ndarray, ...], r: int) -> dict[str, Any]:
        """A match's ids with each repeated group's steps as the group's bindings (match
        ``r`` of ``arrays``: a group with optional or Kleene steps is placed by the order its
        elements were bound in)."""
        steps = self._groups.get(name)
        if not steps:
            return ids
        if name not in self._ordered:
            return group_bindings(steps, ids)
        ordered, slot_of, repeats = self._ordered[name]
        keys: dict[str, list[Any]] = {}
        for g in ordered:
            for m in steps[g]:
                at, n = int(arrays[3][r, slot_of[m]]), int(arrays[9][r, slot_of[m]])
                if n >= 0:
                    keys[m] = arrays[12][at : at + n].tolist()
        return group_bindings(steps, ids, keys, ordered, repeats)

def _id_texts(head: str, cols: list[tuple[np.ndarray, np.ndarray]], known_id: list[Any]) -> list[str]:
    """Composite ids (:func:`composite_id`) of rows binding single input events: ``head``,
    then per variable ``(remembered index, bound)`` a column, the bound ids' texts joined."""
    texts = [[str(known_id[k]) if b else None for k, b in zip(where.tolist(), bound.tolist())] for where, bound in cols]
    return [head + ",".join([x for x in t if x is not None]) + "]" for t in zip(*texts)]


def _int_id_texts(head: str, cols: list[tuple[np.ndarray, np.ndarray]], known: Remembered, n: int) -> list[str]:
    """:func:`_id_texts` of ``n`` rows where the remembered ids are int64 numbers (Arrow
    writes an int64 as ``str`` does)."""
    if not cols:
        return [head + "]"] * n
    parts = []
    for where, bound in cols:
        valid = bound != 0
        ids = known.numbers_at(1, np.where(valid, where, 0))
        parts.append(pc.cast(number_array(ids, pa.int64(), valid), pa.string()))
    body = pc.binary_join_element_wise(*parts, scalar(",", pa.string()), null_handling="skip")
    whole = pc.binary_join_element_wise(scalar(head, pa.string()), body, scalar("]", pa.string()), scalar("", pa.string()))
    return whole.to_pylist()  # type: ignore[no-any-return]


def span_of(stamps: list[Any], bound: list[int]) -> tuple[Any, Any]:
    """A match's start and end as the engine's tokens keep them: binding the events in
    arrival order, an equal timestamp never replaces the one kept (so ``0`` stays ``0``
    beside ``0.0``)."""
    first = last = stamps[bound[0]]
    for i in bound[1:]:
        t = stamps[i]
        if t < first:
            first = t
        if t > last:
            last = t
    return first, last


__all__ = ["MatchObjects", "span_of"]
