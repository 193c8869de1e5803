"""Match output: JSON Lines, one match per line (SPEC §4)."""

from __future__ import annotations

import json
import math
from typing import IO, Any

from petricep.events import Event
from petricep.runtime.engine import Match


def _plain(v: Any) -> Any:
    if isinstance(v, float) and v.is_integer() and not math.isinf(v):
        return v
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    item = getattr(v, "item", None)  # numpy scalars
    if callable(item):
        return item()
    return str(v)


def match_json(m: Match) -> str:
    return json.dumps(_plain(m.to_dict()), ensure_ascii=False, separators=(", ", ": "))


class JsonlWriter:
    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.count = 0

    def write(self, m: Match) -> None:
        self.out.write(match_json(m))
        self.out.write("\n")
        self.count += 1


class LateWriter:
    """Late events (``--late``): one JSON object per line with the event's arrival
    position, id, type, timestamp and attributes, and the watermark it arrived behind."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.count = 0

    def write(self, e: Event, watermark: Any) -> None:
        rec = {"pos": e.pos, "id": e.id, "type": e.type, "ts": e.ts, "watermark": watermark, "attrs": e.attrs}
        self.out.write(json.dumps(_plain(rec), ensure_ascii=False, separators=(", ", ": ")))
        self.out.write("\n")
        self.count += 1
