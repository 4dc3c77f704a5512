"""The README stays short and true: its size, its links, and the commands of its tour."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from engine.cli.main import app
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()


def test_readme_is_short_and_starts_with_the_two_commands() -> None:
    assert len(README.encode()) <= 12 * 1024
    first_block = README.split("```")[1]
    assert "make demo" in first_block and "make test" in first_block


def test_every_link_of_the_readme_and_the_manual_resolves() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if not target.startswith(("http://", "https://")) and not (page.parent / target).exists():
                broken.append(f"{page.name}: {target}")
    assert broken == []


def test_the_tour_names_real_commands() -> None:
    tour = README.split("## A ten-line tour")[1].split("```")[1].removeprefix("sh")
    runner = CliRunner()
    for line in filter(None, (raw.split("#")[0].strip() for raw in tour.splitlines())):
        words = line.split()
        assert words[0] == "evidence"
        path = [w for w in words[1:3] if re.fullmatch(r"[a-z][a-z-]*", w)]
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (line, result.output)
