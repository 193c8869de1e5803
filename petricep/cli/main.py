"""The ``petricep`` command: its parser and the dispatch to one module per command.

Every user error is a :class:`PetricepError`: printed as one message on stderr, never a
traceback, with the exit status its class carries (:mod:`petricep.errors`): 2 for the
command line or a pattern (argparse's usage errors too), 3 for the events (a bad row, an
unreadable events file; also a run that finished with rejected or late rows), 1 for an
output that cannot be written. A run ended by SIGINT / SIGTERM exits with 130 / 143. The Spark commands (``run --engine spark``, ``stream``) live in
:mod:`petricep.spark.cli` and are imported only when used, since PySpark is optional.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import IO, Any, NoReturn

from petricep import __version__
from petricep.errors import ConfigError, PetricepError
from petricep.output.matchfile import output_format
from petricep.runtime.engine import MAX_PARTIAL_MATCHES
from petricep.runtime.memory import out_of_memory

from . import archive, check, draw, plot, run


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command. Given the command line ``argv``, ``stream``'s options
    are added only when it asks for ``stream`` (or for help), so that the other commands
    never import the Spark package; without ``argv``, always."""
    ap = argparse.ArgumentParser(
        prog="petricep",
        description="Complex event processing on timed colored Petri nets.",
    )
    ap.add_argument("--version", action="version", version=f"petricep {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    run.add_parser(sub)
    check.add_parser(sub)
    if _wants_stream(argv):
        _add_stream_parser(sub)
    else:
        sub.add_parser("stream", add_help=False)  # a name only: the command line is another one
    archive.add_parser(sub)
    draw.add_parser(sub)
    plot.add_parser(sub)
    return ap


def _wants_stream(argv: Sequence[str] | None) -> bool:
    if argv is None:
        return True
    command = next((w for w in argv if not w.startswith("-")), None)
    return command is None or command == "stream"


def _add_stream_parser(sub: Any) -> None:
    from petricep.spark.cli import add_stream_parser  # Spark is optional: imported when used

    add_stream_parser(sub)


def cmd_run_spark(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``petricep run --engine spark`` (petricep.spark; PySpark and Java needed)."""
    from petricep.spark.cli import cmd_run

    return cmd_run(args, out, err)


def cmd_stream(args: argparse.Namespace, err: IO[str]) -> int:
    """``petricep stream``: Structured Streaming over a directory (petricep.spark)."""
    from petricep.spark.cli import cmd_stream

    return cmd_stream(args, err)


def dispatch(args: argparse.Namespace) -> int:
    if args.command == "check":
        return check.cmd_check(args, sys.stdout)
    if args.command == "draw":
        return draw.cmd_draw(args, sys.stdout)
    if args.command == "plot":
        return plot.cmd_plot(args, sys.stdout, sys.stderr)
    if args.command == "stream":
        return cmd_stream(args, sys.stderr)
    if args.command == "archive":
        return archive.cmd_archive(args, sys.stderr)
    if args.engine == "spark":
        if args.with_events or output_format(args.output, args.output_format) != "jsonl":
            raise ConfigError("--engine spark writes JSON Lines only (yet): -o out.jsonl, without --with-events")
        if args.max_partial_matches != MAX_PARTIAL_MATCHES:
            raise ConfigError("--max-partial-matches is not applied with --engine spark (yet): run embedded")
        if args.max_memory is not None:
            raise ConfigError("--max-memory is not applied with --engine spark (yet): run embedded")
        if len(args.events) != 1 or args.events[0] == "-":
            raise ConfigError("--engine spark reads one events file (yet): not standard input, not several files")
        args.events = args.events[0]
        return cmd_run_spark(args, sys.stdout, sys.stderr)
    if args.master:
        raise ConfigError("--master needs --engine spark")
    return run.cmd_run(args, sys.stdout, sys.stderr)


def _one_line_warnings(shown: Callable[..., None]) -> Callable[..., None]:
    """``warnings.showwarning`` writing petricep's own warnings as the one line they are
    (``petricep: the compiled kernel is not built ...; the Python engine runs``) rather than
    with Python's file:line and source line: a command's stderr is read by its users, not by
    the package's developers. Other warnings go to ``shown``, as Python shows them."""

    def show(
        message: Warning | str, category: type[Warning], filename: str, lineno: int,
        file: IO[str] | None = None, line: str | None = None,
    ) -> None:
        text = str(message)
        if text.startswith("petricep: "):
            (file if file is not None else sys.stderr).write(text + "\n")
        else:
            shown(message, category, filename, lineno, file, line)

    return show


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(argv).parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warnings(warnings.showwarning)
        return _run(args)


def console(argv: Sequence[str] | None = None) -> NoReturn:
    """The ``petricep`` command as a process (the console script, ``python -m petricep``):
    :func:`main`, then the exit without the interpreter's teardown, which only frees what
    the process holds (modules, classes, the run's state): about 50 ms of every command
    (bench/HISTORY.md, issue 16), a sixth of a start-up. Everything the command wrote is
    closed by then (outputs are committed or discarded before :func:`main` returns) and the
    standard streams are flushed here. The usual exit where anything might still run at it:
    a tracer or profiler (``python -m cProfile``, coverage), Spark (its gateway stops at
    exit), a thread that is no daemon, or a stream that fails to flush (Python reports that
    as it always does)."""
    code = main(argv)
    if may_skip_teardown():
        os._exit(code)
    raise SystemExit(code)


def may_skip_teardown() -> bool:
    """Whether nothing would run at the interpreter's exit but freeing memory (see :func:`console`)."""
    if sys.gettrace() is not None or sys.getprofile() is not None or "pyspark" in sys.modules:
        return False
    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return False
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True


def _run(args: argparse.Namespace) -> int:
    """The command, its errors as one message and their exit status."""
    try:
        return dispatch(args)
    except PetricepError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    except MemoryError:  # (outside a run's iteration, which words it itself: Run)
        err = out_of_memory()
        sys.stderr.write(f"{err}\n")
        return err.exit_code
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, run.Interrupted) else 2
        sys.stderr.write(f"interrupted by {run.SIGNALS.get(signum, str(signum))}\n")
        return 128 + signum


__all__ = ["build_parser", "cmd_run_spark", "cmd_stream", "console", "dispatch", "main", "may_skip_teardown"]
