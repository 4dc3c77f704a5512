"""bench/corpora_pairs.py's split: by gold section, heldout only when every gold section is, and no chunk
answering a heldout question shown in train."""

from __future__ import annotations

import pytest

from bench.corpora_pairs import Corpus, corpus_rows, question_split, section_split
from engine.models import Chunk

# demo|a.txt|Article N falls in: 1 heldout, 2 train, 3 train, 5 heldout (fixed by the hash and seed 13)
HELD_1, TRAIN_2, TRAIN_3, HELD_5 = (f"demo|a.txt|Article {n}" for n in (1, 2, 3, 5))


def test_section_split_is_stable():
    assert [section_split(k) for k in (HELD_1, TRAIN_2, TRAIN_3, HELD_5)] == ["heldout", "train", "train", "heldout"]


@pytest.mark.parametrize(("keys", "split"), [
    ([HELD_1], "heldout"),
    ([HELD_1, HELD_5], "heldout"),
    ([TRAIN_2], "train"),
    ([HELD_1, TRAIN_2], "train"),
], ids=["one-heldout", "all-heldout", "one-train", "mixed-goes-to-train"])
def test_question_split(keys: list[str], split: str):
    assert question_split(keys) == split


def _chunk(n: int, article: int, text: str) -> Chunk:
    return Chunk(id=f"chk_{n}", document_id="doc_a", document_title="A", document_version=1, source_type="regulation",
                 is_current=True, ordinal=n, section_number=str(article), section_path=f"Article {article}",
                 section_heading="", text=text, char_start=n * 100, char_end=n * 100 + 90)


def _gold(article: int, text: str) -> dict:
    return {"doc": "a.txt", "section": f"Article {article}", "text": text}


def test_train_never_shows_a_heldout_answer():
    chunks = [_chunk(0, 1, "backup copies of records must be tested every month by the operator"),
              _chunk(1, 2, "backup copies of records must be kept offsite for seven years at least"),
              _chunk(2, 3, "incident reports go to the authority within twenty four hours of detection"),
              _chunk(3, 4, "the operator keeps a register of backup records and tests each copy")]
    corpus = Corpus("demo", [
        {"id": "q1", "type": "paraphrase", "question": "How often are backup records tested?",
         "gold": [_gold(1, "backup copies of records must be tested every month")]},
        {"id": "q2", "type": "broad", "question": "What about backup records?",
         "gold": [_gold(1, "backup copies of records must be tested every month"),
                  _gold(2, "backup copies of records must be kept offsite")]},
        {"id": "q3", "type": "out-of-scope", "question": "What colour are the backup tapes?", "gold": []},
    ], chunks, {"doc_a": "a.txt"})
    rows = corpus_rows(corpus, negatives=5, cap=4)
    assert {r["question_id"] for r in rows["heldout"]} == {"demo:q1"}
    assert {r["question_id"] for r in rows["train"]} == {"demo:q2"}
    train = {(r["chunk_id"], r["label"]) for r in rows["train"]}
    assert ("chk_1", 1) in train
    assert not any(chunk == "chk_0" for chunk, _ in train)  # q1's answer: neither positive nor negative in train
    assert ("chk_0", 1) in {(r["chunk_id"], r["label"]) for r in rows["heldout"]}


def test_a_judge_corpus_is_held_out_whole():
    """A corpus marked `judge: true` gives no training row: every question, also one whose gold section the hash
    puts in train, is held out (the development share no model trains on)."""
    chunks = [_chunk(0, 2, "backup copies of records must be kept offsite for seven years at least"),
              _chunk(1, 3, "incident reports go to the authority within twenty four hours of detection")]
    questions = [{"id": "q2", "type": "paraphrase", "question": "Where are backup records kept?",
                  "gold": [_gold(2, "backup copies of records must be kept offsite")]}]
    trained = corpus_rows(Corpus("demo", questions, chunks, {"doc_a": "a.txt"}), negatives=5, cap=4)
    judged = corpus_rows(Corpus("demo", questions, chunks, {"doc_a": "a.txt"}, judge=True), negatives=5, cap=4)
    assert trained["train"] and not trained["heldout"]
    assert not judged["train"] and {r["question_id"] for r in judged["heldout"]} == {"demo:q2"}


def test_a_judge_corpus_chooses_nothing_in_the_retrain():
    """bench/retrain.py's selection set: a judge corpus's questions are all `evaluate` (printed, never used to
    choose the encoder budget or the cross-encoder epoch); another corpus's held-out ones are split as before."""
    from bench.retrain_corpora import corpus_record

    chunks = [_chunk(0, 1, "backup copies of records must be tested every month by the operator"),
              _chunk(1, 2, "backup copies of records must be kept offsite for seven years at least")]
    questions = [{"id": f"q{n}", "type": "paraphrase", "question": "What about backup records?",
                  "gold": [_gold(n, "backup copies of records must")]} for n in (1, 2)]
    judged = corpus_record(Corpus("demo", questions, chunks, {"doc_a": "a.txt"}, judge=True))
    assert [q["split"] for q in judged["questions"]] == ["evaluate", "evaluate"]
    plain = corpus_record(Corpus("demo", questions, chunks, {"doc_a": "a.txt"}))
    assert [q["question_id"] for q in plain["questions"]] == ["demo:q1"]  # Article 2 trains: not held out
