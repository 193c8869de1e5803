"""``python -m petricep``: the ``petricep`` command."""

from petricep.cli.main import main

raise SystemExit(main())
