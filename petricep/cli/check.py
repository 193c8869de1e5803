"""``petricep check``: parse, compile and merge pattern files; print the net and warnings."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import IO, Any

from petricep.api import net_of, sharing_lines, warnings_for
from petricep.compile.net import Net, state_places
from petricep.compile.rows import RowNet
from petricep.errors import PatternError, raise_errors
from petricep.kernel.choice import ARCHIVE, NOT_BUILT, SWITCHED_OFF, Options, check_lines, choose
from petricep.lang import ast as A
from petricep.lang.parser import parse_file

from .inputs import add_lang_option


def add_parser(sub: Any) -> None:
    check = sub.add_parser("check", help="parse, compile and merge pattern files; print the net and warnings")
    check.add_argument("patterns", nargs="+", metavar="PATTERN_FILE")
    add_lang_option(check)


def window_text(w: A.Window | None) -> str:
    """A window as ``check`` prints it: as written in WITHIN (:meth:`Window.text`), or ``none``."""
    return "none" if w is None else w.text()


def row_net_line(rn: RowNet) -> str:
    """``check``'s line for a SQL MATCH_RECOGNIZE query."""
    q = rn.source
    part = ", ".join(q.partition) or "none"
    table = q.table or "every event type"
    rows = "all rows per match" if q.all_rows else "one row per match"
    skip = f"skip {q.skip.mode}" + (f" {q.skip.var}" if q.skip.var else "")
    return (
        f"  {rn.name}: MATCH_RECOGNIZE, {state_places(rn)} state places, {len(rn.transitions)} transitions; "
        f"rows of {table}; window {window_text(q.window)}; partition by {part}; {rows}; {skip}"
    )


def kernel_lines(net: Net) -> list[str]:
    """Whether ``run`` fires this net on the compiled kernel (its default engine), or the
    Python engine and why (decided per net, under the default tie rule; a run may still fall
    back for its options)."""
    if net.history:  # (run --archive: the live part fires alone, the archive join after it)
        choice = choose(replace(net, history=()), Options(bindings=ARCHIVE, archive_order="live-first"))
    else:
        choice = choose(net)
    if choice.why == SWITCHED_OFF:
        return ["kernel: switched off by PETRICEP_NO_KERNEL=1 (the Python engine runs every net)"]
    if choice.why == NOT_BUILT:
        return ["kernel: not built (the Python engine runs every net)"]
    if net.history and choice.kernel:
        return ["kernel: covers the live part of this net (run --archive fires it on the kernel, then joins the archive)"]
    return check_lines(choice)


def read_all(paths: list[str], lang: str | None) -> list[A.PatternFile]:
    """Every pattern file parsed and checked; every error of every file raised together, in
    the order of the files (each file's in its order), so that one run shows every mistake."""
    files: list[A.PatternFile] = []
    errors: list[PatternError] = []
    for path in paths:
        try:
            files.append(parse_file(path, lang))
        except PatternError as e:
            errors.append(e)
    raise_errors(errors)
    return files


def cmd_check(args: argparse.Namespace, out: IO[str]) -> int:
    files = read_all(args.patterns, args.lang)
    patterns = [p for f in files for p in f.patterns]
    net = net_of(files)
    for f in files:
        n = len(f.patterns) + len(f.queries)
        out.write(f"{f.path}: {n} pattern{'s' if n != 1 else ''}\n")
    for pn in net.patterns:
        p = pn.source
        inputs = ", ".join(sorted(pn.input_types))
        part = f"[{', '.join(p.partition)}]" if p.partition else "none"
        out.write(
            f"  {pn.name}: {state_places(pn)} state places, {len(pn.transitions)} transitions; inputs {inputs}; "
            f"window {window_text(p.window)}; partition {part}; {p.strategy}"
            + (f"; returns {pn.output_type}" if pn.output_type else "")
            + (f"; timeouts return {pn.timeout.type}" if pn.timeout else "")
            + (f"; at most {pn.limit.count} partial matches per key ({pn.limit.policy})" if pn.limit else "")
            + "".join(f"; {lst.var}[] until {u.type} {u.var}" for lst, u in A.all_stops_of(p.structure))
            + "\n"
        )
    for rn in net.rows:
        out.write(row_net_line(rn) + "\n")
    s = net.stats()
    out.write(
        f"net before merging: {s['patterns']} patterns, {s['input_places']} input places, "
        f"{s['state_places']} state places, {s['transitions']} transitions\n"
    )
    shared = len(net.groups) + len(net.rows)
    out.write(
        f"net after merging: {shared} shared net{'s' if shared != 1 else ''}, "
        f"{s['input_places']} input places, {s['merged_state_places']} state places, "
        f"{s['merged_transitions']} transitions\n"
    )
    for line in sharing_lines(net):
        out.write(line + "\n")
    for line in kernel_lines(net):
        out.write(line + "\n")
    for w in warnings_for(patterns, [q for f in files for q in f.queries]):
        out.write(w + "\n")
    return 0


__all__ = ["add_parser", "cmd_check", "read_all", "kernel_lines", "row_net_line", "window_text"]
