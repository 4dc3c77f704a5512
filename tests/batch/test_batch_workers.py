"""Batch workers with leases: claims, heartbeats, take-over of a dead or hung worker's question, exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import psycopg
import pytest

from engine import db as dbmod
from engine.batch import store as batch_store
from engine.batch.checklist import load_definition
from engine.batch.runner import start_batch
from engine.config import Settings
from engine.trail import store as audit_trail
from engine.trail.verify import verify_trail
from tests.batch.test_audit import _clone, _write
from tests.conftest import ROOT

SIX_QUESTIONS = """\
name: Six questions
questions:
  - {id: REC-1, text: "How long must transaction records be kept?"}
  - {id: BRE-1, text: "When must a personal data breach be notified to the Commissioner?"}
  - {id: ACC-1, text: "How often must user access rights be reviewed?"}
  - {id: CLI-1, text: "What must a client assessment record?"}
  - {id: REV-1, text: "When must access be revoked after an employee leaves?"}
  - {id: GAP-1, text: "What is the minimum capital requirement for a crypto custody licence?"}
"""
TWO_QUESTIONS = """\
name: Two questions
questions:
  - {id: REC-1, text: "How long must transaction records be kept?"}
  - {id: BRE-1, text: "When must a personal data breach be notified to the Commissioner?"}
