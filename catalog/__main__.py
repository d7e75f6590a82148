"""`python -m catalog` is the `catalog` command."""

from catalog.cli import main

raise SystemExit(main())
