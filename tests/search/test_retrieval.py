"""Hybrid retrieval: BM25 equals a reference implementation; fusion; filters; exclusions."""

from __future__ import annotations

from pathlib import Path

import bm25s
import pytest

from engine.ingest.pipeline import heading_words, ingest_paths
from engine.search import bm25, store
from engine.search.retrieval import Filters, Retriever, fuse
from engine.terms import query_terms, term_frequencies

TINY = {
    "a.txt": "Records must be kept for six years. Records of complaints must be kept too.",
    "b.txt": "Breaches must be notified to the Commissioner within seventy two hours.",
    "c.txt": "Access rights must be reviewed every quarter and revoked promptly after termination.",
    "d.txt": "Client assessments must record the client's objectives, records of advice and risk tolerance.",
}


@pytest.fixture()
def tiny(conn, embedder, settings, tmp_path: Path):
    for name, text in TINY.items():
        (tmp_path / name).write_text(text)
    summary = ingest_paths(conn, embedder, settings, [tmp_path], source_type="regulation")
    assert not summary.failed
    return conn


def test_bm25_scores_equal_reference(tiny, settings) -> None:
    stored = [c for d in store.list_documents(tiny) for c in store.chunks_of_document(tiny, d.id)]
    chunks = {c.text: c.id for c in stored}
    texts = [c.text for c in stored]
    corpus_tokens = []
    for chunk in stored:  # the indexed lexical content: body + title + section headings (weight 1)
        tf, _ = term_frequencies(chunk.text, f"{chunk.document_title} {heading_words(chunk)}", 1.0)
        corpus_tokens.append([t for t, n in tf.items() for _ in range(int(n))])
    reference = bm25s.BM25(method="lucene", k1=settings.bm25_k1, b=settings.bm25_b)
    reference.index(corpus_tokens, show_progress=False)
    query = "how long must records be kept"
    q_tokens = list(query_terms(query))
    expected = reference.get_scores(q_tokens)
    ids = store.term_ids(tiny, q_tokens, create=False)
    got = dict(bm25.lexical_search(tiny, {ids[t]: 1.0 for t in q_tokens if t in ids}, 10, {},
                                    k1=settings.bm25_k1, b=settings.bm25_b))
    for text, score in zip(texts, expected, strict=True):
        assert got.get(chunks[text], 0.0) == pytest.approx(float(score), rel=1e-5, abs=1e-6), text


def test_hybrid_exposes_both_scores_and_ranks(tiny, embedder, settings) -> None:
    hits = Retriever(tiny, embedder, settings).search("When must a breach be notified?", k=3)
    assert "seventy two hours" in hits[0].chunk.text
    assert hits[0].dense_score is not None and hits[0].lexical_score is not None
    assert hits[0].dense_rank == 1 or hits[0].lexical_rank == 1


def test_exclude_ids_and_source_type_filter(tiny, embedder, settings) -> None:
    retriever = Retriever(tiny, embedder, settings)
    first = retriever.search("notify breach", k=1)[0]
    rest = retriever.search("notify breach", k=4, exclude_ids=[first.chunk_id])
    assert first.chunk_id not in {h.chunk_id for h in rest}
    assert retriever.search("notify breach", k=4, filters=Filters(source_types=("policy",))) == []


def test_search_many_pools_and_dedupes(tiny, embedder, settings) -> None:
    hits = Retriever(tiny, embedder, settings).search_many(["records kept", "keep records six years"], k=4)
    ids = [h.chunk_id for h in hits]
    assert len(ids) == len(set(ids))
    assert "six years" in hits[0].chunk.text


@pytest.mark.parametrize(("method", "expected"), [("weighted", ["x", "y", "z"]), ("rrf", ["x", "y", "z"])],
                         ids=["weighted", "rrf"])
def test_fuse_is_pure_and_ordered(method: str, expected: list[str]) -> None:
    dense = [("x", 0.9), ("y", 0.5)]
    lexical = [("x", 12.0), ("z", 3.0), ("y", 4.0)]
    order = [cid for cid, _ in fuse(dense, sorted(lexical, key=lambda r: -r[1]), method=method, dense_weight=0.5)]
    assert order == expected


def test_sample_corpus_hybrid_finds_retention(corpus_conn, embedder, corpus_settings) -> None:
    hits = Retriever(corpus_conn, embedder, corpus_settings).search("How long must transaction records be kept?", k=5)
    assert any("six years" in h.chunk.text for h in hits[:3])


def test_rerank_reads_stored_vectors_instead_of_encoding_passages(tiny, embedder, settings, monkeypatch) -> None:
    """Hits that only BM25 or an alternative query found get their cosine from the index, not the encoder."""
    batches: list[int] = []
    original = type(embedder).encode
    monkeypatch.setattr(type(embedder), "encode",
                        lambda self, texts: batches.append(len(texts)) or original(self, texts))
    retriever = Retriever(tiny, embedder, settings)
    hits = retriever.search_many(["records kept six years", "complaints"], k=4)
    assert retriever.relevance_model().shares_index
    assert hits and all(h.relevance is not None for h in hits)
    assert set(batches) <= {1}, f"passages were encoded again at query time: batches of {batches}"
