"""The trail under real processes: concurrent writers, and `ask` killed with SIGKILL around the audit."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.trail import store as audit_trail
from engine.trail.verify import verify_trail
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # every test runs `evidence` processes

QUESTIONS = ("How long must transaction records be kept?", "When must a personal data breach be notified?",
             "How often must user access rights be reviewed?", "Who must approve a client risk assessment?",
             "What must a client assessment document?", "How must paper records be disposed of?",
             "Are shared accounts permitted?", "How soon must access be revoked after an employee leaves?")


def evidence(settings, *args: str, fault: str | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_URL": settings.database_url, "EVIDENCE_HOME": str(settings.home),
           "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "EVIDENCE_MEMORY_ENABLED": "false"}
    env.pop("EVIDENCE_FAULT_INJECTION", None)
    if fault:
        env["EVIDENCE_FAULT_INJECTION"] = fault
    return subprocess.run([sys.executable, "-m", "engine.cli.main", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_eight_concurrent_asks_make_one_contiguous_chain(trail_conn, trail_settings) -> None:
    with ThreadPoolExecutor(max_workers=8) as pool:
        done = list(pool.map(lambda q: evidence(trail_settings, "ask", q, "--json"), QUESTIONS))
    assert all(p.returncode == 0 for p in done), [p.stderr[-500:] for p in done if p.returncode]
    rows = audit_trail.chain(trail_conn)
    assert [r["seq"] for r in rows] == list(range(1, 9))
    assert sorted(r["question"] for r in rows) == sorted(QUESTIONS)
    assert verify_trail(trail_conn, trail_settings).ok


@pytest.mark.parametrize("point", ["audit:before", "audit:during", "audit:after"],
                         ids=["before-transaction", "inside-transaction", "after-commit"])
def test_killed_ask_leaves_a_whole_audit_or_none_and_resumes_once(trail_conn, trail_settings, point: str) -> None:
    killed = evidence(trail_settings, "ask", QUESTIONS[0], fault=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-800:]
    run_id = re.search(r"run (run-[0-9a-f]{12})", killed.stderr).group(1)
    committed = audit_trail.by_run(trail_conn, run_id)
    assert (committed is not None) == (point == "audit:after")
    assert verify_trail(trail_conn, trail_settings).ok  # no partial audit, no gap
    for _ in range(2):  # resuming again returns the same audit
        resumed = evidence(trail_settings, "resume", run_id)
        assert resumed.returncode == 0, resumed.stderr[-800:]
    rows = audit_trail.chain(trail_conn)
    assert [r["run_id"] for r in rows] == [run_id] and rows[0]["seq"] == 1
    assert "recorded earlier" in resumed.stdout
    report = verify_trail(trail_conn, trail_settings)
    assert report.ok and report.audits_checked == 1
