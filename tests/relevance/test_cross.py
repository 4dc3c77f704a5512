"""The cross-encoder: its training command end to end on a tiny fixture, the seeded plan, and the rank
head that reads it only when a model ships one (and Settings.cross_encoder is on)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.config import shipped_relevance_model
from engine.relevance.cross import CrossEncoder, epoch_plan, load_cross_encoder, training_groups
from engine.relevance.encoder import file_sha256, read_manifest
from engine.relevance.model import LATE_DEPTH, RelevanceModel
from engine.relevance.pairs import Pair
from engine.relevance.scorer import CROSS_RANK_FEATURES, POOLED_RANK_FEATURES, RANK_FEATURES, Head, Scorer, load_scorer
from tests.relevance.test_relevance import ANSWERING, NEIGHBOURS, OFF_TOPIC, _tiny_pairs


def test_groups_are_topped_up_and_the_plan_is_seeded() -> None:
    pairs = [Pair(question=f"q{i}", passage=f"answer {i}", label=1, question_id=f"q{i}") for i in range(6)]
    pairs += [Pair(question="q0", passage="not it", label=0, question_id="q0")]
    groups = training_groups(pairs, group=4, seed=13)
    assert len(groups) == 6 and all(len(negatives) >= 3 for _, _, negatives in groups)
    assert "not it" in groups[0][2] and all(p not in negatives for _, positives, negatives in groups for p in positives)
    plan = epoch_plan(groups, 0, group=4, per_step=4, seed=13)
    assert [len(step) for step in plan] == [4, 2]
    assert plan == epoch_plan(groups, 0, group=4, per_step=4, seed=13)  # pure
    assert plan != epoch_plan(groups, 1, group=4, per_step=4, seed=13)  # another epoch, another order


@pytest.mark.slow
def test_cross_encoder_training_command_runs_end_to_end_on_a_tiny_fixture(tmp_path: Path) -> None:
    from engine.cli.main import app

    pairs = _tiny_pairs(tmp_path / "pairs.jsonl")
    model = tmp_path / "model"
    args = ["relevance", "train-cross", str(pairs), "--model", str(model), "--epochs", "1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    manifest = read_manifest(model / "cross")
    assert manifest["sha256"] == file_sha256(model / "cross" / "model.onnx") and manifest["kind"] == "cross-encoder"
    assert manifest["seed"] == 13 and manifest["steps_trained"] == manifest["of_steps"] > 0
    cross = CrossEncoder(model / "cross")
    alone = cross.scores(ANSWERING[0], [ANSWERING[1]])
    beside = cross.scores(ANSWERING[0], [OFF_TOPIC[1], ANSWERING[1]])
    assert alone == beside[1:]  # one pair per call: a pair's score does not depend on its neighbours
    again = CliRunner().invoke(app, args)  # the last checkpoint is complete: nothing is trained again
    assert again.exit_code == 0 and "resumed at step" in again.output, again.output


@pytest.mark.slow
def test_no_epoch_starts_that_would_end_past_the_deadline_and_the_best_so_far_is_exported(tmp_path: Path) -> None:
    import time

    from engine.config import default_model_dir
    from engine.relevance.cross_train import train_cross
    from engine.relevance.pairs import read_pairs

    pairs = read_pairs(_tiny_pairs(tmp_path / "pairs.jsonl"))
    figures = iter([0.5, 0.9, 0.1])
    lines: list[str] = []
    # the first epoch ends after the deadline has passed: no second one starts (of a three-epoch schedule)
    train_cross(pairs, tmp_path / "cross", base=default_model_dir(), epochs=3, per_step=8,
                choose=lambda score: next(figures), deadline=time.time(), log=lines.append)
    manifest = read_manifest(tmp_path / "cross")
    assert manifest["of_steps"] == 3 * manifest["steps_trained"] > 0
    assert any(line.startswith("stopping after epoch 1") for line in lines), lines
    assert next(figures) == 0.9  # the second epoch's figure was never asked for


@pytest.mark.parametrize("device", ["tpu", "cuda:x"])
def test_training_refuses_a_device_it_does_not_know(tmp_path: Path, device: str) -> None:
    from engine.cli.main import app

    pairs = _tiny_pairs(tmp_path / "pairs.jsonl")
    for command in (["train", str(pairs), "--out", str(tmp_path / "m")],
                    ["train-cross", str(pairs), "--model", str(tmp_path / "m")]):
        result = CliRunner().invoke(app, ["relevance", *command, "--device", device])
        assert result.exit_code != 0 and "unknown device" in result.output, result.output
    assert not (tmp_path / "m").exists()


def test_a_gpu_this_machine_lacks_is_a_clear_error() -> None:
    import torch

    from engine.relevance.finetune import check_device

    assert check_device("cpu") == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU"):
            check_device("cuda")


def test_training_refuses_too_few_questions(tmp_path: Path) -> None:
    from engine.cli.main import app

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"question": "q", "passage": "p", "label": 1}) + "\n")
    result = CliRunner().invoke(app, ["relevance", "train-cross", str(pairs), "--model", str(tmp_path / "m")])
    assert result.exit_code != 0 and "pairs.jsonl" in result.output and not (tmp_path / "m" / "cross").exists()


class _FakeCross:
    name, sha256 = "fake-cross", "0" * 64

    def __init__(self) -> None:
        self.asked: list[str] = []

    def scores(self, question: str, texts: list[str]) -> list[float]:
        self.asked.extend(texts)
        return [5.0 if "records" in t else -5.0 for t in texts]


def _head(features: tuple[str, ...], weights: dict[str, float]) -> Head:
    return Head(features, (0.0,) * len(features), (1.0,) * len(features),
                tuple(weights.get(f, 0.0) for f in features), 0.0)


def test_the_rank_head_reads_the_cross_encoder_only_when_there_is_one(embedder) -> None:
    shipped = load_scorer(shipped_relevance_model())
    scorer = Scorer(pair=shipped.pair, rank=_head(CROSS_RANK_FEATURES, {"cross": 1.0}),
                    rank_late=_head(RANK_FEATURES, {"inv_rank": 5.0}), rank_pooled=_head(POOLED_RANK_FEATURES, {}))
    candidates = [{"text": f"{OFF_TOPIC[1]} ({i})", "score": 1.0 - i / 100, "rank": i + 1, "dense_rank": i + 1,
                   "lexical_rank": i + 1} for i in range(LATE_DEPTH + 5)]
    candidates.append({"text": ANSWERING[1], "score": 0.5, "rank": LATE_DEPTH + 6})
    fake = _FakeCross()
    with_cross = RelevanceModel(scorer, embedder, shares_index=False, cross=fake)
    assert with_cross.head is scorer.rank and with_cross.identity["cross_encoder"]["name"] == "fake-cross"
    probs = with_cross.rank(ANSWERING[0], candidates)
    # only the best LATE_DEPTH by retrieval rank are read together with the question; the answer is deeper
    assert len(fake.asked) == LATE_DEPTH and ANSWERING[1] not in fake.asked
    assert max(probs) == probs[0] and probs[-1] == pytest.approx(probs[-2])
    top = candidates[:3] + [{**candidates[-1], "rank": 4}]
    assert with_cross.rank(ANSWERING[0], top)[-1] > 0.99  # within reach, it ranks first
    without = RelevanceModel(scorer, embedder, shares_index=False)  # no cross-encoder shipped, or setting off
    assert without.head is scorer.rank_late and without.cross is None and "cross_encoder" not in without.identity
    pooled = RelevanceModel(scorer, embedder, shares_index=False, late_interaction=False, cross=fake)
    assert pooled.head is scorer.rank_pooled and pooled.cross is None


def test_the_shipped_cross_encoder_is_what_its_manifest_says_and_scores_an_answer_first() -> None:
    cross = load_cross_encoder(shipped_relevance_model())
    assert cross is not None and "cross" in load_scorer(shipped_relevance_model()).rank.features
    assert cross.sha256 == file_sha256(cross.model_dir / "model.onnx")
    assert (cross.model_dir / "model.onnx").stat().st_size < 25 * 1024 * 1024
    # Trained listwise (softmax over one list), its logits order a list and have no absolute scale: the answer
    # comes first among a near miss (records of another kind), an off-topic duty and unrelated text.
    texts = [ANSWERING[1], "The firm must keep a record of each complaint it receives.", OFF_TOPIC[1],
             "The weather in the city is warm in summer."]
    scores = cross.scores(ANSWERING[0], texts)
    assert max(range(len(texts)), key=scores.__getitem__) == 0, scores
    assert min(range(len(texts)), key=scores.__getitem__) == 3, scores


def test_a_pairs_score_does_not_depend_on_the_pairs_scored_with_it() -> None:
    cross = load_cross_encoder(shipped_relevance_model())
    assert cross is not None
    alone = cross.scores(ANSWERING[0], [ANSWERING[1]])[0]
    for texts in NEIGHBOURS:
        texts = [t.format(ANSWERING[1]) for t in texts]
        scores = cross.scores(ANSWERING[0], texts)
        assert all(scores[i] == alone for i, t in enumerate(texts) if t == ANSWERING[1])  # bitwise, not close
