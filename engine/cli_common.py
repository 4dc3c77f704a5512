"""What every `evidence` sub-command shares: consoles, JSON output, and the error-to-exit-code mapping."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import psycopg
import typer
from rich.console import Console

from engine.config import Settings, load_settings
from engine.errors import EngineError, StorageError

out = Console()
err = Console(stderr=True)


def settings() -> Settings:
    return load_settings()


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")


def run(fn: Callable[[], int | None]) -> None:
    """Run a command body, turning engine errors into a message and an exit code."""
    try:
        code = fn() or 0
    except EngineError as exc:
        err.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        raise typer.Exit(exc.exit_code) from exc
    except psycopg.OperationalError as exc:  # the server went away mid-command
        err.print(f"[bold red]error:[/] lost the connection to PostgreSQL: {str(exc).strip()}\n"
                  "Nothing partial was recorded (each audit and each document is one transaction). Check the "
                  "server ('evidence db status'), then run the command again, or 'evidence resume RUN' / "
                  "'evidence audit resume BATCH' for an interrupted answer or batch.", markup=False, highlight=False)
        raise typer.Exit(StorageError.exit_code) from exc
    raise typer.Exit(code)
