"""The library entry points: compile pattern files, run them over events."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from petricep.compile.net import Net
from petricep.events import Event
from petricep.lang import ast as A
from petricep.lang.parser import parse_file, parse_text
from petricep.merge import build_net
from petricep.runtime.engine import Engine, Match


def load_patterns(paths: Sequence[str | Path]) -> list[A.PatternFile]:
    return [parse_file(p) for p in paths]


def compile_files(paths: Sequence[str | Path]) -> Net:
    """Parse, check and compile pattern files into one net."""
    return build_net([p for f in load_patterns(paths) for p in f.patterns])


def compile_text(text: str, name: str = "pattern") -> Net:
    return build_net(list(parse_text(text, f"<{name}>", default_name=name).patterns))


def run(net: Net, events: Iterable[Event], tie: str = "arrival") -> Iterator[Match]:
    """Run ``net`` over ``events`` (in stream order) on the embedded engine."""
    return Engine(net, tie=tie).run(events)
