"""The pruned BM25 search (MaxScore over the postings) returns what the full scan of every posting returns."""

from __future__ import annotations

import pytest

from engine.search import store
from engine.search.lexical import query_terms

QUERIES = ["How long must transaction records be kept?", "When must a personal data breach be notified?",
           "How often must user access rights be reviewed?", "What must a client assessment record?",
           "records retention period for client files and complaints", "encryption of personal data at rest"]


def _weights(conn, query: str) -> dict[int, float]:
    terms = query_terms(query)
    ids = store.term_ids(conn, terms, create=False)
    return {ids[t]: float(c) for t, c in terms.items() if t in ids}


def _search(conn, settings, query: str, k: int, filters: dict, *, exact_scan: bool) -> list[tuple[str, float]]:
    return store.lexical_search(conn, _weights(conn, query), k, filters, k1=settings.bm25_k1, b=settings.bm25_b,
                                exact_scan=exact_scan)


def _same(pruned: list[tuple[str, float]], exact: list[tuple[str, float]]) -> None:
    assert [cid for cid, _ in pruned] == [cid for cid, _ in exact]
    assert [s for _, s in pruned] == pytest.approx([s for _, s in exact], rel=1e-12)


@pytest.mark.parametrize("first_postings", [1, 8, 20_000])
@pytest.mark.parametrize("k", [1, 3, 10])
def test_pruned_top_k_equals_full_scan(corpus_conn, settings, monkeypatch, k: int, first_postings: int) -> None:
    monkeypatch.setattr(store, "LEXICAL_FIRST_POSTINGS", first_postings)
    passes: list[int] = []
    pruned_pass = store._lexical_pruned
    monkeypatch.setattr(store, "_lexical_pruned", lambda *a, **kw: passes.append(1) or pruned_pass(*a, **kw))
    for query in QUERIES:
        exact = _search(corpus_conn, settings, query, k, {}, exact_scan=True)
        assert exact, query
        _same(_search(corpus_conn, settings, query, k, {}, exact_scan=False), exact)
    if first_postings == 1:  # the rarest term alone first: the pruned passes did run
        assert passes


def test_pruned_search_keeps_source_type_and_exclusions(corpus_conn, settings, monkeypatch) -> None:
    monkeypatch.setattr(store, "LEXICAL_FIRST_POSTINGS", 1)
    query = QUERIES[0]
    first = _search(corpus_conn, settings, query, 3, {}, exact_scan=False)
    flt = {"exclude_ids": [first[0][0]], "source_types": ["regulation", "policy"]}
    got = _search(corpus_conn, settings, query, 3, flt, exact_scan=False)
    _same(got, _search(corpus_conn, settings, query, 3, flt, exact_scan=True))
    assert first[0][0] not in {cid for cid, _ in got}
    assert _search(corpus_conn, settings, query, 3, {"source_types": ["contract"]}, exact_scan=False) == []


def test_unknown_terms_and_empty_query_find_nothing(corpus_conn, settings) -> None:
    assert _search(corpus_conn, settings, "zzqx wibblewobble", 5, {}, exact_scan=False) == []
    assert store.lexical_search(corpus_conn, {}, 5, {}, k1=settings.bm25_k1, b=settings.bm25_b) == []
