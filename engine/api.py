"""The engine as a library: what the `evidence` command, batch runs and the web view call.

    from engine import api

    api.ingest(["regulations/"])
    audit = api.ask("How long must transaction records be kept?", pdf="out/answer.pdf")
    print(audit.direct_answer, audit.audit_id)
    assert api.verify_trail().ok

Each function takes an optional `Settings` (default: read from the environment, `engine.config`) and
opens its own database connection (the embedded server is started on first use, or `DATABASE_URL` is
used). Results are pydantic models; failures are `engine.errors.EngineError` subclasses whose messages say
what was wrong and what to do (`InputError`, `NotFoundError`, `StorageError`, `IntegrityError`, ...).
An audit is recorded in the trail whole or not at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.research import postgres_checkpointer
from engine import db as dbmod
from engine.batch.ask import Hooks, ask_and_record, named_scope, resumed_scope
from engine.config import SOURCE_TYPES, Settings, load_settings
from engine.errors import EngineError, InputError, NotFoundError
from engine.ingest.pipeline import ingest_paths
from engine.models import Hit
from engine.report import render
from engine.report.render import write_pdf
from engine.search import store
from engine.search.embeddings import Embedder
from engine.search.retrieval import Filters, Retriever
from engine.trail import store as trail_store
from engine.trail.checkpoints import read_notes
from engine.trail.store import Appended, crash_point
from engine.trail.verify import verify_trail as verify

ReportFormat = Literal["pdf", "html", "md", "json"]
REPORT_FORMATS: tuple[str, ...] = ("pdf", "html", "md", "json")


TrailEntry = Appended  # where an audit sits in the trail: seq, audit id, record hash, previous hash, created


class Audit(BaseModel):
    """An answered (or refused) question, as recorded in the trail."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    research: Any = Field(description="agents.research.ResearchResult: the run, its steps and the evidence result")
    entry: TrailEntry
    record: dict[str, Any] = Field(description="The canonical trail record (what the record hash covers)")
    llm_usage: dict[str, Any] | None = None
    report: Path | None = Field(default=None, description="The PDF written, when one was asked for")

    @property
    def audit_id(self) -> str:
        return self.entry.audit_id

    @property
    def refused(self) -> bool:
        """The guard refused the question (nothing was researched)."""
        return bool(self.research.rejected)

    @property
    def status(self) -> str:
        """ANSWERED, NO_AUTHORITATIVE_EVIDENCE or REJECTED."""
        return str(self.record["answer"]["status"])

    @property
    def direct_answer(self) -> str:
        """The one-sentence answer(s) before the supporting requirements ('' when nothing answers)."""
        return str(self.record["answer"].get("direct_answer") or "")

    def as_json(self) -> dict[str, Any]:
        """The shape `evidence ask --json` prints: the research result, LLM usage and the trail entry."""
        return {**self.research.model_dump(mode="json"), "llm_usage": self.llm_usage, "audit": self.entry.model_dump()}


def _settings(settings: Settings | None) -> Settings:
    return settings if settings is not None else load_settings()


# ---------------------------------------------------------------- ingest and search

def ingest(paths: Sequence[Path | str], *, source_type: str | None = None, title: str | None = None,
           fmt: str = "auto", follow_symlinks: bool = False, on_file: Callable[[Path, Any], None] | None = None,
           on_progress: Callable[[Any], None] | None = None, settings: Settings | None = None) -> Any:
    """Parse, chunk, embed and index files or folders (recursive); returns `engine.ingest.pipeline.IngestSummary`.

    A file that cannot be read is reported in the summary's `failed` list and changes nothing stored.
    """

    cfg = _settings(settings)
    if source_type is not None and source_type not in SOURCE_TYPES:
        raise InputError(f"source type {source_type!r} is not one of {', '.join(SOURCE_TYPES)}")
    with dbmod.connection(cfg) as conn:
        return ingest_paths(conn, Embedder.from_settings(cfg), cfg, [Path(p) for p in paths], fmt=fmt,
                            source_type=source_type, title=title, follow_symlinks=follow_symlinks,
                            on_file=on_file, on_progress=on_progress)


