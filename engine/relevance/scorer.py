"""The learned relevance scorer: logistic heads over features of (question, passage) and of a
passage's place in a ranked list.

* The **pair head** scores one (question, text) alone: cosine of the fine-tuned encoder, key-term
  and phrase coverage, heading coverage, length, and their products. `agents.verify.judge` and the grounding gate use
  it; its threshold (`thresholds["gate"]`) is calibrated for balanced accuracy on held-out pairs. In the
  answer pipeline the gate judges passages the selection already chose (a much higher prior of being
  relevant), at its own threshold `thresholds["gate_selected"]` (bench/calibrate_relevance.py: chosen
  with the selection cut for the most citation recall at precision `PRECISION_FLOOR` (0.72) on calibration
  questions, among thresholds that let at most `OFF_TOPIC_PASS` of off-topic regulatory passages through;
  the same as `gate` until calibrated).
* The **rank head** scores a candidate within a retrieval list: the pair logit, its gap to the
  list's best, the fused retrieval score and the retriever ranks. Reranking and selection use it;
  selection cites what scores within `select_gap` of the best and above `select_floor`.
* The **context head** (where fitted) scores the list again once the chunks adjoining the rank head's best
  have joined it: the rank head's features, the list scores' ranks within the list, whether the search
  found the candidate, and its neighbours' best rank-head probability. Reranking and selection use it
  after the rank head.

* The **gate head** (where fitted) decides whether a passage the selection chose answers its part
  (`GATE_FEATURES`, threshold `thresholds["gate_head"]`; bench/calibrate_gate.py fits it on every
  development corpus). Verify uses it in place of the pair head at `gate_selected`.

All are plain logistic regressions (standardized features, L2), fitted in numpy and stored as JSON
(`scorer.json` beside the encoder); the file's sha256 goes into every audit record.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import ConfigError
from engine.terms import key_terms, term_sequence, tokenize

SCORER_FILE = "scorer.json"
PAIR_FEATURES = ("cosine", "coverage", "phrase_coverage", "heading_coverage", "log_words",
                 "cosine_sq", "cosine_x_coverage", "coverage_x_phrase")
# The share of the question's key terms a passage holds joins the list features: the pair head weighs it
# as the gate needs, not as ranking does (held-out Recall@10 / MAP@10 0.8172 / 0.6939 -> 0.8213 / 0.7006).
# Not heading coverage: 95% of ObliQA's passages have no heading, so a head fitted there reads a heading
# that shares the question's words as a freak value (z about 16) and buries the passage on any corpus
# whose sections have titles; nor the raw cosine, phrase coverage or length, which add nothing held out.
# Late interaction (MaxSim over the encoder's token vectors, and its gap to the list's best) matches each
# part of the question to the passage's words, which the pooled vector blurs (held-out Recall@10 / MAP@10
# 0.8219 / 0.7002 -> 0.8313 / 0.7092 on one index; bench/calibrate_relevance.py).
LATE_INTERACTION = "maxsim"  # a candidate's MaxSim score, where a rank head uses it
POOLED_RANK_FEATURES = ("pair_logit", "logit_gap", "fused", "inv_rank", "inv_dense_rank", "inv_lexical_rank",
                        "coverage")  # the rank head without late interaction (Settings.late_interaction off)
RANK_FEATURES = (*POOLED_RANK_FEATURES, LATE_INTERACTION, f"{LATE_INTERACTION}_gap")
# The cross-encoder's logit (engine.relevance.cross: question and passage read together), and its gap to the
# list's best, where the model ships one.
CROSS = "cross"
CROSS_RANK_FEATURES = (*RANK_FEATURES, CROSS, f"{CROSS}_gap")
_LIST_SCORES = (LATE_INTERACTION, CROSS)  # per-candidate scores a rank head may read, each with its gap and rank
# The context head (a second stage over the list the first rank head ordered, neighbours included): the
# first head's features, each list score's reciprocal rank within the list, `neighbour` (the first head's
# highest probability among the candidates adjoining this one in its document: a rule's guidance, the next
# paragraph of an article) and `added` (1 for a candidate added beside a hit, which no search found; 0 for
# the rest, among them research evidence the list's own search did not return: a head that read "not found
# by this search" instead, as it first did, lifted that evidence as if it adjoined a hit, and answers cited
# worse). Chosen by 5-fold cross-validation on calibration questions only
# (bench/calibrate_relevance.py; docs/relevance.md).
NEIGHBOUR = "neighbour"
ADDED = "added"
CONTEXT_FEATURES = (f"{CROSS}_rank", f"{LATE_INTERACTION}_rank", NEIGHBOUR, ADDED)
CONTEXT_RANK_FEATURES = (*CROSS_RANK_FEATURES, *CONTEXT_FEATURES)
_PAIR_IN_RANK = ("coverage",)
DEFAULT_THRESHOLDS = {"gate": 0.5, "select_floor": 0.2, "select_gap": 0.35, "select_max": 3}
OFF_TOPIC_PASS = 0.15  # most of off-topic passages that gate_selected may let through (calibration)
# A chosen passage the ranking scores at least `gate_confident` passes the gate whatever the pair head says:
# the pair head reads the encoder's cosine and word overlap on an absolute scale fitted to one corpus's
# wording, and on text worded otherwise (a licence, a standard) scores plain answers under the gate, where the
# ranking, which reads question and passage together (cross-encoder, late interaction), is sure. Calibrated as
# the lowest value that the best of a list retrieved for another document's question reaches for at most
# FOREIGN_CONFIDENT of calibration questions; 1.0 (never) until calibrated.
FOREIGN_CONFIDENT = 0.01
# The gate head (where fitted) decides for a passage the selection chose whether it answers its part, in place
# of the pair head alone at `gate_selected` and the ranking at `gate_confident`: it reads both beside what reads
# question and passage together (the cross-encoder's logit, late interaction) and the passage's place in its
# part (its ranking probability's logit, and its gap to the part's best). Fitted on chosen passages of ObliQA's
# calibration questions and of every development corpus (bench/calibrate_gate.py), so that no scale fitted
# on one corpus's wording vetoes the ranking's best passage on another; its threshold is `gate_head`.
GATE_FEATURES = ("pair_logit", CROSS, LATE_INTERACTION, "rank_logit", "rank_gap", "coverage")


def _logit(p: float) -> float:
    p = min(max(float(p), 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def gate_features(pair_logit: float, cross: float, maxsim: float, relevance: float, best: float,
                  coverage: float) -> dict[str, float]:
    """The gate head's inputs for one chosen passage: its pair logit, cross-encoder logit and MaxSim, its
    ranking probability (`relevance`) as a logit and its logit gap to the part's best (`best`), and the share
    of the question's key terms it holds. Pure."""
    return {"pair_logit": float(pair_logit), CROSS: float(cross), LATE_INTERACTION: float(maxsim),
            "rank_logit": _logit(relevance), "rank_gap": _logit(relevance) - _logit(max(best, relevance)),
            "coverage": float(coverage)}


