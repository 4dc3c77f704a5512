"""Logging: a logger per module, none of them the root logger; the command sets up the engine's loggers once,
at EVIDENCE_LOG_LEVEL (WARNING by default, where they say nothing), with credentials redacted."""

from __future__ import annotations

import ast
import logging
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from engine.cli import logs
from engine.cli.main import app
from engine.errors import ConfigError
from engine.llm.policy import CallPolicy, Pacer
from tests.conftest import ROOT

ROOT_CALLS = {"debug", "info", "warning", "error", "exception", "critical", "log", "basicConfig"}
# ONNX Runtime's quantizer warns through the root logger; export.py quiets it for that one call and restores it.
ROOT_LOGGER_ALLOWED = {"engine/relevance/export.py"}


@pytest.fixture
def engine_loggers() -> Iterator[None]:
    """Leave the engine's loggers as the test found them."""
    saved = {name: (logging.getLogger(name).level, list(logging.getLogger(name).handlers)) for name in logs.LOGGERS}
    yield
    for name, (level, handlers) in saved.items():
        logger = logging.getLogger(name)
        logger.setLevel(level)
        logger.handlers[:] = handlers


def _sources() -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(ROOT)), ast.parse(p.read_text()))
            for package in ("engine", "agents") for p in sorted((ROOT / package).rglob("*.py"))]


def test_no_module_logs_through_the_root_logger() -> None:
    found = []
    for name, tree in _sources():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "logging"):
                continue
            root = node.func.attr == "getLogger" and not node.args and name not in ROOT_LOGGER_ALLOWED
            if node.func.attr in ROOT_CALLS or root:
                found.append(f"{name}:{node.lineno} logging.{node.func.attr}")
    assert found == []


def test_a_module_logger_is_named_after_its_module() -> None:
    named, wrong = [], []
    for name, tree in _sources():
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "logger" for t in node.targets):
                (named if ast.unparse(node.value) == "logging.getLogger(__name__)" else wrong).append(name)
    assert wrong == []
    assert {"engine/llm/policy.py", "engine/batch/runner.py", "agents/runtime.py"} <= set(named)


def test_by_default_the_engine_says_only_warnings(engine_loggers, capsys) -> None:
    logs.configure()
    logs.configure()  # once per command: a second call adds no second handler
    logging.getLogger("engine.x").info("a detail")
    logging.getLogger("agents.y").warning("something is off")
    assert capsys.readouterr().err == "WARNING agents.y: something is off\n"
    assert sum(isinstance(h, logs.StderrHandler) for h in logging.getLogger("engine").handlers) == 1


def test_a_lower_level_shows_more_with_credentials_redacted(engine_loggers, capsys, monkeypatch) -> None:
    monkeypatch.setenv("EVIDENCE_LOG_LEVEL", "info")
    assert logs.configure() == logging.INFO
    logging.getLogger("engine.db").info("connecting to %s", "postgresql://app:hunter22@db:5432/x")
    err = capsys.readouterr().err
    assert err.startswith("INFO engine.db: connecting to postgresql://app:***@db") and "hunter22" not in err


def test_an_unknown_level_is_a_configuration_error(engine_loggers, monkeypatch) -> None:
    monkeypatch.setenv("EVIDENCE_LOG_LEVEL", "loud")
    with pytest.raises(ConfigError, match="EVIDENCE_LOG_LEVEL='loud' is not a log level; use one of DEBUG"):
        logs.configure()
    result = CliRunner().invoke(app, ["trail", "list"], env={"EVIDENCE_LOG_LEVEL": "loud"})
    assert result.exit_code == 2 and "is not a log level" in result.output


def test_the_llm_circuit_opening_is_logged(caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="engine.llm.policy")
    pacer = Pacer(CallPolicy(breaker_failures=2))
    pacer.failed("HTTP 503", "extract")
    pacer.failed("HTTP 503", "verify")
    assert [r.getMessage() for r in caplog.records] == [
        "extract: request failed (1 in a row): HTTP 503", "verify: request failed (2 in a row): HTTP 503",
        "LLM unavailable from the verify step on: circuit open after 2 consecutive failed requests (last: HTTP 503)"]
