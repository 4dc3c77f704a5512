"""Batch runs of audit definitions: every question a full audit, resumable, in parallel workers.

A batch stores its definition (with the scope resolved to exact document ids, so a resumed or
re-read batch means the same corpus) and one item per question with a fixed research run id.
Workers lease items: a claim (FOR UPDATE SKIP LOCKED, a short transaction) gives the item to one
worker until its lease expires, a heartbeat thread renews the lease while the worker answers, and
the audit is recorded together with the item's `audit_id` in one transaction that first checks the
lease is still the worker's own. A worker that dies (its connection, and so its liveness lock, is
gone) or hangs (its lease runs out) has its item taken over by another worker, which resumes it
from its research checkpoint; a worker that wakes up to find its lease lost stops without
recording. The trail accepts one audit per run id, so a question is recorded once, and the trail
stays one chain because every append is serialized in the database. Workers are processes sharing
one PostgreSQL, on one machine (`--workers N`) or several (`evidence audit worker BATCH`).

A question that raises ends its attempt, not its worker: the error is stored on the item, which is
claimed again after a back-off, and failed after `batch_max_attempts` (a question whose worker dies
on every attempt too); the worker goes on with the other questions. A worker whose connection breaks
(a server restart, a failover) reconnects with back-off for `batch_reconnect_s` and resumes the
question it held. Idle workers wait for a NOTIFY (an item freed, done, failed or reset) rather than
polling, with a poll as the fallback (a dead worker's question sends none).
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import socket
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from agents.research import postgres_checkpointer
from engine import db as dbmod
from engine.batch import store as batch_store
from engine.batch.ask import Hooks, ask_and_record, pinned_scope
from engine.batch.checklist import AuditDefinition, Question, Scope
from engine.batch.results import check_expectations
from engine.config import Settings, secret_values
from engine.errors import ConfigError, EngineError, StorageError, redact
from engine.models import new_run_id
from engine.search import store
from engine.search.embeddings import Embedder
from engine.trail import checkpoints
from engine.trail import store as audit_trail
from engine.trail.record import default_actor
from engine.trail.store import crash_point

Event = Callable[[tuple[Any, ...]], None]
logger = logging.getLogger(__name__)


def effective_settings(base: Settings, definition: AuditDefinition) -> Settings:
    """The base settings with the definition's backend and (validated) overrides."""
    return base.model_copy(update={**definition.parameters, "backend": definition.backend})


def resolve_scope(conn: psycopg.Connection, scope: Scope) -> dict[str, Any] | None:
    """The scope as exact filters: named documents become the ids of their current versions."""
    if not scope.restricted:
        return None
    ids: list[str] = list(scope.versions)
    for name in scope.documents:
        current = [d.id for d in store.find_documents(conn, name) if d.is_current]
        if not current:
            raise ConfigError(f"scope names document '{name}', which is not in the corpus; "
                              "'evidence documents' lists what is there")
        ids.extend(current)
    known = {d for d in ids if store.get_document(conn, d) is not None}
    if missing := sorted(set(ids) - known):
        raise ConfigError(f"scope pins document version(s) {missing}, which are not in the corpus")
    return {"source_types": sorted(scope.source_types), "document_ids": sorted(set(ids)),
            "current_only": not scope.versions}


def start_batch(conn: psycopg.Connection, settings: Settings, definition: AuditDefinition, *, path: Path,
                sha256: str, actor: str | None) -> str:
    """Create the batch and its items; returns the batch id."""
    batch_id = f"B-{datetime.now(UTC):%Y%m%d}-{uuid.uuid4().hex[:8]}"
    stored = {"checklist": definition.model_dump(mode="json"), "resolved_scope": resolve_scope(conn, definition.scope),
              "description": definition.description}
    batch_store.create(conn, batch_id=batch_id, name=definition.name, path=str(path), sha256=sha256,
                       definition=stored, actor=actor or settings.actor or default_actor(),
                       settings_hash=effective_settings(settings, definition).fingerprint(),
                       items=[(q.id, new_run_id()) for q in definition.questions])
    return batch_id


