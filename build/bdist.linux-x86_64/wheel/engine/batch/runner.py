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
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from pydantic import BaseModel, ConfigDict, Field

from engine import db as dbmod
from engine.batch import store as batch_store
from engine.batch.checklist import AuditDefinition, Expectation, Question, Scope
from engine.config import Settings
from engine.errors import ConfigError, EngineError, ExitCode
from engine.models import new_run_id
from engine.search import store
from engine.search.retrieval import Filters
from engine.trail import store as audit_trail
from engine.trail.record import default_actor
from engine.trail.store import crash_point

Event = Callable[[tuple[Any, ...]], None]
logger = logging.getLogger(__name__)


class QuestionOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question_id: str
    question: str
    control_id: str | None
    audit_id: str | None
    status: str | None = Field(description="ANSWERED | NO_AUTHORITATIVE_EVIDENCE | REJECTED; None: not run yet")
    grounding_confidence: str | None
    verified_requirements: int
    expectations: list[dict[str, Any]]


class BatchOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    batch_id: str
    name: str
    all_ran: bool
    questions: list[QuestionOutcome]
    no_evidence: list[str]
    expectations_missed: list[str]
    fail_on: str
    exit_code: int


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


def _matches_document(name: str, req: dict[str, Any]) -> bool:
    low = name.strip().lower()
    key = (req.get("source_key") or "").lower()
    return low in ((req.get("document_title") or "").lower(), req["document_id"].lower(), key) or \
        key.endswith("/" + low)


def _matches_section(section: str | None, number: str) -> bool:
    if not section:
        return True
    want, have = section.strip().rstrip("."), (number or "").rstrip(".")
    return have == want or have.startswith(want + ".") or have.startswith(want + "(")


def check_expectations(record: dict[str, Any], expect: list[Expectation]) -> list[dict[str, Any]]:
    """Met when a requirement the answer cites comes from the expected document (and section)."""
    cited = [r for r in record.get("requirements", []) if r.get("cited")]
    out = []
    for e in expect:
        hits = [r["requirement_id"] for r in cited
                if _matches_document(e.document, r) and _matches_section(e.section, r.get("section_number", ""))]
        out.append({"document": e.document, "section": e.section, "met": bool(hits), "requirement_ids": hits})
    return out


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
    from agents.deps import Deps
    from agents.research import run_or_resume
    from engine.trail.record import record_research

    def progress(node: str) -> None:
        if beat.lost.is_set():
            raise LeaseLost(f"lease on {question.id} was taken over by another worker")
        crash_point(settings.fault_injection, f"batch:{node}")
        emit(("node", question.id, node))

    scope = batch["definition"].get("resolved_scope")
    deps = Deps.build(conn, settings, embedder=embedder, scope=Filters(
        source_types=tuple(scope["source_types"]), document_ids=tuple(scope["document_ids"]),
        current_only=scope["current_only"]) if scope else None)
    result = run_or_resume(question.text, deps, item["run_id"], saver, progress=progress)
    context = _batch_context(batch, question)

    def finish(record: dict[str, Any]) -> None:
        record["batch"]["expectations"] = check_expectations(record, question.expect)

    with conn.transaction():
        state = batch_store.lock_item(conn, batch["batch_id"], question.id)
        if state["audit_id"] is not None:
            return None
        if state["lease_owner"] != worker_id:
            raise LeaseLost(f"lease on {question.id} was taken over by {state['lease_owner']}")
        appended = record_research(conn, settings, embedder, result.model_dump(mode="json"), llm=deps.llm,
                                   actor=batch["actor"], batch=context, finish=finish)
        batch_store.mark_done(conn, batch["batch_id"], question.id, appended.audit_id, worker_id)
    return appended


