"""The one-file verifier is written from the trail's own modules: nothing else, nothing twice, and it runs alone."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from engine.trail import standalone_build, standalone_verify


def test_the_one_file_defines_every_name_the_verifier_offers_once() -> None:
    tree = ast.parse(standalone_build.source())
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    assert len(defined) == len(set(defined))
    names = standalone_build._defines(tree) | {a.asname or a.name for n in tree.body
                                               if isinstance(n, ast.ImportFrom) for a in n.names}
    assert set(standalone_verify.__all__) <= names


def test_the_one_file_runs_with_no_engine_on_the_path(tmp_path: Path) -> None:
    script = tmp_path / "evidence_verify.py"
    assert standalone_build.main([str(script)]) == 0
    assert script.read_text().startswith("#!/usr/bin/env python3\n\"\"\"Standalone verifier")
    done = subprocess.run([sys.executable, "-I", str(script), "--help"], capture_output=True, text=True,
                          cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and "--witness-key" in done.stdout


@pytest.mark.parametrize(("line", "refused"), [("import numpy", "imports numpy"),
                                               ("from engine.config import Settings", "imports engine.config"),
                                               ("from .notes import split_note", "imports ."),
                                               ("def leaf_hash(data: bytes) -> bytes: ...", "defined in both")],
                         ids=["third-party", "engine", "relative", "defined-twice"])
def test_what_cannot_go_into_the_one_file_is_refused(monkeypatch, tmp_path: Path, line: str, refused: str) -> None:
    for part in standalone_build.PARTS:
        text = (standalone_build.HERE / f"{part}.py").read_text()
        if part == "pades":
            head, _, rest = text.partition("\nfrom engine.trail.notes import")
            text = f"{head}\n{line}\nfrom engine.trail.notes import{rest}" if line.startswith(("import", "from")) \
                else f"{text}\n{line}\n"
        (tmp_path / f"{part}.py").write_text(text)
    monkeypatch.setattr(standalone_build, "HERE", tmp_path)
    with pytest.raises(standalone_build.BuildError, match=refused):
        standalone_build.source()
