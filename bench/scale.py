"""Scale benchmark: hybrid search, HNSW recall and index build on synthetic corpora of N chunks.

    python bench/scale.py --chunks 100000 --documents ../shared/obliqa/documents \
        --questions ../shared/obliqa/ObliQA_dev.json [--queries 200] [--m 16] [--ef-construction 64]

The corpus is made from the real ObliQA passages: they are parsed and chunked exactly as `evidence
ingest` does and embedded once with the configured embedder (cached under bench/.cache/scale). Chunk
i copies base chunk i mod B: the first copy is the chunk itself (text and vector), every further copy
recombines its sentences with one sentence of another chunk, and its vector is the base vector plus
a share of the other chunk's vector plus Gaussian noise, renormalised. Documents, chunks, the term
dictionary and the postings are bulk-loaded with COPY (nothing is embedded again; the postings'
indexes are built after the load), then the HNSW index is built and timed. Each stage is kept in the
database: a run stopped after the load or an index build resumes from there.

Measured, on sampled ObliQA dev questions: the product's hybrid search (`Retriever.search`: the
query embedded, BM25 in the database on a second connection, HNSW, fusion, the learned rerank) p50
and p95; the dense and the lexical parts alone; HNSW recall@10 against exact search (numpy over the
same vectors) for several `hnsw.ef_search`; a filtered search (one source type, about 1% of the
chunks) with and without iterative index scans; index build time; sizes; peak memory of the server
(PSS of its processes) and of this process; on `--exact-queries` questions, BM25 by the full scan of
every posting against the budgeted search (`--lexical-budgets`: time, and how much of the full scan's
top 10 and top 100 each budget returns). The last line is one JSON object (`search_p50_ms`, ...).

The database lives in the benchmark's own embedded server (`bench/.cache/scale/pgdata`), one
database per size, reused when it holds the same corpus (`--rebuild-index` rebuilds only the index).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import statistics
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import psycopg
from psycopg.types.json import Jsonb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import db as dbmod  # noqa: E402
from engine import embedded_db  # noqa: E402
from engine.config import Settings  # noqa: E402
from engine.ingest.chunking import ChunkDraft, chunk_document  # noqa: E402
from engine.ingest.formats import parse  # noqa: E402
from engine.ingest.pipeline import embedding_text, heading_words  # noqa: E402
from engine.ingest.sentences import split_sentences  # noqa: E402
from engine.search import bm25, store  # noqa: E402
from engine.search.embeddings import Embedder  # noqa: E402
from engine.search.retrieval import Retriever  # noqa: E402
from engine.terms import query_terms, term_frequencies, tokenize, with_phrases  # noqa: E402

GENERATOR = 2  # bump when the synthetic corpus changes: a database made by another version is rebuilt
# (2: vectors stored exactly, by binary COPY, not as 7-digit text)
MIX, NOISE = 0.35, 0.02  # share of the partner chunk's vector; noise per dimension (cosine to base ~0.85-0.9)
# Source types by document: a sixth are policies; one in 24 is a contract (about 4% of the chunks), the
# selective filter the iterative-scan measurement uses (an audit scoped to a few documents is like it).
SOURCE_TYPES = ("regulation", "guidance", "regulation", "policy", "regulation", "standard") * 3 + \
    ("regulation", "guidance", "regulation", "policy", "regulation", "contract")
FILTERED = "contract"
CACHE = ROOT / "bench" / ".cache" / "scale"


@dataclass
class Base:
    """The real chunks the corpus is made from."""

    drafts: list[ChunkDraft]
    doc_of: list[int]        # index of the ObliQA file each chunk comes from
    titles: list[str]
    vectors: np.ndarray
    sentences: list[list[str]]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load_base(documents: Path, embedder: Embedder, limit: int | None, cache_dir: Path) -> Base:
    """Parse and chunk the ObliQA files as ingest does; embed the chunks once (cached by content and model)."""
    files = sorted(documents.glob("*.json"), key=lambda p: int(p.stem) if p.stem.isdigit() else p.stem)
    drafts, doc_of, titles = [], [], []
    for n, path in enumerate(files):
        parsed = parse(path, path.read_bytes(), "obliqa")
        titles.append(f"ObliQA document {parsed.metadata['obliqa_document_id']}")
        for draft in chunk_document(f"doc_{n}", parsed):
            drafts.append(draft)
            doc_of.append(n)
    if limit:
        drafts, doc_of = drafts[:limit], doc_of[:limit]
    texts = [embedding_text(titles[d], draft) for d, draft in zip(doc_of, drafts, strict=True)]
    key = hashlib.sha256(("\x00".join(texts) + embedder.sha256).encode()).hexdigest()[:16]
    cache = cache_dir / f"base-{key}.npy"
    if cache.exists():
        vectors = np.load(cache)
    else:
        log(f"embedding {len(texts):,} base chunks once (cached in {cache})")
        started, parts = time.perf_counter(), []
        for start in range(0, len(texts), 512):
            parts.append(embedder.encode(texts[start:start + 512]))
            done = start + len(parts[-1])
            log(f"  {done:,}/{len(texts):,} ({done / (time.perf_counter() - started):.1f} chunks/s)")
        vectors = np.concatenate(parts).astype(np.float32)
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.save(cache, vectors)
    sentences = [[draft.text[s:e] for s, e in split_sentences(draft.text)] or [draft.text] for draft in drafts]
    return Base(drafts, doc_of, titles, vectors, sentences)


def synthetic_vectors(base: Base, n: int, seed: int) -> np.ndarray:
    """Vector of every synthetic chunk (deterministic: recomputed for exact search on a reused database)."""
    rng = np.random.default_rng(seed)
    b, dim = base.vectors.shape
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 50_000):
        i = np.arange(start, min(n, start + 50_000))
        vec = base.vectors[i % b].copy()
        partner = rng.integers(0, b, len(i))
        copies = (i // b) > 0
        vec[copies] += MIX * base.vectors[partner[copies]]
        vec[copies] += rng.normal(0.0, NOISE, (int(copies.sum()), dim)).astype(np.float32)
        out[i] = vec / np.linalg.norm(vec, axis=1, keepdims=True)
    return out


def synthetic_parts(base: Base, i: int, rng: random.Random) -> list[tuple[int, int]] | None:
    """The sentences (base chunk, sentence) of synthetic chunk i in order; None for a copy 0 (the base chunk)."""
    b = len(base.drafts)
    if i < b:
        return None
    own_chunk, other_chunk = i % b, rng.randrange(b)
    mixed = [(own_chunk, j) for j in range(len(base.sentences[own_chunk]))]
    other = range(len(base.sentences[other_chunk]))
    mixed[rng.randrange(len(mixed))] = (other_chunk, rng.choice(other))
    if len(mixed) == 1:
        mixed.append((other_chunk, rng.choice(other)))
    turn = (i // b) % len(mixed)
    return mixed[turn:] + mixed[:turn]


def synthetic_text(base: Base, i: int, rng: random.Random) -> str:
    parts = synthetic_parts(base, i, rng)
    if parts is None:
        return base.drafts[i].text
    return " ".join(base.sentences[c][j] for c, j in parts)


class Terms:
    """Term frequencies of synthetic chunks from their sentences' tokens (tokenized once per base sentence).

    Equal to `term_frequencies(synthetic_text(...), heading_words(draft))`: sentences are joined by a
    space and no token spans one, so the chunk's tokens are its sentences' tokens in order.
    """

    def __init__(self, base: Base) -> None:
        self.base = base
        self.sentences = [[tokenize(s) for s in sentences] for sentences in base.sentences]
        self.headings = [with_phrases(tokenize(heading_words(draft))) for draft in base.drafts]

    def of(self, i: int, text: str, parts: list[tuple[int, int]] | None) -> tuple[Counter[str], float]:
        own = i % len(self.base.drafts)
        if parts is None:
            return term_frequencies(text, heading_words(self.base.drafts[own]))
        tokens = [t for c, j in parts for t in self.sentences[c][j]]
        tf: Counter[str] = Counter()
        for token in with_phrases(tokens):
            tf[token] += 1.0
        for token in self.headings[own]:
            tf[token] += 1.0
        return tf, float(sum(tf.values()))


# The postings' indexes (sql/001_core.sql, sql/011_postings_by_chunk.sql): dropped for the bulk load and
# built after it (sorting 20-70 M rows once beats inserting them one by one into three B-trees).
POSTINGS_INDEXES = {
    "postings_pkey": "ALTER TABLE postings ADD CONSTRAINT postings_pkey PRIMARY KEY (term_id, chunk_id)",
    "postings_current": "CREATE INDEX postings_current ON postings (term_id) INCLUDE (chunk_id, tf, dl) "
                        "WHERE is_current",
    "postings_by_chunk": "CREATE INDEX postings_by_chunk ON postings (chunk_id, term_id) "
                         "INCLUDE (tf, dl, is_current)",
}


def drop_postings_indexes(conn: psycopg.Connection) -> None:
    conn.execute("ALTER TABLE postings DROP CONSTRAINT IF EXISTS postings_pkey")
    for name in POSTINGS_INDEXES:
        if name != "postings_pkey":
            conn.execute(f"DROP INDEX IF EXISTS {name}")


def ensure_postings_indexes(conn: psycopg.Connection, work_mem: str) -> float:
    """Build the postings' indexes that are missing (after a bulk load, or a load that was interrupted)."""
    present = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'postings'")}
    missing = [name for name in POSTINGS_INDEXES if name not in present]
    if not missing:
        return 0.0
    started = time.perf_counter()
    conn.execute(f"SET maintenance_work_mem = '{work_mem}'")
    for name in missing:
        log(f"building index {name}")
        conn.execute(POSTINGS_INDEXES[name])
    conn.execute("RESET maintenance_work_mem")
    return time.perf_counter() - started


