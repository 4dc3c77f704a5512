"""bench/retrain.py's data: corpora pairs repeated without a repeat ever being its own in-batch negative,
random negatives from other documents only, and the corpora selection set's split and figures."""

from __future__ import annotations

import pytest

from bench.retrain import random_negatives, repeated, selection_figure
from bench.retrain_corpora import calibration_split, question_figures, reciprocal_rank
from engine.relevance.finetune import batches, triplets
from engine.relevance.pairs import Pair


def _rows(corpus: str, n: int) -> list[dict]:
    out = []
    for q in range(n):
        base = {"question": f"{corpus} question {q}", "question_id": f"{corpus}:q{q}", "source": corpus}
        out.append({**base, "passage": f"{corpus} answer {q}", "label": 1})
        out += [{**base, "passage": f"{corpus} negative {q}.{k}", "label": 0} for k in range(3)]
    return out


def test_repeats_are_questions_of_their_own_with_turned_negatives():
    rows = repeated(_rows("licences", 2), 3)
    ids = sorted({r["question_id"] for r in rows})
    assert ids == ["licences:q0", "licences:q0#1", "licences:q0#2", "licences:q1", "licences:q1#1", "licences:q1#2"]
    first_negative = {r["question_id"]: r["passage"] for r in reversed(rows) if r["label"] == 0}
    assert len({first_negative[i] for i in ("licences:q0", "licences:q0#1", "licences:q0#2")}) == 3
    assert repeated(_rows("licences", 2), 1) == _rows("licences", 2)


def test_no_batch_holds_a_repeat_twice():
    rows = repeated(_rows("policies", 6), 4)
    pairs = [Pair(question=r["question"], passage=r["passage"], label=r["label"], question_id=r["question_id"])
             for r in rows]
    for batch in batches(triplets(pairs, 0, 13), 8):
        assert len({b[1] for b in batch}) == len(batch)
        assert len({b[0] for b in batch}) == len(batch)


def test_random_negatives_come_from_other_documents():
    passages = [{"key": f"{doc}|{i}", "text": f"doc {doc} passage {i}", "split": "train"}
                for doc in (1, 2) for i in range(5)]
    obliqa = [{"question": "q", "question_id": "u1", "source": "obliqa", "passage": "doc 1 passage 0",
               "passage_key": "1|0", "label": 1}]
    rows = obliqa + _rows("licences", 2) + _rows("policies", 2)
    drawn = random_negatives(rows, passages, 2, seed=13)
    assert drawn == random_negatives(rows, passages, 2, seed=13)
    by_question: dict[str, list[str]] = {}
    for pair in drawn:
        assert pair.label == 0
        by_question.setdefault(pair.question_id or "", []).append(pair.passage)
    assert all(t.startswith("doc 2") for t in by_question["u1"])
    assert all(t.startswith("policies") for t in by_question["licences:q0"])
    assert all(len(texts) == 2 for texts in by_question.values()) and len(by_question) == 5


@pytest.mark.parametrize(("ranked", "figures"), [
    (["c1", "c2", "x"], (0.5, 0.5)),              # two chunks of one gold count once
    (["x", "c3", "c1"], (1.0, (1 / 2 + 2 / 3) / 2)),
    (["x", "y"], (0.0, 0.0)),
], ids=["one-gold-twice", "both-golds", "none"])
def test_question_figures_count_a_gold_once(ranked: list[str], figures: tuple[float, float]):
    gold = [{"key": "a", "chunks": ["c1", "c2"]}, {"key": "b", "chunks": ["c3"]}]
    assert question_figures(ranked, gold) == pytest.approx(figures)


def test_reciprocal_rank_and_selection():
    gold = [{"key": "a", "chunks": ["c2"]}]
    assert reciprocal_rank(["c1", "c2"], gold) == 0.5
    assert reciprocal_rank(["c1"] * 10 + ["c2"], gold) == 0.0
    found = {"calibrate": {"recall@10": 0.8, "map@10": 0.6},
             "corpora": {"calibrate": {"mean": {"recall@10": 0.9, "map@10": 0.5}}}}
    assert selection_figure(found) == pytest.approx(1.4)
    assert selection_figure({"calibrate": {"recall@10": 0.8, "map@10": 0.6}}) == pytest.approx(1.4)


def test_calibration_split_by_seed_14():
    # the seed-13 test keys of tests/relevance/test_corpora_pairs.py, split again under seed 14
    keys = [f"demo|a.txt|Article {n}" for n in range(1, 9)]
    splits = [calibration_split([k]) for k in keys]
    assert set(splits) == {"calibrate", "evaluate"}
    mixed = [keys[splits.index("calibrate")], keys[splits.index("evaluate")]]
    assert calibration_split(mixed) == "evaluate"
