"""``python -m petricep``: the ``petricep`` command."""

from petricep.cli.main import console

console()
