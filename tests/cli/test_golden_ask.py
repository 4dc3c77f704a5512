"""Determinism across processes: `evidence ask --json` (rules backend) run in a fresh process over the sample
corpus gives the stored golden result: the same evidence, REQ-IDs, quotes, verdicts and answer.

The in-process checks (tests/agents) compare two runs in one interpreter; this one also catches what
changes between processes (hash seeds, set and dict order, thread pools, caches): it runs under two
PYTHONHASHSEED values (it found query words ordered by a set's iteration in agents/rewrite.py). Only what
an answer is made of is compared: no run or audit ids, timestamps, hashes, timings or raw scores.

After an intended change of the answer, regenerate the golden file and review its diff:

    pytest tests/cli/test_golden_ask.py --update-golden
    git diff tests/data/golden/
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "data" / "golden" / "ask_rules.json"
QUESTION = "How long must transaction records be kept, and when must a personal data breach be notified?"


def _requirement(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("requirement_id", "document_title", "section_path", "chunk_id", "char_start", "char_end", "exact_quote",
            "modality", "binding", "verified", "rejection_reason", "decided_by", "part")
    return {k: row[k] for k in keys}


def essentials(data: dict[str, Any]) -> dict[str, Any]:
    """What the answer is made of, from the `ask --json` output."""
    result = data["evidence_result"]
    return {
        "question": data["question"], "question_type": data["question_type"], "rejected": data["rejected"],
        "steps": [{k: s[k] for k in ("aspect", "attempt", "queries", "status")} for s in data["steps"]],
        "evidence": [e["chunk_id"] for e in data["evidence"]],
        "status": result["status"], "grounding_confidence": result["grounding_confidence"],
        "direct_answer": result["direct_answer"], "final_answer": result["final_answer"],
        "statements": result["statements"], "missing_evidence": result["missing_evidence"],
        "requirements": [_requirement(r) for r in result["extracted_requirements"]],
        "fallbacks": data["fallbacks"],
    }


def test_essentials_leave_out_what_differs_between_runs() -> None:
    step = {"aspect": "a", "attempt": 1, "queries": ["q"], "status": "completed", "confidence": 0.71}
    row = {k: k for k in ("requirement_id", "document_title", "section_path", "chunk_id", "char_start", "char_end",
                          "exact_quote", "modality", "binding", "verified", "rejection_reason", "decided_by",
                          "part", "score", "relevance", "rationale")}
    run = {"run_id": "run-1", "question": "Q?", "question_type": "simple", "rejected": False, "steps": [step],
           "evidence": [{"chunk_id": "c1", "score": 0.5}], "metrics": [{"seconds": 1.2}], "fallbacks": [],
           "audit": {"audit_id": "AUD-1", "hash": "ab"},
           "evidence_result": {"status": "ANSWERED", "grounding_confidence": "high", "direct_answer": "d",
                               "final_answer": "f", "statements": [], "missing_evidence": [],
                               "extracted_requirements": [row]}}
    other = json.loads(json.dumps(run))
    other["run_id"], other["audit"], other["metrics"] = "run-2", {"audit_id": "AUD-2"}, [{"seconds": 9.0}]
    other["steps"][0]["confidence"] = 0.7
    other["evidence"][0]["score"] = 0.4
    other["evidence_result"]["extracted_requirements"][0]["score"] = 0.1
    assert essentials(run) == essentials(other)
    other["evidence_result"]["extracted_requirements"][0]["exact_quote"] = "another quote"
    assert essentials(run) != essentials(other)


@pytest.mark.slow
@pytest.mark.parametrize("hash_seed", ["0", "1"])  # str hashing differs: set order does too
def test_ask_in_a_fresh_process_gives_the_golden_result(trail_settings, request, hash_seed) -> None:
    env = {**os.environ, "DATABASE_URL": trail_settings.database_url, "EVIDENCE_HOME": str(trail_settings.home),
           "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "EVIDENCE_MEMORY_ENABLED": "false",
           "PYTHONHASHSEED": hash_seed}
    env.pop("EVIDENCE_FAULT_INJECTION", None)
    done = subprocess.run([sys.executable, "-m", "engine.cli.main", "ask", QUESTION, "--backend", "rules", "--json"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-1500:]
    found = essentials(json.loads(done.stdout))
    if request.config.getoption("--update-golden") and hash_seed == "0":
        GOLDEN.write_text(json.dumps(found, indent=2, ensure_ascii=False) + "\n")
    assert found == json.loads(GOLDEN.read_text()), "regenerate with --update-golden if the change is intended"
