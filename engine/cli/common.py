"""What every `evidence` sub-command shares: consoles, JSON output, and the error-to-exit-code mapping.

Messages are printed with `soft_wrap`: an error line is never broken at the terminal's width (a
path in it stays copyable, and tests do not depend on COLUMNS), and credentials are redacted from
every message (`engine.errors.redact`).
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from types import ModuleType
from typing import Any

import click
import psycopg
import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup
from typer.exceptions import TyperException

from engine.cli import logs
from engine.config import Settings, load_settings, secret_values
from engine.errors import EngineError, ExitCode, redact


def engine_api() -> ModuleType:
    """`engine.api`, imported when a command runs: it loads the research graph (LangGraph, LangChain; about
    1.5 s), which `evidence --help` and the commands that answer nothing need not wait for."""
    from engine import api

    return api


out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

class FullHelpGroup(TyperGroup):
    """A command group whose list of commands shows each one's first sentence whole, wrapped to the
    terminal, never cut off with '...'."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def settings() -> Settings:
    return load_settings()


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")


def error_line(message: str) -> None:
    """Print `error: message` to stderr, credentials redacted, never wrapped, no markup read from it."""
    err.print("[bold red]error:[/] ", end="")
    err.print(redact(message, secret_values()), markup=False, highlight=False)


def run(fn: Callable[[], int | None]) -> None:
    """Run a command body, turning engine errors into a message and an exit code.

    Anything unexpected also ends in one redacted message (and the redacted traceback) with exit
    status 1, never in a traceback that shows local variables such as settings. Logging is set up
    here, once per command (engine.cli.logs).
    """
    try:
        logs.configure()
        code = fn() or ExitCode.SUCCESS
    except EngineError as exc:
        error_line(str(exc))
        raise typer.Exit(exc.exit_code) from exc
    except psycopg.OperationalError as exc:  # the server went away mid-command
        error_line(f"lost the connection to PostgreSQL: {str(exc).strip()}\n"
                   "Nothing partial was recorded (each audit and each document is one transaction). Check the "
                   "server ('evidence db status'), then run the command again, or 'evidence resume RUN' / "
                   "'evidence audit resume BATCH' for an interrupted answer or batch.")
        raise typer.Exit(ExitCode.STORAGE) from exc
    except (typer.Exit, typer.Abort, TyperException, click.exceptions.ClickException, click.exceptions.Exit,
            click.exceptions.Abort):
        raise  # typer's own (its vendored click's) usage errors and exits: typer prints them, exit 2 or as given
    except Exception as exc:  # the CLI is the one place that catches broadly
        secrets = secret_values()
        sys.stderr.write(redact("".join(traceback.format_exception(exc)), secrets))
        error_line(f"unexpected {type(exc).__name__}: {exc}. This is a bug in the engine; please report it "
                   "with the traceback above.")
        raise typer.Exit(ExitCode.GENERIC) from exc
    raise typer.Exit(code)


def print_lines(lines: list[Any]) -> None:
    for line in lines:
        out.print(Text(line.text, style=line.style))


def answer_width() -> int:
    """Columns for wrapped answers: the terminal's (80 when not a terminal), at most 100 for reading."""
    return max(40, min(out.width, 100))
