"""bench/retrain.py's data: corpora pairs repeated without a repeat ever being its own in-batch negative,
random negatives from other documents only, and the corpora selection set's split and figures."""

from __future__ import annotations

import pytest

from bench.retrain import DenseIndex, cross_pairs, random_negatives, repeated, selection_figure
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


class _WordModel:
    """An encoder stand-in: a text's vector counts a small vocabulary's words (normalised)."""

    vocabulary = ("backup", "restore", "logs", "retained", "access", "review", "patent", "fee")

    def encode(self, texts: list[str], **_: object) -> object:
        import torch

        rows = torch.tensor([[float(t.lower().count(w)) for w in self.vocabulary] + [0.01] for t in texts])
        return torch.nn.functional.normalize(rows, dim=1)


def test_cross_pairs_mine_a_corpus_question_within_its_own_corpus():
    passages = [{"key": "1|0", "text": "Backups are restored monthly.", "split": "train"},
                {"key": "1|1", "text": "Logs are retained, backup logs too.", "split": "heldout"}]

    def pair(question: str, passage: str, label: int, qid: str) -> Pair:
        return Pair(question=question, passage=passage, label=label, question_id=qid)

    pairs = [pair("How long are backup logs retained?", "Logs are kept.", 1, "u1"),
             pair("How often is a backup restore tested?", "Backup restore is tested yearly.", 1, "policies:p1"),
             pair("How often is a backup restore tested?", "Access review happens quarterly.", 0, "policies:p1"),
             pair("Who reviews access?", "Backup copies and restore tests are logged.", 1, "policies:p2"),
             pair("What is the patent fee?", "No patent fee is charged.", 1, "licences:l1")]
    added = cross_pairs(pairs, DenseIndex(_WordModel(), passages), passages, mined=1)[len(pairs):]
    assert [(p.question_id, p.passage, p.label) for p in added] == [
        ("u1", "Backups are restored monthly.", 0),                         # ObliQA: train passages only
        ("policies:p1", "Backup copies and restore tests are logged.", 0),  # its own corpus's nearest other text
        ("policies:p2", "Access review happens quarterly.", 0),
    ]                                                                       # licences: nothing else in its corpus


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
