"""A cross-encoder: reads the question and a passage together and scores whether the passage answers.

The bi-encoder behind retrieval and the rank head sees the question and the passage apart (one
vector each, or one set of token vectors each); a cross-encoder lets every word of the question
attend to every word of the passage, which is what tells "keep records of the assessment" from
"keep records of the complaint". It is slower (one transformer pass per pair), so it scores only
the best `LATE_DEPTH` candidates of a list, and its score is a feature of the rank head, not the
ranking itself.

* Run time: ONNX Runtime, `<relevance model>/cross/` (`model.onnx` with one score per pair,
  `tokenizer.json`, `relevance.json` with its sha256). One pair per ONNX call, on one core, the pairs
  of a list side by side (`OnnxArtefact.run_each`): the int8 graph quantizes activations over its whole
  input, so in a batch a pair's score would depend on its neighbours.
* Training (torch, `evidence relevance train-cross`; `engine.relevance.cross_train`): all-MiniLM-L6-v2
  with a linear head over the mean of its last hidden states, listwise: each step takes
  `questions_per_step` questions, each as one answering passage and `group - 1` non-answering ones of
  the same question, and minimizes the softmax cross-entropy of the answering one. Seeded (data order,
  negatives, head init), resumable from the last checkpoint (every 100 steps).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from engine.relevance.encoder import MANIFEST, OnnxArtefact
from engine.relevance.pairs import Pair, grouped

CROSS_DIR = "cross"  # inside a relevance model directory


class CrossEncoder(OnnxArtefact):
    """Scores (question, passage) pairs with an exported cross-encoder (ONNX Runtime, CPU)."""

    default_max_length = 192
    retrain_hint = "retrain it with 'evidence relevance train-cross'"

    @cached_property
    def _tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        tok.enable_truncation(self.max_length, strategy="only_second")  # the passage gives way, never the question
        tok.no_padding()
        return tok

    def scores(self, question: str, texts: Sequence[str]) -> list[float]:
        """One logit per text: higher, more likely the text answers the question. One pair per call, the
        pairs side by side on the worker threads (see the module docstring)."""
        if not texts:
            return []
        encoded = self._tokenizer.encode_batch([(question, text) for text in texts])
        return [float(score[0]) for score in self.run_each(encoded)]


@lru_cache(maxsize=2)
def load_cross_encoder(relevance_dir: Path) -> CrossEncoder | None:
    """The cross-encoder shipped with a relevance model, or None when it has none."""
    directory = Path(relevance_dir) / CROSS_DIR
    return CrossEncoder(directory) if (directory / MANIFEST).exists() else None


# ---- the training plan (pure; the torch half is engine.relevance.cross_train) ----

def training_groups(pairs: list[Pair], group: int, seed: int) -> list[tuple[str, list[str], list[str]]]:
    """(question, answering passages, other passages) per question with an answer. A question with fewer
    than `group - 1` passages of its own that do not answer is topped up with passages of other questions
    (seeded), so any labelled file trains. Pure."""
    rng = random.Random(seed)
    everything = list(dict.fromkeys(p.passage for p in pairs))
    out = []
    for _, rows in grouped(pairs):
        positives = [r.passage for r in rows if r.label == 1]
        negatives = [r.passage for r in rows if r.label == 0]
        if not positives:
            continue
        own = set(positives) | set(negatives)
        while len(negatives) < group - 1 and len(own) < len(everything):
            extra = rng.choice(everything)
            if extra not in own:
                negatives.append(extra)
                own.add(extra)
        if len(negatives) >= group - 1:
            out.append((rows[0].question, positives, negatives))
    return out


def epoch_plan(groups: list[tuple[str, list[str], list[str]]], epoch: int, *, group: int, per_step: int,
               seed: int) -> list[list[tuple[int, str, list[str]]]]:
    """The steps of one epoch: per question its `epoch`-th answering passage (cycling) and `group - 1`
    sampled others, questions shuffled, `per_step` per step. Pure (seeded by `seed` and `epoch`)."""
    rng = random.Random(seed * 1000 + epoch)
    items = [(i, positives[epoch % len(positives)], rng.sample(negatives, group - 1))
             for i, (_, positives, negatives) in enumerate(groups)]
    rng.shuffle(items)
    return [items[i:i + per_step] for i in range(0, len(items), per_step)]
