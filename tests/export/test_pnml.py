"""PNML through snakes: what ``to_pnml`` writes loads back into a snakes net with the
diagram's places, transitions and arcs (and the arcs' kinds)."""

from __future__ import annotations

from pathlib import Path

import pytest
import snakes.nets as sn
import snakes.pnml

from petricep.api import compile_files, compile_text
from petricep.export import build_diagram, to_pnml
from petricep.export.model import ARC_EVENT, ARC_INHIBIT, ARC_STATE, PLACES, Diagram
from tests.export.helpers import NETS, SHARED, overlapping_seq_patterns


def expected(d: Diagram) -> set[tuple[str, str, str]]:
    out = set()
    for a in d.arcs:
        if a.kind == ARC_EVENT:
            kind = "read"
        elif a.kind == ARC_STATE:
            kind = "read" if a.read else "consume"
        elif a.kind == ARC_INHIBIT:
            kind = "inhibit"
        else:
            kind = "produce"
        out.add((a.src, a.dst, kind))
    return out


def _kinds(label: sn.ArcAnnotation) -> list[str]:
    if isinstance(label, sn.MultiArc):
        return [k for c in label for k in _kinds(c)]
    if isinstance(label, sn.Inhibitor):
        return ["inhibit"]
    if isinstance(label, sn.Test):
        return ["read"]
    return ["consume"]


def loaded_arcs(pn: sn.PetriNet) -> set[tuple[str, str, str]]:
    out = set()
    for t in pn.transition():
        for place, label in t.input():
            out |= {(place.name, t.name, k) for k in _kinds(label)}
        for place, _label in t.output():
            out.add((t.name, place.name, "produce"))
    return out


def round_trip(text: str, d: Diagram) -> sn.PetriNet:
    pn = snakes.pnml.loads(text)
    assert {p.name for p in pn.place()} == {n.id for n in d.nodes if n.kind in PLACES}
    assert {t.name for t in pn.transition()} == {n.id for n in d.nodes if n.kind not in PLACES}
    assert loaded_arcs(pn) == expected(d)
    return pn


@pytest.mark.parametrize("path", NETS, ids=[p.name for p in NETS])
@pytest.mark.parametrize("merged", [True, False], ids=["merged", "separate"])
def test_every_shipped_net_round_trips(path: Path, merged: bool) -> None:
    net = compile_files([path])
    round_trip(to_pnml(net, merged), build_diagram(net, merged))


def test_inscriptions_and_guards() -> None:
    net = compile_text(SHARED)
    pn = round_trip(to_pnml(net), build_diagram(net))
    t1 = pn.transition("g0.t1")  # B b after A a/x, guard b.x > a.x
    assert str(t1.guard) == "(b.x > a.x)"
    inputs = {p.name: label for p, label in t1.input()}
    assert inputs["in.B"] == sn.Test(sn.Variable("b"))
    assert inputs["g0.p1"] == sn.Test(sn.Tuple([sn.Variable("a_x")]))  # merged name a/x
    ((place, out),) = t1.output()
    assert place.name == "g0.p2" and out == sn.Tuple([sn.Variable("a"), sn.Variable("b")])
    # the Kleene loop appends its element to the list
    loop = pn.transition("g0.t8")
    ((_, grown),) = loop.output()
    assert str(grown) == "(a, b + (b_i,))"
    assert str(loop.guard) == "(b[i].x > b[i-1].x)"
    # the negation: an inhibitor arc carrying its condition
    (inh,) = [label for p, label in pn.transition("g0.t6").input() if p.name == "in.E"]
    assert inh == sn.Inhibitor(sn.Variable("e"), sn.Expression("(e.y == 1)"))


def test_event_and_negation_of_one_type_share_a_multiarc() -> None:
    net = compile_text("PATTERN q: SEQ(A a, !(B n), B b) WHERE n.v > 3 WITHIN 5")
    d = build_diagram(net)
    pn = round_trip(to_pnml(net), d)
    (label,) = [label for p, label in pn.transition("g0.t1").input() if p.name == "in.B"]
    assert isinstance(label, sn.MultiArc)


def test_skip_till_next_match_consumes_partial_matches() -> None:
    net = compile_files([p for p in NETS if p.name == "sase_equal_price.pcep"])
    d = build_diagram(net)
    assert {a.read for a in d.arcs if a.kind == ARC_STATE and not a.dst.startswith("emit.")} == {False}
    round_trip(to_pnml(net), d)


def test_fifty_patterns_round_trip() -> None:
    net = compile_text(overlapping_seq_patterns(50))
    round_trip(to_pnml(net), build_diagram(net))


def test_names_snakes_refuses_are_renamed_deterministically(tmp_path: Path) -> None:
    """Issue 15: a variable named ``__import__`` made ``draw -o x.pnml`` fail with
    ``ValueError: not a variable name``; snakes wants a letter first."""
    from petricep.cli import main
    from petricep.export.model import py_ident

    assert [py_ident(n) for n in ("__import__", "_x", "a/x", "class", "x", "b2")] == [
        "v__import__",
        "v_x",
        "a_x",
        "class_",
        "x",
        "b2",
    ]
    text = "PATTERN q: SEQ(A __import__, B _b) WHERE _b.x > __import__.x WITHIN 5"
    net = compile_text(text)
    pn = round_trip(to_pnml(net), build_diagram(net))
    t1 = pn.transition("g0.t1")
    assert str(t1.guard) == "(v_b.x > v__import__.x)"
    assert {p.name: label for p, label in t1.input()}["g0.p1"] == sn.Test(sn.Tuple([sn.Variable("v__import__")]))
    src = tmp_path / "imp.pcep"
    src.write_text(text + "\n")
    out = tmp_path / "x.pnml"
    assert main(["draw", str(src), "-o", str(out)]) == 0
    assert snakes.pnml.loads(out.read_text()).transition("g0.t1").guard == t1.guard
