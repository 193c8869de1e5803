"""The stages import one way: errors/events < lang < compile < merge < runtime/kernel <
io/export/archive < api/spark/cli. Read from the source (nothing is imported): every import of
a petricep module, at any depth (inside functions too), except under ``if TYPE_CHECKING``."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "petricep"
STAGES = [
    {"errors", "events"},
    {"lang"},
    {"compile"},
    {"merge"},
    {"runtime", "kernel"},
    {"io", "export", "archive"},
    {"api", "spark", "cli", "__main__", "tools", "frames"},
]
# no import cycle is allowed anywhere in the package
KNOWN_CYCLES: set[frozenset[str]] = set()


def stage_of(mod: str) -> int:
    parts = mod.split(".")
    top = parts[1] if len(parts) > 1 else ""
    if top == "runtime" and len(parts) > 2 and parts[2] == "kernel":
        top = "kernel"
    return next((i for i, names in enumerate(STAGES) if top in names), len(STAGES) - 1)


def modules() -> dict[str, Path]:
    out = {}
    for p in PACKAGE.rglob("*.py"):
        name = ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = p
    return out


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the petricep modules it imports."""
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        pkg = m if p.name == "__init__.py" else m.rsplit(".", 1)[0]
        tree = ast.parse(p.read_text(encoding="utf-8"), str(p))
        typing_only = {
            id(n)
            for blk in ast.walk(tree)
            if isinstance(blk, ast.If) and "TYPE_CHECKING" in ast.unparse(blk.test)
            for stmt in blk.body
            for n in ast.walk(stmt)
        }
        for node in ast.walk(tree):
            targets: list[str] = []
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                while t and t not in mods:
                    t = t.rsplit(".", 1)[0] if "." in t else ""
                if t and t != m and not m.startswith(t + "."):
                    edges[m].add(t)
    return edges


def cycles(edges: dict[str, set[str]]) -> set[frozenset[str]]:
    """Strongly connected components of more than one module (iterative reachability)."""

    def reach(start: str) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for w in edges[todo.pop()]:
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return seen

    reached = {m: reach(m) for m in edges}
    return {frozenset(w for w in reached[m] if m in reached[w]) for m in edges} - {frozenset({m}) for m in edges}


def test_no_import_from_a_later_stage() -> None:
    edges = imports(modules())
    back = sorted(f"{m} -> {t}" for m, ts in edges.items() for t in ts if stage_of(t) > stage_of(m))
    assert back == []


def test_no_new_import_cycle() -> None:
    found = cycles(imports(modules()))
    assert found - KNOWN_CYCLES == set(), sorted(sorted(c) for c in found - KNOWN_CYCLES)


def test_the_front_end_has_no_cycle_and_the_checker_sees_cycles() -> None:
    edges = imports(modules())
    front = {m for m in edges if stage_of(m) <= 3}
    assert all(not (c & front) for c in cycles(edges))
    # the detector itself: a made-up cycle and a back-import are found
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == {frozenset({"a", "b"})}
    assert stage_of("petricep.lang.check") < stage_of("petricep.compile.net") < stage_of("petricep.merge")
    assert stage_of("petricep.runtime.kernel.x") == stage_of("petricep.runtime.engine")
