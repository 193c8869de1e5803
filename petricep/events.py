"""The event value every stage agrees on.

An event is stored once; partial matches refer to it, never copy it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np


class Event:
    """One input (or composite) event.

    ``pos`` is the 0-based arrival position over the whole input, before
    partitioning: stream order is ``(ts, pos)`` and count windows use ``pos``.
    ``id`` is the id column's value, or ``pos`` when the input has no id column.
    """

    __slots__ = ("type", "ts", "pos", "id", "attrs", "seq")

    def __init__(
        self,
        type: str,
        ts: float | int,
        pos: int,
        id: Any = None,
        attrs: dict[str, Any] | None = None,
    ) -> None:
        self.type = type
        self.ts = ts
        self.pos = pos
        self.id = pos if id is None else id
        self.attrs = attrs if attrs is not None else {}
        # Processing order inside one engine run (inputs and composite events
        # interleaved); assigned by the runtime, -1 until then.
        self.seq = -1

    def get(self, field: str) -> Any:
        """Attribute lookup used by compiled conditions; ``ts`` and ``id`` are built in."""
        if field == "ts":
            return self.ts
        if field == "id":
            return self.id
        return self.attrs[field]

    def __repr__(self) -> str:
        return f"Event({self.type!r}, ts={self.ts!r}, pos={self.pos}, id={self.id!r}, {self.attrs!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Event)
            and self.type == other.type
            and self.ts == other.ts
            and self.pos == other.pos
            and self.id == other.id
            and self.attrs == other.attrs
        )

    def __hash__(self) -> int:
        return hash((self.type, self.pos))


class EventColumns:
    """The events of one checked batch as columns, for a runtime that reads columns (the
    compiled kernel) instead of one :class:`Event` per row: per row its ``types``, ``ts``,
    ``pos`` and ``ids``, and ``attrs`` (field -> column). Columns are lists, ranges or numpy
    arrays (``types`` also a :class:`TypeColumn`); a value is what the same row's
    :class:`Event` would hold (a numpy column's ``tolist``: see :func:`value_at`). A reader gives them
    only when asked (``EventSource.items(as_columns=True)``), and only for batches it checked
    whole."""

    __slots__ = ("types", "ts", "pos", "ids", "attrs")

    def __init__(self, types: Any, ts: Any, pos: Any, ids: Any, attrs: dict[str, Any]) -> None:
        self.types = types
        self.ts = ts
        self.pos = pos
        self.ids = ids
        self.attrs = attrs

    def __len__(self) -> int:
        return len(self.pos)

    def type_names(self) -> set[str]:
        """The event types present in the batch."""
        types = self.types
        return types.distinct() if isinstance(types, TypeColumn) else set(types)

    def event(self, i: int) -> Event:
        """Row ``i`` as an :class:`Event` (to name the row an error is about)."""
        attrs = {name: value_at(col, i) for name, col in self.attrs.items()}
        return Event(self.types[i], value_at(self.ts, i), int(self.pos[i]), value_at(self.ids, i), attrs)

    def events(self) -> Iterator[Event]:
        """Every row as an :class:`Event`, in order, each column converted once (not value
        by value, as :meth:`event`): for a runtime that takes events beside one that reads
        the columns."""
        names = list(self.attrs)
        cols = [_values(self.attrs[name]) for name in names]
        types, ts, pos, ids = _values(self.types), _values(self.ts), _values(self.pos), _values(self.ids)
        rows = zip(*cols) if cols else (() for _ in pos)
        for t, when, at, i, row in zip(types, ts, pos, ids, rows):
            yield Event(t, when, int(at), i, dict(zip(names, row)))


class TypeColumn(Sequence[str]):
    """A batch's event types as codes into a few names (the reader's dictionary-encoded type
    column, or one constant type): a runtime maps the names once, not a string per row."""

    __slots__ = ("codes", "names")

    def __init__(self, codes: np.ndarray, names: Sequence[str]) -> None:
        self.codes = codes
        self.names = tuple(names)

    @classmethod
    def constant(cls, name: str, n: int) -> TypeColumn:
        return cls(np.zeros(n, dtype=np.int32), (name,))

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return TypeColumn(self.codes[i], self.names)
        return self.names[self.codes[i]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def tolist(self) -> list[str]:
        """Each row's type (a name shared by its rows)."""
        return np.array(self.names, dtype=object)[self.codes].tolist()  # type: ignore[no-any-return]

    def distinct(self) -> set[str]:
        """The types present."""
        if len(self.names) == 1:  # (a constant type: no pass over the rows)
            return set(self.names) if len(self.codes) else set()
        present = np.bincount(self.codes, minlength=len(self.names))  # (np.unique would import numpy.ma)
        return {self.names[c] for c in np.flatnonzero(present).tolist()}


def value_at(col: Any, i: int) -> Any:
    """Row ``i`` of a column as a Python value (a numpy scalar's ``item``)."""
    return _item(col[i])


def _values(col: Any) -> list[Any]:
    """A column's values as the rows' events hold them (a numpy column's ``tolist``)."""
    tolist = getattr(col, "tolist", None)
    return tolist() if callable(tolist) else list(map(_item, col))


def _item(v: Any) -> Any:
    item = getattr(v, "item", None)  # a numpy scalar: its Python value
    return item() if callable(item) else v
