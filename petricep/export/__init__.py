"""Exporters: a compiled net as DOT, SVG, PNG (Graphviz) or PNML (snakes).

Pure functions of the :class:`~petricep.compile.net.Net`; ``merged=True`` (the default)
draws the shared net the runtime executes, ``merged=False`` every pattern alone. Only
SVG and PNG need Graphviz's ``dot`` program; without it they raise
:class:`~petricep.errors.ConfigError` and DOT and PNML still work.
"""

from petricep.compile.net import Net
from petricep.errors import ConfigError
from petricep.export.dot import dot_available, render, to_dot, to_png, to_svg
from petricep.export.model import Diagram, build_diagram
from petricep.export.notebook import net_svg  # registers Net's notebook display
from petricep.export.pnml import to_pnml, to_snakes

FORMATS = ("dot", "svg", "png", "pnml")


def export(net: Net, fmt: str, merged: bool = True) -> bytes:
    """The net in ``fmt`` (one of :data:`FORMATS`), as the bytes of a file."""
    if fmt == "dot":
        return to_dot(net, merged).encode("utf-8")
    if fmt == "pnml":
        return to_pnml(net, merged).encode("utf-8")
    if fmt in ("svg", "png"):
        return render(net, fmt, merged)
    raise ConfigError(f"unknown diagram format {fmt!r} (use {', '.join(FORMATS)})")


__all__ = [
    "FORMATS",
    "Diagram",
    "build_diagram",
    "dot_available",
    "export",
    "net_svg",
    "render",
    "to_dot",
    "to_png",
    "to_pnml",
    "to_snakes",
    "to_svg",
]
