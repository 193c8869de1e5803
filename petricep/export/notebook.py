"""Notebooks show a compiled net as its diagram.

The display is registered from here (the export stage) onto
:class:`~petricep.compile.net.Net`, so that the compile stage never reaches up into the
exporters: importing :mod:`petricep.export` is what makes ``Net`` render in Jupyter.
"""

from __future__ import annotations

from petricep.compile.net import Net
from petricep.errors import ConfigError
from petricep.export.dot import to_svg


def net_svg(net: Net) -> str | None:
    """Jupyter's ``_repr_svg_`` of a net: the merged net as SVG. Without Graphviz's ``dot``
    program: None, and Jupyter falls back to the text repr."""
    try:
        return to_svg(net)
    except ConfigError:
        return None


def register() -> None:
    """Give :class:`Net` its notebook display (idempotent)."""
    Net._repr_svg_ = net_svg  # type: ignore[attr-defined]


register()
