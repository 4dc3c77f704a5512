"""Hybrid retrieval: dense (pgvector HNSW) + BM25 (Postgres inverted index), fused.

Weighted fusion min-max normalizes each retriever's candidate scores and mixes them with
`dense_weight`; RRF is available as an alternative. Every hit keeps both component scores.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import psycopg

from engine.config import Settings
from engine.models import Hit
from engine.relevance.candidate import Candidate, candidate
from engine.relevance.model import RelevanceModel, neighbour_candidate
from engine.relevance.protocol import RelevanceRanker
from engine.search import bm25, store
from engine.search.embeddings import Embedder, check_space
from engine.terms import query_terms


@dataclass(frozen=True)
class Filters:
    """Restrict a search. `document_ids` names exact versions (superseded ones included)."""

    source_types: tuple[str, ...] = ()
    document_ids: tuple[str, ...] = ()
    current_only: bool = True

    def as_dict(self, exclude_ids: Iterable[str] = ()) -> dict[str, Any]:
        return {"source_types": self.source_types, "document_ids": self.document_ids,
                "current_only": self.current_only, "exclude_ids": tuple(exclude_ids)}


def _minmax(scores: dict[str, float]) -> dict[str, float]:
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    span = hi - lo
    return {k: (v - lo) / span if span > 0 else 1.0 for k, v in scores.items()}


_DEFAULT = Settings.model_fields  # the declared defaults (no environment read); a search passes its settings


def fuse(dense: Sequence[tuple[str, float]], lexical: Sequence[tuple[str, float]], *,
         method: str = _DEFAULT["fusion"].default, dense_weight: float = _DEFAULT["dense_weight"].default,
         rrf_k: int = _DEFAULT["rrf_k"].default) -> list[tuple[str, float]]:
    """Fuse two ranked lists of (id, score) into one, best first. Pure function."""
    if method == "rrf":
        fused: dict[str, float] = {}
        for ranked in (dense, lexical):
            for rank, (cid, _) in enumerate(ranked, start=1):
                fused[cid] = fused.get(cid, 0.0) + 1.0 / (rrf_k + rank)
    else:
        nd, nl = _minmax(dict(dense)), _minmax(dict(lexical))
        fused = {cid: dense_weight * nd.get(cid, 0.0) + (1 - dense_weight) * nl.get(cid, 0.0)
                 for cid in {*nd, *nl}}
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


@dataclass
class Retriever:
    """Searches the corpus; one per connection.

    With a second connection (`lexical_conn`), BM25 runs in the database while the query is
    embedded in this process, so a search costs the longer of the two rather than their sum.
    """

    conn: psycopg.Connection
    embedder: Embedder
    settings: Settings
    lexical_conn: psycopg.Connection | None = None
    scope: Filters | None = None  # applied to every search that names no filters (an audit's scope)
    relevance: Any = field(default=None, repr=False)  # RelevanceModel; loaded on first use when settings.rerank
    _reranker: Any = field(default=None, repr=False)
    _space_checked: bool = field(default=False, repr=False)
    _pool: ThreadPoolExecutor | None = field(default=None, repr=False)

    def _lexical(self, conn: psycopg.Connection, query: str, filters: dict[str, Any]) -> list[tuple[str, float]]:
        terms = query_terms(query)
        ids = store.term_ids(conn, terms, create=False)
        weights = {ids[t]: float(c) for t, c in terms.items() if t in ids}
        return bm25.lexical_search(conn, weights, self.settings.candidates, filters, k1=self.settings.bm25_k1,
                                    b=self.settings.bm25_b, first_postings=self.settings.bm25_first_postings,
                                    completed=self.settings.bm25_completed)

    def _components(self, query: str, filters: dict[str, Any]) -> tuple[list[tuple[str, float]],
                                                                           list[tuple[str, float]]]:
        n = self.settings.candidates
        if self.lexical_conn is None:
            vector = self.embedder.encode_query(query)
            return (store.dense_search(self.conn, vector, n, filters, self.settings.hnsw_ef_search),
                    self._lexical(self.conn, query, filters))
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bm25")
        pending = self._pool.submit(self._lexical, self.lexical_conn, query, filters)
        vector = self.embedder.encode_query(query)
        dense = store.dense_search(self.conn, vector, n, filters, self.settings.hnsw_ef_search)
        return dense, pending.result()

    def in_scope(self, source_type: str, document_id: str) -> bool:
        """Whether a chunk of this document may be evidence under the retriever's scope."""
        if self.scope is None:
            return True
        return ((not self.scope.source_types or source_type in self.scope.source_types)
                and (not self.scope.document_ids or document_id in self.scope.document_ids))

    def close(self) -> None:
        """Stop the worker thread (connections belong to the caller)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _rank(self, query: str, filters: dict[str, Any]) -> list[dict[str, Any]]:
        dense, lexical = self._components(query, filters)
        fused = fuse(dense, lexical, method=self.settings.fusion, dense_weight=self.settings.dense_weight,
                     rrf_k=self.settings.rrf_k)
        d_score, l_score = dict(dense), dict(lexical)
        d_rank = {cid: i for i, (cid, _) in enumerate(dense, 1)}
        l_rank = {cid: i for i, (cid, _) in enumerate(lexical, 1)}
        return [{"id": cid, "score": score, "dense_score": d_score.get(cid), "lexical_score": l_score.get(cid),
                 "dense_rank": d_rank.get(cid), "lexical_rank": l_rank.get(cid), "query": query}
                for cid, score in fused]

    def search(self, query: str, k: int = 10, *, filters: Filters | None = None,
               exclude_ids: Iterable[str] = ()) -> list[Hit]:
        """Top-k chunks for one query."""
        return self.search_many([query], k, filters=filters, exclude_ids=exclude_ids)

    def search_many(self, queries: Sequence[str], k: int = 10, *, filters: Filters | None = None,
                    exclude_ids: Iterable[str] = ()) -> list[Hit]:
        """Pool several queries, the first being the primary one.

        A chunk's pooled score is the weighted sum of its fused scores (primary 1, alternatives
        `pool_alt_weight`): found by several queries ranks higher, and an alternative's own best
        hit cannot outrank the primary query's. Each chunk keeps the scores of its best query.
        """
        if not self._space_checked:
            check_space(self.conn, self.embedder)
            self._space_checked = True
        flt = (filters or self.scope or Filters()).as_dict(exclude_ids)
        best: dict[str, dict[str, Any]] = {}
        pooled: dict[str, float] = {}
        for i, query in enumerate(dict.fromkeys(q.strip() for q in queries if q.strip())):
            weight = 1.0 if i == 0 else self.settings.pool_alt_weight
            for row in self._rank(query, flt):
                pooled[row["id"]] = pooled.get(row["id"], 0.0) + weight * row["score"]
                if row["id"] not in best or row["score"] > best[row["id"]]["score"]:
                    best[row["id"]] = row
        for cid, row in best.items():
            row["score"] = pooled[cid]
        ranked = sorted(best.values(), key=lambda r: (-r["score"], r["id"]))
        if self.settings.rerank:
            ranked = ranked[: max(k * 3, self.settings.rerank_depth)]
        elif not self.settings.reranker_model:
            ranked = ranked[:k]
        chunks = store.get_chunks(self.conn, [r["id"] for r in ranked])
        ranked = [r for r in ranked if r["id"] in chunks]
        if self.settings.rerank:
            ranked = self._rerank_learned(queries[0], ranked, chunks, set(flt["exclude_ids"]))
        if self.settings.reranker_model:
            ranked = self._rerank(queries[0], ranked[: max(k * 3, self.settings.rerank_depth)])
        return [Hit(chunk=chunks[r.pop("id")], **r) for r in ranked[:k]]

    def relevance_model(self) -> RelevanceModel:
        """The learned relevance model (loaded once per retriever)."""
        if self.relevance is None:

            self.relevance = RelevanceModel.for_embedder(self.settings.relevance_dir, self.embedder,
                                                         late_interaction=self.settings.late_interaction,
                                                         cross_encoder=self.settings.cross_encoder,
                                                         neighbours=self.settings.neighbours)
        return self.relevance

    def _rerank_learned(self, query: str, rows: list[dict[str, Any]], chunks: dict[str, Any],
                        exclude: set[str]) -> list[dict[str, Any]]:
        """Order candidates by the relevance model's probability (retrieval's own rank is one of its features),
        the chunks adjoining the best ones included (`RelevanceModel.rank_with_neighbours`; `chunks` gains
        them, `exclude` names chunks never to add)."""

        candidates = [candidate(id=r["id"], text=chunks[r["id"]].text, heading=chunks[r["id"]].section_heading,
                                cosine=r["dense_score"] if r["query"] == query else None, score=r["score"], rank=i,
                                dense_rank=r["dense_rank"], lexical_rank=r["lexical_rank"],
                                document_id=chunks[r["id"]].document_id, ordinal=chunks[r["id"]].ordinal)
                      for i, r in enumerate(rows, 1)]
        model = self.relevance_model()
        self._stored_cosines(model, query, candidates)

        def neighbours(best: list[Candidate]) -> list[Candidate]:
            known = {c["id"] for c in candidates} | exclude
            extra: list[Candidate] = []
            near = store.adjoining_chunks(self.conn, [c["id"] for c in best])
            for origin in (c["id"] for c in best):
                for chunk in near.get(origin, []):
                    if chunk.id not in known:
                        known.add(chunk.id)
                        chunks[chunk.id] = chunk
                        extra.append(neighbour_candidate(chunk, origin))
            self._stored_cosines(model, query, extra)
            return extra

        candidates, probs = model.rank_with_neighbours(query, candidates, neighbours)
        by_id = {r["id"]: r for r in rows}
        out = []
        for c, p in zip(candidates, probs, strict=True):
            row = by_id.get(c["id"]) or {"id": c["id"], "score": 0.0, "dense_score": None, "lexical_score": None,
                                         "dense_rank": None, "lexical_rank": None, "query": query,
                                         "neighbour_of": c["neighbour_of"]}
            row["relevance"] = round(p, 6)
            out.append(row)
        return sorted(out, key=lambda r: -r["relevance"])

    def _stored_cosines(self, model: RelevanceRanker, query: str, candidates: list[Candidate]) -> None:
        """Fill candidates' missing cosines from the index's own vectors (no encoding again)."""
        stored = stored_cosines(self.conn, model, query, [c["id"] for c in candidates if c["cosine"] is None])
        for c in candidates:
            if c["cosine"] is None and c["id"] in stored:
                c["cosine"] = stored[c["id"]]

    def _rerank(self, query: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Optional cross-encoder pass (configured by EVIDENCE_RERANKER_MODEL; none ships)."""
        if self._reranker is None:
            from sentence_transformers import CrossEncoder

            self._reranker = CrossEncoder(str(self.settings.reranker_model), device="cpu")
        chunks = store.get_chunks(self.conn, [r["id"] for r in rows])
        pairs = [(query, chunks[r["id"]].text) for r in rows]
        scores = self._reranker.predict(pairs) if pairs else []
        for row, score in zip(rows, scores, strict=True):
            row["rerank_score"] = float(score)
        return sorted(rows, key=lambda r: -r["rerank_score"])


def stored_cosines(conn: Any, model: RelevanceRanker | None, question: str, chunk_ids: Sequence[str]
                   ) -> dict[str, float]:
    """The question's cosine to each chunk's stored vector, when the relevance model's encoder made the
    index (else {}: the caller encodes what it scores)."""
    if model is None or not model.shares_index or not chunk_ids:
        return {}
    return dict(model.stored_cosines(question, store.chunk_embeddings(conn, list(chunk_ids))))
