"""Patterns' colours: one look per pattern, the same in every picture (diagrams, the match
timeline, heat maps' text), decided by the rank of its name so that two pictures that know
the same patterns colour them alike."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Okabe-Ito, then Tol muted, then Tol light (pear, orange, pink) and vibrant (magenta)
PATTERN_COLORS = (
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#009E73",  # bluish green
    "#F0E442",  # yellow
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#CC6677",  # rose
    "#332288",  # indigo
    "#DDCC77",  # sand
    "#117733",  # green
    "#88CCEE",  # cyan
    "#882255",  # wine
    "#44AA99",  # teal
    "#999933",  # olive
    "#AA4499",  # purple
    "#BBCC33",  # pear
    "#EE8866",  # light orange
    "#FFAABB",  # pink
    "#EE3377",  # magenta
)
# border styles of the rounds through the palette: the first round has a plain outline
BORDER_STYLES = ("solid", "dashed", "dotted", "bold")


@dataclass(frozen=True)
class Swatch:
    """How one pattern is drawn: its fill, the text colour on it, its outline style."""

    fill: str
    font: str
    border: str  # one of BORDER_STYLES


def luminance(color: str) -> float:
    """WCAG relative luminance of ``#rrggbb``."""

    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def text_color(fill: str) -> str:
    """Black or white, whichever contrasts more with ``fill``."""
    lum = luminance(fill)
    return "#000000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#ffffff"


def _name_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """A pattern name in natural order: its digit runs as numbers (``p2`` before ``p10``)."""
    return tuple((1, int(part)) if part.isdigit() else (0, part) for part in re.split(r"(\d+)", name) if part)


def pattern_swatches(names: Sequence[str]) -> dict[str, Swatch]:
    """Each pattern's look: the ``i``-th :func:`swatch` for the ``i``-th of ``names`` in
    natural order of the names. The rank of a name, not the order patterns are listed,
    compiled or first match in, decides it, so a diagram (every pattern of the net) and a
    match timeline (the patterns that matched, in order of their first match) give a
    pattern the same colour whenever they know the same patterns."""
    ranked = sorted(dict.fromkeys(names), key=lambda n: (_name_key(n), n))
    return {name: swatch(i) for i, name in enumerate(ranked)}


def swatch(i: int) -> Swatch:
    """The look of the ``i``-th pattern (0-based): distinct fills for the first
    ``len(PATTERN_COLORS)``, then the same fills with another outline."""
    fill = PATTERN_COLORS[i % len(PATTERN_COLORS)]
    border = BORDER_STYLES[(i // len(PATTERN_COLORS)) % len(BORDER_STYLES)]
    return Swatch(fill, text_color(fill), border)
