"""Neighbours in reranking: the chunks adjoining the best candidates join the list, and the context head
scores each candidate beside its neighbours' first-stage probability."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config import shipped_relevance_model
from engine.ingest.pipeline import ingest_paths
from engine.relevance.model import NEIGHBOUR_TOP, RelevanceModel, rank_inputs
from engine.relevance.scorer import (
    ADDED,
    CONTEXT_RANK_FEATURES,
    CROSS_RANK_FEATURES,
    NEIGHBOUR,
    RANK_FEATURES,
    Scorer,
    adjoining,
    load_scorer,
    rank_features,
    with_neighbours,
)
from engine.search import store
from engine.search.retrieval import Retriever
from tests.relevance.test_cross import _FakeCross, _head


def test_adjoining_is_one_chunk_either_side_in_the_same_document() -> None:
    positions = [("a", 1), ("a", 2), ("b", 3), ("a", 4), None, ("b", 2), ("a", 3)]
    assert adjoining(positions) == [[1], [0, 6], [5], [6], [], [2], [1, 3]]


def test_the_neighbour_feature_is_the_best_first_stage_probability_beside_a_candidate() -> None:
    rows = [{"x": 1.0}, {"x": 2.0}, {"x": 3.0}]
    out = with_neighbours(rows, [0.9, 0.2, 0.6], [("a", 1), ("a", 2), ("a", 3)])
    assert [r[NEIGHBOUR] for r in out] == [0.2, 0.9, 0.2]
    assert [r["x"] for r in out] == [1.0, 2.0, 3.0] and NEIGHBOUR not in rows[0]  # pure


def test_list_features_mark_chunks_added_beside_a_hit_and_each_scores_rank_within_the_list() -> None:
    rows = [{"score": 1.0, "rank": 1, "maxsim": 0.5, "cross": 2.0},
            {"score": 0.5, "rank": 2, "maxsim": 0.9, "cross": 1.0},
            {"score": 0.0, "rank": None, "maxsim": 0.7, "cross": 3.0, "neighbour": True},
            {"score": 0.0, "rank": None, "maxsim": 0.6, "cross": 0.0}]  # research evidence: unranked, not added
    features = rank_features([0.0] * 4, rows, [{"coverage": 0.0}] * 4)
    assert [f[ADDED] for f in features] == [0.0, 0.0, 1.0, 0.0]
    assert [f["cross_rank"] for f in features] == [0.5, 1 / 3, 1.0, 0.25]
    assert [f["maxsim_rank"] for f in features] == [0.25, 1.0, 0.5, 1 / 3]


def _scorer(context_weights: dict[str, float]) -> Scorer:
    shipped = load_scorer(shipped_relevance_model())
    return Scorer(pair=shipped.pair, rank=_head(CROSS_RANK_FEATURES, {"inv_rank": 3.0}),
                  rank_late=_head(RANK_FEATURES, {"inv_rank": 3.0}), rank_pooled=shipped.rank_pooled,
                  context=_head(CONTEXT_RANK_FEATURES, context_weights))


def test_the_context_head_follows_only_the_full_rank_head() -> None:
    scorer = _scorer({})
    cross = _FakeCross()
    assert rank_inputs(scorer, late_interaction=True, cross=cross, neighbours=True)[3] is scorer.context
    assert rank_inputs(scorer, late_interaction=True, cross=cross)[3] is None  # off unless asked, as the setting
    assert rank_inputs(scorer, late_interaction=True, cross=None, neighbours=True)[3] is None  # no cross-encoder
    assert rank_inputs(Scorer(pair=scorer.pair, rank=scorer.rank), late_interaction=True, cross=cross,
                       neighbours=True)[3] is None


def test_rank_with_neighbours_adds_the_chunks_beside_the_best_and_scores_them(embedder) -> None:
    model = RelevanceModel(_scorer({NEIGHBOUR: 20.0, ADDED: 1.0}), embedder, shares_index=False,
                           cross=_FakeCross(), neighbours=True)
    candidates = [{"id": f"c{i}", "text": f"Passage {i} on fees.", "score": 1.0 - i / 10, "rank": i + 1,
                   "dense_rank": i + 1, "lexical_rank": None, "document_id": "doc", "ordinal": 10 * i}
                  for i in range(6)]
    asked: list[list[str]] = []

    def neighbours(best: list[dict]) -> list[dict]:
        asked.append([c["id"] for c in best])
        c = best[0]
        return [{"id": "beside", "text": "Records are kept six years.", "score": 0.0, "rank": None,
                 "dense_rank": None, "lexical_rank": None, "document_id": "doc", "ordinal": c["ordinal"] + 1,
                 "neighbour": True}]

    ranked, probs = model.rank_with_neighbours("How long are records kept?", candidates, neighbours)
    # the rank head (inv_rank) chose the best three; the neighbour came last, and was read by the cross-encoder
    assert asked == [["c0", "c1", "c2"][:NEIGHBOUR_TOP]]
    assert [c["id"] for c in ranked] == [*(c["id"] for c in candidates), "beside"] and len(probs) == 7
    assert "Records are kept six years." in model.cross.asked
    # beside the best candidate, it scores above every candidate without a neighbour in the list
    assert probs[-1] > max(probs[1:6])
    plain = RelevanceModel(_scorer({}), embedder, shares_index=False, cross=_FakeCross(), neighbours=False)
    same, _ = plain.rank_with_neighbours("q", candidates, lambda best: pytest.fail("no context head: no neighbours"))
    assert same == candidates


SECTIONS = """1. Retention
Transaction records must be kept for six years.

