"""Diagram data -> Graphviz: DOT text (no binary needed), SVG and PNG (Graphviz's ``dot``).

Left to right: input places (one per event type) on the source side, output places
(one per pattern) on the sink side. Fill colours are the patterns' (see the legend);
a node shared by several patterns has a bold border and shows its users' colours
(wedges for places, a band over the text for transitions) — or, used by more than
:data:`MAX_SPLIT` patterns, grey and labelled with their number. Negations are dashed
arcs with a circle head, composite events dotted blue arcs.
"""

from __future__ import annotations

import html
import shutil
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from petricep.compile.net import Net
from petricep.errors import EXIT_ERROR, ConfigError
from petricep.export.colors import text_color
from petricep.export.model import (
    ARC_COMPOSITE,
    ARC_EVENT,
    ARC_INHIBIT,
    EMIT,
    INPUT,
    OUTPUT,
    STATE,
    TRANSITION,
    Diagram,
    LegendEntry,
    Node,
    build_diagram,
)
from petricep.export.views import ZERO_FILL, Heat, Marking, count_lines, heat, pattern_view, scale

if TYPE_CHECKING:
    import graphviz

MAX_SPLIT = 8  # a shared node split into at most this many colours; more: grey + count
SHARED_PENWIDTH = "2.6"
INPUT_FILL = "#eeeeee"
MANY_FILL = "#d0d0d0"
INHIBIT_COLOR = "#c0392b"
COMPOSITE_COLOR = "#1f4e9a"
EVENT_COLOR = "#9a9a9a"
FONT = "Helvetica"
LEGEND_ROWS = 18  # patterns per legend column
SUMMARY_CHARS = 90

MISSING_DOT = (
    "rendering {fmt} needs Graphviz's 'dot' program, which is not installed: install Graphviz "
    "(Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz; conda: conda install graphviz), "
    "or write DOT instead (-o net.dot), which needs nothing"
)


class MissingTool(ConfigError):
    """Graphviz's ``dot`` is not installed: the installation's problem (exit status 1), the
    message says what to install."""

    exit_code = EXIT_ERROR


def dot_available() -> bool:
    """Whether Graphviz's ``dot`` program is on the PATH (needed for SVG and PNG only)."""
    return shutil.which("dot") is not None


def _dot_esc(text: str) -> str:
    """Text for a plain DOT label (its ``\\l`` line ends are ours): backslashes doubled."""
    return text.replace("\\", "\\\\")


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _html_label(
    lines: Sequence[str], bold_first: bool = True, small: int = 8, first_small: bool = False
) -> str:
    first, rest = lines[0], lines[1:]
    if first_small:
        parts = [f'<font point-size="{small}">{_esc(first)}</font>']
    else:
        parts = [f"<b>{_esc(first)}</b>" if bold_first else _esc(first)]
    parts += [f'<font point-size="{small}">{_esc(x)}</font>' for x in rest]
    return "<" + "<br/>".join(parts) + ">"


def _fill(d: Diagram, node: Node) -> tuple[str, str, str]:
    """(style, fillcolor, extra label line) for a node of one or more patterns."""
    base = "filled"
    if node.kind == INPUT:
        return base, INPUT_FILL, ""
    colors = [d.color(u) for u in node.users]
    if not node.shared:
        if not colors:
            return base, INPUT_FILL, ""
        border = d.entry(node.users[0]).border
        return (base if border == "solid" else f"{base},{border}"), colors[0], ""
    if len(colors) > MAX_SPLIT:
        return base, MANY_FILL, f"shared by {len(colors)} patterns"
    if node.kind == STATE:  # wedged by itself ("filled" too makes dot read a gradient)
        return "wedged", ":".join(colors), ""
    return base, "white", ""  # a transition: a band of its users' colours over its text


def _font(d: Diagram, node: Node) -> str | None:
    """The text colour on a node's fill where black does not read (dark pattern colours)."""
    if node.kind in (STATE, TRANSITION, EMIT) and len(node.users) == 1:
        font = d.entry(node.users[0]).font
        return None if font == "#000000" else font
    return None


