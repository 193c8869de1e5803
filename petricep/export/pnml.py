"""Diagram data -> a snakes coloured Petri net -> PNML (``snakes.pnml``), loadable back.

The net has exactly the diagram's places, transitions and arcs (:mod:`petricep.export.model`);
the inscriptions follow the CEP-PN reading of paper 002:

* an input place ``in:T`` holds events of type T; a transition *reads* the event
  (test arc, variable named after the pattern variable; ``b_i`` for a Kleene element):
  every partial match may use the same event;
* a state place holds tuples of the variables bound so far; under
  skip-till-any-match a transition reads the partial match (test arc: it stays to be
  extended by later events), under the other strategies it consumes it;
* a transition's guard is the conjunction of its arc conditions, guards and iteration
  conditions in Python syntax (windows — token expiry U — are not written into guards);
* a negation is an inhibitor arc from its type's input place, with its conditions;
* an emit transition reads a complete match and puts it into the pattern's output
  place (and, for a RETURN type other patterns read, into that type's input place).

Two arcs between the same place and transition (an event and a negation of the same
type) become one snakes ``MultiArc``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from petricep.compile.net import Net
from petricep.export.model import (
    ARC_EVENT,
    ARC_INHIBIT,
    ARC_STATE,
    PLACES,
    TRANSITION,
    Arc,
    Diagram,
    Node,
    build_diagram,
    py_ident,
)

if TYPE_CHECKING:
    import snakes.nets as sn


def _event_var(t: Node) -> str:
    v = py_ident(t.var)
    return f"{v}_i" if t.kleene else v


def diagram_snakes(d: Diagram, name: str = "petricep") -> sn.PetriNet:
    """The snakes net of a diagram: the same node ids, one arc per diagram arc."""
    import snakes.nets as sn  # loaded only when a net is written as PNML: a run reaches this package (issue 16)

    def tuple_of(names: tuple[str, ...]) -> sn.Tuple:
        return sn.Tuple([sn.Variable(py_ident(n)) for n in names])

    def produced(t: Node, dst: Node) -> sn.Tuple:
        """What an operator transition puts into its output place: the bound variables, the
        new event among them (a Kleene element starts or extends its list)."""
        if t.kind != TRANSITION:  # emission: the complete match as it is
            return tuple_of(t.bound)
        ev = py_ident(t.var)
        parts: list[sn.ArcAnnotation] = []
        for n in dst.bound:
            v = py_ident(n)
            if v == ev and t.kleene == "loop":
                parts.append(sn.Expression(f"{v} + ({v}_i,)"))
            elif v == ev and t.kleene == "first":
                parts.append(sn.Expression(f"({v}_i,)"))
            else:
                parts.append(sn.Variable(v))
        return sn.Tuple(parts)

    def annotation(a: Arc) -> sn.ArcAnnotation:
        src, dst = nodes[a.src], nodes[a.dst]
        if a.kind == ARC_EVENT:
            return sn.Test(sn.Variable(_event_var(dst)))
        if a.kind == ARC_STATE:
            tup = tuple_of(src.bound)
            return sn.Test(tup) if a.read else tup
        if a.kind == ARC_INHIBIT:
            return sn.Inhibitor(sn.Variable(py_ident(a.var or "n")), sn.Expression(a.guard or "True"))
        return produced(src, dst)  # ARC_PRODUCE, ARC_COMPOSITE

    pn = sn.PetriNet(name)
    nodes = {n.id: n for n in d.nodes}
    for n in d.nodes:
        if n.kind in PLACES:
            pn.add_place(sn.Place(n.id, []))
        else:
            pn.add_transition(sn.Transition(n.id, sn.Expression(n.guard or "True")))
    inputs: dict[tuple[str, str], list[sn.ArcAnnotation]] = {}
    outputs: dict[tuple[str, str], list[sn.ArcAnnotation]] = {}
    for a in d.arcs:
        into = inputs if a.kind in (ARC_EVENT, ARC_STATE, ARC_INHIBIT) else outputs
        into.setdefault((a.src, a.dst), []).append(annotation(a))
    for (place, trans), anns in inputs.items():
        pn.add_input(place, trans, anns[0] if len(anns) == 1 else sn.MultiArc(anns))
    for (trans, place), anns in outputs.items():
        pn.add_output(place, trans, anns[0] if len(anns) == 1 else sn.MultiArc(anns))
    return pn


def to_snakes(net: Net, merged: bool = True) -> sn.PetriNet:
    """The net (merged, or every pattern alone) as a snakes ``PetriNet``."""
    return diagram_snakes(build_diagram(net, merged))


def to_pnml(net: Net, merged: bool = True) -> str:
    """PNML text of the net as ``snakes.pnml.dumps`` writes it (``snakes.pnml.loads`` reads it back)."""
    import snakes.pnml  # loaded only when a net is written as PNML (see diagram_snakes)

    return str(snakes.pnml.dumps(to_snakes(net, merged)))
