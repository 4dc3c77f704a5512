"""Help texts are whole: no command summary cut off with '...', every option explained."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from engine.cli.main import app

runner = CliRunner()
GROUPS = [[], ["trail"], ["audit"], ["report"], ["relevance"], ["db"], ["documents"]]


@pytest.mark.parametrize("group", GROUPS, ids=["evidence", *(g[0] for g in GROUPS[1:])])
def test_command_lists_are_never_cut(group: list[str]) -> None:
    result = runner.invoke(app, [*group, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    listed = result.stdout.split("Commands:")[1]
    assert "..." not in listed  # click cuts a summary with "..." ("AUD-…" is how ids are written)


@pytest.mark.parametrize(("command", "words"), [
    (["ingest"], ["EVIDENCE_SOURCE_TYPE", "inferred from the file name or title", "stored title"]),
    (["ask"], ["--document", "--source-type", "--show-rejected", "Recorded in the audit"]),
    (["trail", "rerun"], ["--stale", "supersedes"]),
    (["export"], ["csv, xlsx or json", "--cited-only"]),
], ids=["ingest", "ask", "rerun", "export"])
def test_options_are_explained(command: list[str], words: list[str]) -> None:
    text = " ".join(runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"}).stdout.split())
    assert all(word in text for word in words), text
