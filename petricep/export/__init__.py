"""Exporters: a compiled net as DOT, SVG, PNG (Graphviz) or PNML (snakes).

Pure functions of the :class:`~petricep.compile.net.Net`; ``merged=True`` (the default)
draws the shared net the runtime executes, ``merged=False`` every pattern alone. Only
SVG and PNG need Graphviz's ``dot`` program; without it they raise
:class:`~petricep.errors.ConfigError` and DOT and PNML still work.

Notebooks: importing this package (``petricep.api`` does) inside a running IPython
registers :func:`net_svg` as the SVG display of a :class:`Net`, so a compiled net shows
itself as its diagram. The diagram is reached from here, not from ``compile/``: the net
knows nothing of its drawing. Outside IPython nothing is imported or registered.
"""

import sys
from typing import Any

from petricep.compile.net import Net
from petricep.errors import ConfigError
from petricep.export.dot import dot_available, render, to_dot, to_png, to_svg
from petricep.export.model import Diagram, build_diagram
from petricep.export.pnml import to_pnml, to_snakes
from petricep.export.views import Marking

FORMATS = ("dot", "svg", "png", "pnml")


def export(
    net: Net, fmt: str, merged: bool = True, pattern: str | None = None, marking: Marking | None = None
) -> bytes:
    """The net in ``fmt`` (one of :data:`FORMATS`), as the bytes of a file; ``pattern``:
    only that pattern's view (:func:`~petricep.export.views.pattern_view`; not in PNML,
    which holds a whole net); ``marking``: a run's counts coloured on it (not in PNML)."""
    if pattern is not None and fmt == "pnml":
        raise ConfigError("one pattern's view is drawn as DOT, SVG or PNG, not PNML (a whole net)")
    if marking is not None and fmt == "pnml":
        raise ConfigError("a run's marking is drawn as DOT, SVG or PNG, not PNML")
    if fmt == "dot":
        return to_dot(net, merged, pattern, marking).encode("utf-8")
    if fmt == "pnml":
        return to_pnml(net, merged).encode("utf-8")
    if fmt in ("svg", "png"):
        return render(net, fmt, merged, pattern, marking)
    raise ConfigError(f"unknown diagram format {fmt!r} (use {', '.join(FORMATS)})")


def net_svg(net: Net) -> str | None:
    """A net's merged diagram as SVG text, or None without Graphviz's ``dot`` (a notebook
    then falls back to the text repr)."""
    try:
        return to_svg(net)
    except ConfigError:
        return None


def register_notebook_display(shell: Any = None) -> bool:
    """Make IPython ``shell`` (default: the running one) show a Net as :func:`net_svg`.

    Registered on IPython's SVG formatter by type, which IPython consults before any
    ``_repr_svg_`` method, so it works whether or not the class still has one. Returns
    whether a shell was found."""
    if shell is None:
        ipython = sys.modules.get("IPython")  # never imported here: only an IPython process has it
        get = getattr(ipython, "get_ipython", None)
        shell = get() if get is not None else None
    if shell is None:
        return False
    shell.display_formatter.formatters["image/svg+xml"].for_type(Net, net_svg)
    return True


register_notebook_display()

__all__ = [
    "FORMATS",
    "Diagram",
    "build_diagram",
    "dot_available",
    "export",
    "net_svg",
    "register_notebook_display",
    "render",
    "to_dot",
    "to_png",
    "to_pnml",
    "to_snakes",
    "to_svg",
]
