"""The `evidence` command: argument parsing and rendering only; the work is done by `engine.api`."""
