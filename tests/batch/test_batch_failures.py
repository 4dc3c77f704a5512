"""Workers contain failures: a question that raises is retried with back-off, then failed with its error stored
and shown, while the workers go on with the other questions; operators retry or skip questions."""

from __future__ import annotations

import json
import time

import psycopg
import pytest
from typer.testing import CliRunner

from engine import db as dbmod
from engine.batch import store as batch_store
from engine.batch.results import outcome
from engine.batch.runner import work
from engine.cli.main import app
from engine.config import Settings
from engine.errors import InputError, StorageError
from engine.trail import store as audit_trail
from engine.trail.verify import verify_trail
from tests.batch.test_audit import _clone
from tests.batch.test_batch_workers import (
    SIX_QUESTIONS,
    TWO_QUESTIONS,
    _batch,
    _items,
    _recorded_once,
    _until_leased,
    _worker,
)

runner = CliRunner()
W1, W2 = "host-a:1:aaaaaa", "host-b:2:bbbbbb"


@pytest.fixture()
def batch_settings(server_settings, trail_template, tmp_path) -> Settings:
    return _clone(server_settings, trail_template, tmp_path / "home")


def _fail(conn, batch_id: str, qid: str, worker: str, **kw) -> dict:
    return batch_store.fail_attempt(conn, batch_id, qid, worker, "KeyError: 'x' (at evidence.py:1 in f)",
                                    max_attempts=kw.get("max_attempts", 2), backoff_s=kw.get("backoff_s", 0.3),
                                    backoff_max_s=60, final=kw.get("final", False))


# --- the queue, in one process ----------------------------------------------------------------------

def test_a_failed_attempt_backs_off_then_fails_at_the_limit_and_retry_gives_fresh_attempts(batch_settings,
                                                                                           tmp_path) -> None:
    batch_id = _batch(batch_settings, tmp_path, TWO_QUESTIONS)
    with dbmod.connection(batch_settings) as a, dbmod.connection(batch_settings) as b:
        batch_store.register_worker(a, W1)
        batch_store.register_worker(b, W2)
        first = batch_store.claim_next(a, batch_id, W1, 60)
        row = _fail(a, batch_id, first["question_id"], W1)
        assert row["failed_at"] is None and row["retry_at"] is not None and row["lease_owner"] is None
        assert row["last_error"].startswith("KeyError")
        other = batch_store.claim_next(b, batch_id, W2, 60)  # the failed one waits out its back-off
        assert other["question_id"] != first["question_id"]
        assert batch_store.claim_next(a, batch_id, W1, 60) is None
        assert batch_store.reclaim(b, batch_id, W2, 60)["question_id"] == other["question_id"]  # after a reconnect
        assert batch_store.reclaim(a, batch_id, W1, 60) is None
        assert 0 < batch_store.next_change_in(a, batch_id) <= 0.3
        time.sleep(0.35)
        again = batch_store.claim_next(a, batch_id, W1, 60)
        assert again["question_id"] == first["question_id"] and again["claims"] == 2
        row = _fail(a, batch_id, first["question_id"], W1)  # attempt 2 of 2: failed, claimed by no one
        assert row["failed_at"] is not None and row["retry_at"] is None
        assert batch_store.open_count(a, batch_id) == 1  # the other, still leased
        states = {i["question_id"]: i["state"] for i in batch_store.items_with_state(a, batch_id)}
        assert states == {first["question_id"]: "failed", other["question_id"]: "leased"}
        assert batch_store.retry(a, batch_id, []) == [first["question_id"]]
        back = batch_store.claim_next(a, batch_id, W1, 60)
        assert back["question_id"] == first["question_id"] and back["claims"] == 1
        assert back["last_error"].startswith("KeyError")  # kept on record until an attempt succeeds


