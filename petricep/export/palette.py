"""Colours of the diagrams: one per pattern, and a sequential scale for counts.

Pattern colours come from colour-blind-safe qualitative schemes — Okabe & Ito's seven
(black left out: it is the text colour), Paul Tol's *muted* nine, and four of Tol's
*light*/*vibrant* colours that stay apart from those (the others are within a CIE76
distance of 12 of one already taken). Up to :data:`PATTERN_COLORS`' size no two patterns
share a colour; after that the colours come round again with another border style
(dashed, dotted, bold), so a pattern stays told apart by its fill *and* its outline.
Text on a fill is black or white, whichever contrasts more (WCAG relative luminance).

Counts (partial matches, firings) use Tol's sequential *YlOrBr* scale — light for few,
dark for many, readable in grey and by colour-blind readers — on a logarithmic scale,
since counts on one net span orders of magnitude.
"""

from __future__ import annotations

import math
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

# Tol's YlOrBr, light to dark: levels 1..9 of a count scale (0 has no colour)
SEQUENTIAL = (
    "#FFFFE5",
    "#FFF7BC",
    "#FEE391",
    "#FEC44F",
    "#FB9A29",
    "#EC7014",
    "#CC4C02",
    "#993404",
    "#662506",
)
ZERO_FILL = "#ffffff"  # a node a run never reached


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


def swatch(i: int) -> Swatch:
    """The look of the ``i``-th pattern (0-based): distinct fills for the first
    ``len(PATTERN_COLORS)``, then the same fills with another outline."""
    fill = PATTERN_COLORS[i % len(PATTERN_COLORS)]
    border = BORDER_STYLES[(i // len(PATTERN_COLORS)) % len(BORDER_STYLES)]
    return Swatch(fill, text_color(fill), border)


def level(count: int, top: int) -> int:
    """The step of ``count`` on a logarithmic scale up to ``top``: 0 for none, else 1..9;
    ``top`` is on 9, and ``count`` on the step ``s`` with ``top**((s-1)/9) < count <=
    top**(s/9)`` (1 is on step 1)."""
    steps = len(SEQUENTIAL)
    if count <= 0 or top <= 0:
        return 0
    if count >= top:
        return steps
    if count == 1:
        return 1
    return max(1, math.ceil(steps * math.log(count) / math.log(top) - 1e-9))


def level_color(step: int) -> str:
    """The fill of a step of :func:`level` (white for 0)."""
    return ZERO_FILL if step == 0 else SEQUENTIAL[step - 1]


def level_bounds(step: int, top: int) -> tuple[int, int] | None:
    """The counts (lowest, highest) on ``step`` of a scale up to ``top``, for a legend;
    None where no whole count falls on it (small ``top``)."""
    steps = len(SEQUENTIAL)
    if step <= 0 or top <= 0:
        return None
    lo = 1 if step == 1 else int(top ** ((step - 1) / steps)) + 1
    hi = top if step == steps else int(top ** (step / steps))
    while lo > 1 and level(lo - 1, top) == step:  # float edges
        lo -= 1
    while lo <= hi and level(lo, top) < step:
        lo += 1
    while hi < top and level(hi + 1, top) == step:
        hi += 1
    while hi >= lo and level(hi, top) > step:
        hi -= 1
    return (lo, hi) if lo <= hi else None
