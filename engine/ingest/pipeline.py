"""Files -> documents, chunks, embeddings and postings. One transaction per document."""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np
import psycopg
from pydantic import BaseModel, ConfigDict, Field

from engine import db
from engine.config import SOURCE_TYPES, Settings
from engine.errors import IngestError, printable
from engine.ingest.chunking import ChunkDraft, chunk_document
from engine.ingest.files import Found, choose_source_type, find_files, read_file
from engine.ingest.formats import ParsedDocument, parse
from engine.ingest.language import detect
from engine.models import Chunk, Document
from engine.search import store
from engine.search.embeddings import Embedder, check_space
from engine.terms import term_frequencies

logger = logging.getLogger(__name__)


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
    warnings: list[str] = Field(default_factory=list, description="What the file's reader warned about")
    source_type: str | None = None
    notes: list[str] = Field(default_factory=list, description="How the source type or title was chosen when "
                                                             "not given (inferred, or kept from the stored version)")


class IngestSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    files: list[FileResult] = Field(default_factory=list)
    documents: int = 0
    chunks: int = 0
    seconds: float = 0.0

    @property
    def failed(self) -> list[FileResult]:
        return [f for f in self.files if f.status == "failed"]


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


_VOCABULARY_WORD = re.compile(r"[a-z]{4,30}")


def vocabulary_words(title: str, drafts: list[ChunkDraft]) -> set[str]:
    """The document's surface words for spelling correction (as sql/008_vocabulary.sql collects them)."""
    words: set[str] = set()
    for text in (title, *(d.text for d in drafts)):
        words.update(w for w in re.split(r"[^a-z]+", text.lower()) if _VOCABULARY_WORD.fullmatch(w))
    return words


def embedding_text(title: str, draft: ChunkDraft | _Heading) -> str:
    """What the dense index sees: the section heading gives a short chunk its context."""
    heading = draft.section_heading if draft.section_heading and draft.section_heading != draft.text else ""
    return f"{heading}: {draft.text}" if heading else draft.text


def _unchanged(path: Path, document: Document, parsed: ParsedDocument) -> FileResult:
    return FileResult(path=str(path), status="unchanged", document_id=document.id, version=document.version,
                      title=document.title, warnings=parsed.warnings, source_type=document.source_type)


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
    notes: list[str] = Field(default_factory=list)
    same_text_as: str | None = None  # the stored version whose text this one repeats


def _prepare(conn: psycopg.Connection, settings: Settings, path: Path, *, fmt: str, source_type: str | None,
             title: str | None) -> _Prepared | FileResult:
    """Read, parse and chunk one file; a FileResult when its content is already stored."""
    data = read_file(path, settings)
    parsed = parse(path, data, fmt)
    try:
        return _prepare_parsed(conn, settings, path, data, parsed, source_type=source_type, title=title)
    except IngestError as exc:  # what the reader warned about still belongs to the file
        exc.warnings = exc.warnings or parsed.warnings
        raise


def layout(drafts: list[ChunkDraft]) -> list[tuple[Any, ...]]:
    """How a text is read into chunks (`engine.search.store.chunk_layout` of a stored version): the chunks'
    offsets, sections and metadata, in order; the texts follow from the offsets. Pure."""
    return [(d.ordinal, d.char_start, d.char_end, d.section_number, d.section_path, d.section_heading, d.metadata)
            for d in drafts]


def _document_id(conn: psycopg.Connection, content_sha: str, source_key: str) -> str:
    """'doc_' + the text's hash; where a version of that text is stored already (a document changed back, or read
    again by a newer engine), the hash of the text with its source and a count, so each version has its own id and
    its own chunk ids."""
    doc_id, n = f"doc_{content_sha[:24]}", 0
    while store.get_document(conn, doc_id) is not None:
        n += 1
        digest = hashlib.sha256("\x00".join((content_sha, source_key, str(n))).encode()).hexdigest()
        doc_id = f"doc_{digest[:24]}"
    return doc_id