2. Retention guidance
The firm should store them in a durable medium that prevents alteration.

3. Annual fee
The annual fee is payable on the first business day of January.

4. Complaints
Complaints must be acknowledged within five business days.
"""


@pytest.fixture()
def sections(conn, embedder, settings, tmp_path: Path):
    (tmp_path / "rules.txt").write_text(SECTIONS)
    (tmp_path / "other.txt").write_text("Breaches must be notified to the Commissioner within seventy two hours.")
    assert not ingest_paths(conn, embedder, settings, [tmp_path], source_type="regulation").failed
    return conn


def test_adjoining_chunks_are_read_from_the_index_in_document_order(sections) -> None:
    rules = next(d for d in store.list_documents(sections) if d.source_key.endswith("rules.txt"))
    chunks = store.chunks_of_document(sections, rules.id)
    assert len(chunks) >= 3
    middle = chunks[1]
    near = store.adjoining_chunks(sections, [middle.id, chunks[0].id])
    assert [c.id for c in near[middle.id]] == [chunks[0].id, chunks[2].id]
    assert [c.id for c in near[chunks[0].id]] == [chunks[1].id]


def test_a_search_brings_the_neighbours_of_its_best_hits_unranked(sections, embedder, settings) -> None:
    assert load_scorer(settings.relevance_dir).context is not None  # the shipped model has a context head
    narrow = settings.model_copy(update={"candidates": 1, "rerank_depth": 1, "neighbours": True})
    hits = Retriever(sections, embedder, narrow).search("How long must transaction records be kept?", k=10)
    added = [h for h in hits if h.neighbour_of]
    assert added, [h.chunk.text for h in hits]
    by_id = {h.chunk_id: h for h in hits}
    for h in added:
        assert h.dense_rank is None and h.lexical_rank is None and h.score == 0.0 and h.relevance is not None
        origin = by_id[h.neighbour_of].chunk
        assert origin.document_id == h.chunk.document_id and abs(origin.ordinal - h.chunk.ordinal) == 1
    off = Retriever(sections, embedder, narrow.model_copy(update={"neighbours": False}))
    assert not any(h.neighbour_of for h in off.search("How long must transaction records be kept?", k=10))
    excluded = Retriever(sections, embedder, narrow).search("How long must transaction records be kept?", k=10,
                                                            exclude_ids=[h.chunk_id for h in added])
    assert not {h.chunk_id for h in excluded} & {h.chunk_id for h in added}


def test_the_context_head_is_saved_and_loaded_with_the_scorer(tmp_path: Path) -> None:
    scorer = _scorer({NEIGHBOUR: 2.0})
    scorer.save(tmp_path)
    loaded = load_scorer(tmp_path)
    assert loaded.context == scorer.context and loaded.rank == scorer.rank