def _batch_context(batch: dict[str, Any], question: Question) -> dict[str, Any]:
    return {"batch_id": batch["batch_id"], "name": batch["name"], "definition_sha256": batch["definition_sha256"],
            "question_id": question.id, "control_id": question.control_id,
            "scope": batch["definition"].get("resolved_scope"),
            "expect": [e.model_dump() for e in question.expect], "expectations": []}


class LeaseLost(EngineError):
    """This worker's lease on a question was taken over: another worker answers it now."""


def new_worker_id() -> str:
    """host:pid:random, unique across the machines sharing the database."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class _Heartbeat:
    """Renews the lease every third of its length on the worker's control connection (a thread of its own,
    so a long node does not let the lease run out); `lost` is set once the lease is no longer ours."""

    def __init__(self, conn: psycopg.Connection, item: dict[str, Any], worker_id: str, lease_s: float) -> None:
        self.conn, self.item, self.worker_id, self.lease_s = conn, item, worker_id, lease_s
        self.lost, self._stop = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="lease-heartbeat")

    def _run(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            try:
                mine = batch_store.renew(self.conn, self.item["batch_id"], self.item["question_id"], self.worker_id,
                                         self.lease_s)
            except psycopg.Error:
                mine = False  # cannot renew: behave as if lost; recording re-checks the lease anyway
            if not mine:
                self.lost.set()
                return

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _answer_item(conn: psycopg.Connection, settings: Settings, embedder: Any, saver: Any, batch: dict[str, Any],
                 question: Question, item: dict[str, Any], worker_id: str, beat: _Heartbeat,
                 emit: Event) -> audit_trail.Appended | None:
    """Research (or resume) the question, then record it if the lease is still ours; None when another
    worker recorded it meanwhile. Raises LeaseLost when the lease was taken over."""

    def progress(node: str) -> None:
        if beat.lost.is_set():
            raise LeaseLost(f"lease on {question.id} was taken over by another worker")
        crash_point(settings.fault_injection, f"batch:{node}")
        if settings.fault_injection == f"raise@batch:{node}:{question.id}":
            raise RuntimeError(f"injected fault at batch:{node} in question {question.id}")
        emit(("node", question.id, node))

    def finish(record: dict[str, Any]) -> None:
        record["batch"]["expectations"] = check_expectations(record, question.expect)

    def leased(record: Callable[[], audit_trail.Appended]) -> audit_trail.Appended | None:
        with conn.transaction():
            state = batch_store.lock_item(conn, batch["batch_id"], question.id)
            if state["audit_id"] is not None:
                return None
            if state["lease_owner"] != worker_id:
                raise LeaseLost(f"lease on {question.id} was taken over by {state['lease_owner']}")
            appended = record()
            batch_store.mark_done(conn, batch["batch_id"], question.id, appended.audit_id, worker_id)
        return appended

    appended = ask_and_record(conn, settings, question.text, pinned_scope(batch["definition"].get("resolved_scope")),
                              run_id=item["run_id"], saver=saver, resume=True, embedder=embedder,
                              hooks=Hooks(node=progress), actor=batch["actor"], batch=_batch_context(batch, question),
                              finish=finish, checkpoint=False, recording=leased).entry
    return appended


class _ConnectionLost(Exception):
    """A connection of the worker broke (a server restart, a failover): reconnect and go on."""


@dataclass
class _Session:
    """A worker's connections: research and recording (`conn`), leases and wake-ups (`control`), and
    LangGraph's checkpoints (`saver`, on a connection of its own)."""

    conn: psycopg.Connection
    control: psycopg.Connection
    saver: Any

    def broken(self) -> bool:
        return any(c.broken or c.closed for c in (self.conn, self.control, self.saver.conn))


@dataclass
class _Worker:
    """What a worker keeps across its sessions (reconnects)."""

    batch_id: str
    settings: Settings
    embedder: Any
    emit: Event
    worker_id: str
    done: int = 0
    drops: dict[str, list[str]] = field(default_factory=dict)  # question -> connection losses while answering it


