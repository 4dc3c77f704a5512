"""Files -> documents, chunks, embeddings and postings. One transaction per document."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import psycopg
from pydantic import BaseModel, ConfigDict, Field

from engine import store
from engine.chunking import ChunkDraft, chunk_document
from engine.config import SOURCE_TYPES, Settings
from engine.embeddings import Embedder
from engine.errors import IngestError
from engine.formats import ParsedDocument, parse
from engine.models import Chunk
from engine.lexical import term_frequencies

_SKIP_NAMES = {".DS_Store", "Thumbs.db"}


class FileResult(BaseModel):
    """What happened to one file."""

    model_config = ConfigDict(extra="forbid")

    path: str
    status: Literal["added", "new_version", "unchanged", "failed"]
    document_id: str | None = None
    version: int | None = None
    title: str | None = None
    chunks: int = 0
    error: str | None = None


class IngestSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    files: list[FileResult] = Field(default_factory=list)
    documents: int = 0
    chunks: int = 0
    seconds: float = 0.0

    @property
    def failed(self) -> list[FileResult]:
        return [f for f in self.files if f.status == "failed"]


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """Files named, and files below directories named (recursively, hidden files skipped)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(p for p in sorted(path.rglob("*"))
                         if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
                         and p.name not in _SKIP_NAMES)
        else:
            found.append(path)
    return found


def guess_source_type(path: Path, text: str) -> str:
    """Source type from the file name or title words; 'regulation' when nothing says otherwise."""
    words = (path.stem + " " + text[:200]).lower()
    for key, kind in (("policy", "policy"), ("procedure", "policy"), ("guidance", "guidance"),
                      ("guide", "guidance"), ("standard", "standard"), ("contract", "contract"),
                      ("agreement", "contract"), ("act", "statute"), ("statute", "statute"), ("law", "statute")):
        if f"{key}" in words.replace("-", " ").replace("_", " ").split():
            return kind
    return "regulation"


def _read(path: Path, settings: Settings) -> bytes:
    try:
        size = path.stat().st_size
        if size > settings.max_file_bytes:
            raise IngestError(str(path), f"file is {size} bytes, over the limit of {settings.max_file_bytes}",
                              "raise EVIDENCE_MAX_FILE_BYTES or split the file")
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise IngestError(str(path), "no such file") from exc
    except IsADirectoryError as exc:  # pragma: no cover - directories are expanded first
        raise IngestError(str(path), "is a directory") from exc
    except PermissionError as exc:
        raise IngestError(str(path), "permission denied", "check the file's permissions") from exc
    except OSError as exc:
        raise IngestError(str(path), f"cannot read the file ({exc.strerror})") from exc


def _source_key(path: Path, parsed: ParsedDocument) -> str:
    if parsed.format == "obliqa":
        return f"obliqa:{parsed.metadata['obliqa_document_id']}"
    return str(path.resolve())


def heading_words(draft: ChunkDraft | Chunk) -> str:
    """The words of the chunk's section path (numbers dropped): '4 Records > 4.2 Retention' -> 'Records Retention'."""
    parts = [re.sub(r"^[\w.()]+\s*", "", part, count=1) if re.match(r"^[\d(]", part) else part
             for part in draft.section_path.split(" > ")]
    words = [p for p in parts if p and p != draft.text]
    if draft.section_heading and draft.section_heading not in words and draft.section_heading != draft.text:
        words.append(draft.section_heading)
    return " ".join(words)


def _lexical_rows(conn: psycopg.Connection, drafts: list[ChunkDraft], title: str | None,
                  settings: Settings) -> tuple[list[tuple[int, str, float, float]], list[float]]:
    """Postings for each chunk: its text plus its title and section headings (weighted)."""
    freqs = []
    for draft in drafts:
        heading = f"{title or ''} {heading_words(draft)}".strip() if settings.heading_weight else ""
        freqs.append(term_frequencies(draft.text, heading, settings.heading_weight))
    ids = store.term_ids(conn, {t for tf, _ in freqs for t in tf}, create=True)
    rows = [(ids[term], draft.id, weight, length)
            for draft, (tf, length) in zip(drafts, freqs, strict=True) for term, weight in tf.items()]
    return rows, [length for _, length in freqs]


