"""`evidence trail rerun --stale` (and the web view's "Answer again"): ask a stale audit's question again
against the current documents. Here, above the research and the trail, since it runs one and records in
the other.

Append-only: the new answer is a new audit naming the old one (`supersedes`), and the old one gets a
correction record (the trail's amendment mechanism) that points to the new one (`superseded_by`) and
says what changed. The old record never changes; `trail impact` and `trail show` show the link.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from pydantic import BaseModel, ConfigDict, Field

from engine.batch.ask import Hooks, ask_and_record, current_scope
from engine.config import Settings
from engine.errors import InputError
from engine.search import store
from engine.trail import store as audit_trail
from engine.trail.queries import diff_records, summary
from engine.trail.record import build_amendment

REASON = ("a quote it cites changed or vanished in the current version of its document; the question was asked "
          "again against the current documents")


class Rerun(BaseModel):
    """One stale audit answered again."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    old_audit_id: str
    new_audit_id: str
    correction_id: str = Field(description="The correction record on the old audit that points to the new one")
    question: str
    summary: str
    diff: dict[str, Any]


def _recorded_scope(conn: psycopg.Connection, record: dict[str, Any]) -> dict[str, Any] | None:
    """The scope of an audit as `engine.search.scope` records it (a batch audit keeps its batch's resolved scope)."""
    if record.get("scope"):
        return record["scope"]
    batch_scope = (record.get("batch") or {}).get("scope")
    if not batch_scope:
        return None
    docs = [d for d in (store.get_document(conn, i) for i in batch_scope.get("document_ids") or []) if d]
    return {"documents": [{"document_id": d.id, "source_key": d.source_key, "title": d.title, "version": d.version,
                           "source_type": d.source_type} for d in docs],
            "source_types": list(batch_scope.get("source_types") or [])}


def rerun_one(conn: psycopg.Connection, settings: Settings, audit_id: str, *, embedder: Any, actor: str | None,
              backend: str | None = None, progress: Callable[[str], None] | None = None) -> Rerun:
    """Answer `audit_id`'s question again within the same documents' current versions and record both the new
    audit and the correction that links the old one to it."""
    old = audit_trail.get(conn, audit_id)["record"]
    if old.get("kind") != "answer":
        raise InputError(f"{audit_id} is a {old.get('kind')} of {old.get('amends')}, not an answer; rerun that one")
    asked = ask_and_record(conn, settings, old["question"], current_scope(conn, _recorded_scope(conn, old)),
                           embedder=embedder, backend=backend or old.get("backend") or None,
                           hooks=Hooks(node=progress), actor=actor, supersedes=audit_id)
    new = asked.entry
    assert new is not None  # recorded at once
    new_record = audit_trail.get(conn, new.audit_id)["record"]
    diff = diff_records(old, new_record)
    line = summary(diff)
    correction = build_amendment(old, kind="correction", reason=REASON, actor=actor or settings.actor,
                                 text=f"answered again as {new.audit_id}: {line}", superseded_by=new.audit_id)
    appended = audit_trail.append(conn, correction)
    return Rerun(old_audit_id=audit_id, new_audit_id=new.audit_id, correction_id=appended.audit_id,
                 question=old["question"], summary=line, diff=diff)