RECONNECT_FIRST_S, RECONNECT_MAX_S = 0.5, 5.0


class _Reconnect:
    """Back-off between reconnects (0.5 s doubling to 5 s), for at most `window_s` from the first loss."""

    def __init__(self, window_s: float, worker: _Worker) -> None:
        self.window_s, self.worker = window_s, worker
        self.since: float | None = None
        self.tries = 0

    def lost(self, exc: BaseException) -> None:
        """Sleep before the next try, or raise StorageError when the window is spent."""
        now = time.monotonic()
        self.since = self.since if self.since is not None else now
        left = self.window_s - (now - self.since)
        reason = redact(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
                        secret_values())
        if left <= 0:
            raise StorageError(
                f"batch worker {self.worker.worker_id} lost its connection to PostgreSQL and could not reconnect "
                f"in {self.window_s:g} s ({self.tries} tries; last: {reason}). The question it held goes to another "
                f"worker; check the server ('evidence db status') and start the worker again "
                f"('evidence audit worker {self.worker.batch_id}').") from exc
        delay = min(RECONNECT_MAX_S, RECONNECT_FIRST_S * 2 ** self.tries, left)
        self.tries += 1
        logger.warning("%s: %s lost its database connection (%s); reconnecting in %.1f s (try %d, for %.0f s more)",
                       self.worker.batch_id, self.worker.worker_id, reason, delay, self.tries, left)
        self.worker.emit(("reconnect", "-", f"connection lost ({reason}); reconnecting in {delay:.1f} s"))
        time.sleep(delay)

    def connected(self) -> None:
        if self.since is not None:
            logger.warning("%s: %s reconnected after %.1f s (%d tries)", self.worker.batch_id, self.worker.worker_id,
                           time.monotonic() - self.since, self.tries)
            self.worker.emit(("reconnect", "-", f"reconnected after {time.monotonic() - self.since:.1f} s"))
        self.since, self.tries = None, 0


def _open_session(settings: Settings, stack: ExitStack, checkpointer: Callable[[Settings], Any]) -> _Session:
    """The worker's connections, closed with `stack`; _ConnectionLost when the server cannot be reached."""
    try:
        conn = stack.enter_context(dbmod.connection(settings))
        control = stack.enter_context(dbmod.connection(settings))
        saver = stack.enter_context(checkpointer(settings))
    except StorageError as exc:
        if isinstance(exc.__cause__, psycopg.OperationalError):
            raise _ConnectionLost(str(exc)) from exc
        raise
    except psycopg.OperationalError as exc:
        raise _ConnectionLost(str(exc)) from exc
    return _Session(conn, control, saver)


def work(batch_id: str, settings: Settings, embedder: Any, emit: Event, *, worker_id: str | None = None) -> int:
    """Answer the batch's questions until every one has its audit, or failed, or was skipped. Returns how many
    this worker recorded.

    When nothing is free but questions are still open (leased to other workers, or waiting out a back-off),
    the worker waits for a wake-up and looks again: a lease that runs out, or a worker that dies, hands its
    question to whoever claims next. A lost connection is reopened (`batch_reconnect_s`).
    """

    worker = _Worker(batch_id, settings, embedder, emit, worker_id or new_worker_id())
    reconnect = _Reconnect(settings.batch_reconnect_s, worker)
    connected = False
    while True:
        try:
            with ExitStack() as stack:
                session = _open_session(settings, stack, postgres_checkpointer)
                connected = True
                reconnect.connected()
                _work_connected(session, worker)
                return worker.done
        except _ConnectionLost as exc:
            if not connected and exc.__cause__ is not None:
                raise exc.__cause__ from None  # no server at the start: a setting to fix, said at once
            reconnect.lost(exc.__cause__ or exc)