def bulk_load(settings: Settings, base: Base, n: int, seed: int, embedder: Embedder,
              work_mem: str) -> dict[str, float]:
    """Documents, chunks, terms and postings by COPY; returns seconds per phase.

    Chunks and postings stream into two COPYs on two connections while they are generated, so
    memory holds the vectors and the documents' text, never the postings. The postings' indexes are
    built after the load.
    """
    started = time.perf_counter()
    with dbmod.connection(settings) as conn:
        drop_postings_indexes(conn)
    vectors = synthetic_vectors(base, n, seed)
    rng = random.Random(seed)
    b = len(base.drafts)
    tokens = Terms(base)
    terms: dict[str, int] = {}
    df: dict[int, int] = {}
    docs: list[dict[str, Any]] = []
    sum_dl, postings = 0.0, 0
    with dbmod.connection(settings) as conn, dbmod.connection(settings) as side, \
            conn.transaction(), side.transaction():
        for c in (conn, side):  # no FK triggers row by row on a bulk load (documents and terms come last)
            c.execute("SET LOCAL session_replication_role = replica")
        with conn.cursor() as cur, side.cursor() as side_cur, \
                cur.copy("COPY chunks (id, document_id, ordinal, section_number, section_path, section_heading, "
                         "text, char_start, char_end, token_count, embedding) FROM STDIN (FORMAT BINARY)"
                         ) as chunk_copy, \
                side_cur.copy("COPY postings (term_id, chunk_id, tf, dl) FROM STDIN") as posting_copy:
            chunk_copy.set_types(["text", "text", "int4", "text", "text", "text", "text", "int4", "int4", "int4",
                                  "vector"])
            lines: list[str] = []
            for i in range(n):
                draft, d = base.drafts[i % b], base.doc_of[i % b]
                key = (i // b, d)
                if not docs or docs[-1]["key"] != key:
                    docs.append({"key": key, "id": f"doc_s{key[0]}_{d}", "parts": [], "length": 0})
                doc = docs[-1]
                parts = synthetic_parts(base, i, rng)
                text = draft.text if parts is None else " ".join(base.sentences[c][j] for c, j in parts)
                offset = doc["length"] + (2 if doc["parts"] else 0)
                tf, length = tokens.of(i, text, parts)
                sum_dl += length
                cid = f"chk_s{i:07d}"
                tail = f"\t{cid}\t"
                for term, weight in tf.items():
                    tid = terms.setdefault(term, len(terms) + 1)
                    df[tid] = df.get(tid, 0) + 1
                    lines.append(f"{tid}{tail}{weight!r}\t{length!r}\n")
                postings += len(tf)
                chunk_copy.write_row((cid, doc["id"], len(doc["parts"]), draft.section_number, draft.section_path,
                                      draft.section_heading, text, offset, offset + len(text), int(length),
                                      vectors[i]))
                doc["parts"].append(text)
                doc["length"] = offset + len(text)
                if len(lines) > 50_000:
                    posting_copy.write("".join(lines))
                    lines.clear()
                if (i + 1) % 25_000 == 0:
                    log(f"  loaded {i + 1:,}/{n:,} chunks, {postings:,} postings "
                        f"({(i + 1) / (time.perf_counter() - started):.0f} chunks/s)")
            if lines:
                posting_copy.write("".join(lines))
        with conn.cursor() as cur:
            with cur.copy("COPY documents (id, source_key, version, content_sha256, title, source_type, source_uri, "
                          "format, text, metadata) FROM STDIN") as copy:
                for k, doc in enumerate(docs):
                    text = "\n\n".join(doc["parts"])
                    variant, d = doc["key"]
                    copy.write_row((doc["id"], f"scale:{variant}:{d}", 1, hashlib.sha256(text.encode()).hexdigest(),
                                    f"{base.titles[d]} (copy {variant})", SOURCE_TYPES[k % len(SOURCE_TYPES)],
                                    f"scale://{variant}/{d}", "obliqa", text, Jsonb({"language": "en"})))
            with cur.copy("COPY lexical_terms (id, term, df) FROM STDIN") as copy:
                for term, tid in terms.items():
                    copy.write_row((tid, term, df[tid]))
        conn.execute("SELECT setval('lexical_terms_id_seq', %s)", (len(terms),))
        conn.execute("UPDATE corpus_stats SET n_chunks = %s, sum_dl = %s", (n, sum_dl))
        store.record_embedding_space(conn, embedder.identity)
        conn.execute("CREATE TABLE bench_scale (generator int, chunks int, seed int, base text, postings bigint)")
        conn.execute("INSERT INTO bench_scale VALUES (%s, %s, %s, %s, %s)", (GENERATOR, n, seed, base_key(base),
                                                                              postings))
    load_s = time.perf_counter() - started
    with dbmod.connection(settings) as conn:
        index_s = ensure_postings_indexes(conn, work_mem)
        started = time.perf_counter()
        conn.execute("VACUUM (ANALYZE) documents")
        store.optimize(conn)
    return {"generate_and_copy_s": load_s, "postings_indexes_s": index_s,
            "vacuum_analyze_s": time.perf_counter() - started}


def base_key(base: Base) -> str:
    return hashlib.sha256(base.vectors.tobytes()).hexdigest()[:16]


class PeakMemory:
    """Samples PSS of the server's processes (and this process's RSS) in a background thread."""

    def __init__(self, settings: Settings | None) -> None:
        self.settings, self.peak_server, self._stop = settings, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def server_processes(self) -> list[psutil.Process]:
        if self.settings is None:
            return []
        info = embedded_db.status(self.settings)
        if not info["pid"]:
            return []
        root = psutil.Process(info["pid"])
        return [root, *root.children(recursive=True)]

    def _run(self) -> None:
        while not self._stop.is_set():
            total = 0
            for proc in self.server_processes():
                try:
                    total += proc.memory_full_info().pss
                except (psutil.Error, AttributeError):
                    continue
            self.peak_server = max(self.peak_server, total)
            self._stop.wait(0.5)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def hnsw_params(conn: psycopg.Connection) -> str | None:
    row = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'chunks_embedding'").fetchone()
    return row[0] if row else None


def build_index(conn: psycopg.Connection, m: int, ef_construction: int, work_mem: str, workers: int,
                settings: Settings | None) -> dict[str, Any]:
    conn.execute("DROP INDEX IF EXISTS chunks_embedding")
    conn.execute(f"SET maintenance_work_mem = '{work_mem}'")
    conn.execute(f"SET max_parallel_maintenance_workers = {int(workers)}")
    with PeakMemory(settings) as memory:
        started = time.perf_counter()
        conn.execute(f"CREATE INDEX chunks_embedding ON chunks USING hnsw (embedding vector_cosine_ops) "
                     f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)})")
        seconds = time.perf_counter() - started
    conn.execute("RESET maintenance_work_mem")
    return {"index_build_s": round(seconds, 1), "index_build_server_peak_mb": round(memory.peak_server / 2**20),
            "maintenance_work_mem": work_mem, "parallel_maintenance_workers": workers}