def _prepare_parsed(conn: psycopg.Connection, settings: Settings, path: Path, data: bytes, parsed: ParsedDocument,
                    *, source_type: str | None, title: str | None) -> _Prepared | FileResult:
    content_sha = hashlib.sha256(parsed.text.encode()).hexdigest()
    source_key = _source_key(path, parsed)
    previous = store.current_document(conn, source_key)
    notes: list[str] = []
    same_text: Document | None = None  # a stored version of this source with the same text (read again, changed back)
    if previous is not None and previous.content_sha256 == content_sha:
        # The same text: unchanged, unless this engine reads it into other chunks or sections than the stored
        # version was (a reader or the chunking improved): then a new version of the same text, read anew; the old
        # one stays for the audits that cite it
        old = store.chunk_layout(conn, previous.id)
        drafts = chunk_document(previous.id, parsed, settings.chunk_max_words)
        if layout(drafts) == old:
            return _unchanged(path, previous, parsed)
        same_text = previous
        notes.append(f"read again: the text is that of version {previous.version}, now read into other sections or "
                     f"chunks (a newer reader or another chunk size: {len(old)} chunks before, {len(drafts)} now); "
                     f"version {previous.version} stays for the audits that cite it")
    elif previous is None and (existing := store.document_by_content(conn, content_sha)) is not None and (
            existing.is_current):
        return _unchanged(path, existing, parsed)  # the same text under another name: stored once
    elif previous is not None and (earlier := store.document_by_content(conn, content_sha)) is not None and (
            earlier.source_key == source_key):
        notes.append(f"the text is that of version {earlier.version} again")
        same_text = earlier
    if source_type is not None and source_type not in SOURCE_TYPES:
        raise IngestError(str(path), f"unknown source type '{source_type}'", f"use one of {', '.join(SOURCE_TYPES)}")
    doc_id = _document_id(conn, content_sha, source_key)
    if parsed.format == "obliqa":
        found_title = f"ObliQA document {parsed.metadata['obliqa_document_id']}"
    else:
        found_title = parsed.title or path.stem.replace("-", " ").replace("_", " ")
    doc_title = title or (previous.title if previous else found_title)
    if not title and previous and previous.title != found_title:
        notes.append(f"title kept as '{previous.title}' from version {previous.version} (the file now reads "
                     f"'{found_title}'); pass --title to change it")
    drafts = chunk_document(doc_id, parsed, settings.chunk_max_words)
    if not drafts:
        raise IngestError(str(path), "no text found to index")
    if len(drafts) > settings.max_chunks_per_file:
        raise IngestError(str(path), f"it would make {len(drafts):,} chunks, over the limit of "
                                     f"{settings.max_chunks_per_file:,} per file",
                          "split the file, or raise EVIDENCE_MAX_CHUNKS_PER_FILE")
    fmt = f"xml:{parsed.metadata.get('xml')}" if parsed.format == "xml" else parsed.format
    kind, typed = choose_source_type(path, doc_title, fmt, source_type, previous, settings)
    return _Prepared(
        path=path, data_sha256=hashlib.sha256(data).hexdigest(), parsed=parsed, doc_id=doc_id,
        content_sha256=content_sha, source_key=source_key, title=doc_title,
        # A title the engine made up (ObliQA has none) says nothing about the content.
        lexical_title=None if parsed.format == "obliqa" and not title else doc_title,
        source_type=kind, drafts=drafts, notes=typed + notes,
        same_text_as=same_text.id if same_text is not None else None,
    )


