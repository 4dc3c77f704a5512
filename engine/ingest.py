"""Files -> documents, chunks, embeddings and postings. One transaction per document."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np
import psycopg
from pydantic import BaseModel, ConfigDict, Field

from engine import store
from engine.chunking import ChunkDraft, chunk_document
from engine.config import SOURCE_TYPES, Settings
from engine.embeddings import Embedder, check_space
from engine.errors import IngestError
from engine.formats import ParsedDocument, parse
from engine.lexical import term_frequencies
from engine.models import Chunk

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


class _Prepared(BaseModel):
    """A parsed, chunked file waiting for its embeddings."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    path: Path
    data_sha256: str
    parsed: ParsedDocument
    doc_id: str
    content_sha256: str
    source_key: str
    title: str
    lexical_title: str | None
    source_type: str
    drafts: list[ChunkDraft]


def _prepare(conn: psycopg.Connection, settings: Settings, path: Path, *, fmt: str, source_type: str | None,
             title: str | None) -> _Prepared | FileResult:
    """Read, parse and chunk one file; a FileResult when its content is already stored."""
    data = _read(path, settings)
    parsed = parse(path, data, fmt)
    content_sha = hashlib.sha256(parsed.text.encode()).hexdigest()
    existing = store.document_by_content(conn, content_sha)
    if existing is not None:
        return FileResult(path=str(path), status="unchanged", document_id=existing.id, version=existing.version,
                          title=existing.title)
    if source_type is not None and source_type not in SOURCE_TYPES:
        raise IngestError(str(path), f"unknown source type '{source_type}'", f"use one of {', '.join(SOURCE_TYPES)}")
    doc_id = f"doc_{content_sha[:24]}"
    if parsed.format == "obliqa":
        doc_title = title or f"ObliQA document {parsed.metadata['obliqa_document_id']}"
    else:
        doc_title = title or parsed.title or path.stem.replace("-", " ").replace("_", " ")
    drafts = chunk_document(doc_id, parsed, settings.chunk_max_words)
    if not drafts:
        raise IngestError(str(path), "no text found to index")
    return _Prepared(
        path=path, data_sha256=hashlib.sha256(data).hexdigest(), parsed=parsed, doc_id=doc_id,
        content_sha256=content_sha, source_key=_source_key(path, parsed), title=doc_title,
        # A title the engine made up (ObliQA has none) says nothing about the content.
        lexical_title=None if parsed.format == "obliqa" and not title else doc_title,
        source_type=source_type or guess_source_type(path, doc_title), drafts=drafts,
    )