def _pairs(terms: list[str]) -> set[tuple[str, str]]:
    return set(zip(terms, terms[1:], strict=False))


def pair_features(question: str, text: str, cosine: float, heading: str = "") -> dict[str, float]:
    """Features of one (question, text) pair given their encoder cosine. Pure."""
    terms = key_terms(question)
    tokens = set(tokenize(text))
    heading_tokens = set(tokenize(heading))
    phrases = _pairs(term_sequence(question))
    coverage = sum(t in tokens for t in terms) / len(terms) if terms else 0.0
    phrase = len(phrases & _pairs(term_sequence(text))) / len(phrases) if phrases else 0.0
    cos = float(cosine)
    # Interactions: a linear head cannot say "close in meaning AND sharing the question's words" alone
    # (held-out balanced accuracy of the gate 0.663 -> 0.733 on ObliQA pairs).
    return {"cosine": cos, "coverage": coverage, "phrase_coverage": phrase,
            "heading_coverage": sum(t in heading_tokens for t in terms) / len(terms) if terms else 0.0,
            "log_words": math.log1p(len(text.split())), "cosine_sq": cos * cos,
            "cosine_x_coverage": cos * coverage, "coverage_x_phrase": coverage * phrase}


def rank_features(pair_logits: Sequence[float], rows: Sequence[Mapping[str, Any]],
                  pairs: Sequence[dict[str, float]]) -> list[dict[str, float]]:
    """List-relative features: each row carries `score` (fused retrieval score), optional ranks and, when
    every row has one, `maxsim` (late interaction) and `cross` (the cross-encoder's logit), each with its
    gap to the list's best; `pairs` (the rows' pair features) give the pair head's inputs that ranking
    uses too. Pure."""
    best = max(pair_logits, default=0.0)
    top = max((float(r.get("score") or 0.0) for r in rows), default=0.0) or 1.0

    def inv(rank: Any) -> float:
        return 1.0 / float(rank) if rank else 0.0

    extra: dict[str, float] = {}  # per-candidate list score -> the list's best, when every row has it
    for name in _LIST_SCORES:
        if rows and all(r.get(name) is not None for r in rows):
            extra[name] = max(float(r[name]) for r in rows)

    every = {name: [float(r[name]) for r in rows] for name in extra}

    def scores(r: Mapping[str, Any]) -> dict[str, float]:
        out = {}
        for name, best_of in extra.items():
            out[name] = float(r[name])
            out[f"{name}_gap"] = float(r[name]) - best_of
            out[f"{name}_rank"] = 1.0 / (1 + sum(x > out[name] for x in every[name]))
        return out

    return [{"pair_logit": p, "logit_gap": p - best, "fused": float(r.get("score") or 0.0) / top,
             "inv_rank": inv(r.get("rank")), "inv_dense_rank": inv(r.get("dense_rank")),
             "inv_lexical_rank": inv(r.get("lexical_rank")), ADDED: float(bool(r.get("neighbour"))),
             **{f: pf[f] for f in _PAIR_IN_RANK}, **scores(r)}
            for p, r, pf in zip(pair_logits, rows, pairs, strict=True)]


