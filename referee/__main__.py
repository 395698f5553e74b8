"""`python -m referee`: the same as the `referee` command."""

from referee.cli.entry import main

raise SystemExit(main())
