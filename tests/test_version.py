"""The package version: one home (`engine.__version__`), read by pyproject.toml and carried by every record."""

from __future__ import annotations

import re
import tomllib

import engine
from engine.trail.record import build_amendment, engine_version
from tests.conftest import ROOT


def test_pyproject_takes_the_version_from_the_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "engine.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", engine.__version__)


def test_records_carry_the_package_version() -> None:
    assert engine_version() == engine.__version__
    target = {"audit_id": "AUD-20250101-0000000000", "question": "How long must records be kept?"}
    note = build_amendment(target, kind="note", reason="checked", text="fine", actor="auditor")
    assert note["engine"] == {"name": "evidence-engine", "version": engine.__version__}


def test_no_other_file_states_the_version() -> None:
    """A version written twice drifts apart: only engine/__init__.py states it."""
    pattern = re.compile(rf"['\"]{re.escape(engine.__version__)}['\"]")
    stating = sorted(str(p.relative_to(ROOT)) for folder in ("engine", "agents")
                     for p in (ROOT / folder).rglob("*.py") if pattern.search(p.read_text()))
    assert stating == ["engine/__init__.py"]