def _work_connected(s: _Session, worker: _Worker) -> None:
    """The worker's loop on one set of connections; _ConnectionLost when one of them breaks."""
    try:
        batch_store.register_worker(s.control, worker.worker_id)
        batch_store.listen(s.control)
        batch = batch_store.get(s.conn, worker.batch_id)
        definition = AuditDefinition.model_validate(batch["definition"]["checklist"])
        questions = {q.id: q for q in definition.questions}
        run_settings = effective_settings(worker.settings, definition)
        cfg = worker.settings
        # the question this worker held when its connection broke, if no other worker took it over meanwhile
        item = batch_store.reclaim(s.control, worker.batch_id, worker.worker_id, cfg.batch_lease_s)
        while True:
            if item is None:
                batch_store.drop_wakeups(s.control)
                for qid in batch_store.fail_exhausted(s.control, worker.batch_id, cfg.batch_max_attempts):
                    logger.error("%s: %s failed: no attempt of %d finished", worker.batch_id, qid,
                                 cfg.batch_max_attempts)
                    worker.emit(("failed", qid, f"no attempt of {cfg.batch_max_attempts} finished (its workers "
                                                "died)"))
                item = batch_store.claim_next(s.control, worker.batch_id, worker.worker_id, cfg.batch_lease_s)
            if item is None:
                if batch_store.open_count(s.control, worker.batch_id) == 0:
                    return
                due = batch_store.next_change_in(s.control, worker.batch_id)
                wait = cfg.batch_poll_s if due is None else min(cfg.batch_poll_s, due + 0.05)
                batch_store.wait_for_change(s.control, worker.batch_id, max(0.05, wait))
                continue
            _attempt(s, worker, batch, questions[item["question_id"]], item, run_settings)
            item = None
    except psycopg.Error as exc:
        if s.broken():
            raise _ConnectionLost(str(exc)) from exc
        raise


def _attempt(s: _Session, worker: _Worker, batch: dict[str, Any], question: Question, item: dict[str, Any],
             run_settings: Settings) -> None:
    """One attempt at a claimed question: recorded, lost to another worker, or failed (error stored)."""
    qid, cfg = question.id, worker.settings
    logger.debug("%s: %s claimed %s (attempt %d)", worker.batch_id, worker.worker_id, qid, item["claims"])
    worker.emit(("start", qid, item["position"]))
    if len(drops := worker.drops.get(qid, [])) >= cfg.batch_max_attempts:
        _failed(s, worker, item, f"the connection to PostgreSQL broke {len(drops)} times while this question was "
                                 f"answered (last: {drops[-1]})", final=True)
        return
    try:
        with _Heartbeat(s.control, item, worker.worker_id, cfg.batch_lease_s) as beat:
            appended = _answer_item(s.conn, run_settings, worker.embedder, s.saver, batch, question, item,
                                    worker.worker_id, beat, worker.emit)
    except Exception as exc:  # noqa: BLE001 - a question's failure is stored with it; the worker goes on
        if s.broken():
            worker.drops.setdefault(qid, []).append(_describe(exc))
            raise _ConnectionLost(str(exc)) from exc
        if isinstance(exc, LeaseLost):
            logger.info("%s: %s lost its lease: %s", worker.batch_id, worker.worker_id, exc)
            worker.emit(("lost", qid, str(exc)))
            return
        logger.error("%s: %s: attempt %d at %s failed", worker.batch_id, worker.worker_id, item["claims"], qid,
                     exc_info=exc)
        _failed(s, worker, item, _describe(exc), final=False)
        if isinstance(exc, ConfigError):
            raise  # a setting is wrong for every question: end the worker (exit 2), the error stays on the item
        return
    worker.drops.pop(qid, None)
    if appended is not None:
        worker.done += 1
        worker.emit(("done", qid, appended.audit_id))
        _checkpoint(s, worker, appended, run_settings)