def sizes(conn: psycopg.Connection) -> dict[str, float]:
    row = conn.execute(
        "SELECT pg_database_size(current_database()), pg_total_relation_size('chunks'), "
        "pg_relation_size('chunks_embedding'), pg_total_relation_size('postings'), "
        "pg_total_relation_size('documents')").fetchone()
    names = ("database_mb", "chunks_total_mb", "hnsw_index_mb", "postings_total_mb", "documents_total_mb")
    return {name: round(value / 2**20, 1) for name, value in zip(names, row, strict=True)}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def exact_top(vectors: np.ndarray, queries: np.ndarray, k: int, mask: np.ndarray | None = None) -> list[set[int]]:
    """Exact cosine top-k (vectors are unit length) by blocks, optionally among `mask` rows only."""
    scores = np.full((len(queries), 0), 0.0, dtype=np.float32)
    best_idx = np.zeros((len(queries), 0), dtype=np.int64)
    for start in range(0, len(vectors), 100_000):
        block = vectors[start:start + 100_000] @ queries.T  # (rows, queries)
        if mask is not None:
            block[~mask[start:start + 100_000]] = -np.inf
        top = np.argpartition(-block, min(k, len(block) - 1), axis=0)[:k]
        cand_scores = np.take_along_axis(block, top, axis=0).T
        scores = np.concatenate([scores, cand_scores], axis=1)
        best_idx = np.concatenate([best_idx, top.T + start], axis=1)
        keep = np.argsort(-scores, axis=1)[:, :k]
        scores, best_idx = np.take_along_axis(scores, keep, 1), np.take_along_axis(best_idx, keep, 1)
    return [set(row.tolist()) for row in best_idx]


