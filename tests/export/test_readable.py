"""Diagrams of many patterns stay readable (issue 18): a distinct colour per pattern from
colour-blind-safe schemes, cluster titles that say what is shared and how (and never claim
sharing where there is none), a layout without global rank constraints."""

from __future__ import annotations

import itertools
import math

from petricep.api import compile_files, compile_text
from petricep.export import build_diagram, to_dot
from petricep.export.colors import BORDER_STYLES, PATTERN_COLORS, swatch, text_color
from petricep.export.model import EMIT, STATE, TRANSITION
from tests.export.dotparse import parse, text_of
from tests.export.helpers import NETS, overlapping_seq_patterns


def _lab(color: str) -> tuple[float, float, float]:
    """CIE L*a*b* of an sRGB colour (D65), for colour distances."""

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(int(color[i : i + 2], 16) / 255) for i in (1, 3, 5))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_palette_colours_are_far_apart() -> None:
    assert len(PATTERN_COLORS) == 20
    assert len({c.lower() for c in PATTERN_COLORS}) == 20
    closest = min(math.dist(_lab(a), _lab(b)) for a, b in itertools.combinations(PATTERN_COLORS, 2))
    assert closest > 14  # sky blue #56B4E9 and cyan #88CCEE, the nearest pair: 14.4
    # Okabe-Ito first (black left out), then Tol's muted
    assert PATTERN_COLORS[:7] == ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
    assert PATTERN_COLORS[7:16] == (
        "#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE", "#882255", "#44AA99", "#999933", "#AA4499",
    )  # fmt: skip


def test_text_on_dark_fills_is_white() -> None:
    assert [c for c in PATTERN_COLORS if text_color(c) == "#ffffff"] == [
        "#0072B2",
        "#332288",
        "#117733",
        "#882255",
        "#AA4499",
    ]
    assert text_color("#FFFFFF") == "#000000"


def test_every_pattern_its_own_look_up_to_eighty() -> None:
    looks = [(s.fill, s.border) for s in map(swatch, range(80))]
    assert len(set(looks)) == 80
    assert [s.border for s in map(swatch, (0, 19, 20, 39, 40, 60))] == [
        "solid",
        "solid",
        "dashed",
        "dashed",
        "dotted",
        "bold",
    ]
    assert swatch(20).fill == swatch(0).fill and BORDER_STYLES[0] == "solid"


def test_fifty_patterns_distinct_colours_then_styles_in_dot() -> None:
    net = compile_text(overlapping_seq_patterns(50))
    d = build_diagram(net)
    assert [e.color for e in d.legend[:20]] == list(PATTERN_COLORS)
    assert len({(e.color, e.border) for e in d.legend}) == 50
    g = parse(to_dot(net))
    nodes = g.all_nodes()
    for n in d.nodes:
        if n.kind in (STATE, TRANSITION, EMIT) and not n.shared:
            (user,) = n.users
            i = int(user[1:])  # p0..p49, in legend order
            style = nodes[n.id]["style"]
            assert nodes[n.id]["fillcolor"] == PATTERN_COLORS[i % 20]
            assert style == {0: "filled", 1: "filled,dashed", 2: "filled,dotted"}[i // 20] + (
                ",rounded" if n.kind == EMIT else ""
            )
    # the legend's swatches show the outline too
    legend = g.attrs["label"]
    assert text_of(legend).count("dashed outline; SEQ(") == 20
    assert text_of(legend).count("dotted outline; SEQ(") == 10
    assert "<b>p20</b> <font point-size=\"8\">dashed outline; SEQ(" in legend
    # a dark fill (p4: #0072B2): white text
    assert nodes["emit.p4"]["label"].startswith('<<font color="#ffffff">')
    assert nodes["emit.p3"]["label"].startswith("<<b>emit p3</b>")


def test_white_text_in_the_node_only() -> None:
    """A state place's variables stand beside it, on white: they stay black."""
    text = "\n".join(f"PATTERN q{i}: SEQ(A{i} a, B{i} b) WITHIN 5" for i in range(5))
    net = compile_text(text)
    d = build_diagram(net)
    (place,) = [n for n in d.nodes if n.kind == STATE and n.users == ("q4",) and n.label[0] == "a"]
    attrs = parse(to_dot(net)).all_nodes()[place.id]
    assert attrs["fillcolor"] == "#0072B2"
    assert attrs["label"] == '<<font color="#ffffff"><b>a</b></font>>'
    assert attrs["xlabel"] == '<<font point-size="8">a:A4</font>>' and "fontcolor" not in attrs


def test_all_shipped_nets_titles_claim_no_sharing() -> None:
    """The issue: "shared net 4: rising_peaks, repeat_theft" though they share nothing.
    Patterns that only run in one net (same key and strategy) get a cluster each."""
    net = compile_files(NETS)
    d = build_diagram(net)
    titles = {c.id: c.label for c in d.clusters}
    assert titles["g2.1"] == ("speed_collapse", "[REPORT_ID] skip-till-any-match")
    assert titles["g2.2"] == ("stall_recovery", "[REPORT_ID] skip-till-any-match")
    # (repeat_theft reads shoplifting's Theft: a net of its own after shoplifting's, merge._levels)
    assert titles["g4"] == ("rising_peaks", "skip-till-any-match") and titles["g10"] == ("repeat_theft", "skip-till-any-match")
    assert titles["g6.1"] == ("sase_kleene_min", "[symbol] skip-till-next-match")
    assert titles["g6.2"] == ("rising_trades", "[symbol] skip-till-next-match")
    assert all(len(c.users) == 1 for c in d.clusters)
    assert not any("shared" in line for c in d.clusters for line in c.label)
    # every state place, transition and emission in the cluster of its pattern
    for n in d.nodes:
        if n.kind in (STATE, TRANSITION, EMIT):
            (cluster,) = [c for c in d.clusters if c.id == n.cluster]
            assert n.users == cluster.users


def test_fifty_patterns_one_title_says_what_is_shared_and_how() -> None:
    d = build_diagram(compile_text(overlapping_seq_patterns(50)))
    (cluster,) = d.clusters
    assert cluster.label == (
        "shared by 50 patterns",
        "front+middle combination: a (50 patterns); a;b (47",
        "patterns); a;b;c (30 patterns)",
        "front combination (same partial matches): a;b (p2, p47)",
        "rear combination (same continuation): a;b;c;d (p11, p29,",
        "p35); a;b;c;d (p13, p42, p49); a;b;c;d (p19, p48); a;b;c;d",
        "(p24, p44)",
        "front+rear combination: a;b;c (p31, p39, p40)",
        "[k] skip-till-any-match",
    )


def test_one_pattern_alone_has_no_cluster() -> None:
    d = build_diagram(compile_text("PATTERN q: SEQ(A a, B b) WITHIN 5"))
    assert d.clusters == ()
    assert "cluster" not in to_dot(compile_text("PATTERN q: SEQ(A a, B b) WITHIN 5"))
    assert text_of(parse(to_dot(compile_text("PATTERN q: SEQ(A a, B b)"))).attrs["label"]).startswith(
        "petricep merged net: 1 pattern,"
    )
