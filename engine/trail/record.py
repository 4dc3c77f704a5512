"""Build the audit record of one answered question (the evidence stage's output plus its lineage).

The record is an `AuditRecord` (an amendment an `AmendmentRecord`), handed to the trail as the plain JSON data
of `as_record()`; `engine.trail.store.append` hashes its canonical form. Everything a
reader needs to defend the answer later is inside it: who asked what and when, the engine version,
settings (and their hash), backend and models, skill hashes, the corpus snapshot (every current
document with its SHA-256 and version), every research step, every requirement with its verdict
and its offsets in the stored document text, the answer, the review and the run metrics.
"""

from __future__ import annotations

import getpass
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated, Any, ClassVar, Literal

import psycopg
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, PlainSerializer, model_serializer

from engine import __version__
from engine.config import LOCAL_SETTINGS, NOT_RESULT_SETTINGS, Settings
from engine.ingest.citations import quote_citation
from engine.relevance.cross import load_cross_encoder
from engine.relevance.model import cross_identity, rank_inputs
from engine.relevance.scorer import load_scorer
from engine.search import store
from engine.trail import checkpoints
from engine.trail import store as audit_trail
from engine.trail.canonical import utc_timestamp

RECORD_SCHEMA = "evidence-engine/audit-record@1"
_SECRET_SETTINGS = LOCAL_SETTINGS | NOT_RESULT_SETTINGS  # machine-local paths and secrets: never recorded

Timestamp = Annotated[AwareDatetime, PlainSerializer(utc_timestamp, return_type=str)]


class EngineStamp(BaseModel):
    """The code that wrote a record."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "evidence-engine"
    version: str


class _TrailRecord(BaseModel):
    """What every record model shares: frozen, no unknown fields, and its plain data for the trail
    (`as_record()`, values inside passed through as given) leaves out the optional links in `_omit_when_none`
    while they are unset."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    _omit_when_none: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: Any) -> dict[str, Any]:
        return _omitting(handler(self), self._omit_when_none)

    def as_record(self) -> dict[str, Any]:
        """The record as plain data for the trail."""
        return self.model_dump(by_alias=True)


class AuditRecord(_TrailRecord):
    """The audit record of one answered (or refused) question: what `engine.trail.store.append` hashes.

    `as_record()` is the plain JSON data that is hashed, the same keys a hand-built record had: `supersedes` and
    `llm_usage` appear only when set, every other field always (None as null).
    """

    schema_: str = Field(default=RECORD_SCHEMA, alias="schema", description="The record format")
    kind: Literal["answer"] = "answer"
    audit_id: str
    question: str
    language: dict[str, Any] | None = Field(description="Question and corpus language, and a note")
    actor: str
    asked_at: Timestamp
    recorded_at: Timestamp
    run_id: str = Field(description="The research run (its checkpoints in LangGraph's tables)")
    batch_id: str | None = None
    batch: dict[str, Any] | None = Field(default=None, description="The batch, checklist and question; "
                                         "the auditor's expectations and whether each was met")
    scope: dict[str, Any] | None = Field(default=None, description="Documents and source types the question "
                                         "was limited to (engine.search.scope)")
    supersedes: str | None = Field(default=None, description="The audit this one answers again (trail rerun)")
    engine: EngineStamp
    settings_hash: str
    settings: dict[str, Any] = Field(description="The effective settings without secrets or local paths")
    backend: str | None
    models: dict[str, Any] = Field(description="Embedding, relevance and LLM models and their identities")
    skills: dict[str, str] = Field(description="Prompt name -> content hash")
    corpus: list[dict[str, Any]] = Field(description="Every current document when the question was answered")
    research: dict[str, Any] = Field(description="The research lineage, without chunk texts")
    requirements: list[dict[str, Any]] = Field(description="Each extracted requirement, its verdict and offsets")
    evidence_chunks: dict[str, Any]
    answer: dict[str, Any]
    review: dict[str, Any] | None
    evidence_audit_trail: Any
    fallbacks: list[Any]
    llm_usage: dict[str, Any] | None = Field(default=None, description="What the question cost (llm backend)")

    _omit_when_none: ClassVar[tuple[str, ...]] = ("supersedes", "llm_usage")


