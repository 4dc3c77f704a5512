"""A wheel carries what the engine needs outside the repository: migrations, templates, prompts, models."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
def test_an_installed_wheel_finds_its_resources_outside_the_checkout(tmp_path: Path) -> None:
    wheels, prefix, source = tmp_path / "wheels", tmp_path / "prefix", tmp_path / "source"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):  # a copy: setuptools writes build/ into the source
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(source),
                    "-w", str(wheels)], check=True, cwd=tmp_path)
    # --ignore-installed: into the prefix only; without it pip first uninstalls the checkout's editable install
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", "--prefix",
                    str(prefix), *map(str, wheels.glob("*.whl"))], check=True, cwd=tmp_path)
    site = next(prefix.glob("lib/python*/site-packages"))
    probe = ("import engine, agents.rewrite as r; from engine.config import resource_dir, shipped_relevance_model; "
             "print(engine.__file__); print(*(resource_dir(n) for n in ('sql', 'templates', 'skills')), sep='\\n'); "
             "print(r.TERMINOLOGY_FILE.exists(), (shipped_relevance_model() / 'model.onnx').exists())")
    env = {**os.environ, "PYTHONPATH": str(site)}
    lines = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert lines[0].startswith(str(site))
    assert lines[1:4] == [str(prefix / "share" / "evidence-engine" / n) for n in ("sql", "templates", "skills")]
    assert lines[4] == "True True"
    assert sorted(p.name for p in (prefix / "share" / "evidence-engine" / "sql").glob("*.sql")) == sorted(
        p.name for p in (ROOT / "sql").glob("*.sql"))
