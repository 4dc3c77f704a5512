"""One set of exit statuses: the ExitCode enum, the table in docs/configuration.md, the errors' `exit_code`
and the commands agree, and no command returns a bare number."""

from __future__ import annotations

import ast
import importlib
import re

import pytest

from engine.errors import EngineError, ExitCode
from tests.conftest import ROOT

DOC = ROOT / "docs" / "configuration.md"


def documented(text: str) -> dict[int, str]:
    """status -> meaning, from the "Exit statuses" table of a manual page."""
    section = text.split("## Exit statuses", 1)[1].split("\n## ", 1)[0]
    return {int(m[1]): m[2].strip() for m in re.finditer(r"^\|\s*(\d+)\s*\|(.*)\|\s*$", section, re.M)}


def test_the_table_reader_reads_rows_and_only_rows() -> None:
    page = "## Exit statuses\n| status | meaning |\n|---|---|\n| 0 | done |\n| 9 | other |\n\n## Next\n| 3 | x |\n"
    assert documented(page) == {0: "done", 9: "other"}


def test_every_documented_status_is_in_the_enum_and_back() -> None:
    assert set(documented(DOC.read_text())) == {int(code) for code in ExitCode}


def _error_classes() -> list[type[EngineError]]:
    for module in ("engine.batch.checklist", "engine.batch.runner"):  # errors defined outside engine.errors
        importlib.import_module(module)
    found, todo = [], [EngineError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_error_exits_with_a_status_of_the_enum() -> None:
    classes = _error_classes()
    assert {c.__name__ for c in classes} >= {"ConfigError", "IngestError", "NotFoundError", "DefinitionError"}
    assert [c.__name__ for c in classes if not isinstance(c.exit_code, ExitCode)] == []


def _literal_statuses(tree: ast.AST) -> list[int]:
    """Line numbers of `return <int>` (either branch of an if-expression too) and `Exit(<int>)`."""
    def literal(node: ast.AST | None) -> bool:
        if isinstance(node, ast.IfExp):
            return literal(node.body) or literal(node.orelse)
        return isinstance(node, ast.Constant) and type(node.value) is int

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and literal(node.value):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "Exit", "SystemExit") and any(literal(a) for a in node.args):
            lines.append(node.lineno)
    return lines


def test_the_literal_finder_finds_literals() -> None:
    tree = ast.parse("def a():\n    return 3 if x else ExitCode.SUCCESS\ndef b():\n    raise typer.Exit(1)\n"
                     "def c():\n    return ExitCode.SUCCESS\n")
    assert _literal_statuses(tree) == [2, 4]


@pytest.mark.parametrize("path", sorted((ROOT / "engine" / "cli").glob("*.py")), ids=lambda p: p.name)
def test_commands_return_statuses_of_the_enum(path) -> None:
    assert _literal_statuses(ast.parse(path.read_text())) == []


def test_the_standalone_verifier_fails_with_the_integrity_status() -> None:
    """It runs without the engine (stdlib + cryptography), so it keeps its own constant: the same number."""
    from engine.trail import standalone_verify

    assert standalone_verify.EXIT_FAILED == ExitCode.INTEGRITY
