"""The gate head: it reads the pair head, the cross-encoder, late interaction and the passage's place in its
part, is stored with the scorer, and is used only where a cross-encoder is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config import shipped_relevance_model
from engine.relevance.model import RelevanceModel
from engine.relevance.scorer import CROSS, GATE_FEATURES, Scorer, load_scorer, sigmoid
from tests.relevance.test_cross import _FakeCross, _head
from tests.relevance.test_relevance import ANSWERING, OFF_TOPIC


def _scorer(weights: dict[str, float]) -> Scorer:
    shipped = load_scorer(shipped_relevance_model())
    return Scorer(pair=shipped.pair, rank=shipped.rank, rank_late=shipped.rank_late, rank_pooled=shipped.rank_pooled,
                  thresholds={**shipped.thresholds, "gate_head": 0.5}, gate=_head(GATE_FEATURES, weights))


def test_the_gate_head_is_saved_and_loaded_with_the_scorer(tmp_path: Path) -> None:
    scorer = _scorer({CROSS: 1.0, "rank_gap": 0.5})
    scorer.save(tmp_path)
    loaded = load_scorer(tmp_path)
    assert loaded.gate == scorer.gate and loaded.thresholds["gate_head"] == 0.5


def test_the_gate_head_reads_the_cross_encoder_and_the_parts_best(embedder) -> None:
    fake = _FakeCross()  # 5.0 for a text about records, -5.0 otherwise
    model = RelevanceModel(_scorer({CROSS: 1.0}), embedder, shares_index=False, cross=fake)
    texts = [ANSWERING[1], OFF_TOPIC[1]]
    assert "records" in ANSWERING[1] and "records" not in OFF_TOPIC[1]
    probs = model.gate_probabilities(ANSWERING[0], texts, [0.2, 0.9], 0.9)
    assert probs == pytest.approx([float(sigmoid(5.0)), float(sigmoid(-5.0))])
    rows = model.gate_rows(ANSWERING[0], texts, [0.2, 0.9], 0.9)
    assert rows is not None and rows[1]["rank_gap"] == 0.0 and rows[0]["rank_gap"] < 0.0
    pair = model.pair_probabilities(ANSWERING[0], texts)  # the gate reads the pair head's own score
    assert [float(sigmoid(r["pair_logit"])) for r in rows] == pytest.approx(pair)
    by_rank = RelevanceModel(_scorer({"rank_gap": 4.0}), embedder, shares_index=False, cross=fake)
    first, second = by_rank.gate_probabilities(ANSWERING[0], texts, [0.2, 0.9], 0.9)
    assert second == pytest.approx(0.5) and first < 0.01  # far below the part's best passage


def test_no_gate_head_or_no_cross_encoder_leaves_the_decision_to_the_pair_head(embedder) -> None:
    shipped = load_scorer(shipped_relevance_model())
    no_head = RelevanceModel(Scorer(pair=shipped.pair, rank=shipped.rank, rank_late=shipped.rank_late,
                                    rank_pooled=shipped.rank_pooled), embedder, shares_index=False, cross=_FakeCross())
    assert no_head.gate_probabilities(ANSWERING[0], [ANSWERING[1]], [0.5], 0.5) is None
    no_cross = RelevanceModel(_scorer({CROSS: 1.0}), embedder, shares_index=False)
    assert no_cross.gate_probabilities(ANSWERING[0], [ANSWERING[1]], [0.5], 0.5) is None