def work(batch_id: str, settings: Settings, embedder: Any, emit: Event, *, worker_id: str | None = None) -> int:
    """Answer the batch's questions until every one has its audit. Returns how many this worker recorded.

    When nothing is free but questions are still open (leased to other workers), the worker waits and
    looks again: a lease that runs out, or a worker that dies, hands its question to whoever claims next.
    """
    from agents.research import postgres_checkpointer

    worker_id = worker_id or new_worker_id()
    lease_s = settings.batch_lease_s
    done = 0
    with dbmod.connection(settings) as conn, dbmod.connection(settings) as control, \
            postgres_checkpointer(settings) as saver:
        batch_store.register_worker(control, worker_id)
        batch = batch_store.get(conn, batch_id)
        definition = AuditDefinition.model_validate(batch["definition"]["checklist"])
        questions = {q.id: q for q in definition.questions}
        run_settings = effective_settings(settings, definition)
        while True:
            item = batch_store.claim_next(control, batch_id, worker_id, lease_s)
            if item is None:
                if batch_store.open_count(control, batch_id) == 0:
                    return done
                time.sleep(min(2.0, lease_s / 3))
                continue
            logger.debug("%s: %s claimed %s", batch_id, worker_id, item["question_id"])
            emit(("start", item["question_id"], item["position"]))
            try:
                with _Heartbeat(control, item, worker_id, lease_s) as beat:
                    appended = _answer_item(conn, run_settings, embedder, saver, batch,
                                            questions[item["question_id"]], item, worker_id, beat, emit)
            except LeaseLost as exc:
                logger.info("%s: %s lost its lease: %s", batch_id, worker_id, exc)
                emit(("lost", item["question_id"], str(exc)))
                continue
            if appended is not None:
                done += 1
                emit(("done", item["question_id"], appended.audit_id))


def _die_with_parent() -> None:
    """Linux: a worker gets SIGKILL when its coordinator dies, so no orphan keeps answering."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _worker_main(batch_id: str, settings: Settings, queue: Any) -> None:
    _die_with_parent()
    from engine.search.embeddings import Embedder

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
            from engine.search.embeddings import Embedder

            work(batch_id, settings, embedder or Embedder.from_settings(settings), emit)
            return
        errors = _run_workers(batch_id, settings, workers, emit)
    if errors:
        raise EngineError(f"{len(errors)} worker(s) failed: {'; '.join(errors)}\n"
                          f"finished questions are kept; continue with 'evidence audit resume {batch_id}'")


def outcome(conn: psycopg.Connection, batch_id: str, *, fail_on: str | None = None) -> BatchOutcome:
    """Per-question results and the exit status the checklist's gate gives."""
    batch = batch_store.get(conn, batch_id)
    definition = AuditDefinition.model_validate(batch["definition"]["checklist"])
    texts = {q.id: q for q in definition.questions}
    rows = []
    for item in batch_store.items(conn, batch_id):
        q = texts[item["question_id"]]
        rec = audit_trail.get(conn, item["audit_id"])["record"] if item["audit_id"] else None
        answer = (rec or {}).get("answer") or {}
        rows.append(QuestionOutcome(
            question_id=q.id, question=q.text, control_id=q.control_id, audit_id=item["audit_id"],
            status=answer.get("status"), grounding_confidence=answer.get("grounding_confidence"),
            verified_requirements=sum(1 for r in (rec or {}).get("requirements", []) if r["verified"]),
            expectations=((rec or {}).get("batch") or {}).get("expectations", [])))
    no_evidence = [r.question_id for r in rows if r.status not in (None, "ANSWERED")]
    missed = [r.question_id for r in rows if any(not e["met"] for e in r.expectations)]
    gate = fail_on or definition.fail_on
    failed = {"any": bool(no_evidence or missed), "no-evidence": bool(no_evidence), "expect": bool(missed),
              "never": False}[gate]
    return BatchOutcome(batch_id=batch_id, name=batch["name"], all_ran=all(r.audit_id for r in rows), questions=rows,
                        no_evidence=no_evidence, expectations_missed=missed, fail_on=gate,
                        exit_code=ExitCode.GATE_FAILED if failed else ExitCode.SUCCESS)


def compare(conn: psycopg.Connection, batch_a: str, batch_b: str) -> dict[str, Any]:
    """Per question id: what changed between two runs of the same checklist (like `trail diff`)."""
    from engine.trail.queries import diff_records

    a = {i["question_id"]: i for i in batch_store.items(conn, batch_a)}
    b = {i["question_id"]: i for i in batch_store.items(conn, batch_b)}
    out: dict[str, Any] = {"a": batch_a, "b": batch_b, "only_in_a": sorted(a.keys() - b.keys()),
                           "only_in_b": sorted(b.keys() - a.keys()), "questions": {}}
    for qid in [q for q in a if q in b]:
        if not (a[qid]["audit_id"] and b[qid]["audit_id"]):
            out["questions"][qid] = {"note": "not answered in both batches"}
            continue
        out["questions"][qid] = diff_records(audit_trail.get(conn, a[qid]["audit_id"])["record"],
                                             audit_trail.get(conn, b[qid]["audit_id"])["record"])
    return out
