"""The ``petricep`` command line (SPEC §4): one module per command.

* :mod:`.main`: the parser and the dispatch; ``petricep.cli:main`` is the console script.
* :mod:`.inputs`: the input options and the one builder of an ``InputSpec`` from them,
  shared with the Spark commands (:mod:`petricep.spark.cli`).
* :mod:`.run`, :mod:`.check`, :mod:`.draw`, :mod:`.archive`: the commands; ``run`` drives
  a :class:`petricep.api.Run`, which owns the source, the prefilter, the engine and the
  accounting.

The names below were importable from the former ``petricep/cli.py`` and stay so; new code
imports them from where they live (``petricep.api``, ``petricep.api.runner``,
``petricep.cli.inputs``).
"""

from petricep.api import history_report, sharing_lines, summary_lines, warnings_for
from petricep.api.runner import PROGRESS_EVERY, check_columns

from .check import cmd_check, row_net_line
from .draw import cmd_draw
from .inputs import input_spec, parse_duration
from .main import build_parser, cmd_run_spark, cmd_stream, main
from .run import EXIT_INCOMPLETE, cmd_run

__all__ = [
    "EXIT_INCOMPLETE",
    "PROGRESS_EVERY",
    "build_parser",
    "check_columns",
    "cmd_check",
    "cmd_draw",
    "cmd_run",
    "cmd_run_spark",
    "cmd_stream",
    "history_report",
    "input_spec",
    "main",
    "parse_duration",
    "row_net_line",
    "sharing_lines",
    "summary_lines",
    "warnings_for",
]