def search(query: str, *, k: int = 10, source_types: Sequence[str] = (), settings: Settings | None = None
           ) -> list[Hit]:
    """Hybrid search (dense + BM25, fused, reranked) over the current corpus: the best `k` chunks."""

    cfg = _settings(settings)
    with dbmod.connection(cfg) as conn:
        retriever = Retriever(conn, Embedder.from_settings(cfg), cfg)
        return retriever.search(query, k, filters=Filters(source_types=tuple(source_types)))


def documents(*, include_superseded: bool = False, settings: Settings | None = None) -> list[Any]:
    """The ingested documents (`engine.models.Document`), current versions unless `include_superseded`."""

    with dbmod.connection(_settings(settings)) as conn:
        return store.list_documents(conn, include_superseded=include_superseded)


def document_sections(document: str, *, settings: Settings | None = None) -> tuple[Any, list[dict[str, Any]]]:
    """A document (id or unique start of one, path, file name or title) and its sections in reading order.

    An id of a superseded version gives that version; any other name gives the current version.
    """

    with dbmod.connection(_settings(settings)) as conn:
        versions = store.find_documents(conn, document)
        if not versions:
            raise NotFoundError(f"no document '{document}': give a document id (or its start), path, file "
                                "name or title ('evidence documents' lists them)")
        doc = next((d for d in versions if d.id == document), None) or next(
            (d for d in versions if d.is_current), versions[-1])
        return doc, store.document_sections(conn, doc.id)


# ---------------------------------------------------------------- asking

def ask(question: str, *, backend: str | None = None, actor: str | None = None, documents: Sequence[str] = (),
        source_types: Sequence[str] = (), pdf: Path | str | None = None, hooks: Hooks | None = None,
        settings: Settings | None = None) -> Audit:
    """Research `question`, extract and verify the evidence, compose and review the answer, record the audit
    in the trail and (with `pdf`) write its report. `documents`/`source_types` limit what it may draw on
    and are recorded. A refused question is recorded too (`Audit.refused`)."""
    if backend not in (None, "rules", "llm"):
        raise InputError(f"backend {backend!r} is not rules or llm")
    return _answer(question, None, backend=backend, actor=actor, documents=documents, source_types=source_types,
                   pdf=pdf, hooks=hooks or Hooks(), settings=_settings(settings))


def resume(run_id: str, *, actor: str | None = None, hooks: Hooks | None = None,
           settings: Settings | None = None) -> Audit:
    """Continue a run that was interrupted (or return a finished one); its audit is recorded once."""
    return _answer(None, run_id, backend=None, actor=actor, documents=(), source_types=(), pdf=None,
                   hooks=hooks or Hooks(), settings=_settings(settings))


def _answer(question: str | None, run_id: str | None, *, backend: str | None, actor: str | None,
            documents: Sequence[str], source_types: Sequence[str], pdf: Path | str | None, hooks: Hooks,
            settings: Settings) -> Audit:
    asked_at = datetime.now(UTC)

    def recording(record: Callable[[], Appended]) -> Appended:
        crash_point(settings.fault_injection, "audit:before")
        hooks._phase("recording the audit")
        appended = record()
        crash_point(settings.fault_injection, "audit:after")
        return appended

    with dbmod.connection(settings) as conn, postgres_checkpointer(settings) as saver:
        scope = (named_scope(conn, documents, source_types) if question is not None
                 else resumed_scope(run_id or "", saver))
        asked = ask_and_record(conn, settings, question, scope, run_id=run_id, saver=saver, backend=backend,
                               hooks=hooks, actor=actor, asked_at=asked_at, recording=recording)
        assert asked.entry is not None  # this recording never declines
        record = trail_store.get(conn, asked.entry.audit_id)["record"]
        written = None
        if pdf is not None:
            hooks._phase("writing the report")
            written = write_pdf(conn, asked.entry.audit_id, Path(pdf), settings=settings)
    llm = asked.deps.llm
    return Audit(research=asked.research, entry=asked.entry, record=record,
                 llm_usage=llm.usage() if llm is not None else None, report=written)


