"""One pattern's view of the shared net (``draw --pattern NAME``) and a run's marking on
the net (``draw --stats run.json``): the nodes kept, the colours for given counts, the
scales in the legend, the errors."""

from __future__ import annotations

import pytest

from petricep.api import compile_files, compile_text
from petricep.errors import ConfigError
from petricep.export import build_diagram, to_dot
from petricep.export.dot import SHARED_PENWIDTH, to_png
from petricep.export.views import (
    SEQUENTIAL,
    ZERO_FILL,
    Marking,
    heat,
    level,
    level_bounds,
    marking_from_stats,
    pattern_view,
    scale,
)
from tests.export.dotparse import parse, text_of
from tests.export.helpers import ROOT, SHARED, needs_dot

SHOPLIFTING = ROOT / "nets" / "shoplifting.pcep"


# ----------------------------------------------------------------------------- one pattern


def test_one_patterns_view_keeps_its_nodes_and_says_what_is_shared() -> None:
    d = pattern_view(build_diagram(compile_text(SHARED)), "p2")
    assert {n.id: n.label[-1] for n in d.nodes} == {
        "in.A": "A",
        "in.B": "B",
        "in.D": "D",
        "g0.t0": "shared with p1, p3, p5",
        "g0.p1": "shared with p1, p3, p5",
        "g0.t1": "shared with p1",
        "g0.p2": "shared with p1",
        "g0.t3": "within 20",
        "g0.p4": "a:A b:B d:D",
        "emit.p2": "within 20",
        "out.p2": "p2",
    }
    assert sorted((a.src, a.dst) for a in d.arcs) == [
        ("emit.p2", "out.p2"),
        ("g0.p1", "g0.t1"),
        ("g0.p2", "g0.t3"),
        ("g0.p4", "emit.p2"),
        ("g0.t0", "g0.p1"),
        ("g0.t1", "g0.p2"),
        ("g0.t3", "g0.p4"),
        ("in.A", "g0.t0"),
        ("in.B", "g0.t1"),
        ("in.D", "g0.t3"),
    ]
    assert [c.id for c in d.clusters] == ["g0.1"]  # p4's cluster is left out with p4
    assert [e.pattern for e in d.legend] == ["p1", "p2", "p3", "p5"]  # the colours of its shared nodes
    assert d.focus == "p2"


def test_one_patterns_view_as_dot() -> None:
    net = compile_text(SHARED)
    g = parse(to_dot(net, pattern="p4"))
    nodes = g.all_nodes()
    assert set(nodes) == {"in.A", "in.D", "in.E", "g0.t5", "g0.p6", "g0.t6", "g0.p7", "emit.p4", "out.p4"}
    assert text_of(g.attrs["label"]).startswith(
        "petricep merged net: pattern p4, 3 input places, 2 state places, 2 transitions\n"
    )
    # nothing of p4 is shared: no bold outline; its negation stays
    assert not any("penwidth" in a for a in nodes.values())
    assert [(s, t, a["style"]) for s, t, a in g.all_edges() if a.get("class") == "inhibit"] == [
        ("in.E", "g0.t6", "dashed")
    ]
    shared = parse(to_dot(net, pattern="p3")).all_nodes()
    assert shared["g0.p1"]["penwidth"] == SHARED_PENWIDTH
    assert text_of(parse(to_dot(net, pattern="p3")).attrs["label"]).startswith(
        "petricep merged net: pattern p3 (sharing with p1, p2, p5), 2 input places"
    )


def test_one_patterns_view_of_all_shipped_nets_is_only_it() -> None:
    net = compile_files(sorted((ROOT / "nets").glob("*.pcep")))
    d = pattern_view(build_diagram(net), "lasting_jam")
    assert sorted((n.id, n.label[0]) for n in d.nodes) == [
        ("emit.lasting_jam", "emit lasting_jam"),
        ("g8.p1", "first"),
        ("g8.p2", "first;second"),
        ("g8.t0", "Congestion first"),
        ("g8.t1", "Congestion second"),
        ("in.Congestion", "Congestion"),
        ("in.traffic", "traffic"),  # its negation !(traffic free)
        ("out.lasting_jam", "lasting_jam"),
    ]
    assert [c.label for c in d.clusters] == [("lasting_jam", "[REPORT_ID] skip-till-any-match")]
    # the pattern's own summary on one line (a legend of many patterns wraps them at 90 characters)
    summary = "SEQ(Congestion first, !(traffic free), Congestion second) [REPORT_ID] where free.avgSpeed > 60 within 1 h"
    assert f"lasting_jam {summary}\n" in text_of(parse(to_dot(net, pattern="lasting_jam")).attrs["label"])
    assert f"lasting_jam {summary[:89]}\n{summary[90:]}\n" in text_of(parse(to_dot(net)).attrs["label"])