def _store(conn: psycopg.Connection, settings: Settings, prep: _Prepared, vectors: np.ndarray) -> FileResult:
    """Write one document with its chunks and postings in one transaction (superseding the old version)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (prep.source_key,))
        previous = store.current_document(conn, prep.source_key)
        version = previous.version + 1 if previous else 1
        if previous:
            store.retire(conn, previous.id)
        store.insert_document(conn, doc_id=prep.doc_id, source_key=prep.source_key, version=version,
                              content_sha256=prep.content_sha256, file_sha256=prep.data_sha256, title=prep.title,
                              source_type=prep.source_type, source_uri=str(prep.path.resolve()),
                              fmt=prep.parsed.format, text=prep.parsed.text,
                              metadata={**prep.parsed.metadata, "file_name": prep.path.name})
        if previous:
            store.supersede(conn, previous.id, prep.doc_id)
        rows, lengths = _lexical_rows(conn, prep.drafts, prep.lexical_title, settings)
        store.insert_chunks(conn, prep.doc_id, prep.drafts, vectors, lengths)
        store.insert_postings(conn, rows)
        store.adjust_lexical_stats(conn, [d.id for d in prep.drafts], 1)
    return FileResult(path=str(prep.path), status="new_version" if previous else "added", document_id=prep.doc_id,
                      version=version, title=prep.title, chunks=len(prep.drafts))


def _embed(embedder: Embedder, batch: list[_Prepared]) -> list[np.ndarray]:
    """Embed the chunks of several documents in one call (length-sorted batches pad less)."""
    texts = [embedding_text(p.title, d) for p in batch for d in p.drafts]
    vectors = embedder.encode(texts)
    out, offset = [], 0
    for prep in batch:
        out.append(vectors[offset : offset + len(prep.drafts)])
        offset += len(prep.drafts)
    return out


def ingest_file(conn: psycopg.Connection, embedder: Embedder, settings: Settings, path: Path, *,
                fmt: str = "auto", source_type: str | None = None, title: str | None = None) -> FileResult:
    """Ingest one file; raises IngestError with the reason when it cannot be used."""
    prep = _prepare(conn, settings, path, fmt=fmt, source_type=source_type, title=title)
    if isinstance(prep, FileResult):
        return prep
    return _store(conn, settings, prep, _embed(embedder, [prep])[0])


def ingest_paths(conn: psycopg.Connection, embedder: Embedder, settings: Settings, paths: Iterable[Path], *,
                 fmt: str = "auto", source_type: str | None = None, title: str | None = None,
                 on_file: Callable[[Path, FileResult], Any] | None = None,
                 embed_batch_chunks: int = 1024) -> IngestSummary:
    """Ingest every file; a failing file is reported and the others still go in.

    Files are parsed and chunked, then embedded together in groups of about `embed_batch_chunks`
    chunks. A worker thread embeds one group while this thread writes the previous one, each
    document in its own transaction (the connection is only used from this thread).
    """
    started = time.perf_counter()
    summary = IngestSummary()
    check_space(conn, embedder, claim=True)

    def record(path: Path, result: FileResult) -> None:
        summary.files.append(result)
        if result.status in ("added", "new_version"):
            summary.documents += 1
            summary.chunks += result.chunks
        if on_file:
            on_file(path, result)

    pending: list[_Prepared] = []
    in_flight: tuple[list[_Prepared], Future[list[np.ndarray]]] | None = None

    def write(group: list[_Prepared], vectors: Future[list[np.ndarray]]) -> None:
        for prep, vecs in zip(group, vectors.result(), strict=True):
            record(prep.path, _store(conn, settings, prep, vecs))

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed") as pool:
        def flush() -> None:
            nonlocal in_flight
            submitted = (list(pending), pool.submit(_embed, embedder, list(pending)))
            pending.clear()
            if in_flight is not None:
                write(*in_flight)
            in_flight = submitted

        for path in expand_paths(paths):
            try:
                prep = _prepare(conn, settings, path, fmt=fmt, source_type=source_type, title=title)
            except IngestError as exc:
                record(path, FileResult(path=str(path), status="failed",
                                        error=exc.reason + (f" ({exc.hint})" if exc.hint else "")))
                continue
            if isinstance(prep, FileResult):
                record(path, prep)
                continue
            queued = pending + (in_flight[0] if in_flight else [])
            if any(p.content_sha256 == prep.content_sha256 for p in queued):
                record(path, FileResult(path=str(path), status="unchanged", document_id=prep.doc_id,
                                        title=prep.title))
                continue
            pending.append(prep)
            if sum(len(p.drafts) for p in pending) >= embed_batch_chunks:
                flush()
        if pending:
            flush()
        if in_flight is not None:
            write(*in_flight)
    if summary.documents:
        store.optimize(conn)
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


def reembed(conn: Any, embedder: Embedder, *, batch: int = 256,
            progress: Callable[[int], Any] | None = None) -> int:
    """Re-embed every chunk (all versions) with `embedder` and record its space. Returns chunks done.

    Each batch is its own transaction; the space is recorded last, so an interrupted run is refused
    by searches until it is run again to the end.
    """
    after, done = "", 0
    with conn.transaction():
        store.clear_embedding_space(conn)
    while rows := store.chunks_for_embedding(conn, after, batch):
        texts = [embedding_text(title, _Heading(heading, text)) for _, title, heading, text in rows]
        vectors = embedder.encode(texts)
        with conn.transaction():
            store.update_embeddings(conn, [(row[0], vec) for row, vec in zip(rows, vectors, strict=True)])
        done += len(rows)
        after = rows[-1][0]
        if progress:
            progress(done)
    with conn.transaction():
        store.record_embedding_space(conn, embedder.identity)
    return done


class _Heading:
    """What `engine.ingest.embedding_text` reads of a chunk."""

    def __init__(self, section_heading: str, text: str) -> None:
        self.section_heading = section_heading
        self.text = text
