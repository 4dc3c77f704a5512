"""Vectors into and out of PostgreSQL: ingest of examples/corpus, and the chunk COPY and dense search alone.

    python bench/vector_store.py [--chunks 5000] [--repeat 3] [--home DIR]

* `ingest_corpus_s`: the whole `ingest_paths` of examples/corpus (parse, chunk, embed with the default
  embedder, store) into a fresh database; best of `--repeat`. `ingest_store_s`: of that, the time in
  `store.insert_chunks` (the COPY of the chunks with their vectors).
* `copy_chunks_per_s`: `store.insert_chunks` alone, `--chunks` synthetic chunks with random unit vectors
  of the configured dimension, in one transaction (the HNSW index is maintained as in ingest); best of
  `--repeat`. `copy_no_index_chunks_per_s`: the same without the HNSW index (the COPY itself).
* `dense_search_ms_p50`: `store.dense_search` with random query vectors over those chunks.

Runs its own embedded server under `--home` (default bench/.cache/vector_store). The last line is one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import db as dbmod  # noqa: E402
from engine import embedded_db  # noqa: E402
from engine.config import Settings  # noqa: E402
from engine.ingest.chunking import ChunkDraft  # noqa: E402
from engine.ingest.pipeline import ingest_paths  # noqa: E402
from engine.search import store  # noqa: E402
from engine.search.embeddings import Embedder  # noqa: E402

CACHE = ROOT / "bench" / ".cache" / "vector_store"


def fresh(settings: Settings, name: str) -> Settings:
    admin_url = embedded_db.start(settings)
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    return settings.model_copy(update={"database_url": admin_url.replace("/postgres?", f"/{name}?", 1)})


class Timed:
    """Wraps `store.insert_chunks` (as the pipeline calls it) and adds up its time."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.original = store.insert_chunks

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        started = time.perf_counter()
        try:
            self.original(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started


def ingest_corpus(settings: Settings, embedder: Embedder, repeat: int) -> dict[str, Any]:
    runs = []
    for _ in range(repeat):
        target = fresh(settings, "vector_store_ingest")
        with dbmod.connection(target) as conn:  # migrations here, outside the timing
            timed = Timed()
            store.insert_chunks = timed  # type: ignore[assignment]
            try:
                started = time.perf_counter()
                summary = ingest_paths(conn, embedder, target, [ROOT / "examples" / "corpus"])
                seconds = time.perf_counter() - started
            finally:
                store.insert_chunks = timed.original  # type: ignore[assignment]
        if summary.failed:
            raise SystemExit(f"ingest failed: {summary.failed}")
        runs.append((seconds, timed.seconds, summary.chunks))
    best = min(runs)
    return {"ingest_corpus_s": round(best[0], 3), "ingest_store_s": round(best[1], 4), "ingest_chunks": best[2],
            "ingest_corpus_s_all": [round(r[0], 3) for r in runs]}


def copy_and_search(settings: Settings, n: int, repeat: int) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((n, settings.embedding_dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    text = "A firm must retain transaction records for at least six years from the date of the transaction."
    drafts = [ChunkDraft(id=f"chk_bench_{i:06d}", ordinal=i, text=text, char_start=0, char_end=len(text))
              for i in range(n)]
    target = fresh(settings, "vector_store_copy")
    with dbmod.connection(target) as conn:

        def load() -> list[float]:
            times = []
            for attempt in range(repeat):
                conn.execute("TRUNCATE chunks, documents CASCADE")
                with conn.transaction():
                    store.insert_document(conn, doc_id="doc_bench", source_key=f"bench-{attempt}", version=1,
                                          content_sha256="0" * 64, file_sha256=None, title="bench",
                                          source_type="policy", source_uri="bench", fmt="txt", text=text, metadata={})
                    started = time.perf_counter()
                    store.insert_chunks(conn, "doc_bench", drafts, vectors, [16.0] * n)
                    times.append(time.perf_counter() - started)
            return times

        conn.execute("DROP INDEX IF EXISTS chunks_embedding")  # the COPY itself, without the HNSW inserts
        bare = load()
        conn.execute("CREATE INDEX chunks_embedding ON chunks USING hnsw (embedding vector_cosine_ops) "
                     "WITH (m = 16, ef_construction = 64)")
        times = load()
        stored = store.chunk_embeddings(conn, [drafts[0].id, drafts[-1].id])
        exact = bool(np.array_equal(stored[drafts[0].id], vectors[0]) and np.array_equal(stored[drafts[-1].id],
                                                                                          vectors[-1]))
        filters = {"current_only": True}
        searches = []
        for q in rng.standard_normal((50, settings.embedding_dim)).astype(np.float32):
            started = time.perf_counter()
            store.dense_search(conn, q / np.linalg.norm(q), 10, filters)
            searches.append((time.perf_counter() - started) * 1000)
    return {"copy_chunks": n, "copy_chunks_per_s": round(n / min(times), 1),
            "copy_no_index_chunks_per_s": round(n / min(bare), 1),
            "copy_s_all": [round(t, 3) for t in times], "stored_vectors_exact": exact,
            "dense_search_ms_p50": round(statistics.median(searches), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--home", type=Path, default=CACHE)
    args = parser.parse_args()
    settings = Settings(home=args.home, database_url=None)
    embedder = Embedder.from_settings(settings)
    embedder.encode(["warm up the encoder"])
    result: dict[str, Any] = {"embedder": embedder.identity["name"]}
    try:
        result.update(ingest_corpus(settings, embedder, args.repeat))
        result.update(copy_and_search(settings, args.chunks, args.repeat))
    finally:
        embedded_db.stop(settings)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