def test_unknown_pattern_names_the_known_ones() -> None:
    with pytest.raises(ConfigError) as err:
        to_dot(compile_files([SHOPLIFTING]), pattern="theft")
    assert str(err.value) == "no pattern named 'theft' in the net; its patterns: shoplifting, repeat_theft"


# ----------------------------------------------------------------------------- a run's marking


def test_log_scale_steps() -> None:
    assert [level(c, 100) for c in (0, 1, 2, 3, 5, 8, 13, 22, 36, 60, 100)] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9]
    assert level(7, 7) == 9 and level(1, 1) == 9 and level(3, 0) == 0
    for top in (1, 2, 7, 10, 99, 1000, 54321):
        covered: list[int] = []
        for step in range(1, 10):
            bounds = level_bounds(step, top)
            if bounds is not None:
                covered += range(bounds[0], bounds[1] + 1)
                assert {level(c, top) for c in range(bounds[0], bounds[1] + 1)} == {step}
        assert covered == list(range(1, top + 1))  # every count on exactly one step, in order
    assert scale(100)[-1] == (SEQUENTIAL[8], "60-100") and scale(100)[0] == (SEQUENTIAL[0], "1")


def shoplifting_marking(measure: str = "peak") -> Marking:
    return Marking(
        places={"g0.p1": (1000, 100), "g0.p2": (10, 1), "g1.p1": (0, 0)},
        transitions={"g0.t0": 5000, "g0.t1": 50, "emit.shoplifting": 7},
        measure=measure,
    )


def test_marking_colours_for_given_counts() -> None:
    d = build_diagram(compile_files([SHOPLIFTING]))
    h = heat(d, shoplifting_marking())
    assert (h.place_top, h.transition_top) == (100, 5000)
    assert h.fill == {
        "g0.p1": SEQUENTIAL[8],  # peak 100 of 100
        "g0.p2": SEQUENTIAL[0],  # peak 1
        "g1.p1": ZERO_FILL,  # never reached
        "g1.p2": ZERO_FILL,  # not in the statistics: never reached
        "g0.t0": SEQUENTIAL[8],
        "g0.t1": SEQUENTIAL[4],  # 50 of 5000: ceil(9 * log 50 / log 5000) = 5
        "emit.shoplifting": SEQUENTIAL[2],  # 7: ceil(2.06) = 3
        "g1.t0": ZERO_FILL,
        "g1.t1": ZERO_FILL,
        "emit.repeat_theft": ZERO_FILL,
    }
    assert h.font["g0.p1"] == "#ffffff" and h.font["g0.p2"] == "#000000"
    created = heat(d, shoplifting_marking("created"))
    assert created.place_top == 1000
    assert (created.fill["g0.p1"], created.fill["g0.p2"]) == (SEQUENTIAL[8], SEQUENTIAL[2])  # 10 of 1000: 3


def test_marking_in_dot() -> None:
    net = compile_files([SHOPLIFTING])
    g = parse(to_dot(net, marking=shoplifting_marking()))
    nodes = g.all_nodes()
    assert nodes["g0.p1"]["fillcolor"] == SEQUENTIAL[8] and nodes["g0.p1"]["style"] == "filled"
    assert nodes["g0.p1"]["label"] == '<<font color="#ffffff"><b>x</b></font>>'
    assert text_of(nodes["g0.p1"]["xlabel"]) == "x:SHELF_READING\ncreated 1,000, peak 100"
    assert text_of(nodes["g0.t1"]["label"]) == "EXIT_READING z\nwithin 12 h\nfired 50"
    assert nodes["emit.shoplifting"]["style"] == "filled,rounded"
    assert text_of(nodes["g1.t0"]["label"]).endswith("\nfired 0") and nodes["g1.t0"]["fillcolor"] == ZERO_FILL
    legend = text_of(g.attrs["label"])
    assert "state places: partial matches alive at their peak\n0\n1\n2\n3-4\n5-7\n8-12\n13-21\n22-35\n36-59\n60-100" in legend
    assert "transitions and emissions: firings\n0\n1-2\n3-6\n7-17\n18-44\n45-113\n114-292\n293-753\n754-1,940\n1,941-5,000" in legend
    # a view with a marking: the whole net's scale, the view's nodes
    view = parse(to_dot(net, pattern="shoplifting", marking=shoplifting_marking())).all_nodes()
    assert view["g0.t1"]["fillcolor"] == SEQUENTIAL[4] and "g1.t0" not in view


