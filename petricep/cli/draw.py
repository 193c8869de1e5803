"""``petricep draw``: the net as DOT or PNML (pure text), SVG or PNG (Graphviz's dot)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import IO, Any

from petricep.api import load_patterns, net_of
from petricep.errors import ConfigError, DataError
from petricep.export import FORMATS, build_diagram, export
from petricep.export.views import PLACE_MEASURES, Marking, marking_from_stats, pattern_view
from petricep.output.files import check_outputs, write_bytes

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
    draw.add_argument(
        "--stats",
        metavar="RUN.json",
        help="colour the net by a run's marking, from that run's --stats file: places by partial matches, "
        "transitions by firings",
    )
    draw.add_argument(
        "--measure",
        choices=PLACE_MEASURES,
        default="peak",
        help="with --stats: colour places by the peak of alive partial matches (default) or by those created",
    )


def cmd_draw(args: argparse.Namespace, out: IO[str]) -> int:
    fmt = Path(args.output).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ConfigError(
            f"cannot tell the diagram format from {args.output!r}: end it in {', '.join('.' + f for f in FORMATS)}"
        )
    check_outputs({"-o": args.output}, {"a pattern file": args.patterns})
    net = net_of(load_patterns(args.patterns, args.lang))
    marking = _marking(args)
    d = build_diagram(net, merged=not args.separate)
    n = len(net.patterns) + len(net.rows)
    what = f"{n} pattern{'s' if n != 1 else ''}"
    if args.pattern is not None:
        d = pattern_view(d, args.pattern)  # an unknown name: the error lists the patterns
        what += f", pattern {args.pattern!r} only:"
    write_bytes(args.output, export(net, fmt, merged=not args.separate, pattern=args.pattern, marking=marking))
    count = {k: sum(1 for n in d.nodes if n.kind == k) for k in ("input", "state", "transition")}
    out.write(
        f"{args.output}: {d.title} of {what}{'' if args.pattern else ','} {count['input']} input places, "
        f"{count['state']} state places, {count['transition']} transitions\n"
    )
    return 0


def _marking(args: argparse.Namespace) -> Marking | None:
    """The marking in ``--stats`` (a run of the merged net: not with ``--separate``)."""
    if args.stats is None:
        return None
    if args.separate:
        raise ConfigError("--stats colours the merged net a run executed: leave out --separate")
    try:
        with open(args.stats, encoding="utf-8") as fh:
            report = json.load(fh)
    except OSError as exc:
        raise DataError(f"cannot read {args.stats}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{args.stats}:{exc.lineno}: not a statistics file (invalid JSON: {exc.msg})") from None
    if not isinstance(report, dict):
        raise DataError(f"{args.stats}: not a statistics file (a JSON object is expected)")
    return marking_from_stats(report, args.measure)


__all__ = ["add_parser", "cmd_draw"]