class AmendmentRecord(_TrailRecord):
    """A record that amends another (a reviewer's note, a correction, an issued report, a sign-off): it points
    to the record it amends. `as_record()` omits `superseded_by` and `report` when unset; a sign-off adds its
    own part to that data (`engine.web.signoff`)."""

    schema_: str = Field(default=RECORD_SCHEMA, alias="schema", description="The record format")
    kind: str = Field(description="note, correction, report or signoff")
    audit_id: str
    amends: str = Field(description="The audit id of the record amended")
    question: str
    actor: str
    asked_at: Timestamp
    recorded_at: Timestamp
    reason: str
    text: str
    engine: EngineStamp
    superseded_by: str | None = Field(default=None, description="The audit answering the question again "
                                      "(a correction written by trail rerun)")
    report: dict[str, Any] | None = Field(default=None, description="An issued report: its file's SHA-256 and "
                                          "size, format, the audits it reports, the signer certificate's SHA-256")

    _omit_when_none: ClassVar[tuple[str, ...]] = ("superseded_by", "report")


def _omitting(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """`data` without those of `keys` that are None: optional links a record carries only when set."""
    return {k: v for k, v in data.items() if not (k in keys and v is None)}


def engine_version() -> str:
    """The package version (`engine.__version__`): the code that answered. Not the installed distribution's
    metadata, which an editable install keeps at the version it was installed with."""

    return __version__


@lru_cache(maxsize=4)
def relevance_identity(settings: Settings) -> dict[str, Any]:
    """Name and sha256 of the learned relevance scorer (the gate and selection; reranking when on), the
    thresholds in effect (a scorer.json that lacks one takes the engine's default, which its sha256 does not
    name), whether the rank head read late interaction, the cross-encoder it read, if any, and whether the
    context head ranked neighbours too."""

    scorer = load_scorer(settings.relevance_dir)
    _, late, cross, context = rank_inputs(
        scorer, late_interaction=settings.late_interaction, neighbours=settings.neighbours,
        cross=load_cross_encoder(settings.relevance_dir) if settings.cross_encoder else None)
    out = {**scorer.identity, "thresholds": dict(sorted(scorer.thresholds.items())), "rerank": settings.rerank,
           "late_interaction": late, "neighbours": context is not None}
    if cross is not None:
        out["cross_encoder"] = cross_identity(cross)
    return out


def new_audit_id(now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    return f"AUD-{now:%Y%m%d}-{uuid.uuid4().hex[:10]}"


def default_actor() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers)
        return "unknown"


def public_settings(settings: Settings) -> dict[str, Any]:
    """The effective settings without secrets or machine-local paths."""
    data = settings.model_dump(mode="json", exclude=set(_SECRET_SETTINGS))
    return {k: v for k, v in data.items() if not k.startswith("_")}


def corpus_snapshot(conn: psycopg.Connection) -> list[dict[str, Any]]:
    """Every current document: the corpus the answer was given."""
    return [{"document_id": d.id, "source_key": d.source_key, "title": d.title, "version": d.version,
             "content_sha256": d.content_sha256, "source_type": d.source_type}
            for d in store.list_documents(conn)]


def _requirements(conn: psycopg.Connection, evidence: dict[str, Any]) -> list[dict[str, Any]]:
    """Each extracted requirement with its verdict and its offsets in the document text."""
    rows = evidence.get("extracted_requirements", [])
    chunks = store.get_chunks(conn, list(dict.fromkeys(r["chunk_id"] for r in rows)))
    docs = {d.id: d for d in (store.get_document(conn, i) for i in {c.document_id for c in chunks.values()}) if d}
    cited = {i for s in evidence.get("statements", []) for i in s.get("requirement_ids", [])}
    out = []
    for r in rows:
        chunk = chunks.get(r["chunk_id"])
        base = chunk.char_start if chunk else -1
        doc = docs.get(chunk.document_id) if chunk else None
        citation = quote_citation(chunk.section_number, chunk.section_path, chunk.metadata,
                                  base + r["char_start"]) if chunk else ""
        out.append({**r, "cited": r["requirement_id"] in cited,
                    "source_key": doc.source_key if doc else "",
                    "section_number": chunk.section_number if chunk else "", "citation": citation,
                    "doc_char_start": base + r["char_start"], "doc_char_end": base + r["char_end"]})
    return out


def _research(research: dict[str, Any]) -> dict[str, Any]:
    """Research lineage without the chunk texts (cited chunks are kept whole under evidence_chunks)."""
    evidence = [{k: v for k, v in e.items() if k != "text"} for e in research.get("evidence", [])]
    keep = ("stem", "options", "question_type", "rejected", "rejection_reason", "steps", "working_memory",
            "memory_hit", "fallbacks", "metrics")
    return {**{k: research.get(k) for k in keep}, "evidence": evidence}


def _answer(evidence: dict[str, Any] | None, research: dict[str, Any]) -> dict[str, Any]:
    if evidence is None:  # the guard refused the question
        return {"status": "REJECTED", "grounding_confidence": "insufficient",
                "final_answer": f"Rejected: {research.get('rejection_reason') or 'the question was refused'}",
                "statements": [], "requirement_references": {}, "unused_requirements": [], "conflicts": [],
                "missing_evidence": [], "selected_option": None}
    keys = ("status", "grounding_confidence", "final_answer", "statements", "requirement_references",
            "unused_requirements", "conflicts", "missing_evidence", "selected_option")
    answer = {k: evidence.get(k) for k in keys}
    for key in ("direct_answer", "parts"):  # answers made before parts existed carry neither
        if key in evidence:
            answer[key] = evidence[key]
    return answer


def build_record(conn: psycopg.Connection, settings: Settings, research: dict[str, Any], *, actor: str | None,
                 asked_at: datetime, models: dict[str, Any], skills: dict[str, str],
                 batch: dict[str, Any] | None = None, audit_id: str | None = None,
                 llm_usage: dict[str, Any] | None = None, scope: dict[str, Any] | None = None,
                 supersedes: str | None = None) -> AuditRecord:
    """The audit record of a finished research run (`ResearchResult.model_dump(mode="json")`).

    `llm_usage` (llm backend) is what the question cost and how the endpoint behaved
    (`LLMClient.usage()`: requests, calls, characters in and out, waits, whether the circuit opened).

    `batch` (batch runs only) carries the batch id, checklist name and hash, question id, control
    id, the auditor's expectations and whether each was met; it is hashed with the rest. `scope`:
    the documents and source types the question was limited to (`engine.search.scope`). `supersedes`: the
    audit this one answers again against changed documents (`trail rerun`).
    """
    evidence = research.get("evidence_result")
    return AuditRecord(
        audit_id=audit_id or new_audit_id(), question=research["question"], language=research.get("language"),
        actor=actor or default_actor(), asked_at=asked_at, recorded_at=datetime.now(UTC),
        run_id=research["run_id"], batch_id=(batch or {}).get("batch_id"), batch=batch, scope=scope,
        supersedes=supersedes or None, engine=EngineStamp(version=engine_version()),
        settings_hash=settings.fingerprint(), settings=public_settings(settings),
        backend=research.get("backend"), models=models, skills=dict(sorted(skills.items())),
        corpus=corpus_snapshot(conn), research=_research(research),
        requirements=_requirements(conn, evidence) if evidence else [],
        evidence_chunks=(evidence or {}).get("evidence_chunks", {}), answer=_answer(evidence, research),
        review=(evidence or {}).get("review"), evidence_audit_trail=(evidence or {}).get("evidence_audit_trail"),
        fallbacks=(evidence or {}).get("fallbacks", []), llm_usage=llm_usage)


def build_amendment(target: dict[str, Any], *, kind: str, reason: str, text: str, actor: str | None,
                    audit_id: str | None = None, superseded_by: str | None = None) -> dict[str, Any]:
    """A reviewer note or a correction: a new record that points to the record it amends.

    `superseded_by` (a correction written by `trail rerun`): the audit that answers the question again.
    """
    now = datetime.now(UTC)
    return AmendmentRecord(kind=kind, audit_id=audit_id or new_audit_id(now), amends=target["audit_id"],
                           question=target["question"], actor=actor or default_actor(), asked_at=now,
                           recorded_at=now, reason=reason, text=text, engine=EngineStamp(version=engine_version()),
                           superseded_by=superseded_by or None).as_record()


def build_issued_report(target: dict[str, Any], *, sha256: str, size: int, audit_ids: list[str], fmt: str,
                        signer_sha256: str, actor: str | None) -> dict[str, Any]:
    """The record that the engine issued a report: the SHA-256 and size of the signed file, the audits it
    reports (the first is the one it amends) and the signer certificate's SHA-256."""
    now = datetime.now(UTC)
    return AmendmentRecord(
        kind="report", audit_id=new_audit_id(now), amends=target["audit_id"], question=target["question"],
        actor=actor or default_actor(), asked_at=now, recorded_at=now,
        reason=f"issued a {fmt} report of {len(audit_ids)} audit(s)", text="",
        engine=EngineStamp(version=engine_version()),
        report={"sha256": sha256, "bytes": size, "format": fmt, "audit_ids": list(audit_ids),
                "signer_certificate_sha256": signer_sha256}).as_record()


def record_research(conn: psycopg.Connection, settings: Settings, embedder: Any, research: dict[str, Any], *,
                    llm: Any = None, actor: str | None = None, batch: dict[str, Any] | None = None,
                    asked_at: datetime | None = None, scope: dict[str, Any] | None = None,
                    supersedes: str | None = None,
                    finish: Callable[[dict[str, Any]], None] | None = None, checkpoint: bool = True) -> Any:
    """Write the audit of a finished run, once: a run that already has its audit returns that one.

    `finish(record)` may add to the record before it is hashed (batch runs add expectation outcomes).
    A signed checkpoint covering the audit follows (`checkpoints.after_append`), unless configured off, or
    `checkpoint` is False: a caller that records inside its own transaction signs after its commit, not
    while the transaction holds the trail's append lock.
    """

    existing = audit_trail.by_run(conn, research["run_id"])
    if existing is not None:  # e.g. resumed after a kill: the checkpoint may not have been written yet
        if checkpoint:
            checkpoints.after_append(conn, settings, existing["seq"])
        return audit_trail.Appended(seq=existing["seq"], audit_id=existing["audit_id"], hash=existing["hash"],
                                    prev_hash=existing["prev_hash"], created=False)
    models = {"embedding": embedder.identity, "relevance": relevance_identity(settings),
              "llm": None if llm is None else {"model": settings.llm_model, "base_url": settings.llm_base_url,
                                                "temperature": settings.llm_temperature}}
    skills = dict(getattr(llm, "skill_hashes", {}) or {})
    usage = llm.usage() if llm is not None and hasattr(llm, "usage") else None
    record = build_record(conn, settings, research, actor=actor or settings.actor,
                          asked_at=asked_at or datetime.now(UTC), models=models, skills=skills, batch=batch,
                          llm_usage=usage, scope=scope, supersedes=supersedes).as_record()
    if finish is not None:
        finish(record)
    answer = record["answer"]["final_answer"] or ""
    vectors = (embedder.encode_query(record["question"]), embedder.encode([answer])[0])
    appended = audit_trail.append(conn, record, vectors=vectors, fault=settings.fault_injection)
    if checkpoint:
        checkpoints.after_append(conn, settings, appended.seq)
    return appended
