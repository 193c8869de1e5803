"""SQL row-pattern nets (``MATCH_RECOGNIZE``) as diagram data, beside the pattern nets.

Each query is one cluster: its state places (a token: the rows mapped so far, the last one
to the place's variable), one transition per way a row extends a partial match — labelled
with the variable, its DEFINE and its rank in the place's preference order — and an emission
per place where a match may end, with the query's output, skip mode and measures. Tokens are
coloured by the match so far (``m``); a transition appends the row (``m_i``) to it.
"""

from __future__ import annotations

from petricep.compile.net import Net
from petricep.compile.rows import ACCEPT, RowNet
from petricep.export.model import (
    ARC_EVENT,
    ARC_PRODUCE,
    ARC_STATE,
    EMIT,
    INPUT,
    OUTPUT,
    PALETTE,
    STATE,
    TRANSITION,
    Arc,
    Cluster,
    LegendEntry,
    Node,
    _wrap,
)
from petricep.lang import sql_ast as S

MATCH = ("m",)  # the colour of a row-pattern token: the rows mapped so far


def row_summary(rn: RowNet) -> str:
    q = rn.source
    part = f"PARTITION BY {', '.join(q.partition)} " if q.partition else ""
    return f"MATCH_RECOGNIZE {part}PATTERN ({S.pattern_sql(q.pattern)})"


def add_row_nets(net: Net, first_color: int, nodes: dict[str, Node], arcs: list[Arc], clusters: list[Cluster]) -> list[LegendEntry]:
    """Add every query of ``net`` to the diagram data; returns their legend entries."""
    legend = []
    for k, rn in enumerate(net.rows):
        legend.append(LegendEntry(rn.name, PALETTE[(first_color + k) % len(PALETTE)], row_summary(rn)))
        table = rn.table or "*"
        src = f"in.{table}"
        old = nodes.get(src)
        users = (*old.users, rn.name) if old else (rn.name,)
        nodes[src] = Node(
            src,
            INPUT,
            (table,),
            users=users,
            tooltip=f"input place {table}; read by {', '.join(users)}",
            source_side=True,
        )
        _add_query(rn, src, nodes, arcs, clusters)
    return legend


def _add_query(rn: RowNet, src: str, nodes: dict[str, Node], arcs: list[Arc], clusters: list[Cluster]) -> None:
    q = rn.source
    pre = f"r{rn.index}"
    cluster = f"{pre}.{rn.name}"
    output = "ALL ROWS PER MATCH" if q.all_rows else "ONE ROW PER MATCH"
    skip = f"SKIP {q.skip.mode.upper()}" + (f" {q.skip.var}" if q.skip.var else "")
    clusters.append(Cluster(cluster, tuple(_wrap(f"{rn.name}: {row_summary(rn)}")), (rn.name,)))
    who = (rn.name,)
    for place in rn.places:
        if place.id == rn.start:
            continue
        nodes[f"{pre}.p{place.id}"] = Node(
            f"{pre}.p{place.id}",
            STATE,
            (place.label, f"last row: {place.var}"),
            users=who,
            cluster=cluster,
            tooltip=f"state place {place.label}: partial matches whose last row is mapped to {place.var}",
            bound=MATCH,
        )
    for t in rn.transitions:
        rank = rn.exits[t.src].index(t.id) + 1
        lines = [f"row -> {t.var}", *(_wrap(S.expr_sql(t.guard)) if t.guard is not None else []), f"preference {rank}"]
        tid = f"{pre}.t{t.id}"
        nodes[tid] = Node(
            tid,
            TRANSITION,
            tuple(lines),
            users=who,
            cluster=cluster,
            tooltip=f"a row mapped to {t.var} (tried {rank}. from {rn.places[t.src].label})",
            var="m",
            kleene="first" if t.src == rn.start else "loop",
        )
        arcs.append(Arc(src, tid, ARC_EVENT))
        if t.src != rn.start:
            arcs.append(Arc(f"{pre}.p{t.src}", tid, ARC_STATE, read=False))
        arcs.append(Arc(tid, f"{pre}.p{t.dst}", ARC_PRODUCE))
    ends = [p.id for p in rn.places if ACCEPT in rn.exits[p.id]]
    measures = [f"{m.name} = {S.expr_sql(m.expr)}" for m in q.measures]
    out = f"out.{rn.name}"
    nodes[out] = Node(out, OUTPUT, (rn.name,), users=who, tooltip=f"output place of {rn.name}: its matches", bound=MATCH)
    for n, pid in enumerate(ends, 1):
        eid = f"emit.{rn.name}" if len(ends) == 1 else f"emit.{rn.name}.{n}"
        rank = rn.exits[pid].index(ACCEPT) + 1
        lines = [f"emit {rn.name}", f"preference {rank}", output, skip]
        for m in measures:
            lines += _wrap(m)
        nodes[eid] = Node(
            eid,
            EMIT,
            tuple(lines),
            users=who,
            cluster=cluster,
            tooltip=f"a match of {rn.name} may end here; the start row's preferred match is emitted",
            bound=MATCH,
        )
        arcs.append(Arc(f"{pre}.p{pid}", eid, ARC_STATE, read=False))
        arcs.append(Arc(eid, out, ARC_PRODUCE))
