"""The one adapter between the web layer and the engine.

Every call the web makes into the engine goes through `Backend`: asking (with a progress callback
per research node), reading audits and their report views, stored document text by version, search,
batch progress, report rendering, trail verification and appending sign-off records. When the
library API (`engine.api`) lands, this module is switched over to it in one place; nothing else
in `engine.web` imports engine internals for these jobs.

Connections come from a small pool opened after one migration check; an ask runs on its own
connection (and LangGraph's checkpointer connection), as `evidence ask` does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, cast

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from engine import api
from engine import db as dbmod
from engine.batch import results as batch_results
from engine.batch import store as batch_store
from engine.batch.rerun import rerun_one
from engine.config import Settings
from engine.errors import NotFoundError
from engine.report import export
from engine.report.render import load_view
from engine.report.view import statement_parts
from engine.search import store
from engine.search.embeddings import Embedder
from engine.trail import checkpoints, review
from engine.trail import store as audit_trail
from engine.trail.queries import version_keys
from engine.trail.record import build_amendment

_MEDIA = {"pdf": "application/pdf", "html": "text/html; charset=utf-8", "json": "application/json",
          "csv": "text/csv; charset=utf-8"}


class Backend:
    """Engine access for one `evidence serve` process (or one test app)."""

    def __init__(self, settings: Settings, *, pool_size: int = 6) -> None:
        self.settings = settings
        self._pool_size = pool_size
        self._pool: Any = None
        self._lock = threading.Lock()
        self._ask_lock = threading.Lock()  # one research run at a time: the machine's cores are few

    # -- connections -----------------------------------------------------------------------------
    def _open_pool(self) -> Any:
        with dbmod.connection(self.settings):  # migrations (and pgvector) checked once
            pass
        return ConnectionPool(dbmod.database_url(self.settings), min_size=1, max_size=self._pool_size,
                              kwargs={"autocommit": True}, configure=register_vector, open=True,
                              name="evidence-web")

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled autocommit connection (the web's own tables use it too)."""
        with self._lock:
            if self._pool is None:
                self._pool = self._open_pool()
        with self._pool.connection() as conn:
            yield conn

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    # -- audits ----------------------------------------------------------------------------------
    def resolve_audit(self, given: str) -> str:
        with self.connection() as conn:
            return audit_trail.resolve_id(conn, given)

    def audit_row(self, audit_id: str) -> dict[str, Any]:
        with self.connection() as conn:
            return audit_trail.get(conn, audit_id)

    def list_audits(self, *, status: str | None = None, documents: list[str] | None = None,
                    limit: int = 1000) -> list[dict[str, Any]]:
        """Answer audits (not notes, corrections or sign-offs), newest first."""

        with self.connection() as conn:
            keys = self._document_keys(conn, documents[0]) if documents else None
            rows = audit_trail.list_audits(conn, status=status, documents=keys, kind="answer", limit=limit)
        return list(reversed(rows))

    @staticmethod
    def _document_keys(conn: psycopg.Connection, name: str) -> list[str]:
        return version_keys(store.find_documents(conn, name)) or [name]

    def audit_view(self, audit_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The trail row of an answer and the report's view of it (answer, evidence groups, integrity)."""

        with self.connection() as conn:
            row, view = load_view(conn, audit_id, settings=self.settings)
        direct = (row["record"].get("answer") or {}).get("direct_answer")
        view["direct_parts"] = statement_parts(direct, {}) if isinstance(direct, str) and direct else []
        return row, view

    def verify_audit(self, audit_id: str) -> Any:
        """`trail verify` for the chain, every checkpoint, and this audit's quotes (a VerifyReport)."""

        return api.verify_trail(audit_id=audit_id, settings=self.settings)

    def verify_trail(self) -> Any:
        return api.verify_trail(settings=self.settings)

    # -- reports ---------------------------------------------------------------------------------
    def report(self, audit_id: str, fmt: str) -> tuple[bytes, str]:
        """(content, media type) of a report: pdf (signed PDF/A-3b), html, json (the canonical record), csv."""

        if fmt in ("pdf", "html", "json"):
            return api.report(audit_id, cast(api.ReportFormat, fmt), settings=self.settings), _MEDIA[fmt]
        with self.connection() as conn:
            return export.to_csv(export.requirement_rows(conn, [audit_id])).encode("utf-8"), _MEDIA["csv"]

    # -- documents and search --------------------------------------------------------------------
    def document(self, document_id: str) -> tuple[Any, str, list[Any]]:
        """(the document version, its stored text, every version of its source oldest first)."""

        with self.connection() as conn:
            doc = store.get_document(conn, document_id)
            if doc is None:
                raise NotFoundError(f"no document '{document_id}'; the documents page and 'evidence documents "
                                    "--all-versions' list the stored ones")
            text = store.document_text(conn, document_id) or ""
            versions = store.document_versions(conn, doc.source_key)
        return doc, text, versions

    def documents(self) -> list[Any]:
        return api.documents(settings=self.settings)

    def search(self, query: str, k: int = 10) -> list[Any]:
        return api.search(query, k=k, settings=self.settings)

    # -- batches ---------------------------------------------------------------------------------
    def batch(self, batch_id: str) -> tuple[dict[str, Any], Any, dict[str, dict[str, Any]]]:
        """(the batch, its outcome as `evidence audit status` gives it, each question's item with its `state`)."""
        with self.connection() as conn:
            batch = batch_store.get(conn, batch_id)
            states = {i["question_id"]: i for i in batch_store.items_with_state(conn, batch_id)}
            return batch, batch_results.outcome(conn, batch_id), states

    def batches(self) -> list[dict[str, Any]]:
        """Every batch, oldest first, with its counts of questions, done, failed and skipped."""
        with self.connection() as conn:
            return batch_store.list_batches(conn)

    # -- asking ----------------------------------------------------------------------------------
    def ask(self, question: str, *, actor: str, progress: Callable[[str], None] | None = None,
            backend: str | None = None) -> dict[str, Any]:
        """Research `question`, record its audit (actor = the web user) and return {audit_id, seq, hash, run_id}
        (`engine.api.ask`; each node and the recording step call `progress(name)`)."""

        with self._ask_lock:
            audit = api.ask(question, actor=actor, backend=backend, settings=self.settings,
                            hooks=api.Hooks(node=progress, phase=progress))
        return {"audit_id": audit.audit_id, "seq": audit.entry.seq, "hash": audit.entry.hash,
                "run_id": audit.research.run_id, "rejected": audit.refused}

    def rerun(self, audit_id: str, *, actor: str, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Answer a stale audit's question again against the current documents (`evidence trail rerun`): a new
        audit that supersedes it, and a correction on the old one. {audit_id (the new one), old_audit_id, summary}."""
        with self._ask_lock, dbmod.connection(self.settings) as conn:
            done = rerun_one(conn, self.settings, audit_id, embedder=Embedder.from_settings(self.settings),
                             actor=actor, progress=progress)
        return {"audit_id": done.new_audit_id, "old_audit_id": done.old_audit_id, "summary": done.summary}

    # -- sign-offs -------------------------------------------------------------------------------
    @staticmethod
    def amendment(target: dict[str, Any], *, kind: str, reason: str, text: str, actor: str) -> dict[str, Any]:
        """A new trail record of `kind` that amends the record `target` (not yet appended)."""

        return build_amendment(target, kind=kind, reason=reason, text=text, actor=actor)

    def append_signoff(self, record: dict[str, Any]) -> Any:
        """Append a sign-off record to the trail unless it repeats its signer's decision or approves stale
        evidence (`engine.trail.review.record_decision`), and sign a checkpoint covering it (as `trail amend` does)."""

        with self.connection() as conn:
            appended = review.record_decision(conn, record, required=self.settings.review_approvals)
            checkpoints.after_append(conn, self.settings, appended.seq)
        return appended

    def reviews(self, audit_ids: list[str] | None = None) -> dict[str, Any]:
        """The review (`engine.trail.review.Review`) of each audit that has a decision or stale evidence, or
        of each of `audit_ids`."""
        with self.connection() as conn:
            return review.reviews(conn, audit_ids, required=self.settings.review_approvals)

    def unreviewed(self) -> Any:
        return review.review_state([], required=self.settings.review_approvals)

    def amendments(self, audit_id: str) -> list[dict[str, Any]]:
        with self.connection() as conn:
            return audit_trail.amendments(conn, audit_id)