def _band_label(lines: Sequence[str], colors: Sequence[str], small: int = 8) -> str:
    """A shared transition's label: a band of its users' colours, then the text on white."""
    band = "".join(f'<td bgcolor="{c}" height="6" fixedsize="false"></td>' for c in colors)
    text = "<br/>".join(
        [f"<b>{_esc(lines[0])}</b>"] + [f'<font point-size="{small}">{_esc(x)}</font>' for x in lines[1:]]
    )
    return (
        '<<table border="0" cellborder="0" cellspacing="0" cellpadding="1">'
        f'<tr>{band}</tr><tr><td colspan="{len(colors)}">{text}</td></tr></table>>'
    )


def _node_attrs(d: Diagram, n: Node, marked: tuple[Heat, Marking] | None) -> dict[str, str]:
    """The DOT attributes of a node: shape, label, fill (its patterns' colours, or with a
    run's marking its count's), outline."""
    style, fill, extra = _fill(d, n)
    lines = [*n.label, extra] if extra else list(n.label)
    font = _font(d, n)
    hot = marked is not None and n.id in marked[0].fill
    if marked is not None and hot:
        heat_, marking = marked
        style, fill, font = "filled", heat_.fill[n.id], heat_.font[n.id]
        font = None if font == "#000000" else font
        lines = [*lines, *count_lines(n, marking)] if n.kind != STATE else lines
    attrs = {"style": style, "fillcolor": fill, "tooltip": n.tooltip, "class": f"{n.kind}{' shared' if n.shared else ''}"}
    if n.kind in (INPUT, OUTPUT):
        # small fixed circles, the name beside them (type names are long)
        shape = "circle" if n.kind == INPUT else "doublecircle"
        attrs.update(label="", xlabel=_html_label(lines), shape=shape, width="0.3", fixedsize="true")
    elif n.kind == STATE:
        # the configuration inside; the bound variables and their types (and counts) beside
        attrs.update(label=_html_label(lines[:1]), shape="circle", width="0.4", margin="0.02")
        beside = lines[1:] + (list(count_lines(n, marked[1])) if marked is not None and hot else [])
        if beside:
            attrs["xlabel"] = _html_label(beside, bold_first=False, small=8, first_small=True)
    elif n.kind == TRANSITION:
        label = _html_label(lines)
        if n.shared and len(n.users) <= MAX_SPLIT and not hot:
            label = _band_label(lines, [d.color(u) for u in n.users])
            font = None
        attrs.update(label=label, shape="box", height="0.3")
    elif n.kind == EMIT:
        attrs.update(label=_html_label(lines), shape="box", height="0.3", style=f"{style},rounded")
    if n.shared:
        attrs["penwidth"] = SHARED_PENWIDTH
    if font:  # the label only: an xlabel stands on white
        attrs["label"] = f'<<font color="{font}">{attrs["label"][1:-1]}</font>>'
    return attrs