def _store(conn: psycopg.Connection, settings: Settings, prep: _Prepared, vectors: np.ndarray) -> FileResult:
    """Write one document with its chunks and postings in one transaction (superseding the old version)."""
    with conn.transaction():
        db.xact_lock(conn, db.Lock.INGEST_SOURCE, prep.source_key)
        previous = store.current_document(conn, prep.source_key)
        version = previous.version + 1 if previous else 1
        if previous:
            store.retire(conn, previous.id)
        store.insert_document(conn, doc_id=prep.doc_id, source_key=prep.source_key, version=version,
                              content_sha256=prep.content_sha256, file_sha256=prep.data_sha256, title=prep.title,
                              source_type=prep.source_type, source_uri=str(prep.path.resolve()),
                              fmt=prep.parsed.format, text=prep.parsed.text,
                              metadata={**prep.parsed.metadata, "file_name": prep.path.name,
                                        "language": detect(prep.parsed.text).language} | (
                                  {"same_text_as": prep.same_text_as} if prep.same_text_as else {}))
        if previous:
            store.supersede(conn, previous.id, prep.doc_id)
        rows, lengths = _lexical_rows(conn, prep.drafts, prep.lexical_title, settings)
        store.insert_chunks(conn, prep.doc_id, prep.drafts, vectors, lengths)
        store.insert_postings(conn, rows)
        store.adjust_lexical_stats(conn, [d.id for d in prep.drafts], 1)
        store.insert_vocabulary(conn, vocabulary_words(prep.title, prep.drafts))
    return FileResult(path=str(prep.path), status="new_version" if previous else "added", document_id=prep.doc_id,
                      version=version, title=prep.title, chunks=len(prep.drafts), warnings=prep.parsed.warnings,
                      source_type=prep.source_type, notes=prep.notes)


