from petricep.cli import main

raise SystemExit(main())