def test_marking_of_shared_nodes_replaces_the_pattern_colours() -> None:
    net = compile_text(SHARED)
    nodes = parse(to_dot(net, marking=Marking({"g0.p1": (4, 4)}, {"g0.t1": 3}))).all_nodes()
    assert nodes["g0.p1"]["style"] == "filled" and nodes["g0.p1"]["fillcolor"] == SEQUENTIAL[8]
    assert nodes["g0.p1"]["penwidth"] == SHARED_PENWIDTH  # still marked as shared
    assert "<table" not in nodes["g0.t1"]["label"]  # no band of pattern colours
    assert text_of(nodes["g0.t1"]["label"]) == "B b\nb.x > a.x\nwithin 10 (p1), 20 (p2)\nfired 3"


def test_marking_from_stats_and_its_errors() -> None:
    report = {
        "events": {"read": 3},
        "net": {
            "places": {"g0.p1": {"created": 1000, "peak": 100}, "g0.p2": {"created": 10, "peak": 1}},
            "transitions": {"g0.t0": 5000},
        },
    }
    m = marking_from_stats(report, measure="created")
    assert m == Marking({"g0.p1": (1000, 100), "g0.p2": (10, 1)}, {"g0.t0": 5000}, "created")
    with pytest.raises(ConfigError) as err:
        marking_from_stats({"events": {"read": 3}})
    assert str(err.value) == (
        "the run's statistics have no per-place and per-transition counts (a \"net\" section with "
        "\"places\" and \"transitions\"): write them with a petricep that records them (--stats FILE)"
    )
    with pytest.raises(ConfigError) as err:
        marking_from_stats({"net": {"places": {"g0.p1": {"created": 3}}, "transitions": {}}})
    assert str(err.value) == "the run's statistics have a malformed \"net\" section: 'peak'"
    with pytest.raises(ConfigError) as err:
        Marking({}, {}, measure="alive")
    assert str(err.value) == "unknown place measure 'alive' (use peak or created)"
    net = compile_files([SHOPLIFTING])
    with pytest.raises(ConfigError) as err:
        to_dot(net, marking=Marking({"g0.t0": (1, 1), "g9.p1": (1, 1)}, {"g0.p1": 3}))
    assert str(err.value) == (
        "the run's statistics do not fit this net: it has no such place or transition: g0.p1, g0.t0, g9.p1"
    )


@needs_dot
def test_marking_renders() -> None:
    png = to_png(compile_files([SHOPLIFTING]), marking=shoplifting_marking(), pattern="shoplifting")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_stats_section_from_engine_indices_round_trips() -> None:
    """What the engine writes as ``"net"`` (from its group/place/transition indices) is
    what ``draw --stats`` reads: the ids are the merged diagram's."""
    from petricep.export.views import stats_section

    net = compile_files([SHOPLIFTING])
    d = build_diagram(net)
    section = stats_section(
        d,
        places={(0, 0): (9, 9), (0, 1): (1000, 100), (0, 2): (10, 1)},  # place 0: the start, not drawn
        transitions={(0, 0): 5000, (0, 1): 50},
        matches={"shoplifting": 7, "repeat_theft": 0},
    )
    assert section == {
        "places": {"g0.p1": {"created": 1000, "peak": 100}, "g0.p2": {"created": 10, "peak": 1}},
        "transitions": {"g0.t0": 5000, "g0.t1": 50, "emit.shoplifting": 7, "emit.repeat_theft": 0},
    }
    marking = marking_from_stats({"net": section})
    assert heat(d, marking).fill["emit.shoplifting"] == SEQUENTIAL[2]
    ors = build_diagram(compile_text("PATTERN q: SEQ(A a, OR(B b, C c)) WITHIN 5"))
    assert stats_section(ors, {}, {}, {"q": 4})["transitions"] == {"emit.q.1": 4}


def test_a_sql_querys_view() -> None:
    net = compile_files([ROOT / "nets" / "stock_v_shape.sql", SHOPLIFTING])
    d = pattern_view(build_diagram(net), "v_shape")
    ids = sorted(n.id for n in d.nodes)
    assert ids[:4] == ["emit.v_shape.1", "emit.v_shape.2", "in.stock", "out.v_shape"]
    assert all(i.startswith("r0.") for i in ids[4:]) and len(ids) == 17
    assert [e.pattern for e in d.legend] == ["v_shape"]