"""


def _batch(settings: Settings, tmp_path: Path, text: str) -> str:
    path = _write(tmp_path / "checklist.yaml", text)
    definition, sha = load_definition(path)
    with dbmod.connection(settings) as conn:
        return start_batch(conn, settings, definition, path=path, sha256=sha, actor="auditor")


def _worker(settings: Settings, batch_id: str, *, lease_s: float, fault: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": settings.database_url, "EVIDENCE_HOME": str(settings.home),
           "EVIDENCE_BATCH_LEASE_S": str(lease_s), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           **(env or {})}
    env.pop("EVIDENCE_FAULT_INJECTION", None)
    if fault:
        env["EVIDENCE_FAULT_INJECTION"] = fault
    return subprocess.Popen([sys.executable, "-m", "engine.cli.main", "audit", "worker", batch_id, "--json"], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _items(settings: Settings, batch_id: str) -> dict[str, dict]:
    with dbmod.connection(settings) as conn:
        return {i["question_id"]: i for i in batch_store.items(conn, batch_id)}


def _until_leased(settings: Settings, batch_id: str, proc: subprocess.Popen, deadline: float) -> None:
    """Wait until the worker `proc` holds a question's lease (it fails the test if the worker ends first)."""
    while not any(i["lease_owner"] for i in _items(settings, batch_id).values()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()[-1500:]  # type: ignore[union-attr]
        time.sleep(0.05)


def _recorded_once(settings: Settings, batch_id: str, questions: int) -> None:
    """Every question has one audit, attached to its item; the chain is whole and verifies."""
    with dbmod.connection(settings) as conn:
        rows = audit_trail.list_audits(conn, batch=batch_id)
        items = batch_store.items(conn, batch_id)
        report = verify_trail(conn, settings)
    assert len(rows) == questions and len({r["run_id"] for r in rows}) == questions
    assert sorted(i["audit_id"] for i in items) == sorted(r["audit_id"] for r in rows)
    assert sorted(r["seq"] for r in rows) == list(range(1, questions + 1))
    assert report.ok, report


@pytest.fixture()
def batch_settings(server_settings, trail_template, tmp_path) -> Settings:
    return _clone(server_settings, trail_template, tmp_path / "home")


# --- claims and leases, in one process -------------------------------------------------------------

def test_claims_give_each_worker_its_own_question_and_live_leases_are_kept(batch_settings, tmp_path) -> None:
    batch_id = _batch(batch_settings, tmp_path, TWO_QUESTIONS)
    with dbmod.connection(batch_settings) as a, dbmod.connection(batch_settings) as b, \
            dbmod.connection(batch_settings) as c:
        batch_store.register_worker(a, "host-a:1:aaaaaa")
        batch_store.register_worker(b, "host-b:2:bbbbbb")
        batch_store.register_worker(c, "host-c:3:cccccc")
        first = batch_store.claim_next(a, batch_id, "host-a:1:aaaaaa", 60)
        second = batch_store.claim_next(b, batch_id, "host-b:2:bbbbbb", 60)
        third = batch_store.claim_next(c, batch_id, "host-c:3:cccccc", 60)
        assert {first["question_id"], second["question_id"]} == {"REC-1", "BRE-1"}
        assert third is None  # both leased to live workers
        assert batch_store.renew(a, batch_id, first["question_id"], "host-a:1:aaaaaa", 60)
        assert not batch_store.renew(a, batch_id, second["question_id"], "host-a:1:aaaaaa", 60)  # not a's


def test_expired_lease_is_taken_over_and_the_old_owner_cannot_renew(batch_settings, tmp_path) -> None:
    batch_id = _batch(batch_settings, tmp_path, TWO_QUESTIONS)
    with dbmod.connection(batch_settings) as a, dbmod.connection(batch_settings) as b:
        batch_store.register_worker(a, "host-a:1:aaaaaa")
        batch_store.register_worker(b, "host-b:2:bbbbbb")
        mine = batch_store.claim_next(a, batch_id, "host-a:1:aaaaaa", 0.3)  # a is alive but stops renewing
        other = batch_store.claim_next(b, batch_id, "host-b:2:bbbbbb", 60)
        assert batch_store.claim_next(b, batch_id, "host-b:2:bbbbbb", 60) is None
        time.sleep(0.5)
        taken = batch_store.claim_next(b, batch_id, "host-b:2:bbbbbb", 60)
        assert taken["question_id"] == mine["question_id"] != other["question_id"]
        assert taken["claims"] == 2 and taken["lease_owner"] == "host-b:2:bbbbbb"
        assert not batch_store.renew(a, batch_id, mine["question_id"], "host-a:1:aaaaaa", 60)


def test_a_dead_workers_question_is_free_at_once(batch_settings, tmp_path) -> None:
    batch_id = _batch(batch_settings, tmp_path, TWO_QUESTIONS)
    with dbmod.connection(batch_settings) as b:
        batch_store.register_worker(b, "host-b:2:bbbbbb")
        with dbmod.connection(batch_settings) as a:
            batch_store.register_worker(a, "host-a:1:aaaaaa")
            held = batch_store.claim_next(a, batch_id, "host-a:1:aaaaaa", 3600)
            batch_store.claim_next(b, batch_id, "host-b:2:bbbbbb", 60)
            assert batch_store.claim_next(b, batch_id, "host-b:2:bbbbbb", 60) is None
        # a's connection is gone (its process died): its lease of an hour does not hold the question. The
        # server drops a closed session's advisory lock when that backend exits, a moment after the close.
        deadline = time.monotonic() + 10
        while (taken := batch_store.claim_next(b, batch_id, "host-b:2:bbbbbb", 60)) is None \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert taken is not None and taken["question_id"] == held["question_id"]


def test_an_item_takes_one_audit_only(batch_settings, tmp_path) -> None:
    batch_id = _batch(batch_settings, tmp_path, TWO_QUESTIONS)
    with dbmod.connection(batch_settings) as conn:
        conn.execute("SET session_replication_role = replica")  # attach fake audit ids without audits
        batch_store.mark_done(conn, batch_id, "REC-1", "AUD-first", "w1")
        batch_store.mark_done(conn, batch_id, "REC-1", "AUD-second", "w2")  # already done: no change
        with pytest.raises(psycopg.errors.UniqueViolation):
            batch_store.mark_done(conn, batch_id, "BRE-1", "AUD-first", "w2")  # one audit, one item
        conn.execute("RESET session_replication_role")
    items = _items(batch_settings, batch_id)
    assert items["REC-1"]["audit_id"] == "AUD-first" and items["REC-1"]["done_by"] == "w1"
    assert items["BRE-1"]["audit_id"] is None


# --- real worker processes -------------------------------------------------------------------------

@pytest.mark.slow
def test_three_workers_one_killed_mid_question_every_question_once(batch_settings, tmp_path) -> None:
    batch_id = _batch(batch_settings, tmp_path, SIX_QUESTIONS)
    doomed = _worker(batch_settings, batch_id, lease_s=3, fault="batch:retrieve")  # SIGKILL inside its 1st
    others = [_worker(batch_settings, batch_id, lease_s=3) for _ in range(2)]
    doomed.wait(timeout=300)
    assert doomed.returncode == -signal.SIGKILL, doomed.stderr.read()[-1500:]
    results = [p.communicate(timeout=300) for p in others]
    for proc, (_, stderr) in zip(others, results, strict=True):
        assert proc.returncode == 0, stderr[-1500:]
    answered = [json.loads(stdout)["answered"] for stdout, _ in results]
    assert sum(answered) == 6
    items = _items(batch_settings, batch_id)
    retaken = [i for i in items.values() if i["claims"] > 1]
    assert len(retaken) == 1 and retaken[0]["done_by"] in {json.loads(s)["worker"] for s, _ in results}
    _recorded_once(batch_settings, batch_id, 6)


@pytest.mark.slow
def test_hung_worker_loses_its_lease_and_records_nothing(batch_settings, tmp_path) -> None:
    """A worker that stops itself (SIGSTOP) inside its first question keeps its connection (and liveness lock)
    but sends no heartbeats: the lease runs out, another worker answers the question, and the hung worker,
    continued, records nothing."""
    batch_id = _batch(batch_settings, tmp_path, TWO_QUESTIONS)
    hung = _worker(batch_settings, batch_id, lease_s=2, fault="stop@batch:retrieve")
    deadline = time.monotonic() + 120
    while psutil.Process(hung.pid).status() != psutil.STATUS_STOPPED and time.monotonic() < deadline:
        assert hung.poll() is None, hung.stderr.read()[-1500:]
        time.sleep(0.05)
    try:
        (held,) = [i for i in _items(batch_settings, batch_id).values() if i["lease_owner"]]
        helper = _worker(batch_settings, batch_id, lease_s=2)
        stdout, stderr = helper.communicate(timeout=300)
        assert helper.returncode == 0, stderr[-1500:]
        assert json.loads(stdout)["answered"] == 2  # its own question and the hung worker's
    finally:
        os.kill(hung.pid, signal.SIGCONT)
    stdout, stderr = hung.communicate(timeout=120)
    assert hung.returncode == 0, stderr[-1500:]
    assert json.loads(stdout)["answered"] == 0
    items = _items(batch_settings, batch_id)
    assert items[held["question_id"]]["claims"] == 2 and items[held["question_id"]]["done_by"] != held["lease_owner"]
    _recorded_once(batch_settings, batch_id, 2)