def chunk_number(chunk_id: str) -> int:
    return int(chunk_id.removeprefix("chk_s"))


def measure_recall(conn: psycopg.Connection, vectors: np.ndarray, qvecs: np.ndarray, ef_values: list[int],
                   k: int = 10) -> dict[str, Any]:
    truth = exact_top(vectors, qvecs, k)
    out: dict[str, Any] = {}
    for ef in ef_values:
        found, ms = [], []
        for q in qvecs:
            started = time.perf_counter()
            hits = store.dense_search(conn, q, k, {"current_only": True}, ef_search=ef)
            ms.append((time.perf_counter() - started) * 1000)
            found.append({chunk_number(cid) for cid, _ in hits})
        recall = statistics.mean(len(f & t) / k for f, t in zip(found, truth, strict=True))
        out[str(ef)] = {"recall_at_10": round(recall, 4), "dense_p50_ms": round(percentile(ms, 50), 2),
                        "dense_p95_ms": round(percentile(ms, 95), 2)}
    return out


def measure_filtered(conn: psycopg.Connection, vectors: np.ndarray, qvecs: np.ndarray, ef: int,
                     k: int = 10) -> dict[str, Any]:
    """One rare source type (about 4% of the chunks): HNSW with and without iterative scans against exact."""
    rows = conn.execute("SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id "
                        "WHERE d.source_type = %s", (FILTERED,)).fetchall()
    mask = np.zeros(len(vectors), dtype=bool)
    mask[[chunk_number(r[0]) for r in rows]] = True
    truth = exact_top(vectors, qvecs, k, mask)
    out: dict[str, Any] = {"source_type": FILTERED, "share_of_chunks": round(float(mask.mean()), 3)}
    sql = ("SELECT c.id FROM chunks c WHERE c.is_current AND c.document_id IN (SELECT id FROM documents "
           "WHERE source_type = %s) ORDER BY c.embedding <=> %s::vector LIMIT %s")
    for mode in ("off", "relaxed_order"):
        recalls, counts, ms = [], [], []
        for q, t in zip(qvecs, truth, strict=True):
            started = time.perf_counter()
            with conn.transaction():
                conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef)}")
                conn.execute(f"SET LOCAL hnsw.iterative_scan = {mode}")
                ids = [r[0] for r in conn.execute(sql, (FILTERED, np.asarray(q, dtype=np.float32), k)).fetchall()]
            ms.append((time.perf_counter() - started) * 1000)
            counts.append(len(ids))
            recalls.append(len({chunk_number(i) for i in ids} & t) / k)
        out[mode] = {"recall_at_10": round(statistics.mean(recalls), 4), "mean_results": statistics.mean(counts),
                     "p50_ms": round(percentile(ms, 50), 2)}
    return out


