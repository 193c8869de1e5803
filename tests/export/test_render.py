"""SVG and PNG through Graphviz's dot, the CLI's ``draw``, and notebooks' ``_repr_svg_``.

Tests that render need ``dot`` and skip without it (``.ci/run`` installs it); the
behaviour without ``dot`` is tested by emptying PATH."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from petricep.api import compile_files, compile_text
from petricep.cli import main
from petricep.errors import ConfigError
from petricep.export import build_diagram, export, net_svg, to_png, to_svg
from tests.export.dotparse import parse
from tests.export.helpers import NETS, ROOT, SHARED, needs_dot, overlapping_seq_patterns

SVG = "{http://www.w3.org/2000/svg}"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def svg_nodes(svg: str) -> dict[str, set[str]]:
    """Node title -> its SVG classes (dot writes ``<g class="node ...">`` per node)."""
    root = ET.fromstring(svg)
    out = {}
    for g in root.iter(f"{SVG}g"):
        classes = set(g.get("class", "").split())
        if "node" in classes:
            title = g.find(f"{SVG}title")
            assert title is not None and title.text
            out[title.text] = classes
    return out


def svg_edges(svg: str) -> int:
    return sum(1 for g in ET.fromstring(svg).iter(f"{SVG}g") if "edge" in g.get("class", "").split())


@needs_dot
@pytest.mark.parametrize("path", NETS, ids=[p.name for p in NETS])
@pytest.mark.parametrize("merged", [True, False], ids=["merged", "separate"])
def test_every_shipped_net_renders(path: Path, merged: bool) -> None:
    net = compile_files([path])
    d = build_diagram(net, merged)
    svg = to_svg(net, merged)
    nodes = svg_nodes(svg)
    assert set(nodes) == {n.id for n in d.nodes}
    for n in d.nodes:
        assert n.kind in nodes[n.id]
    assert svg_edges(svg) == len(d.arcs)
    assert to_png(net, merged).startswith(PNG_MAGIC)


@needs_dot
def test_shared_nodes_are_marked_in_svg() -> None:
    net = compile_text(SHARED)
    d = build_diagram(net)
    nodes = svg_nodes(to_svg(net))
    assert {k for k, c in nodes.items() if "shared" in c} == {n.id for n in d.nodes if n.shared}


@needs_dot
def test_fifty_overlapping_patterns_render_in_seconds(tmp_path: Path) -> None:
    net = compile_text(overlapping_seq_patterns(50))
    d = build_diagram(net)
    started = time.perf_counter()
    svg = to_svg(net)
    svg_s = time.perf_counter() - started
    started = time.perf_counter()
    png = to_png(net)
    png_s = time.perf_counter() - started
    print(f"50 patterns: {len(d.nodes)} nodes, {len(d.arcs)} arcs; SVG {svg_s:.2f} s, PNG {png_s:.2f} s")
    assert svg_s < 5 and png_s < 5
    assert len(svg_nodes(svg)) == len(d.nodes)
    assert png.startswith(PNG_MAGIC)
    (tmp_path / "fifty.png").write_bytes(png)  # to look at: pytest --basetemp=DIR


def test_without_dot_svg_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    net = compile_text("PATTERN SEQ(A a, B b) WITHIN 5")
    with pytest.raises(ConfigError) as err:
        to_svg(net)
    message = str(err.value)
    assert "Graphviz" in message and "apt-get install graphviz" in message and "-o net.dot" in message
    # DOT and PNML need nothing
    assert export(net, "dot").startswith(b"digraph")
    assert b"<pnml>" in export(net, "pnml")
    # a notebook falls back to the text repr
    assert net_svg(net) is None


@needs_dot
def test_notebook_repr_is_the_merged_diagram() -> None:
    net = compile_text(SHARED)
    svg = net_svg(net)
    assert svg is not None
    assert set(svg_nodes(svg)) == {n.id for n in build_diagram(net).nodes}


# ----------------------------------------------------------------------------- petricep draw


def draw(*args: str) -> int:
    return main(["draw", *args])


def test_cli_draw_dot_and_pnml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(ROOT / "nets" / "shoplifting.pcep"), str(ROOT / "nets" / "aarhus_congestion.pcep")]
    out = tmp_path / "net.dot"
    assert draw(*files, "-o", str(out)) == 0
    net = compile_files(files)
    g = parse(out.read_text())
    assert set(g.all_nodes()) == {n.id for n in build_diagram(net).nodes}
    assert capsys.readouterr().out == (
        f"{out}: merged net of 4 patterns, 6 input places, 9 state places, 9 transitions\n"
    )
    sep = tmp_path / "sep.dot"
    assert draw(*files, "-o", str(sep), "--separate") == 0
    g = parse(sep.read_text())
    assert {k for k in g.subgraphs if k.startswith("cluster_")} == {
        "cluster_shoplifting",
        "cluster_repeat_theft",
        "cluster_congestion",
        "cluster_lasting_jam",
    }
    assert "separate nets of 4 patterns" in capsys.readouterr().out
    pnml = tmp_path / "net.pnml"
    assert draw(*files, "-o", str(pnml)) == 0
    assert pnml.read_text().startswith("<?xml")


@needs_dot
def test_cli_draw_svg_and_png(tmp_path: Path) -> None:
    path = str(ROOT / "nets" / "shoplifting.pcep")
    assert draw(path, "-o", str(tmp_path / "n.svg")) == 0
    assert svg_nodes((tmp_path / "n.svg").read_text())
    assert draw(path, "-o", str(tmp_path / "n.PNG")) == 0
    assert (tmp_path / "n.PNG").read_bytes().startswith(PNG_MAGIC)


def test_cli_draw_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(ROOT / "nets" / "shoplifting.pcep")
    assert draw(path, "-o", str(tmp_path / "n.jpg")) == 2
    assert "cannot tell the diagram format from" in capsys.readouterr().err
    assert not (tmp_path / "n.jpg").exists()
    bad = tmp_path / "bad.pcep"
    bad.write_text("PATTERN SEQ(A a, B b) WHERE c.x > 1\n")
    assert draw(str(bad), "-o", str(tmp_path / "n.dot")) == 2
    assert "unknown variable 'c'" in capsys.readouterr().err
    monkeypatch.setenv("PATH", "")
    assert draw(path, "-o", str(tmp_path / "n.svg")) == 1  # Graphviz missing: the installation's problem
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "apt-get install graphviz" in err and "-o net.dot" in err
    with pytest.raises(SystemExit) as exit_:
        main(["draw", path])  # -o is required
    assert exit_.value.code == 2


def test_compiling_and_running_do_not_import_graphviz() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from petricep.api import compile_text; from petricep.runtime import Engine; "
        "Engine(compile_text('PATTERN SEQ(A a, B b)')); "
        "assert 'graphviz' not in sys.modules and 'petricep.export' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