# ---------------------------------------------------------------- stored audits

def audit(audit_id: str, *, settings: Settings | None = None) -> dict[str, Any]:
    """A stored audit (id or a unique start of one): its trail row with the canonical `record`."""

    with dbmod.connection(_settings(settings)) as conn:
        return trail_store.get(conn, trail_store.resolve_id(conn, audit_id))


def audits(*, settings: Settings | None = None, **filters: Any) -> list[dict[str, Any]]:
    """Stored audits, newest last; `filters` as `engine.trail.store.list_audits` takes them (since, until,
    status, confidence, batch, kind, ...)."""

    with dbmod.connection(_settings(settings)) as conn:
        return trail_store.list_audits(conn, **filters)


def _rendered(conn: Any, audit_id: str, fmt: str, settings: Settings, include_rejected: bool) -> bytes:
    """One stored audit's report in `fmt` (the audit id is a full one)."""

    if fmt == "pdf":
        return render.pdf_bytes(conn, audit_id, settings=settings, include_rejected=include_rejected)
    if fmt == "html":
        return render.render_html(conn, audit_id, include_rejected=include_rejected).encode()
    if fmt == "md":
        return render.render_markdown(conn, audit_id, include_rejected=include_rejected).encode()
    return render.render_json(conn, audit_id).encode()


def report(audit_id: str, fmt: ReportFormat = "pdf", *, include_rejected: bool = False,
           settings: Settings | None = None) -> bytes:
    """One audit's report as bytes: a signed PDF/A-3b, standalone HTML, Markdown, or the canonical JSON record."""

    if fmt not in REPORT_FORMATS:
        raise InputError(f"report format {fmt!r} is not one of {', '.join(REPORT_FORMATS)}")
    cfg = _settings(settings)
    with dbmod.connection(cfg) as conn:
        return _rendered(conn, trail_store.resolve_id(conn, audit_id), fmt, cfg, include_rejected)


def write_reports(audit_id: str, *, pdf: Path | None = None, html: Path | None = None, md: Path | None = None,
                  json_file: Path | None = None, include_rejected: bool = False,
                  settings: Settings | None = None) -> list[Path]:
    """Write the requested formats of one audit's report (none given: `./AUD-….pdf`). Returns the files."""

    cfg = _settings(settings)
    with dbmod.connection(cfg) as conn:
        full_id = trail_store.resolve_id(conn, audit_id)
        if not any((pdf, html, md, json_file)):
            pdf = Path(f"{full_id}.pdf")
        written = []
        if pdf is not None:
            written.append(render.write_pdf(conn, full_id, pdf, settings=cfg, include_rejected=include_rejected))
        for path, fmt in ((html, "html"), (md, "md"), (json_file, "json")):
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(_rendered(conn, full_id, fmt, cfg, include_rejected))
                written.append(path)
    return written


def witness_notes(paths: Sequence[Path]) -> list[Any]:
    """The signed checkpoints in witness files or folders written by `evidence trail checkpoint --out`."""

    notes = []
    for path in map(Path, paths):
        if not path.exists():
            raise EngineError(f"{path} does not exist; give the witness file or folder written by "
                              "'evidence trail checkpoint --out DIR'")
        notes.extend(read_notes(path))
    return notes


def verify_trail(*, audit_id: str | None = None, witness: Sequence[Any] = (),
                 settings: Settings | None = None) -> Any:
    """Recompute every hash, link, checkpoint signature and quote of the trail (or of one audit);
    `witness` are published checkpoints (`witness_notes(paths)`) the live trail must agree with.
    Returns `engine.trail.verify.VerifyReport` (`.ok`, `.problems`)."""

    cfg = _settings(settings)
    with dbmod.connection(cfg) as conn:
        one = None if audit_id is None else trail_store.resolve_id(conn, audit_id)
        return verify(conn, cfg, audit_id=one, published=list(witness))
