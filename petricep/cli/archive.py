"""``petricep archive``: events from a file into an event archive, in their time order."""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from typing import IO, Any

from petricep.archive.store import Archive
from petricep.errors import ConfigError
from petricep.io import open_events
from petricep.output.files import OutputPath, check_outputs

from .inputs import add_input_options, event_paths, input_spec, parse_duration
from .run import EXIT_INCOMPLETE


def add_parser(sub: Any) -> None:
    arch = sub.add_parser("archive", help="append an event file to an event archive (for ARCHIVED variables)")
    add_input_options(arch)
    arch.add_argument("--to", required=True, metavar="DIR", help="the archive (created if missing)")
    arch.add_argument("--bucket", metavar="D", default="1d", help="time partition of a new archive (default 1d)")


def cmd_archive(args: argparse.Namespace, err: IO[str]) -> int:
    """The rejected rows (``--rejects``) are renamed into place when every event is in."""
    if args.rejects and args.on_error != "skip":
        raise ConfigError("--rejects needs --on-error skip")
    check_outputs({"--rejects": args.rejects}, {"the events file": event_paths(args.events, args.format)})
    with ExitStack() as stack:
        rejects = OutputPath(args.rejects) if args.rejects else None
        if rejects is not None:
            stack.callback(rejects.discard)
        spec = input_spec(args, [], on_error=args.on_error, rejects_path=rejects.temp if rejects else None)
        archive = Archive(args.to, bucket_seconds=float(parse_duration(args.bucket, "--bucket") or 86400))
        source = open_events(spec)
        for e in source:
            archive.append(e)
        archive.flush()
        if rejects is not None:
            rejects.commit()
    err.write(
        f"archived {source.rows_read - source.rows_rejected} events into {args.to} (run {archive.run}); "
        f"{source.rows_rejected} rejected\n"
    )
    return EXIT_INCOMPLETE if source.rows_rejected else 0


__all__ = ["add_parser", "cmd_archive"]
