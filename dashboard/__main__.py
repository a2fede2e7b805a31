"""`python -m dashboard`: the command-line interface."""

from dashboard.cli import main

raise SystemExit(main())