def _checkpoint(s: _Session, worker: _Worker, appended: audit_trail.Appended, settings: Settings) -> None:
    """The checkpoint after a recorded question: signed after its commit, so the trail's append lock (held to the
    end of the transaction) is not held while signing (other workers append meanwhile, and the checkpoint covers
    their audits too), and after the question is counted: a connection lost while signing loses nothing (the
    audit is committed, the next checkpoint covers it) and is not taken for a failed question."""
    try:
        checkpoints.after_append(s.conn, settings, appended.seq)
    except ConfigError:
        raise  # a signing key or command to fix: end the worker (exit 2)
    except Exception as exc:  # noqa: BLE001 - the audit stands; the next checkpoint covers it
        if s.broken():
            raise _ConnectionLost(str(exc)) from exc
        logger.error("%s: no checkpoint after %s (the next one covers it)", worker.batch_id, appended.audit_id,
                     exc_info=exc)


def _describe(exc: BaseException) -> str:
    """A failed attempt's error for the item and the operator: type, message, where it was raised; redacted."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    text = f"{type(exc).__name__}: {str(exc).strip()}{where}"
    return redact(text, secret_values())[:2000]


def _failed(s: _Session, worker: _Worker, item: dict[str, Any], error: str, *, final: bool) -> None:
    cfg, qid = worker.settings, item["question_id"]
    row = batch_store.fail_attempt(s.control, worker.batch_id, qid, worker.worker_id, error,
                                   max_attempts=cfg.batch_max_attempts, backoff_s=cfg.batch_retry_backoff_s,
                                   backoff_max_s=cfg.batch_retry_backoff_max_s, final=final)
    if row is None:
        worker.emit(("lost", qid, f"lease on {qid} was taken over while its attempt failed: {error}"))
    elif row["failed_at"] is not None:
        worker.emit(("failed", qid, f"{error} [attempt {row['claims']} of {cfg.batch_max_attempts}; "
                                    f"'evidence audit retry {worker.batch_id} {qid}' tries again]"))
    else:
        worker.emit(("retry", qid, f"{error} [attempt {row['claims']} of {cfg.batch_max_attempts}; "
                                   f"claimed again from {row['retry_at']:%H:%M:%S}]"))


def _die_with_parent() -> None:
    """Linux: a worker gets SIGKILL when its coordinator dies, so no orphan keeps answering."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _worker_main(batch_id: str, settings: Settings, queue: Any) -> None:
    _die_with_parent()

    try:
        work(batch_id, settings, Embedder.from_settings(settings), queue.put)
    except EngineError as exc:
        queue.put(("error", None, str(exc)))
        raise SystemExit(exc.exit_code) from exc


def _run_workers(batch_id: str, settings: Settings, workers: int, emit: Event) -> list[str]:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker_main, args=(batch_id, settings, queue), name=f"worker-{i}")
             for i in range(workers)]
    for p in procs:
        p.start()
    errors: list[str] = []
    while any(p.is_alive() for p in procs) or not queue.empty():
        try:
            event = queue.get(timeout=0.2)
        except Exception:  # noqa: BLE001 - queue.Empty, or a worker died while writing
            continue
        if event[0] == "error":
            errors.append(event[2])
        emit(event)
    for p in procs:
        p.join()
        if p.exitcode not in (0, None) and not errors:
            errors.append(f"{p.name} exited with status {p.exitcode}")
    return errors


def run_batch(settings: Settings, batch_id: str, *, workers: int = 1, embedder: Any = None,
              emit: Event | None = None) -> None:
    """Answer every open question of the batch (one coordinator per batch at a time)."""
    emit = emit or (lambda event: None)
    with dbmod.connection(settings) as lock_conn:
        if not batch_store.try_lock(lock_conn, batch_id):
            raise EngineError(f"batch {batch_id} is being run by another process; wait for it or stop it first")
        if workers <= 1:

            work(batch_id, settings, embedder or Embedder.from_settings(settings), emit)
            return
        errors = _run_workers(batch_id, settings, workers, emit)
    if errors:
        raise EngineError(f"{len(errors)} worker(s) failed: {'; '.join(errors)}\n"
                          f"finished questions are kept; continue with 'evidence audit resume {batch_id}'")
