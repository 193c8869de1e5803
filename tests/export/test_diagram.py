"""The diagram of a net: its nodes, arcs, labels, shared markings and legend — as data
(:func:`build_diagram`) and as DOT text read back by a parser (no Graphviz needed)."""

from __future__ import annotations

import pytest

from petricep.api import compile_files, compile_text
from petricep.export import build_diagram, to_dot
from petricep.export.colors import PATTERN_COLORS
from petricep.export.dot import MANY_FILL, MAX_SPLIT, SHARED_PENWIDTH
from petricep.export.model import (
    ARC_COMPOSITE,
    ARC_EVENT,
    ARC_INHIBIT,
    ARC_PRODUCE,
    ARC_STATE,
    EMIT,
    INPUT,
    OUTPUT,
    STATE,
    TRANSITION,
    Diagram,
)
from tests.export.dotparse import Graph, parse, text_of
from tests.export.helpers import NETS, ROOT, SHARED, overlapping_seq_patterns


def arcs(d: Diagram, kind: str | None = None) -> set[tuple[str, str]]:
    return {(a.src, a.dst) for a in d.arcs if kind is None or a.kind == kind}


def kinds(d: Diagram) -> dict[str, str]:
    return {n.id: n.kind for n in d.nodes}


def dot_of(d_net: object, merged: bool = True) -> Graph:
    return parse(to_dot(d_net, merged))  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- shoplifting, exactly


def test_shoplifting_merged_structure() -> None:
    net = compile_files([ROOT / "nets" / "shoplifting.pcep"])
    d = build_diagram(net)
    assert kinds(d) == {
        "in.COUNTER_READING": INPUT,
        "in.EXIT_READING": INPUT,
        "in.SHELF_READING": INPUT,
        "in.Theft": INPUT,
        "g0.p1": STATE,
        "g0.p2": STATE,
        "g0.t0": TRANSITION,
        "g0.t1": TRANSITION,
        "emit.shoplifting": EMIT,
        "g1.p1": STATE,
        "g1.p2": STATE,
        "g1.t0": TRANSITION,
        "g1.t1": TRANSITION,
        "emit.repeat_theft": EMIT,
        "out.shoplifting": OUTPUT,
        "out.repeat_theft": OUTPUT,
    }
    assert {(a.src, a.dst, a.kind) for a in d.arcs} == {
        # shoplifting: SHELF x (single input), then EXIT z (dual input), blocked by COUNTER
        ("in.SHELF_READING", "g0.t0", ARC_EVENT),
        ("g0.t0", "g0.p1", ARC_PRODUCE),
        ("in.EXIT_READING", "g0.t1", ARC_EVENT),
        ("g0.p1", "g0.t1", ARC_STATE),
        ("g0.t1", "g0.p2", ARC_PRODUCE),
        ("in.COUNTER_READING", "g0.t1", ARC_INHIBIT),
        ("g0.p2", "emit.shoplifting", ARC_STATE),
        ("emit.shoplifting", "out.shoplifting", ARC_PRODUCE),
        # its Theft events feed repeat_theft
        ("emit.shoplifting", "in.Theft", ARC_COMPOSITE),
        ("in.Theft", "g1.t0", ARC_EVENT),
        ("g1.t0", "g1.p1", ARC_PRODUCE),
        ("in.Theft", "g1.t1", ARC_EVENT),
        ("g1.p1", "g1.t1", ARC_STATE),
        ("g1.t1", "g1.p2", ARC_PRODUCE),
        ("g1.p2", "emit.repeat_theft", ARC_STATE),
        ("emit.repeat_theft", "out.repeat_theft", ARC_PRODUCE),
    }
    node = d.node
    assert node("g0.p1").label == ("x", "x:SHELF_READING")
    assert node("g0.p2").label == ("x;z", "x:SHELF_READING z:EXIT_READING")
    assert node("g0.t0").label == ("SHELF_READING x", "within 12 h")
    assert node("g0.t1").label == ("EXIT_READING z", "within 12 h")
    assert node("emit.shoplifting").label[:2] == ("emit shoplifting", "within 12 h")
    assert " ".join(node("emit.shoplifting").label[2:]) == (
        "RETURN Theft(tag = x.tag, shelf_time = x.ts, exit_time = z.ts)"
    )
    assert node("out.shoplifting").label == ("shoplifting", "-> Theft")
    assert node("g1.t1").label == ("Theft t2", "within 1 d")
    (inhibit,) = [a for a in d.arcs if a.kind == ARC_INHIBIT]
    assert inhibit.label == "no COUNTER_READING y"
    # primitive types on the source side; the composite type Theft next to its producer
    assert [n.id for n in d.nodes if n.source_side] == [
        "in.COUNTER_READING",
        "in.EXIT_READING",
        "in.SHELF_READING",
    ]
    # two groups (different partition keys): one cluster each, titled by its one pattern
    assert [(c.id, c.label) for c in d.clusters] == [
        ("g0", ("shoplifting", "[tag] skip-till-any-match")),
        ("g1", ("repeat_theft", "skip-till-any-match")),
    ]
    assert not any(n.shared for n in d.nodes)