def _weights(conn: psycopg.Connection, query: str) -> dict[int, float]:
    terms = query_terms(query)
    ids = store.term_ids(conn, terms, create=False)
    return {ids[t]: float(c) for t, c in terms.items() if t in ids}


def measure_lexical(conn: psycopg.Connection, settings: Settings, questions: list[str],
                    budgets: list[tuple[int, int]]) -> dict[str, Any]:
    """BM25 by the full scan of every posting (the search before pruning) against the pruned search with
    each (first postings, completed) budget: time, and how much of the full scan's top 10 and top
    `candidates` (what fusion takes) the pruned search returns (the approximation)."""
    flt, n = {"current_only": True}, settings.candidates
    weights = [_weights(conn, q) for q in questions]
    full, full_ms = [], []
    for w in weights:
        started = time.perf_counter()
        full.append([c for c, _ in bm25.lexical_search(conn, w, n, flt, k1=settings.bm25_k1, b=settings.bm25_b,
                                                        exact_scan=True)])
        full_ms.append((time.perf_counter() - started) * 1000)
    out: dict[str, Any] = {"queries": len(questions), "full_scan_p50_ms": round(percentile(full_ms, 50), 1),
                           "full_scan_p95_ms": round(percentile(full_ms, 95), 1)}
    for first, completed in budgets:
        ms, top10, top_n, same = [], [], [], 0
        for w, exact in zip(weights, full, strict=True):
            started = time.perf_counter()
            got = [c for c, _ in bm25.lexical_search(conn, w, n, flt, k1=settings.bm25_k1, b=settings.bm25_b,
                                                      first_postings=first, completed=completed)]
            ms.append((time.perf_counter() - started) * 1000)
            top10.append(len(set(got[:10]) & set(exact[:10])) / max(1, len(exact[:10])))
            top_n.append(len(set(got) & set(exact)) / max(1, len(exact)))
            same += got == exact
        out[f"{first}/{completed}"] = {"p50_ms": round(percentile(ms, 50), 1), "p95_ms": round(percentile(ms, 95), 1),
                                       "top10_of_full_scan": round(statistics.mean(top10), 4),
                                       f"top{n}_of_full_scan": round(statistics.mean(top_n), 4),
                                       "identical": f"{same}/{len(weights)}"}
    return out


