"""What the reader tests share: files written for a test, events read back, the error a
read raises, a skip-mode read with its rejects, and random CSV cells."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from petricep.errors import EventError
from petricep.events import Event
from petricep.io import InputSpec, open_events

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
DATA = SHARED / "data"


def write(tmp_path: Path, name: str, text: str | bytes) -> str:
    p = tmp_path / name
    if isinstance(text, str):
        text = text.encode("utf-8")
    if name.endswith(".gz"):
        p.write_bytes(gzip.compress(text))
    else:
        p.write_bytes(text)
    return str(p)


def read(path: str, **kw: Any) -> list[Event]:
    return list(open_events(InputSpec(path, **kw)))


def error_of(path: str, **kw: Any) -> EventError:
    with pytest.raises(EventError) as info:
        read(path, **kw)
    return info.value


def skip_read(tmp_path: Path, path: str, **kw: Any) -> tuple[list[Event], Any, list[dict[str, Any]]]:
    rejects = tmp_path / "rejects.jsonl"
    src = open_events(InputSpec(path, on_error="skip", rejects_path=str(rejects), **kw))
    events = list(src)
    lines = rejects.read_text(encoding="utf-8").splitlines()
    return events, src, [json.loads(line) for line in lines]


def E(etype: str, ts: Any, pos: int, eid: Any = None, /, **attrs: Any) -> Event:
    return Event(etype, ts, pos, eid, attrs)


cell = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["", "abc", "1e5", ".5", "5.", "-0", "007", "+3", "nan", "1_0", " 7", '"q,t"', "x y"]),
)
