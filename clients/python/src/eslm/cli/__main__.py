"""`python -m eslm.cli`: the `eslm` command."""

from .main import main

main()