def measure_search(settings: Settings, embedder: Embedder, questions: list[str]) -> dict[str, Any]:
    """The product's search path, as bench/obliqa.py runs it; plus its dense and lexical parts alone."""
    total, dense, lexical = [], [], []
    with dbmod.connection(settings) as conn, dbmod.connection(settings) as lexical_conn:
        retriever = Retriever(conn, embedder, settings, lexical_conn=lexical_conn)
        for q in questions[:5]:  # warm caches and the model
            retriever.search(q, 10)
        for q in questions:
            started = time.perf_counter()
            retriever.search(q, 10)
            total.append((time.perf_counter() - started) * 1000)
        flt = {"current_only": True}
        for q in questions:
            vector = embedder.encode_query(q)  # cached by now: the dense part alone
            started = time.perf_counter()
            store.dense_search(conn, vector, settings.candidates, flt, settings.hnsw_ef_search)
            dense.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            retriever._lexical(conn, q, flt)
            lexical.append((time.perf_counter() - started) * 1000)
        retriever.close()
    return {"search_p50_ms": round(percentile(total, 50), 1), "search_p95_ms": round(percentile(total, 95), 1),
            "dense_candidates_p50_ms": round(percentile(dense, 50), 1),
            "dense_candidates_p95_ms": round(percentile(dense, 95), 1),
            "lexical_p50_ms": round(percentile(lexical, 50), 1), "lexical_p95_ms": round(percentile(lexical, 95), 1),
            "bm25_first_postings": settings.bm25_first_postings, "bm25_completed": settings.bm25_completed}