def test_shoplifting_dot_text() -> None:
    net = compile_files([ROOT / "nets" / "shoplifting.pcep"])
    d = build_diagram(net)
    g = parse(to_dot(net))
    nodes = g.all_nodes()
    assert set(nodes) == {n.id for n in d.nodes}
    assert {(s, t) for s, t, _ in g.all_edges()} == arcs(d)
    # places are circles (output places double), transitions boxes (emissions rounded)
    shape = {k: v.get("shape") for k, v in nodes.items()}
    assert shape["in.SHELF_READING"] == "circle"
    assert shape["g0.p1"] == "circle"
    assert shape["out.shoplifting"] == "doublecircle"
    assert shape["g0.t1"] == "box"
    assert shape["emit.shoplifting"] == "box" and "rounded" in nodes["emit.shoplifting"]["style"]
    # labels: type names beside input places, configuration inside state places
    assert text_of(nodes["in.SHELF_READING"]["xlabel"]) == "SHELF_READING"
    assert text_of(nodes["g0.p2"]["label"]) == "x;z"
    assert text_of(nodes["g0.p2"]["xlabel"]) == "x:SHELF_READING z:EXIT_READING"
    assert text_of(nodes["g0.t1"]["label"]) == "EXIT_READING z\nwithin 12 h"
    assert text_of(nodes["out.shoplifting"]["xlabel"]) == "shoplifting\n-> Theft"
    # no rank constraints (each place stands beside its transitions: compact); inputs first
    assert not g.subgraphs.keys() - {"cluster_g0", "cluster_g1"}
    assert "rank" not in g.attrs and g.attrs["rankdir"] == "LR"
    assert list(g.nodes)[:4] == ["in.COUNTER_READING", "in.EXIT_READING", "in.SHELF_READING", "in.Theft"]
    # cluster titles left-justified, line by line
    assert g.subgraphs["cluster_g0"].attrs["label"] == "shoplifting\n[tag] skip-till-any-match\n"
    assert g.subgraphs["cluster_g0"].attrs["labeljust"] == "l"
    assert 'label="shoplifting\\l[tag] skip-till-any-match\\l"' in to_dot(net)
    # the inhibitor arc: dashed with a circle head; the composite arc dotted
    edge = {(s, t): a for s, t, a in g.all_edges()}
    assert edge["in.COUNTER_READING", "g0.t1"]["style"] == "dashed"
    assert edge["in.COUNTER_READING", "g0.t1"]["arrowhead"] == "odot"
    assert edge["in.COUNTER_READING", "g0.t1"]["label"] == "no COUNTER_READING y"
    assert edge["emit.shoplifting", "in.Theft"]["style"] == "dotted"
    assert "style" not in edge["in.EXIT_READING", "g0.t1"]
    # one cluster per shared net, holding its places and transitions
    assert g.subgraph_of("g0.t1") == ["cluster_g0"]
    assert g.subgraph_of("emit.repeat_theft") == ["cluster_g1"]
    # fill colours: each node its pattern's colour, ranked by name (repeat_theft first)
    assert nodes["g0.t1"]["fillcolor"] == d.color("shoplifting") == PATTERN_COLORS[1]
    assert nodes["g1.p1"]["fillcolor"] == d.color("repeat_theft") == PATTERN_COLORS[0]
    assert "penwidth" not in nodes["g0.t1"]


def test_legend() -> None:
    net = compile_files([ROOT / "nets" / "shoplifting.pcep"])
    d = build_diagram(net)
    assert [(e.pattern, e.color, e.text) for e in d.legend] == [
        (
            "shoplifting",
            PATTERN_COLORS[1],
            "SEQ(SHELF_READING x, !(COUNTER_READING y), EXIT_READING z) [tag] within 12 h -> Theft",
        ),
        ("repeat_theft", PATTERN_COLORS[0], "SEQ(Theft t1, Theft t2) within 1 d"),
    ]
    g = parse(to_dot(net))
    legend = g.attrs["label"]  # the graph's label: it takes no column of the layout
    assert text_of(legend).startswith("petricep merged net: 2 patterns, 4 input places, 4 state places")
    for e in d.legend:
        assert f'<font color="{e.color}">\u2588\u2588</font> <b>{e.pattern}</b>' in legend
    text = text_of(legend)
    assert "shoplifting" in text and "repeat_theft" in text
    assert "SEQ(Theft t1, Theft t2) within 1 d" in text
    assert "negation (inhibitor arc)" in text