def adjoining(positions: Sequence[tuple[str, int] | None]) -> list[list[int]]:
    """For each (document id, ordinal), the indices of the others one chunk before or after it in the same
    document (None: a candidate without a position adjoins nothing). Pure."""
    at = {p: i for i, p in enumerate(positions) if p is not None}
    return [[] if p is None else [at[q] for q in ((p[0], p[1] - 1), (p[0], p[1] + 1)) if q in at]
            for p in positions]


def with_neighbours(rows: Sequence[dict[str, float]], first: Sequence[float],
                    positions: Sequence[tuple[str, int] | None]) -> list[dict[str, float]]:
    """Rank feature rows with `neighbour`: the highest first-stage probability (`first`) among the
    candidates adjoining each one (0 when none does). Pure."""
    return [{**r, NEIGHBOUR: max((float(first[j]) for j in near), default=0.0)}
            for r, near in zip(rows, adjoining(positions), strict=True)]


@dataclass(frozen=True)
class Head:
    """One logistic regression over named, standardized features."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float

    def logits(self, rows: Sequence[dict[str, float]]) -> np.ndarray:
        if not rows:
            return np.zeros(0)
        x = np.array([[r[f] for f in self.features] for r in rows], dtype=np.float64)
        return ((x - np.array(self.mean)) / np.array(self.scale)) @ np.array(self.weights) + self.bias

    @classmethod
    def fit(cls, rows: Sequence[dict[str, float]], labels: Sequence[int], features: Sequence[str], *,
            l2: float = 1.0, iterations: int = 50, weights: Sequence[float] | None = None) -> Head:
        """Newton's method on the L2-penalized log loss (deterministic); `weights` weigh the rows (each
        corpus as much as another, say), standardizing by the weighted mean and deviation."""
        x = np.array([[r[f] for f in features] for r in rows], dtype=np.float64)
        y = np.asarray(labels, dtype=np.float64)
        if weights is None:
            mean, scale = x.mean(axis=0), x.std(axis=0)
            v = np.ones(len(x))
        else:
            v = np.asarray(weights, dtype=np.float64) * len(x) / float(np.sum(weights))
            mean = np.average(x, axis=0, weights=v)
            scale = np.sqrt(np.average((x - mean) ** 2, axis=0, weights=v))
        scale[scale < 1e-9] = 1.0
        z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
        w = np.zeros(z.shape[1])
        penalty = np.eye(z.shape[1]) * l2
        penalty[-1, -1] = 0.0
        for _ in range(iterations):
            p = 1.0 / (1.0 + np.exp(-(z @ w)))
            grad = z.T @ (v * (p - y)) + penalty @ w
            hess = (z * (v * p * (1 - p))[:, None]).T @ z + penalty
            step = np.linalg.solve(hess, grad)
            w -= step
            if np.abs(step).max() < 1e-8:
                break
        return cls(tuple(features), tuple(mean.round(8)), tuple(scale.round(8)), tuple(w[:-1].round(8)),
                   float(round(w[-1], 8)))

    def as_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "mean": list(self.mean), "scale": list(self.scale),
                "weights": list(self.weights), "bias": self.bias}


def sigmoid(x: np.ndarray | float) -> Any:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


@dataclass(frozen=True)
class Scorer:
    """The two heads and the calibrated thresholds; `sha256` identifies the scorer file."""

    pair: Head
    rank: Head | None
    thresholds: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    name: str = "relevance-scorer"
    sha256: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    rank_pooled: Head | None = None  # the rank head without late interaction (Settings.late_interaction off)
    rank_late: Head | None = None  # with late interaction, without the cross-encoder (Settings.cross_encoder off)
    context: Head | None = None  # the second stage over a list with positions (CONTEXT_RANK_FEATURES)
    gate: Head | None = None  # the gate over chosen passages (GATE_FEATURES), at thresholds["gate_head"]

    def __post_init__(self) -> None:
        # The gate for chosen passages is the gate itself until calibrated: every scorer has both, and a
        # scorer written by `evidence relevance train` names both in its file (and so in its sha256).
        object.__setattr__(self, "thresholds", {"gate_selected": self.thresholds["gate"], "gate_confident": 1.0,
                                                **self.thresholds})

    @property
    def identity(self) -> dict[str, str]:
        return {"name": self.name, "sha256": self.sha256}

    def pair_logits(self, rows: Sequence[dict[str, float]]) -> np.ndarray:
        return self.pair.logits(rows)

    def rank_head(self, late: bool = True, cross: bool = True) -> Head | None:
        """The rank head to use: the first of (full, without the cross-encoder, pooled) that reads only what
        can be computed (`late`: late interaction, `cross`: a cross-encoder); None: the pair logit alone."""
        available = set(POOLED_RANK_FEATURES) | ({LATE_INTERACTION, f"{LATE_INTERACTION}_gap"} if late else set()) \
            | ({CROSS, f"{CROSS}_gap"} if cross else set())
        for head in (self.rank, self.rank_late, self.rank_pooled):
            if head is not None and set(head.features) <= available:
                return head
        return None

    def rank_probabilities(self, pair_logits: Sequence[float], rows: Sequence[Mapping[str, Any]],
                           pairs: Sequence[dict[str, float]], head: Head | None = None) -> np.ndarray:
        """Probability that each candidate of a list answers the question, by `head` (default: the full rank
        head; the pair logit alone without one)."""
        if not rows:
            return np.zeros(0)
        head = head or self.rank
        if head is None:
            return sigmoid(np.asarray(pair_logits))
        return sigmoid(head.logits(rank_features(list(pair_logits), rows, pairs)))

    def context_probabilities(self, pair_logits: Sequence[float], rows: Sequence[Mapping[str, Any]],
                              pairs: Sequence[dict[str, float]], positions: Sequence[tuple[str, int] | None],
                              head: Head | None = None) -> np.ndarray:
        """The context head's probabilities: the first stage (`head`, default the full rank head) scores
        the list, then each candidate is scored again beside its neighbours' first-stage probability."""
        first_head, context = head or self.rank, self.context
        if first_head is None or context is None:
            raise ValueError("context probabilities need a rank head and a context head")
        features = rank_features(list(pair_logits), rows, pairs)
        first = sigmoid(first_head.logits(features))
        return sigmoid(context.logits(with_neighbours(features, list(first), positions)))

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "pair": self.pair.as_dict(), "rank": self.rank.as_dict() if self.rank else None,
                "rank_pooled": self.rank_pooled.as_dict() if self.rank_pooled else None,
                **({"rank_late": self.rank_late.as_dict()} if self.rank_late else {}),
                **({"context": self.context.as_dict()} if self.context else {}),
                **({"gate": self.gate.as_dict()} if self.gate else {}),
                "thresholds": self.thresholds, "info": self.info}

    def save(self, directory: Path) -> Path:
        path = Path(directory) / SCORER_FILE
        path.write_text(json.dumps(self.as_dict(), indent=2, sort_keys=True) + "\n")
        load_scorer.cache_clear()
        return path