def diagram_graph(d: Diagram, marked: tuple[Heat, Marking] | None = None) -> graphviz.Digraph:
    """The Graphviz graph of a diagram (see the module docstring for the notation); with
    ``marked``, a run's marking on it (:mod:`petricep.export.views`)."""
    import graphviz  # loaded only when a net is drawn: a run reaches this package for --stats (issue 16)

    g = graphviz.Digraph(name="petricep")
    nstate = sum(1 for n in d.nodes if n.kind == STATE)
    ntrans = sum(1 for n in d.nodes if n.kind == TRANSITION)
    ninput = sum(1 for n in d.nodes if n.kind == INPUT)
    npat = len(d.legend)
    what = f"{npat} pattern{'s' if npat != 1 else ''}"
    if d.focus is not None:
        others = [e.pattern for e in d.legend if e.pattern != d.focus]
        what = f"pattern {d.focus}" + (f" (sharing with {', '.join(others)})" if others else "")
    title = (
        f"petricep {d.title}: {what}, {ninput} input places, {nstate} state places, {ntrans} transitions"
    )
    g.attr(
        rankdir="LR",
        newrank="true",
        fontname=FONT,
        fontsize="11",
        # the legend is the graph's label: it takes no column of the layout
        label=legend_label(d, title, _scale_rows(*marked) if marked else ()),
        labelloc="t",
        labeljust="l",
        nodesep="0.18",
        ranksep="0.35",
        tooltip=title,
        forcelabels="true",
    )
    g.attr("node", fontname=FONT, fontsize="10", margin="0.04,0.02")
    g.attr("edge", fontname=FONT, fontsize="8", arrowsize="0.6")

    def add_node(target: graphviz.Digraph, n: Node) -> None:
        target.node(n.id, **_node_attrs(d, n, marked))

    # no rank constraints: an input place stands left of its first reader, an output place
    # right of its emission, so no column is wider than its own patterns need
    for n in sorted((n for n in d.nodes if n.kind == INPUT), key=lambda n: not n.source_side):
        add_node(g, n)
    for c in d.clusters:
        with g.subgraph(name=f"cluster_{c.id}") as s:
            color = d.color(c.users[0]) if len(c.users) == 1 else "#888888"
            s.attr(
                label="".join(f"{_dot_esc(x)}\\l" for x in c.label),
                labeljust="l",
                style="rounded",
                color=color,
                penwidth="1.5",
                fontsize="10",
            )
            for n in d.nodes:
                if n.cluster == c.id:
                    add_node(s, n)
    for n in d.nodes:
        if n.kind != INPUT and n.cluster is None:
            add_node(g, n)

    for a in d.arcs:
        attrs: dict[str, str] = {}
        if a.label and a.kind == ARC_EVENT:
            # an arc condition is also in its transition's box: event arcs run long, a
            # label halfway is hard to place; hover shows it in SVG
            attrs["tooltip"] = a.label
        elif a.label:
            attrs["label"] = a.label
        if a.kind == ARC_EVENT:
            attrs.update(color=EVENT_COLOR)
        elif a.kind == ARC_INHIBIT:
            attrs.update(style="dashed", arrowhead="odot", color=INHIBIT_COLOR, fontcolor=INHIBIT_COLOR)
        elif a.kind == ARC_COMPOSITE:
            attrs.update(style="dotted", color=COMPOSITE_COLOR, fontcolor=COMPOSITE_COLOR, penwidth="1.6")
        attrs["class"] = a.kind
        g.edge(a.src, a.dst, **attrs)

    return g


def _entry_cell(e: LegendEntry, width: int = SUMMARY_CHARS) -> str:
    """A pattern's legend cell: a swatch of its colour, its name, its outline after the
    colours came round again, its summary whole, wrapped at ``width`` characters — one
    cell, since Graphviz stretches a nested table's columns to the widest block of the
    legend. Never cut short: a legend is where a reader learns what a pattern is."""
    outline = "" if e.border == "solid" else f"{e.border} outline; "
    lines = textwrap.wrap(outline + e.text, width, break_long_words=False, break_on_hyphens=False) or [""]
    text = "<br/>".join(_esc(x) for x in lines)
    return (
        f'<td align="left" balign="left"><font color="{e.color}">\u2588\u2588</font> <b>{_esc(e.pattern)}</b> '
        f'<font point-size="8">{text}</font></td>'
    )


NOTES = (
    "circle: place (left: input place per event type; right, double: output place per pattern)",
    "box: transition (event bound, guards, window); rounded: a pattern's emission",
    "bold border, several colours: shared by several patterns",
    "dashed, circle head: negation (inhibitor arc); dotted: complex event fed back",
)