# ----------------------------------------------------------------------------- sharing


def test_shared_nodes_are_marked_and_coloured_by_their_users() -> None:
    net = compile_text(SHARED)
    d = build_diagram(net)
    shared = {n.id: n.users for n in d.nodes if n.shared}
    assert shared == {
        "g0.p1": ("p1", "p2", "p3", "p5"),  # A a: front combination of four patterns
        "g0.t0": ("p1", "p2", "p3", "p5"),
        "g0.p2": ("p1", "p2"),  # a;b with the same guard b.x > a.x
        "g0.t1": ("p1", "p2"),
        # p5's list b[] has slots of its own from b on (a list never shares a slot with another
        # pattern's event, merge._placed: the kernel keeps one kind per slot), so its a;b+ and
        # a;b+;d are apart from p1's and p2's a;b and a;b;d
    }
    # a shared place is named by every user's variable; a transition's text names them too
    assert d.node("g0.p1").label == ("a", "a/x:A")
    # a shared transition shows every user's window (it keeps the largest; each pattern
    # checks its own), each emission its own
    assert d.node("g0.t0").label == ("A a/x", "within 10 (p1), 20 (p2, p3, p5)")
    assert d.node("g0.t1").label == ("B b", "b.x > a.x", "within 10 (p1), 20 (p2)")
    assert d.node("emit.p1").label == ("emit p1", "within 10")
    # p3's own guard (y.z = 1 stands on the input arc) keeps it apart
    assert d.node("g0.t4").label == ("B y", "y.z = 1", "y.x > x.x", "within 20")
    assert [a.label for a in d.arcs if a.dst == "g0.t4" and a.kind == ARC_EVENT] == ["y.z = 1"]

    g = parse(to_dot(net))
    nodes = g.all_nodes()
    colors = {e.pattern: e.color for e in d.legend}
    for nid, users in shared.items():
        attrs = nodes[nid]
        assert attrs["penwidth"] == SHARED_PENWIDTH
        assert "shared" in attrs["class"]
        if d.node(nid).kind == STATE:
            assert attrs["style"] == "wedged"
            assert attrs["fillcolor"] == ":".join(colors[u] for u in users)
        else:  # a band of the users' colours above the text
            band = attrs["label"].split("</tr>")[0]
            assert [c for c in colors.values() if c in band] == [colors[u] for u in users]
            assert attrs["fillcolor"] == "white"
    for nid, attrs in nodes.items():
        if nid not in shared:
            assert "penwidth" not in attrs
            assert "shared" not in attrs.get("class", "")


def test_names_kleene_negation_and_emission_checks() -> None:
    net = compile_text(SHARED)
    d = build_diagram(net)
    # Kleene: B b[1] starts the list, B+ b[i] loops on its place
    assert d.node("g0.t7").label == ("B b[1]", "b[i].x > b[i-1].x", "within 20")
    assert d.node("g0.t8").label == ("B+ b[i]", "b[i].x > b[i-1].x", "within 20")
    # the list's place is its own (p5's a;b+), the loop on it
    assert {("g0.p8", "g0.t8"), ("g0.t8", "g0.p8"), ("g0.t7", "g0.p8")} <= arcs(d)
    assert d.node("g0.p8").label == ("a;b+", "a:A b[]:B")
    assert d.node("g0.p2").label == ("a;b", "a:A b:B")
    # p4's negation in the middle is pushed into the scan: it inhibits the D transition
    (inh,) = [a for a in d.arcs if a.kind == ARC_INHIBIT]
    assert (inh.src, inh.dst, inh.label) == ("in.E", "g0.t6", "no E e: e.y = 1")
    assert d.node("g0.t6").users == ("p4",)


@pytest.mark.parametrize(
    ("text", "target", "label"),
    [
        ("PATTERN q: SEQ(!(N n), A a, B b) WHERE n.v = a.v WITHIN 5", "emit.q", "no N n: n.v = a.v"),
        (
            "PATTERN q: SEQ(A a, B b, !(N n)) WITHIN 5",
            "emit.q",
            "no N n (until the window closes)",
        ),
    ],
)
def test_negations_checked_at_emission_inhibit_the_emission(text: str, target: str, label: str) -> None:
    d = build_diagram(compile_text(text))
    (inh,) = [a for a in d.arcs if a.kind == ARC_INHIBIT]
    assert (inh.src, inh.dst, inh.label) == ("in.N", target, label)