def _head(data: dict[str, Any] | None) -> Head | None:
    if not data:
        return None
    return Head(tuple(data["features"]), tuple(data["mean"]), tuple(data["scale"]), tuple(data["weights"]),
                float(data["bias"]))


@lru_cache(maxsize=4)
def load_scorer(directory: Path) -> Scorer:
    """The scorer stored in a relevance model directory (loaded once per process)."""
    path = Path(directory) / SCORER_FILE
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
        pair = _head(data["pair"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"cannot read the relevance scorer {path}: {exc}; train one with "
                          "'evidence relevance train' or point EVIDENCE_RELEVANCE_MODEL at a model directory") from exc
    if pair is None:
        raise ConfigError(f"the relevance scorer {path} has no pair head; retrain it with 'evidence relevance train'")
    thresholds = {**DEFAULT_THRESHOLDS, **data.get("thresholds", {})}
    return Scorer(pair=pair, rank=_head(data.get("rank")), thresholds=thresholds,
                  name=data.get("name", "relevance-scorer"), sha256=hashlib.sha256(raw).hexdigest(),
                  info=data.get("info", {}), rank_pooled=_head(data.get("rank_pooled")),
                  rank_late=_head(data.get("rank_late")), context=_head(data.get("context")),
                  gate=_head(data.get("gate")))


def balanced_accuracy(labels: Sequence[int], predicted: Sequence[bool]) -> float:
    pos = [p for y, p in zip(labels, predicted, strict=True) if y == 1]
    neg = [not p for y, p in zip(labels, predicted, strict=True) if y == 0]
    if not pos or not neg:
        return 0.0
    return (sum(pos) / len(pos) + sum(neg) / len(neg)) / 2


def best_threshold(labels: Sequence[int], scores: Sequence[float]) -> tuple[float, float]:
    """The probability threshold with the highest balanced accuracy, and that accuracy."""
    candidates = sorted(set(round(float(s), 3) for s in scores))
    best = (0.5, 0.0)
    for t in candidates:
        acc = balanced_accuracy(labels, [s >= t for s in scores])
        if acc > best[1]:
            best = (t, acc)
    return best
