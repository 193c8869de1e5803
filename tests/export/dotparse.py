"""A small DOT reader for the tests: enough of the language for what the graphviz
package writes (statements, attribute lists, subgraphs, quoted and HTML strings), so
the tests check the exported structure without Graphviz installed."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<arrow>->)
      | (?P<punct>[{}\[\];,=])
      | (?P<quoted>"(?:\\.|[^"\\])*")
      | (?P<html><)
      | (?P<id>[A-Za-z0-9_.#:+\-]+)
    )""",
    re.VERBOSE,
)


@dataclass
class Graph:
    attrs: dict[str, str] = field(default_factory=dict)
    nodes: dict[str, dict[str, str]] = field(default_factory=dict)
    edges: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    subgraphs: dict[str, Graph] = field(default_factory=dict)

    def all_nodes(self) -> dict[str, dict[str, str]]:
        out = dict(self.nodes)
        for s in self.subgraphs.values():
            out.update(s.all_nodes())
        return out

    def all_edges(self) -> list[tuple[str, str, dict[str, str]]]:
        out = list(self.edges)
        for s in self.subgraphs.values():
            out += s.all_edges()
        return out

    def subgraph_of(self, node: str) -> list[str]:
        """Names of the subgraphs (outermost first) that hold ``node``."""
        for name, s in self.subgraphs.items():
            if node in s.nodes:
                return [name]
            inner = s.subgraph_of(node)
            if inner:
                return [name, *inner]
        return []


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i:].strip() == "":
            break
        m = _TOKEN.match(text, i)
        if m is None:
            raise ValueError(f"cannot read DOT at {text[i : i + 40]!r}")
        if m.group("html"):
            start = m.start("html")
            depth, j = 0, start
            while True:
                if text[j] == "<":
                    depth += 1
                elif text[j] == ">":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            out.append(text[start : j + 1])
            i = j + 1
            continue
        out.append(m.group(m.lastgroup or "id"))
        i = m.end()
    return out


def value(token: str) -> str:
    """A DOT ID as its text: quotes removed and unescaped; HTML kept as written."""
    if token.startswith('"'):
        return re.sub(
            r"\\(.)", lambda m: {"n": "\n", "l": "\n", "r": "\n"}.get(m.group(1), m.group(1)), token[1:-1]
        )
    return token


def text_of(label: str) -> str:
    """The visible text of a label: an HTML label's tags dropped, lines (and table cells)
    joined by newlines."""
    if label.startswith("<") and label.endswith(">"):
        body = re.sub(r"<br\s*/?>|</td>", "\n", label[1:-1])  # a table: one line per cell
        text = html.unescape(re.sub(r"<[^>]*>", "", body))
        return re.sub(r"\n+", "\n", text).strip("\n")
    return label


def parse(text: str) -> Graph:
    toks = _tokens(text)
    pos = 0

    def peek() -> str | None:
        return toks[pos] if pos < len(toks) else None

    def take(expected: str | None = None) -> str:
        nonlocal pos
        tok = toks[pos]
        if expected is not None and tok != expected:
            raise ValueError(f"expected {expected!r}, got {tok!r}")
        pos += 1
        return tok

    def attr_list() -> dict[str, str]:
        attrs: dict[str, str] = {}
        while peek() == "[":
            take("[")
            while peek() != "]":
                key = value(take())
                take("=")
                attrs[key] = value(take())
                if peek() in (",", ";"):
                    take()
            take("]")
        return attrs

    def body(g: Graph) -> None:
        take("{")
        while peek() != "}":
            tok = take()
            if tok == ";":
                continue
            if tok in ("node", "edge", "graph") and peek() == "[":
                attr_list()
                continue
            if tok == "subgraph":
                name = value(take()) if peek() != "{" else f"_{len(g.subgraphs)}"
                sub = Graph()
                body(sub)
                g.subgraphs[name] = sub
                continue
            ident = value(tok)
            if peek() == "=":
                take("=")
                g.attrs[ident] = value(take())
                continue
            chain = [ident]
            while peek() == "->":
                take("->")
                chain.append(value(take()))
            attrs = attr_list()
            if len(chain) == 1:
                g.nodes.setdefault(ident, {}).update(attrs)
            else:
                for a, b in zip(chain, chain[1:]):
                    g.edges.append((a, b, attrs))
        take("}")

    kind = take()
    if kind not in ("digraph", "graph"):
        raise ValueError(f"not a graph: {kind!r}")
    if peek() != "{":
        take()
    g = Graph()
    body(g)
    return g
