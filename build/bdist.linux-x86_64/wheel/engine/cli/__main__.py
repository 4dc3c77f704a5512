"""`python -m engine.cli ...` runs the `evidence` command."""

from engine.cli.main import main

main()
