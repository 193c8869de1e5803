"""``petricep plot``: a match timeline (matches per pattern over time, and per key) from the
JSON Lines ``petricep run`` writes, drawn by :mod:`petricep.export.timeline`.

matplotlib is optional (the ``plot`` extra): without it the command says how to install it
and exits with 2, as a command that cannot run here at all. The image is written beside its
target and renamed into place (:class:`petricep.output.files.OutputPath`), like every output.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import IO, Any

from petricep.api import load_patterns, net_of
from petricep.errors import ConfigError, OutputError
from petricep.export.timeline import FORMATS, PlotUnavailable, timeline_figure
from petricep.output.files import OutputPath, check_outputs

from .inputs import add_lang_option

EXIT_UNAVAILABLE = PlotUnavailable.exit_code  # matplotlib is missing: the command cannot run in this installation


def add_parser(sub: Any) -> None:
    plot = sub.add_parser("plot", help="draw a match timeline (needs matplotlib: pip install 'petricep[plot]')")
    plot.add_argument("matches", metavar="MATCHES.jsonl", help="matches as petricep run writes them (JSON Lines)")
    plot.add_argument("-o", "--output", required=True, metavar="OUT", help="timeline.png, .svg or .pdf")
    plot.add_argument("--key", metavar="F", help="a panel of the keys with most matches (a match field or RETURN field)")
    plot.add_argument("--top-keys", type=int, default=25, metavar="N", help="rows of the key panel (default 25)")
    plot.add_argument("--title", metavar="TEXT", help="the figure's title (default: how many matches of what)")
    plot.add_argument(
        "--net",
        nargs="+",
        metavar="PATTERN_FILE",
        help="the run's pattern files: every pattern in draw's colour also when some had no match "
        "(without it, the patterns that matched get draw's colours when all of them did)",
    )
    add_lang_option(plot)


def cmd_plot(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    check_outputs({"-o": args.output}, {"the matches file": [args.matches], "a pattern file": args.net or []})
    suffix = Path(args.output).suffix.lower()
    if suffix not in FORMATS:
        raise ConfigError(f"cannot tell the image format from {args.output!r}: end it in {', '.join(FORMATS)}")
    names = None
    if args.net:
        net = net_of(load_patterns(args.net, args.lang))
        names = [p.name for p in net.patterns] + [rn.name for rn in net.rows]
    try:
        fig = timeline_figure(args.matches, key=args.key, patterns=names, top_keys=args.top_keys, title=args.title)
    except PlotUnavailable as exc:
        err.write(f"{exc}\n")
        return EXIT_UNAVAILABLE
    target = OutputPath(args.output)
    try:
        fig.savefig(target.temp, format=suffix[1:], dpi=100)
    except OSError as exc:
        target.discard()
        raise OutputError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    target.commit()
    out.write(f"{args.output}: the match timeline of {args.matches}" + (f", per {args.key}" if args.key else "") + "\n")
    return 0


__all__ = ["EXIT_UNAVAILABLE", "add_parser", "cmd_plot"]