def test_a_question_whose_workers_die_on_every_attempt_is_failed(batch_settings, tmp_path) -> None:
    batch_id = _batch(batch_settings, tmp_path, TWO_QUESTIONS)
    with dbmod.connection(batch_settings) as b:
        batch_store.register_worker(b, W2)
        for attempt in (1, 2):
            with dbmod.connection(batch_settings) as a:  # a new worker process each time
                batch_store.register_worker(a, f"host-a:{attempt}:aaaaaa")
                held = batch_store.claim_next(a, batch_id, f"host-a:{attempt}:aaaaaa", 3600)
                assert held["question_id"] == "REC-1" and held["claims"] == attempt
            # a's connection is gone: its liveness lock goes a moment after the close
            deadline = time.monotonic() + 10
            while batch_store.items_with_state(b, batch_id)[0]["state"] == "leased" and time.monotonic() < deadline:
                time.sleep(0.05)
        assert batch_store.fail_exhausted(b, batch_id, max_attempts=2) == ["REC-1"]
        item = _items(batch_settings, batch_id)["REC-1"]
        assert item["failed_at"] is not None and "died or lost its lease" in item["last_error"]
        assert batch_store.claim_next(b, batch_id, W2, 60)["question_id"] == "BRE-1"


def test_skip_takes_the_lease_away_and_an_answered_question_cannot_be_skipped(batch_settings, tmp_path) -> None:
    batch_id = _batch(batch_settings, tmp_path, TWO_QUESTIONS)
    with dbmod.connection(batch_settings) as a:
        batch_store.register_worker(a, W1)
        held = batch_store.claim_next(a, batch_id, W1, 60)
        assert batch_store.skip(a, batch_id, [held["question_id"]], actor="ops", reason="out of scope") == \
            [held["question_id"]]
        assert not batch_store.renew(a, batch_id, held["question_id"], W1, 60)  # its worker records nothing
        a.execute("SET session_replication_role = replica")  # attach a fake audit id without an audit
        batch_store.mark_done(a, batch_id, "BRE-1", "AUD-x", W1)
        a.execute("RESET session_replication_role")
        assert batch_store.skip(a, batch_id, ["BRE-1"], actor="ops", reason="r") == []
        assert batch_store.open_count(a, batch_id) == 0
        with pytest.raises(InputError, match="no question NOPE"):
            batch_store.skip(a, batch_id, ["NOPE"], actor="ops", reason="r")
    item = _items(batch_settings, batch_id)[held["question_id"]]
    assert item["skipped_by"] == "ops" and item["skip_reason"] == "out of scope" and item["lease_owner"] is None


def test_an_idle_worker_is_woken_by_a_change_of_its_batch_not_by_polling(batch_settings, tmp_path) -> None:
    batch_id = _batch(batch_settings, tmp_path, TWO_QUESTIONS)
    with dbmod.connection(batch_settings) as idle, dbmod.connection(batch_settings) as busy:
        batch_store.listen(idle)
        batch_store.register_worker(busy, W2)
        held = batch_store.claim_next(busy, batch_id, W2, 60)
        batch_store.drop_wakeups(idle)
        started = time.monotonic()
        assert not batch_store.wait_for_change(idle, batch_id, 0.3)  # nothing happened: the timeout
        assert time.monotonic() - started >= 0.3
        _fail(busy, batch_id, held["question_id"], W2)  # a question given back sends a wake-up
        started = time.monotonic()
        assert batch_store.wait_for_change(idle, batch_id, 30)
        assert time.monotonic() - started < 5
        batch_store.drop_wakeups(idle)
        batch_store.retry(busy, batch_id, [held["question_id"]])  # so does an operator's retry
        assert batch_store.wait_for_change(idle, batch_id, 30)


# --- a worker that meets a failing question goes on ---------------------------------------------------

def test_one_worker_fails_the_raising_question_and_answers_the_others(batch_settings, embedder, tmp_path) -> None:
    batch_id = _batch(batch_settings, tmp_path, TWO_QUESTIONS)
    cfg = batch_settings.model_copy(update={"fault_injection": "raise@batch:retrieve:REC-1", "batch_max_attempts": 2,
                                            "batch_retry_backoff_s": 0.1})
    events: list[tuple] = []
    assert work(batch_id, cfg, embedder, events.append) == 1
    kinds = [(e[0], e[1]) for e in events if e[0] in ("retry", "failed", "done")]
    assert kinds == [("retry", "REC-1"), ("done", "BRE-1"), ("failed", "REC-1")]
    with dbmod.connection(batch_settings) as conn:
        result = outcome(conn, batch_id)
    rec = {q.question_id: q for q in result.questions}["REC-1"]
    assert rec.state == "failed" and rec.attempts == 2 and result.failed == ["REC-1"] and result.exit_code == 1
    assert rec.last_error.startswith("RuntimeError: injected fault at batch:retrieve in question REC-1 (at runner.py")
    assert result.queue["done"] == 1 and result.queue["failed"] == 1 and result.queue["attempts"] == 3