def embedding_text(title: str, draft: ChunkDraft) -> str:
    """What the dense index sees: the section heading gives a short chunk its context."""
    heading = draft.section_heading if draft.section_heading and draft.section_heading != draft.text else ""
    return f"{heading}: {draft.text}" if heading else draft.text


def ingest_file(conn: psycopg.Connection, embedder: Embedder, settings: Settings, path: Path, *,
                fmt: str = "auto", source_type: str | None = None, title: str | None = None) -> FileResult:
    """Ingest one file; raises IngestError with the reason when it cannot be used."""
    data = _read(path, settings)
    parsed = parse(path, data, fmt)
    content_sha = hashlib.sha256(parsed.text.encode()).hexdigest()
    doc_id = f"doc_{content_sha[:24]}"
    existing = store.document_by_content(conn, content_sha)
    if existing is not None:
        return FileResult(path=str(path), status="unchanged", document_id=existing.id, version=existing.version,
                          title=existing.title)
    if source_type is not None and source_type not in SOURCE_TYPES:
        raise IngestError(str(path), f"unknown source type '{source_type}'", f"use one of {', '.join(SOURCE_TYPES)}")
    key = _source_key(path, parsed)
    if parsed.format == "obliqa":
        doc_title = title or f"ObliQA document {parsed.metadata['obliqa_document_id']}"
    else:
        doc_title = title or parsed.title or path.stem.replace("-", " ").replace("_", " ")
    kind = source_type or guess_source_type(path, doc_title)
    drafts = chunk_document(doc_id, parsed, settings.chunk_max_words)
    if not drafts:
        raise IngestError(str(path), "no text found to index")
    vectors = embedder.encode([embedding_text(doc_title, d) for d in drafts])
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (key,))
        previous = store.current_document(conn, key)
        version = previous.version + 1 if previous else 1
        if previous:
            store.retire(conn, previous.id)
        store.insert_document(conn, doc_id=doc_id, source_key=key, version=version, content_sha256=content_sha,
                              file_sha256=hashlib.sha256(data).hexdigest(), title=doc_title, source_type=kind,
                              source_uri=str(path.resolve()), fmt=parsed.format, text=parsed.text,
                              metadata={**parsed.metadata, "file_name": path.name})
        if previous:
            store.supersede(conn, previous.id, doc_id)
        # A title the engine made up (ObliQA has none) says nothing about the content.
        real_title = None if parsed.format == "obliqa" and not title else doc_title
        rows, lengths = _lexical_rows(conn, drafts, real_title, settings)
        store.insert_chunks(conn, doc_id, drafts, vectors, lengths)
        store.insert_postings(conn, rows)
    return FileResult(path=str(path), status="new_version" if previous else "added", document_id=doc_id,
                      version=version, title=doc_title, chunks=len(drafts))


def ingest_paths(conn: psycopg.Connection, embedder: Embedder, settings: Settings, paths: Iterable[Path], *,
                 fmt: str = "auto", source_type: str | None = None, title: str | None = None,
                 on_file: Callable[[Path, FileResult], Any] | None = None) -> IngestSummary:
    """Ingest every file; a failing file is reported and the others still go in."""
    started = time.perf_counter()
    summary = IngestSummary()
    for path in expand_paths(paths):
        try:
            result = ingest_file(conn, embedder, settings, path, fmt=fmt, source_type=source_type, title=title)
        except IngestError as exc:
            result = FileResult(path=str(path), status="failed",
                                error=exc.reason + (f" ({exc.hint})" if exc.hint else ""))
        summary.files.append(result)
        if result.status in ("added", "new_version"):
            summary.documents += 1
            summary.chunks += result.chunks
        if on_file:
            on_file(path, result)
    if summary.documents:
        store.optimize(conn)
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary
