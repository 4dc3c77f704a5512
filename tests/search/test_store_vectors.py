"""Vectors go to PostgreSQL through pgvector's adapters (binary COPY, binary parameters): stored exactly."""

from __future__ import annotations

import numpy as np

from engine.ingest.chunking import ChunkDraft
from engine.search import store

TEXT = "A firm must retain transaction records for at least six years from the date of the transaction."


def test_vectors_are_stored_and_searched_exactly(conn, settings) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((20, settings.embedding_dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    drafts = [ChunkDraft(id=f"chk_vec_{i:02d}", ordinal=i, text=TEXT, char_start=0, char_end=len(TEXT),
                         metadata={"n": i}) for i in range(len(vectors))]
    with conn.transaction():
        store.insert_document(conn, doc_id="doc_vec", source_key="vectors.txt", version=1, content_sha256="0" * 64,
                              file_sha256=None, title="Vectors", source_type="policy", source_uri="vectors.txt",
                              fmt="txt", text=TEXT, metadata={})
        store.insert_chunks(conn, "doc_vec", drafts, vectors, [16.0] * len(drafts))
        store.insert_postings(conn, [])
    stored = store.chunk_embeddings(conn, [d.id for d in drafts])
    assert all(np.array_equal(stored[d.id], v) for d, v in zip(drafts, vectors, strict=True))  # bit for bit
    chunk = store.get_chunks(conn, [drafts[7].id])[drafts[7].id]
    assert (chunk.text, chunk.metadata, chunk.ordinal, chunk.char_end) == (TEXT, {"n": 7}, 7, len(TEXT))
    assert conn.execute("SELECT token_count FROM chunks WHERE id = %s", (drafts[7].id,)).fetchone()[0] == 16
    best, similarity = store.dense_search(conn, vectors[7], 3, {"current_only": True})[0]
    assert best == drafts[7].id and abs(similarity - 1.0) < 1e-6