@pytest.mark.slow
def test_three_workers_one_question_always_raises_the_rest_finish(batch_settings, tmp_path, monkeypatch) -> None:
    """Before: each worker that claimed the raising question died (exit 1), and with three workers three
    questions never ran and no error was stored. Now: five questions answered, one failed with its error."""
    batch_id = _batch(batch_settings, tmp_path, SIX_QUESTIONS)
    env = {"EVIDENCE_BATCH_MAX_ATTEMPTS": "3", "EVIDENCE_BATCH_RETRY_BACKOFF_S": "0.2"}
    procs = [_worker(batch_settings, batch_id, lease_s=10, fault="raise@batch:retrieve:REC-1", env=env)
             for _ in range(3)]
    results = [p.communicate(timeout=300) for p in procs]
    for proc, (_, stderr) in zip(procs, results, strict=True):
        assert proc.returncode == 0, stderr[-1500:]
    assert sum(json.loads(stdout)["answered"] for stdout, _ in results) == 5
    items = _items(batch_settings, batch_id)
    assert items["REC-1"]["audit_id"] is None and items["REC-1"]["failed_at"] is not None
    assert items["REC-1"]["claims"] == 3 and "injected fault" in items["REC-1"]["last_error"]
    assert all(i["audit_id"] for q, i in items.items() if q != "REC-1")

    monkeypatch.setenv("DATABASE_URL", batch_settings.database_url)
    monkeypatch.setenv("EVIDENCE_HOME", str(batch_settings.home))
    shown = runner.invoke(app, ["audit", "status", batch_id, "--json"])
    assert shown.exit_code == 0, shown.output
    status = json.loads(shown.stdout)
    assert status["failed"] == ["REC-1"] and not status["all_ran"]
    assert status["queue"] | {"oldest_lease_age_s": None} == status["queue"]  # no live lease is left
    assert {k: status["queue"][k] for k in ("done", "failed", "open", "leased", "skipped")} == \
        {"done": 5, "failed": 1, "open": 0, "leased": 0, "skipped": 0}
    rec = next(q for q in status["questions"] if q["question_id"] == "REC-1")
    assert rec["state"] == "failed" and rec["attempts"] == 3 and "injected fault" in rec["last_error"]
    text = runner.invoke(app, ["audit", "status", batch_id])
    assert "FAILED" in text.stdout and "last error: RuntimeError: injected fault" in text.stdout
    assert "evidence audit retry" in text.stdout
    listed = runner.invoke(app, ["audit", "status"])
    assert f"{batch_id}" in listed.stdout and "5/6 done, 1 failed" in listed.stdout

    # resume answers nothing (the failed question waits for an operator) and exits 1 naming it
    resumed = runner.invoke(app, ["audit", "resume", batch_id, "--json"])
    assert resumed.exit_code == 1 and json.loads(resumed.stdout)["failed"] == ["REC-1"]
    retried = runner.invoke(app, ["audit", "retry", batch_id, "--json"])
    assert retried.exit_code == 0 and json.loads(retried.stdout)["retried"] == ["REC-1"]
    skipped = runner.invoke(app, ["audit", "skip", batch_id, "REC-1", "--reason", "known engine bug", "--json"])
    assert skipped.exit_code == 0 and json.loads(skipped.stdout)["skipped"] == ["REC-1"]
    final = json.loads(runner.invoke(app, ["audit", "status", batch_id, "--json"]).stdout)
    assert final["skipped"] == ["REC-1"] and final["failed"] == []
    _recorded_once_but(batch_settings, batch_id, 5)


def _recorded_once_but(settings: Settings, batch_id: str, answered: int) -> None:
    """Each answered question has one audit attached to its item; the chain verifies."""
    with dbmod.connection(settings) as conn:
        rows = audit_trail.list_audits(conn, batch=batch_id)
        items = [i for i in batch_store.items(conn, batch_id) if i["audit_id"]]
        report = verify_trail(conn, settings)
    assert len(rows) == answered == len(items) and len({r["run_id"] for r in rows}) == answered
    assert sorted(i["audit_id"] for i in items) == sorted(r["audit_id"] for r in rows)
    assert report.ok, report


