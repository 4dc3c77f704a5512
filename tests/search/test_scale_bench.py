"""bench/scale.py end to end on a 10K-chunk synthetic corpus (a smoke run; the figures are the benchmark's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from engine import embedded_db
from tests.conftest import CORPUS, ROOT, _database

QUESTIONS = ["How long must transaction records be kept?", "When must a personal data breach be notified?",
             "How often must user access rights be reviewed?", "What must a client assessment record?"]


def _obliqa_corpus(directory: Path) -> Path:
    """The sample corpus as ObliQA files: one passage per paragraph."""
    directory.mkdir()
    for n, path in enumerate(sorted(CORPUS.glob("*.md")), 1):
        paragraphs = [p.strip() for p in path.read_text().split("\n\n") if p.strip()]
        (directory / f"{n}.json").write_text(json.dumps(
            [{"ID": f"{n}-{i}", "DocumentID": n, "PassageID": f"{n}.{i}", "Passage": text}
             for i, text in enumerate(paragraphs, 1)]))
    return directory


@pytest.mark.slow
def test_scale_smoke_10k(server_settings, tmp_path) -> None:
    base = server_settings.database_url or embedded_db.start(server_settings)
    url = _database(base, "scale_smoke")
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps([{"QuestionID": str(i), "Question": q, "Passages": [], "Group": 1}
                                     for i, q in enumerate(QUESTIONS)]))
    args = [sys.executable, "bench/scale.py", "--chunks", "10000", "--documents", str(_obliqa_corpus(tmp_path / "d")),
            "--questions", str(questions), "--queries", "4", "--ef-search", "40,200", "--home", str(tmp_path),
            "--database-url", url]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["chunks"] == 10000 and result["search_p50_ms"] > 0 and result["index"]["index_build_s"] >= 0
    assert set(result["recall"]) == {"40", "200"} and 0.5 <= result["hnsw_recall_at_10"] <= 1.0
    assert result["filtered"]["relaxed_order"]["mean_results"] == 10
    with psycopg.connect(url) as conn:
        chunks, postings = conn.execute("SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM postings)"
                                        ).fetchone()
        n_chunks = conn.execute("SELECT n_chunks FROM corpus_stats").fetchone()[0]
    assert chunks == n_chunks == 10000 and postings == result["postings"]
    again = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads(again.stdout.strip().splitlines()[-1])["load"] == "reused"