def legend_label(d: Diagram, title: str, extra: Sequence[str] = ()) -> str:
    """The graph's label: its title, one swatch and summary per pattern (in columns of
    :data:`LEGEND_ROWS`), the notation; ``extra``: HTML rows added below (a run's scales)."""
    rows: list[str] = []
    entries = list(d.legend)
    columns = [entries[i : i + LEGEND_ROWS] for i in range(0, len(entries), LEGEND_ROWS)]
    for r in range(max((len(c) for c in columns), default=0)):
        # a one-pattern view: its own summary on longer lines
        cells = [_entry_cell(c[r], 2 * SUMMARY_CHARS if c[r].pattern == d.focus else SUMMARY_CHARS) for c in columns if r < len(c)]
        rows.append("<tr>" + "".join(cells) + "<td></td>" * (len(columns) - len(cells)) + "</tr>")
    # nested tables, one per block: a wide block (title, scales) widens no column of another
    notes = "".join(f'<tr><td align="left"><font point-size="8">{_esc(x)}</font></td></tr>' for x in NOTES)
    blocks = [
        f'<font point-size="12"><b>{_esc(title)}</b></font>',
        *([f'<table border="0" cellborder="0" cellspacing="1" cellpadding="2">{"".join(rows)}</table>'] * bool(rows)),
        f'<table border="0" cellborder="0" cellspacing="0" cellpadding="1">{notes}</table>',
        *extra,
    ]
    body = "".join(f'<tr><td align="left">{b}</td></tr>' for b in blocks)
    return f'<<table border="0" cellborder="0" cellspacing="2" cellpadding="0">{body}</table>>'


def _scale_rows(heat_: Heat, marking: Marking) -> list[str]:
    """The legend rows of a run's marking: the places' and the transitions' count scales."""
    what = "partial matches alive at their peak" if marking.measure == "peak" else "partial matches created"
    rows = []
    for name, top in ((f"state places: {what}", heat_.place_top), ("transitions and emissions: firings", heat_.transition_top)):
        cells = "".join(
            f'<td bgcolor="{fill}" border="1">'
            f'<font point-size="8" color="{text_color(fill)}">{_esc(text)}</font></td>'
            for fill, text in [(ZERO_FILL, "0"), *scale(top)]
        )
        rows.append(
            '<table border="0" cellborder="0" cellspacing="0" cellpadding="2">'
            f'<tr><td align="left"><font point-size="10"><b>{_esc(name)}</b></font></td>{cells}</tr></table>'
        )
    return rows


def to_dot(net: Net, merged: bool = True, pattern: str | None = None, marking: Marking | None = None) -> str:
    """DOT text of the merged net (or, ``merged=False``, of every pattern alone);
    ``pattern``: only that pattern's part (:func:`~petricep.export.views.pattern_view`);
    ``marking``: a run's counts coloured on it (:class:`~petricep.export.views.Marking`)."""
    d = build_diagram(net, merged)
    marked = (heat(d, marking), marking) if marking is not None else None
    if pattern is not None:
        d = pattern_view(d, pattern)
    return diagram_graph(d, marked).source


def render(
    net: Net, fmt: str, merged: bool = True, pattern: str | None = None, marking: Marking | None = None
) -> bytes:
    """The net drawn by Graphviz's ``dot`` in format ``fmt`` (``svg``, ``png``, ...)."""
    return render_dot(to_dot(net, merged, pattern, marking), fmt)


def render_dot(dot: str, fmt: str) -> bytes:
    import graphviz  # loaded only when a net is drawn: a run reaches this package for --stats (issue 16)

    try:
        return graphviz.Source(dot).pipe(format=fmt, engine="dot")
    except graphviz.ExecutableNotFound:
        raise MissingTool(MISSING_DOT.format(fmt=fmt.upper())) from None
    except graphviz.CalledProcessError as exc:  # pragma: no cover - a bug in the DOT we write
        raise ConfigError(f"Graphviz's dot could not render the net: {exc.stderr!r}") from None


def to_svg(net: Net, merged: bool = True, pattern: str | None = None, marking: Marking | None = None) -> str:
    """SVG text of the diagram (needs Graphviz's ``dot``; :class:`ConfigError` if missing)."""
    return render(net, "svg", merged, pattern, marking).decode("utf-8")


def to_png(net: Net, merged: bool = True, pattern: str | None = None, marking: Marking | None = None) -> bytes:
    """PNG bytes of the diagram (needs Graphviz's ``dot``; :class:`ConfigError` if missing)."""
    return render(net, "png", merged, pattern, marking)
