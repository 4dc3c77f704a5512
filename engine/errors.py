"""Error hierarchy. Messages say what was expected, what was found, and what to do next."""

from __future__ import annotations

import re
from enum import IntEnum


class ExitCode(IntEnum):
    """Every exit status of the `evidence` command, in one place (docs/configuration.md, "Exit statuses").

    Each error class below carries its own as `exit_code`; the CLI maps an error to it, and commands
    return the others (a refused question, a failed gate). Kept here, not in engine.cli, so errors can
    name their status without importing the CLI.
    """

    SUCCESS = 0
    GENERIC = 1            # an engine error of no narrower kind, or an unexpected one (a bug: traceback shown)
    CONFIG = 2             # a setting, EVIDENCE_HOME, DATABASE_URL, a missing LLM endpoint, bad options or input
    INGEST = 3             # at least one file was refused
    STORAGE = 4            # PostgreSQL cannot be reached or refused an operation
    LLM_OUTPUT = 5         # an LLM reply could not be used
    INTEGRITY = 6          # a trail or report check failed
    NOT_FOUND = 7          # a named audit, run, batch or document does not exist
    QUESTION_REFUSED = 8   # `ask` / `resume`: the guard refused the question (recorded as an audit)
    GATE_FAILED = 10       # `audit run` / `audit resume`: the checklist's gate failed (fail_on)


class EngineError(Exception):
    """Root of every error the engine raises on purpose."""

    exit_code = ExitCode.GENERIC


class ConfigError(EngineError):
    """A setting is missing or invalid."""

    exit_code = ExitCode.CONFIG


class IngestError(EngineError):
    """A source file could not be turned into a document."""

    exit_code = ExitCode.INGEST

    def __init__(self, path: str, reason: str, hint: str = "") -> None:
        self.path = path
        self.reason = reason
        self.hint = hint
        self.warnings: list[str] = []  # what the parser warned about before it gave up
        super().__init__(f"{printable(path)}: {reason}" + (f" ({hint})" if hint else ""))


class StorageError(EngineError):
    """The database could not be reached or refused an operation."""

    exit_code = ExitCode.STORAGE


class LLMOutputError(EngineError):
    """An LLM reply could not be used."""

    exit_code = ExitCode.LLM_OUTPUT

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        self.retryable = retryable
        super().__init__(message)


class IntegrityError(EngineError):
    """Stored evidence or a trail record failed verification."""

    exit_code = ExitCode.INTEGRITY


class NotFoundError(EngineError):
    """A named record does not exist."""

    exit_code = ExitCode.NOT_FOUND


class InputError(EngineError):
    """A file or argument the user gave is malformed (pairs files, option values)."""

    exit_code = ExitCode.CONFIG


# --- making messages safe to print ---------------------------------------------------------------

_URL_CREDENTIALS = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.\-]*://)(?P<user>[^\s:/@?#]*):(?P<secret>[^\s@/?#]+)@",
                              re.IGNORECASE)
# A keyword's value: quoted as libpq reads it ('Sekrit Pw9', a \' or \\ escaped inside), or unquoted up to
# whitespace, or to an `&` that starts the next parameter of a URL's query; a comma or a semicolon is part of
# a libpq value (password=Sek,rit9Pw), so it is redacted with the rest.
_KEYWORD_SECRET = re.compile(r"(?P<key>\b(?:password|passwd|pwd|api[_-]?key|token|secret)\s*[=:]\s*)"
                             r"(?:'(?:[^'\\\n]|\\.)*'?|\"(?:[^\"\\\n]|\\.)*\"?|(?:[^\s&'\"]|&(?![\w.-]+=))+)",
                             re.IGNORECASE)
REDACTED = "***"


def redact(text: str, secrets: tuple[str, ...] | list[str] = ()) -> str:
    """`text` with credentials removed: `scheme://user:password@` and `password=...` forms, and any
    literal secret given (the configured LLM key, a DATABASE_URL password) wherever it appears."""
    text = _URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@", text)
    text = _KEYWORD_SECRET.sub(lambda m: f"{m['key']}{REDACTED}", text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    return text


def printable(name: str) -> str:
    """A file name (or any value) safe for a one-line message: control characters (newlines, tabs,
    terminal escapes) are shown escaped, as Python writes them (`\\n`, `\\x1b`), everything else as is."""
    if name.isprintable():
        return name
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in name)
