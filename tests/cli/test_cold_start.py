"""Cold start: the modules a rules-mode `ask`, `search` or `ingest` loads import nothing heavy they do not use."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # a fresh interpreter per case

HEAVY = ("torch", "transformers", "sentence_transformers", "weasyprint", "langchain_openai", "openai", "pypdf",
         "docx", "bs4", "sklearn", "scipy")


@pytest.mark.parametrize("modules", [
    ("engine.cli.main",),
    ("engine.cli.main", "engine.ingest.pipeline", "engine.search.retrieval", "engine.search.embeddings",
     "engine.relevance.model"),
    ("engine.cli.main", "agents.research", "agents.deps", "engine.trail.record", "engine.ingest.language"),
], ids=["help", "ingest-search", "ask"])
def test_no_heavy_import(modules: tuple[str, ...]) -> None:
    code = (f"import sys\nfor m in {list(modules)!r}: __import__(m)\n"
            f"print(__import__('json').dumps([h for h in {list(HEAVY)!r} if h in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-1500:]
    assert json.loads(done.stdout) == []
