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


def compile_files(paths: Sequence[str | Path], share: bool = True) -> Net:
    """Parse, check and compile pattern files into one shared net."""
    files = load_patterns(paths)
    return build_net([p for f in files for p in f.patterns], share, [c for f in files for c in f.conflicts])


def compile_text(text: str, name: str = "pattern", share: bool = True) -> Net:
    f = parse_text(text, f"<{name}>", default_name=name)
    return build_net(list(f.patterns), share, list(f.conflicts))


def run(net: Net, events: Iterable[Event], tie: str = "arrival") -> Iterator[Match]:
    """Run ``net`` over ``events`` (in stream order) on the embedded engine."""
    return Engine(net, tie=tie).run(events)
