"""Entry point of the packaged app (packaging/advisor.spec): the `advisor` command, GUI by default."""

from advisor.cli import main

raise SystemExit(main())
