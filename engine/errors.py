"""Error hierarchy. Messages say what was expected, what was found, and what to do next."""

from __future__ import annotations


class EngineError(Exception):
    """Root of every error the engine raises on purpose."""

    exit_code = 1


class ConfigError(EngineError):
    """A setting is missing or invalid."""

    exit_code = 2


class IngestError(EngineError):
    """A source file could not be turned into a document."""

    exit_code = 3

    def __init__(self, path: str, reason: str, hint: str = "") -> None:
        self.path = path
        self.reason = reason
        self.hint = hint
        super().__init__(f"{path}: {reason}" + (f" ({hint})" if hint else ""))


class StorageError(EngineError):
    """The database could not be reached or refused an operation."""

    exit_code = 4


class LLMOutputError(EngineError):
    """An LLM reply could not be used."""

    exit_code = 5

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        self.retryable = retryable
        super().__init__(message)


class IntegrityError(EngineError):
    """Stored evidence or a trail record failed verification."""

    exit_code = 6


class NotFoundError(EngineError):
    """A named record does not exist."""

    exit_code = 7


class InputError(EngineError):
    """A file or argument the user gave is malformed (pairs files, option values)."""

    exit_code = 2