# --- a worker whose connections break reconnects ------------------------------------------------------

def _terminate_others(settings: Settings) -> int:
    """What a failover does to a worker: every other session of the database is ended by the server."""
    with psycopg.connect(settings.database_url, autocommit=True) as admin:
        return len(admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                 "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchall())


@pytest.mark.slow
def test_a_worker_whose_connections_are_terminated_reconnects_and_records_each_question_once(
        batch_settings, tmp_path) -> None:
    batch_id = _batch(batch_settings, tmp_path, SIX_QUESTIONS)
    proc = _worker(batch_settings, batch_id, lease_s=10)
    deadline = time.monotonic() + 120
    _until_leased(batch_settings, batch_id, proc, deadline)
    cuts = 0
    for n in range(2):  # twice: mid-question both times, a few questions apart
        cuts += _terminate_others(batch_settings)
        while sum(1 for i in _items(batch_settings, batch_id).values() if i["audit_id"]) < 2 * (n + 1) \
                and proc.poll() is None:
            time.sleep(0.05)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr[-2000:]
    assert cuts >= 6 and "lost its database connection" in stderr and "reconnected after" in stderr
    assert json.loads(stdout)["answered"] == 6
    items = _items(batch_settings, batch_id)
    assert all(i["claims"] == 1 and i["failed_at"] is None for i in items.values())  # resumed: no new attempt
    _recorded_once(batch_settings, batch_id, 6)


def test_a_worker_with_no_server_at_its_start_fails_at_once(batch_settings, embedder) -> None:
    """Reconnecting is for a server that went away; none at the start is a setting to fix, said at once."""
    cfg = batch_settings.model_copy(update={"database_url": "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2"})
    started = time.monotonic()
    with pytest.raises(StorageError, match="cannot connect to PostgreSQL"):
        work("B-none", cfg, embedder, lambda event: None)
    assert time.monotonic() - started < cfg.batch_reconnect_s


@pytest.mark.parametrize(("error", "broken", "outcome_"), [
    (psycopg.OperationalError("server closed the connection unexpectedly"), True, "reconnect"),
    (RuntimeError("the witness directory is full"), False, "logged"),
], ids=["connection-lost", "other-error"])
def test_a_checkpoint_that_fails_after_a_recorded_question_loses_no_count(monkeypatch, caplog, error, broken,
                                                                          outcome_) -> None:
    """A question is counted before its checkpoint is signed: a connection lost while signing (the audit is
    committed) reconnects without the question going uncounted, and any other error is logged, not stored as a
    failed attempt of an answered question."""
    from engine.batch import runner

    class _Conn:
        def __init__(self) -> None:
            self.broken, self.closed = broken, False

    class _Beat:
        def __init__(self, *args) -> None:
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            pass

    def sign(conn, settings, seq):
        raise error

    def failed(*args, **kwargs):
        raise AssertionError("an answered question was stored as a failed attempt")

    appended = type("Appended", (), {"audit_id": "AUD-1", "seq": 7})()
    monkeypatch.setattr(runner, "_Heartbeat", _Beat)
    monkeypatch.setattr(runner, "_answer_item", lambda *args: appended)
    monkeypatch.setattr(runner.checkpoints, "after_append", sign)
    monkeypatch.setattr(runner, "_failed", failed)
    session = runner._Session(_Conn(), _Conn(), type("Saver", (), {"conn": _Conn()})())
    events: list[tuple] = []
    worker = runner._Worker("b", Settings(), None, events.append, "w")
    question = type("Q", (), {"id": "REC-1"})()
    item = {"question_id": "REC-1", "claims": 1, "position": 0}
    if outcome_ == "reconnect":
        with pytest.raises(runner._ConnectionLost):
            runner._attempt(session, worker, {}, question, item, worker.settings)
    else:
        runner._attempt(session, worker, {}, question, item, worker.settings)
        assert "no checkpoint after AUD-1" in caplog.text
    assert worker.done == 1 and ("done", "REC-1", "AUD-1") in events
