"""The pruned BM25 search (MaxScore over the postings) returns what the full scan of every posting returns."""

from __future__ import annotations

import pytest

from engine.search import bm25, store
from engine.search.retrieval import Retriever
from engine.terms import query_terms

QUERIES = ["How long must transaction records be kept?", "When must a personal data breach be notified?",
           "How often must user access rights be reviewed?", "What must a client assessment record?",
           "records retention period for client files and complaints", "encryption of personal data at rest"]


def _weights(conn, query: str) -> dict[int, float]:
    terms = query_terms(query)
    ids = store.term_ids(conn, terms, create=False)
    return {ids[t]: float(c) for t, c in terms.items() if t in ids}


def _search(conn, settings, query: str, k: int, filters: dict, *, exact_scan: bool) -> list[tuple[str, float]]:
    return bm25.lexical_search(conn, _weights(conn, query), k, filters, k1=settings.bm25_k1, b=settings.bm25_b,
                                exact_scan=exact_scan)


def _same(pruned: list[tuple[str, float]], exact: list[tuple[str, float]]) -> None:
    assert [cid for cid, _ in pruned] == [cid for cid, _ in exact]
    assert [s for _, s in pruned] == pytest.approx([s for _, s in exact], rel=1e-12)


@pytest.mark.parametrize("k", [1, 3, 10])
def test_small_corpus_reads_every_posting_and_is_exact(corpus_conn, settings, monkeypatch, k: int) -> None:
    monkeypatch.setattr(bm25, "_lexical_pruned", lambda *a, **kw: pytest.fail("pruned on a small corpus"))
    for query in QUERIES:
        exact = _search(corpus_conn, settings, query, k, {}, exact_scan=True)
        assert exact, query
        _same(_search(corpus_conn, settings, query, k, {}, exact_scan=False), exact)


def _rarest_term_chunks(conn, query: str) -> set[str]:
    weights = _weights(conn, query)
    df = bm25.document_frequencies(conn, list(weights))
    rarest = min(df, key=lambda t: (df[t], t))
    return {r[0] for r in conn.execute("SELECT chunk_id FROM postings WHERE term_id = %s AND is_current", (rarest,))}


@pytest.mark.parametrize("k", [1, 3, 10])
def test_pruned_top_k_is_the_exact_top_k_of_the_rarest_terms_chunks(corpus_conn, settings, monkeypatch,
                                                                     k: int) -> None:
    """With the rarest term alone read whole, the result is the exact BM25 top k among the chunks holding it
    (scores exact): the documented approximation, and the exact top k whenever those chunks hold it."""
    monkeypatch.setattr(bm25, "LEXICAL_FIRST_POSTINGS", 1)
    monkeypatch.setattr(bm25, "LEXICAL_COMPLETED", 10_000)
    for query in QUERIES:
        everything = _search(corpus_conn, settings, query, 10_000, {}, exact_scan=True)
        holding = _rarest_term_chunks(corpus_conn, query)
        expected = [(cid, s) for cid, s in everything if cid in holding][:k]
        got = _search(corpus_conn, settings, query, k, {}, exact_scan=False)
        assert got, query
        _same(got, expected)


def test_pruned_scores_at_most_the_completed_candidates(corpus_conn, settings, monkeypatch) -> None:
    monkeypatch.setattr(bm25, "LEXICAL_FIRST_POSTINGS", 1)
    monkeypatch.setattr(bm25, "LEXICAL_COMPLETED", 2)
    everything = dict(_search(corpus_conn, settings, QUERIES[4], 10_000, {}, exact_scan=True))
    got = _search(corpus_conn, settings, QUERIES[4], 1, {}, exact_scan=False)
    assert len(got) == 1 and got[0][1] == pytest.approx(everything[got[0][0]], rel=1e-12)


def test_pruned_search_keeps_source_type_and_exclusions(corpus_conn, settings, monkeypatch) -> None:
    monkeypatch.setattr(bm25, "LEXICAL_FIRST_POSTINGS", 1)
    monkeypatch.setattr(bm25, "LEXICAL_COMPLETED", 10_000)
    query = QUERIES[0]
    first = _search(corpus_conn, settings, query, 3, {}, exact_scan=False)
    flt = {"exclude_ids": [first[0][0]], "source_types": ["regulation", "policy"]}
    got = _search(corpus_conn, settings, query, 3, flt, exact_scan=False)
    holding = _rarest_term_chunks(corpus_conn, query)
    everything = _search(corpus_conn, settings, query, 10_000, flt, exact_scan=True)
    _same(got, [(cid, s) for cid, s in everything if cid in holding][:3])
    assert first[0][0] not in {cid for cid, _ in got}
    assert _search(corpus_conn, settings, query, 3, {"source_types": ["contract"]}, exact_scan=False) == []


def test_unknown_terms_and_empty_query_find_nothing(corpus_conn, settings) -> None:
    assert _search(corpus_conn, settings, "zzqx wibblewobble", 5, {}, exact_scan=False) == []
    assert bm25.lexical_search(corpus_conn, {}, 5, {}, k1=settings.bm25_k1, b=settings.bm25_b) == []


def test_retriever_passes_the_budget_settings(corpus_conn, settings, embedder, monkeypatch) -> None:
    calls: list[int] = []
    pruned_pass = bm25._lexical_pruned
    monkeypatch.setattr(bm25, "_lexical_pruned",
                        lambda *a, **kw: calls.append(a[4]["completed"]) or pruned_pass(*a, **kw))
    query = QUERIES[0]
    budget = settings.model_copy(update={"bm25_first_postings": 1, "bm25_completed": 123})
    hits = Retriever(corpus_conn, embedder, budget).search(query, k=3)
    assert hits and calls == [123]
    exact = settings.model_copy(update={"bm25_first_postings": 0})
    Retriever(corpus_conn, embedder, exact).search(query, k=3)
    assert calls == [123]  # 0: every posting read, no pruned pass