def test_or_pattern_emits_from_each_branch() -> None:
    d = build_diagram(compile_text("PATTERN q: SEQ(A a, OR(B b, C c)) WITHIN 5"))
    emits = sorted(n.id for n in d.nodes if n.kind == EMIT)
    assert emits == ["emit.q.1", "emit.q.2"]
    assert {("emit.q.1", "out.q"), ("emit.q.2", "out.q")} <= arcs(d, ARC_PRODUCE)


def test_separate_view_has_one_cluster_per_pattern_and_nothing_shared() -> None:
    net = compile_text(SHARED)
    d = build_diagram(net, merged=False)
    assert [c.id for c in d.clusters] == ["p1", "p2", "p3", "p4", "p5"]
    assert not any(n.shared for n in d.nodes)
    states = [n for n in d.nodes if n.kind == STATE]
    assert len(states) == sum(len(p.places) - 1 for p in net.patterns)  # start places are not drawn
    assert len([n for n in d.nodes if n.kind == TRANSITION]) == sum(len(p.transitions) for p in net.patterns)
    for n in d.nodes:
        if n.kind in (STATE, TRANSITION, EMIT):
            assert n.cluster == n.users[0] and len(n.users) == 1
    g = parse(to_dot(net, merged=False))
    for p in net.patterns:
        sub = g.subgraphs[f"cluster_{p.name}"]
        assert sub.attrs["label"].startswith(f"{p.name}: SEQ(")
        assert f"{p.name}.t0" in sub.nodes
    # merged: fewer nodes; a cluster for the patterns that share, titled with what and how,
    # and one for p4, which shares nothing (its negation keeps its A a apart)
    merged = build_diagram(net)
    assert [(c.id, c.label, c.users) for c in merged.clusters] == [
        (
            "g0.1",
            (
                "shared by p1, p2, p3, p5",
                "front combination (same partial matches): a (p1, p2, p3,",
                "p5); a;b (p1, p2)",
                "[k] skip-till-any-match",
            ),
            ("p1", "p2", "p3", "p5"),
        ),
        ("g0.2", ("p4", "[k] skip-till-any-match"), ("p4",)),
    ]
    assert len([n for n in merged.nodes if n.kind == STATE]) < len(states)


def test_merged_counts_match_the_net() -> None:
    net = compile_text(overlapping_seq_patterns(50))
    d = build_diagram(net)
    stats = net.stats()
    assert len([n for n in d.nodes if n.kind == STATE]) == stats["merged_state_places"]
    assert len([n for n in d.nodes if n.kind == TRANSITION]) == stats["merged_transitions"]
    assert len([n for n in d.nodes if n.kind == INPUT]) == stats["input_places"]
    assert len([n for n in d.nodes if n.kind == OUTPUT]) == 50
    assert len(d.legend) == 50
    # a node shared by more patterns than there are colours to split: grey, with the count
    g = parse(to_dot(net))
    nodes = g.all_nodes()
    crowded = [n for n in d.nodes if n.shared and len(n.users) > MAX_SPLIT]
    assert crowded
    for n in crowded:
        assert nodes[n.id]["fillcolor"] == MANY_FILL
        assert f"shared by {len(n.users)} patterns" in text_of(
            nodes[n.id].get("xlabel", nodes[n.id]["label"])
        )


@pytest.mark.parametrize("path", NETS, ids=[p.name for p in NETS])
@pytest.mark.parametrize("merged", [True, False], ids=["merged", "separate"])
def test_every_shipped_net_as_dot(path: object, merged: bool) -> None:
    net = compile_files([path])  # type: ignore[list-item]
    d = build_diagram(net, merged)
    g = parse(to_dot(net, merged))
    nodes = g.all_nodes()
    assert set(nodes) == {n.id for n in d.nodes}
    assert sorted((s, t) for s, t, _ in g.all_edges()) == sorted((a.src, a.dst) for a in d.arcs)
    for n in d.nodes:
        shown = text_of(nodes[n.id].get("label", "")) + "\n" + text_of(nodes[n.id].get("xlabel", ""))
        for line in n.label:
            assert line in shown
    # every pattern has its output place, reached through its emission
    for p in net.patterns:
        assert any(a.dst == f"out.{p.name}" and a.kind == ARC_PRODUCE for a in d.arcs)
    # every transition reads an event; all but first ones also a partial match
    for n in d.nodes:
        if n.kind == TRANSITION:
            assert [a.kind for a in d.arcs if a.dst == n.id and a.kind == ARC_EVENT] == [ARC_EVENT]