class IngestProgress(BaseModel):
    """Where a running ingest is: reported after each file and during the embedding of long ones."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    files_done: int
    files_total: int
    chunks_done: int = Field(description="Chunks embedded so far")
    bytes_done: int = Field(description="Bytes of the files finished, plus the embedded share of those in work")
    bytes_total: int
    seconds: float

    @property
    def chunks_per_second(self) -> float:
        return self.chunks_done / self.seconds if self.seconds > 0 else 0.0

    @property
    def eta_seconds(self) -> float | None:
        """Seconds left, from the share of bytes done so far (None until some work is done)."""
        if self.bytes_done <= 0 or self.seconds <= 0:
            return None
        return max(0.0, self.seconds * (self.bytes_total - self.bytes_done) / self.bytes_done)


class _Tracker:
    """Progress bookkeeping shared by the reading thread and the embedding thread."""

    def __init__(self, found: list[Found], report: Callable[[IngestProgress], Any] | None) -> None:
        self.sizes = {f.path: _size(f.path) for f in found}
        self.files_total = len(found)
        self.bytes_total = sum(self.sizes.values())
        self.files_done = self.chunks_done = self.bytes_finished = 0
        self.partial: dict[Path, float] = {}  # embedded share of files not yet written
        self.report = report
        self.started = time.perf_counter()
        self.lock = threading.Lock()

    def embedded(self, prep: _Prepared, done: int) -> None:
        with self.lock:
            self.chunks_done += done
            self.partial[prep.path] = self.partial.get(prep.path, 0.0) + done / max(1, len(prep.drafts))
        self._emit()

    def finished(self, path: Path) -> None:
        with self.lock:
            self.files_done += 1
            self.bytes_finished += self.sizes.get(path, 0)
            self.partial.pop(path, None)
        self._emit()

    def _emit(self) -> None:
        if self.report is None:
            return
        with self.lock:
            partial = sum(self.sizes.get(p, 0) * min(1.0, share) for p, share in self.partial.items())
            snapshot = IngestProgress(files_done=self.files_done, files_total=self.files_total,
                                      chunks_done=self.chunks_done, bytes_done=int(self.bytes_finished + partial),
                                      bytes_total=self.bytes_total, seconds=time.perf_counter() - self.started)
        self.report(snapshot)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


EMBED_SLICE = 128  # chunks embedded per call: progress is reported between calls


def _embed(embedder: Embedder, batch: list[_Prepared], tracker: _Tracker | None = None) -> list[np.ndarray]:
    """Embed the chunks of several documents together, in slices so that a long file reports progress."""
    texts = [embedding_text(p.title, d) for p in batch for d in p.drafts]
    owners = [i for i, p in enumerate(batch) for _ in p.drafts]
    parts = []
    for start in range(0, len(texts), EMBED_SLICE):
        parts.append(embedder.encode(texts[start : start + EMBED_SLICE]))
        if tracker is not None:
            for i in sorted(set(owners[start : start + EMBED_SLICE])):
                tracker.embedded(batch[i], owners[start : start + EMBED_SLICE].count(i))
    vectors = np.concatenate(parts) if parts else np.zeros((0, embedder.dim), dtype=np.float32)
    out, offset = [], 0
    for prep in batch:
        out.append(vectors[offset : offset + len(prep.drafts)])
        offset += len(prep.drafts)
    return out


def _failed(path: Path, exc: IngestError) -> FileResult:
    return FileResult(path=str(path), status="failed", error=exc.reason + (f" ({exc.hint})" if exc.hint else ""),
                      warnings=exc.warnings)


def ingest_paths(conn: psycopg.Connection, embedder: Embedder, settings: Settings, paths: Iterable[Path], *,
                 fmt: str = "auto", source_type: str | None = None, title: str | None = None,
                 on_file: Callable[[Path, FileResult], Any] | None = None,
                 on_progress: Callable[[IngestProgress], Any] | None = None,
                 follow_symlinks: bool = False, embed_batch_chunks: int = 1024) -> IngestSummary:
    """Ingest every file; a failing file is reported and the others still go in.

    Files are parsed and chunked, then embedded in groups of up to about `embed_batch_chunks`
    chunks (a larger file is a group of its own, so it never holds back the files before it). A
    worker thread embeds one group while this thread writes the previous one, each document in its
    own transaction as soon as its vectors are ready: a file that finished is kept whatever happens
    to the run after it. `on_progress` is called after each file and during long embeddings.
    """
    summary = IngestSummary()
    check_space(conn, embedder, claim=True)
    found = find_files(paths, follow_symlinks=follow_symlinks)
    tracker = _Tracker(found, on_progress)

    def record(path: Path, result: FileResult) -> None:
        logger.log(logging.INFO if result.status == "failed" else logging.DEBUG, "%s: %s%s", printable(str(path)),
                   result.status, f" ({result.error})" if result.error else "")
        summary.files.append(result)
        if result.status in ("added", "new_version"):
            summary.documents += 1
            summary.chunks += result.chunks
        tracker.finished(path)
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
            submitted = (list(pending), pool.submit(_embed, embedder, list(pending), tracker))
            pending.clear()
            if in_flight is not None:
                write(*in_flight)
            in_flight = submitted

        for item in found:
            if item.refused is not None:
                record(item.path, FileResult(path=str(item.path), status="failed", error=item.refused))
                continue
            try:
                prep = _prepare(conn, settings, item.path, fmt=fmt, source_type=source_type, title=title)
            except IngestError as exc:
                record(item.path, _failed(item.path, exc))
                continue
            if isinstance(prep, FileResult):
                record(item.path, prep)
                continue
            queued = pending + (in_flight[0] if in_flight else [])
            if any(p.content_sha256 == prep.content_sha256 for p in queued):
                record(item.path, FileResult(path=str(item.path), status="unchanged", document_id=prep.doc_id,
                                             title=prep.title, warnings=prep.parsed.warnings))
                continue
            if pending and sum(len(p.drafts) for p in pending) + len(prep.drafts) > embed_batch_chunks:
                flush()
            pending.append(prep)
            if sum(len(p.drafts) for p in pending) >= embed_batch_chunks:
                flush()
        if pending:
            flush()
        if in_flight is not None:
            write(*in_flight)
    if summary.documents:
        store.optimize(conn)
    summary.seconds = round(time.perf_counter() - tracker.started, 3)
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
    """What `engine.ingest.pipeline.embedding_text` reads of a chunk."""

    def __init__(self, section_heading: str, text: str) -> None:
        self.section_heading = section_heading
        self.text = text
