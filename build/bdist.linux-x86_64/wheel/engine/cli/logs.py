"""Logging for the `evidence` command: set up once per command, before its body runs.

The engine's modules log through `logging.getLogger(__name__)` (loggers under `engine` and `agents`)
and never configure logging themselves: a program that embeds the engine keeps its own setup. The
command gives those two loggers one stderr handler at EVIDENCE_LOG_LEVEL (default WARNING, where the
engine says nothing it does not already print), with credentials redacted like every error line.
Other libraries' loggers are left as they are.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from engine.config import LOG_LEVELS, log_level, secret_values
from engine.errors import ConfigError, redact

LOGGERS = ("engine", "agents")
FORMAT = "%(levelname)s %(name)s: %(message)s"


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever `sys.stderr` is when a record comes (a test runner may swap it between commands)."""

    def __init__(self, level: int) -> None:
        logging.Handler.__init__(self, level)  # not StreamHandler's: `stream` is looked up, never stored
        self.setFormatter(logging.Formatter(FORMAT))
        self.addFilter(_redact)

    @property
    def stream(self) -> TextIO:  # type: ignore[override]
        return sys.stderr


def _redact(record: logging.LogRecord) -> bool:
    """Credentials out of the message (a DATABASE_URL password, the LLM key), as in error lines."""
    record.msg, record.args = redact(record.getMessage(), secret_values()), None
    return True


def configure(level: str | None = None) -> int:
    """Give the engine's loggers their stderr handler at `level` (default: EVIDENCE_LOG_LEVEL). Idempotent:
    a second call only changes the level. Returns the level set. ConfigError for an unknown level name."""
    name = (level or log_level()).upper()
    if name not in LOG_LEVELS:
        raise ConfigError(f"log level {level!r} is unknown; use one of {', '.join(LOG_LEVELS)}")
    number = logging.getLevelName(name)
    for logger_name in LOGGERS:
        logger = logging.getLogger(logger_name)
        logger.setLevel(number)
        handler = next((h for h in logger.handlers if isinstance(h, StderrHandler)), None)
        if handler is None:
            logger.addHandler(StderrHandler(number))
        else:
            handler.setLevel(number)
    return number