def open_database(args: argparse.Namespace, base_settings: Settings) -> tuple[Settings, Settings | None]:
    """Settings pointing at the benchmark database (created if needed), and the embedded server's settings."""
    if args.database_url:
        return base_settings.model_copy(update={"database_url": args.database_url}), None
    server = base_settings.model_copy(update={"home": args.home, "database_url": None})
    admin_url = embedded_db.start(server)
    name = f"scale_{args.chunks}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        current = admin.execute("SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'"
                                ).fetchone()[0]
        wanted = admin.execute("SELECT pg_size_bytes(%s)", (args.shared_buffers,)).fetchone()[0]
    if current != wanted:  # the server's own setting (postgresql.auto.conf), applied by a restart
        log(f"shared_buffers {current // 2**20} MB -> {args.shared_buffers}: restarting the benchmark's server")
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f"ALTER SYSTEM SET shared_buffers = '{args.shared_buffers}'")
        embedded_db.stop(server)
        admin_url = embedded_db.start(server)
    with psycopg.connect(admin_url, autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            admin.execute(f'CREATE DATABASE "{name}"')
    return server.model_copy(update={"database_url": admin_url.replace("/postgres?", f"/{name}?", 1)}), server


def prepared(conn: psycopg.Connection, n: int, seed: int, key: str) -> bool:
    """Whether the database already holds this corpus (else it is emptied for a fresh load)."""
    try:
        row = conn.execute("SELECT generator, chunks, seed, base FROM bench_scale").fetchone()
    except psycopg.errors.UndefinedTable:
        row = None
    if row == (GENERATOR, n, seed, key):
        return True
    conn.execute("DROP TABLE IF EXISTS bench_scale")
    conn.execute("TRUNCATE postings, lexical_terms, chunk_references, chunks, documents, embedding_space "
                 "RESTART IDENTITY CASCADE")
    conn.execute("DROP INDEX IF EXISTS chunks_embedding")
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, required=True)
    parser.add_argument("--documents", type=Path, default=ROOT.parent / "shared" / "obliqa" / "documents")
    parser.add_argument("--questions", type=Path, default=ROOT.parent / "shared" / "obliqa" / "ObliQA_dev.json")
    parser.add_argument("--queries", type=int, default=200, help="sampled dev questions")
    parser.add_argument("--base-limit", type=int, default=None, help="use only the first N real chunks")
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=64)
    parser.add_argument("--ef-search", default="40,100,200",
                        help="values to measure recall at ('' measures no recall, only search)")
    parser.add_argument("--maintenance-work-mem", default=None, help="for the index build (default by size)")
    parser.add_argument("--build-workers", type=int, default=1, help="max_parallel_maintenance_workers")
    parser.add_argument("--rebuild-index", action="store_true")
    parser.add_argument("--exact-queries", type=int, default=50,
                        help="questions whose BM25 is also computed by the full scan, to compare (0: none)")
    parser.add_argument("--lexical-budgets", default="20000/300,10000/300,10000/150",
                        help="pruned BM25 budgets (first postings/completed) compared with the full scan")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--home", type=Path, default=CACHE,
                        help="the benchmark's embedded server and its cache of base vectors live here")
    parser.add_argument("--database-url", default=None, help="use this (empty or earlier benchmark) database")
    parser.add_argument("--keep-server", action="store_true", help="leave the benchmark's server running")
    parser.add_argument("--shared-buffers", default="2GB",
                        help="the benchmark server's shared_buffers (128MB is PostgreSQL's default; at 1M "
                             "chunks the search working set is about 10 GB)")
    parser.add_argument("--no-prewarm", dest="prewarm", action="store_false",
                        help="search with cold caches (no pg_prewarm of the search relations first)")
    args = parser.parse_args()

    settings, server = open_database(args, Settings())
    embedder = Embedder.from_settings(settings)
    base = load_base(args.documents, embedder, args.base_limit, args.home)
    log(f"{len(base.drafts):,} base chunks; corpus of {args.chunks:,} chunks")
    result: dict[str, Any] = {"chunks": args.chunks, "base_chunks": len(base.drafts), "generator": GENERATOR,
                              "embedder": embedder.identity["name"], "backend": embedder.backend}
    build_mem = args.maintenance_work_mem or f"{max(256, args.chunks * 3 // 1000)}MB"
    with dbmod.connection(settings) as conn:
        if prepared(conn, args.chunks, args.seed, base_key(base)):
            log("reusing the loaded corpus")
            result["load"] = "reused"
        else:
            log("generating and bulk-loading")
            times = bulk_load(settings, base, args.chunks, args.seed, embedder, build_mem)
            result["load"] = {k: round(v, 1) for k, v in times.items()}
        if ensure_postings_indexes(conn, build_mem):  # a run stopped after its load, before these were built
            store.optimize(conn)
        result["postings"] = conn.execute("SELECT postings FROM bench_scale").fetchone()[0]
        wanted = f"m='{args.m}', ef_construction='{args.ef_construction}'"
        current = hnsw_params(conn)
        if args.rebuild_index or current is None or wanted not in current:
            log(f"building HNSW (m={args.m}, ef_construction={args.ef_construction}, maintenance_work_mem={build_mem})")
            result["index"] = build_index(conn, args.m, args.ef_construction, build_mem, args.build_workers, server)
            conn.execute("ANALYZE chunks")
        else:
            result["index"] = "reused"
        result["hnsw"] = {"m": args.m, "ef_construction": args.ef_construction}
        result["sizes"] = sizes(conn)
        rng = random.Random(args.seed)
        questions = [q["Question"] for q in json.loads(args.questions.read_text())]
        questions = rng.sample(questions, min(args.queries, len(questions)))
        ef_values = [int(x) for x in args.ef_search.split(",") if x]
        if ef_values:
            log("exact search and HNSW recall")
            vectors = synthetic_vectors(base, args.chunks, args.seed)
            qvecs = np.stack([embedder.encode_query(q) for q in questions])
            result["recall"] = measure_recall(conn, vectors, qvecs, ef_values)
            result["filtered"] = measure_filtered(conn, vectors, qvecs, settings.hnsw_ef_search)
            del vectors
    if args.prewarm:
        log("pg_prewarm of what a search reads")
        with dbmod.connection(settings) as conn:
            started = time.perf_counter()
            store.prewarm(conn)
            working, shared = store.search_working_set(conn)
        result["prewarm_s"] = round(time.perf_counter() - started, 1)
        result["shared_buffers_mb"] = shared // 2**20
        result["search_working_set_mb"] = sum(working.values()) // 2**20
    log("hybrid search")
    with PeakMemory(server) as memory:
        result.update(measure_search(settings, embedder, questions))
    result["search_server_peak_mb"] = round(memory.peak_server / 2**20)
    if args.exact_queries:
        log("BM25: full scan against the pruned search")
        budgets = [(int(a), int(b)) for a, b in (x.split("/") for x in args.lexical_budgets.split(",") if x)]
        with dbmod.connection(settings) as conn:
            result["lexical_vs_full_scan"] = measure_lexical(conn, settings, questions[:args.exact_queries], budgets)
    result["bench_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    result["ef_search"] = settings.hnsw_ef_search
    result["hnsw_recall_at_10"] = result.get("recall", {}).get(str(settings.hnsw_ef_search), {}).get("recall_at_10")
    result["queries"] = len(questions)
    result["load_average"] = [round(x, 2) for x in psutil.getloadavg()]
    if server is not None and not args.keep_server:
        embedded_db.stop(server)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
