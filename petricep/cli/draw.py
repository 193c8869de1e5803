"""``petricep draw``: the net as DOT or PNML (pure text), SVG or PNG (Graphviz's dot)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import IO, Any

from petricep.api import load_patterns, net_of
from petricep.errors import ConfigError
from petricep.export import FORMATS, build_diagram, export
from petricep.export.views import pattern_view
from petricep.io.output import check_outputs, write_bytes

from .inputs import add_lang_option


def add_parser(sub: Any) -> None:
    draw = sub.add_parser("draw", help="draw the net of pattern files as DOT, SVG, PNG or PNML (format from -o)")
    draw.add_argument("patterns", nargs="+", metavar="PATTERN_FILE")
    add_lang_option(draw)
    draw.add_argument("-o", "--output", required=True, metavar="OUT", help="out.dot, out.svg, out.png or out.pnml")
    draw.add_argument(
        "--separate",
        action="store_true",
        help="every pattern compiled alone, one cluster each (default: the merged net the runtime executes)",
    )
    draw.add_argument(
        "--pattern", metavar="NAME", help="only this pattern's part of the shared net (what it shares says with whom)"
    )


def cmd_draw(args: argparse.Namespace, out: IO[str]) -> int:
    fmt = Path(args.output).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ConfigError(
            f"cannot tell the diagram format from {args.output!r}: end it in {', '.join('.' + f for f in FORMATS)}"
        )
    check_outputs({"-o": args.output}, {"a pattern file": args.patterns})
    net = net_of(load_patterns(args.patterns, args.lang))
    d = build_diagram(net, merged=not args.separate)
    n = len(net.patterns) + len(net.rows)
    what = f"{n} pattern{'s' if n != 1 else ''}"
    if args.pattern is not None:
        d = pattern_view(d, args.pattern)  # an unknown name: the error lists the patterns
        what += f", pattern {args.pattern!r} only:"
    write_bytes(args.output, export(net, fmt, merged=not args.separate, pattern=args.pattern))
    count = {k: sum(1 for n in d.nodes if n.kind == k) for k in ("input", "state", "transition")}
    out.write(
        f"{args.output}: {d.title} of {what}{'' if args.pattern else ','} {count['input']} input places, "
        f"{count['state']} state places, {count['transition']} transitions\n"
    )
    return 0


__all__ = ["add_parser", "cmd_draw"]
