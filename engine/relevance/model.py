"""The relevance model at run time: the scorer plus the encoder whose cosines it was trained on.

When the configured embedder is the relevance encoder itself (the default: ONNX backend, same model
directory), candidates' cosines come from retrieval or from the stored chunk vectors and nothing is
encoded again; with any other embedder the relevance encoder is loaded beside it and encodes what
it scores.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from engine.relevance.candidate import Candidate, candidate
from engine.relevance.cross import CrossEncoder, load_cross_encoder
from engine.relevance.encoder import OnnxEncoder, late_interaction
from engine.relevance.scorer import (
    CROSS,
    LATE_INTERACTION,
    Head,
    Scorer,
    gate_features,
    load_scorer,
    pair_features,
    sigmoid,
)

VECTOR_CACHE_SIZE = 2048  # texts' pooled vectors (float32, 1.5 KB each) that `cosines` encoded
TOKEN_CACHE_SIZE = 512  # passages' token vectors kept (float16, about 70 KB each): research steps re-rank them
QUESTION_CACHE_SIZE = 64  # questions' token vectors: every rank call of a research run reads the same few
CROSS_CACHE_SIZE = 2048  # (question, passage) cross-encoder scores kept: the research steps and the selection
# re-rank the same chunks for the same question
# Late interaction costs one encoder pass per passage (about 27 ms on 2 cores), the cross-encoder one per
# (question, passage): both are computed for the best LATE_DEPTH candidates by retrieval rank, as deep as
# the rank head was fitted on (bench/calibrate_relevance.py, depth 30); deeper or unranked candidates take
# the lowest score computed.
LATE_DEPTH = 30
# The best NEIGHBOUR_TOP candidates of a reranked list bring the chunks just before and after them in their
# document into the list (`rank_with_neighbours`), scored like any candidate and again beside their
# neighbours by the context head: of the gold passages ObliQA questions cite beyond retrieval's best 30,
# many adjoin its best hits (a rule and its guidance, consecutive paragraphs). 3 by cross-validation on
# calibration questions (1 to 3 best, 1 or 2 chunks each side: docs/relevance.md).
NEIGHBOUR_TOP = 3


def rank_inputs(scorer: Scorer, *, late_interaction: bool, cross: CrossEncoder | None, neighbours: bool = False
                ) -> tuple[Head | None, bool, CrossEncoder | None, Head | None]:
    """The rank head to use (`Scorer.rank_head`) and what it reads: whether late interaction, and the
    cross-encoder (None when it does not read one); and the context head, a second stage after the full
    rank head only (None when `neighbours` is off, the head is not the full one or the scorer has none)."""
    head = scorer.rank_head(late=late_interaction, cross=cross is not None)
    features = set(head.features) if head else set()
    context = scorer.context if neighbours and head is not None and head is scorer.rank else None
    return head, LATE_INTERACTION in features, cross if CROSS in features else None, context


def neighbour_candidate(chunk: Any, origin: str) -> Candidate:
    """A chunk adjoining the candidate `origin` as a candidate of its own: not found by the search (no
    score or ranks), its place in its document, scored by `rank` like the best candidates."""
    return candidate(id=chunk.id, text=chunk.text, heading=chunk.section_heading, cosine=None, score=0.0,
                     rank=None, dense_rank=None, lexical_rank=None, document_id=chunk.document_id,
                     ordinal=chunk.ordinal, neighbour_of=origin)


def cross_identity(cross: CrossEncoder) -> dict[str, str]:
    return {"name": cross.name, "sha256": cross.sha256}


class _Lru:
    """A bounded least-recently-used map that the threads of a process share."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[Any]) -> dict[Any, Any]:
        with self._lock:
            found = {k: self._items[k] for k in dict.fromkeys(keys) if k in self._items}
            for k in found:
                self._items.move_to_end(k)
        return found

    def put_many(self, items: dict[Any, Any]) -> None:
        with self._lock:
            self._items.update(items)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


class RelevanceModel:
    """Scores (question, text) pairs and ranked candidate lists."""

    def __init__(self, scorer: Scorer, encoder: Any, *, shares_index: bool, late_interaction: bool = True,
                 cross: CrossEncoder | None = None, neighbours: bool = False) -> None:
        self.scorer = scorer
        # The rank head that reads only what this model computes (Settings.late_interaction, a cross-encoder)
        # and the context head after it (Settings.neighbours)
        self.head, self.late, self.cross, self.context = rank_inputs(scorer, late_interaction=late_interaction,
                                                                     cross=cross, neighbours=neighbours)
        self.encoder = encoder
        self.shares_index = shares_index  # cosines from the index are the encoder's own
        # One model serves every thread of the process (web searches): texts' vectors, passages' token vectors
        # (float16) and (question, passage) cross-encoder scores
        self._vectors = _Lru(VECTOR_CACHE_SIZE)
        self._tokens = _Lru(TOKEN_CACHE_SIZE)
        self._questions = _Lru(QUESTION_CACHE_SIZE)
        self._cross_scores = _Lru(CROSS_CACHE_SIZE)

    @classmethod
    def for_embedder(cls, relevance_dir: Path, embedder: Any, *, late_interaction: bool = True,
                     cross_encoder: bool = True, neighbours: bool = False) -> RelevanceModel:
        scorer = load_scorer(Path(relevance_dir))
        same = getattr(embedder, "backend", "") == "onnx" and Path(embedder.model_dir) == Path(relevance_dir)
        encoder = embedder if same else _onnx_encoder(Path(relevance_dir))
        cross = load_cross_encoder(Path(relevance_dir)) if cross_encoder else None
        return cls(scorer, encoder, shares_index=same, late_interaction=late_interaction, cross=cross,
                   neighbours=neighbours)

    @property
    def identity(self) -> dict[str, Any]:
        """The scorer's name and sha256, and the cross-encoder's when the rank head reads it."""
        if self.cross is None:
            return self.scorer.identity
        return {**self.scorer.identity, "cross_encoder": cross_identity(self.cross)}

    @property
    def thresholds(self) -> dict[str, float]:
        return self.scorer.thresholds

    def _encode_query(self, text: str) -> np.ndarray:
        encode_query = getattr(self.encoder, "encode_query", None)
        return encode_query(text) if encode_query else self.encoder.encode([text])[0]

    def stored_cosines(self, question: str, vectors: Mapping[str, np.ndarray]) -> dict[str, float]:
        """Cosines of the question to chunks' stored vectors (`engine.search.retrieval.stored_cosines` reads
        them), when the index is this encoder's own (else {}: the vectors are another model's, and `rank`
        encodes what it scores)."""
        if not self.shares_index or not vectors:
            return {}
        q = self._encode_query(question)
        return {cid: float(np.dot(q, v)) for cid, v in vectors.items()}

    def cosines(self, question: str, texts: Sequence[str]) -> list[float]:
        """The question's cosine to each text, encoded here (texts' vectors cached: the research steps, the
        selection and verify weigh the same passages again)."""
        if not texts:
            return []
        q = self._encode_query(question)
        known = self._vectors.get_many(texts)
        fresh = [t for t in dict.fromkeys(texts) if t not in known]
        new = dict(zip(fresh, self.encoder.encode(fresh), strict=True)) if fresh else {}
        self._vectors.put_many(new)
        known.update(new)
        # one dot product per text: a matrix-vector product rounds a row differently with other rows beside it
        return [float(np.dot(known[t], q)) for t in texts]

    def late_interactions(self, question: str, texts: Sequence[str]) -> list[float]:
        """MaxSim of the question's token vectors against each text's (`encoder.late_interaction`).
        Passages' token vectors are cached (the research loop and the selection re-rank the same chunks)."""
        if not texts:
            return []
        known = self._tokens.get_many(texts)
        fresh = [t for t in dict.fromkeys(texts) if t not in known]
        query = self._questions.get_many([question]).get(question)
        batch = [question, *fresh] if query is None else fresh
        vectors = self.encoder.token_vectors(batch) if batch else []
        if query is None:  # each text is encoded alone (OnnxEncoder.token_vectors): the same vectors either way
            query, vectors = vectors[0], vectors[1:]
            self._questions.put_many({question: query})
        new = {t: v.astype(np.float16) for t, v in zip(fresh, vectors, strict=True)}
        self._tokens.put_many(new)
        known.update(new)
        # Each product is small (question tokens x passage tokens): BLAS on one thread. On two, each call woke
        # the other thread: 4.5 ms a product on 2 loaded cores against 0.3 ms on one. The limit holds for the
        # whole process while it lasts (threadpoolctl sets the library's count), which suits every product the
        # engine makes: all are this small.
        with _blas().limit(limits=1, user_api="blas"):
            return [late_interaction(query, known[t].astype(np.float32)) for t in texts]

    def cross_scores(self, question: str, texts: Sequence[str]) -> list[float]:
        """The cross-encoder's logit for each text (cached per question and text); [] without one."""
        if self.cross is None or not texts:
            return []
        known = {t: x for (_, t), x in self._cross_scores.get_many([(question, t) for t in texts]).items()}
        fresh = [t for t in dict.fromkeys(texts) if t not in known]
        new = dict(zip(fresh, self.cross.scores(question, fresh), strict=True))
        self._cross_scores.put_many({(question, t): x for t, x in new.items()})
        known.update(new)
        return [known[t] for t in texts]

    def pair_probabilities(self, question: str, texts: Sequence[str], headings: Sequence[str] | None = None
                           ) -> list[float]:
        """Probability that each text, alone, answers the question (the gate's score)."""
        headings = headings or [""] * len(texts)
        rows = [pair_features(question, t, c, h)
                for t, c, h in zip(texts, self.cosines(question, texts), headings, strict=True)]
        return [float(p) for p in sigmoid(self.scorer.pair_logits(rows))]

    def gate_rows(self, question: str, texts: Sequence[str], relevances: Sequence[float], best: float
                  ) -> list[dict[str, float]] | None:
        """The gate head's features (`scorer.gate_features`) of passages the selection chose for `question`,
        with their ranking probabilities (`relevances`) and the part's best (`best`); None where the gate head
        cannot be computed (no cross-encoder is loaded)."""
        if self.cross is None or not texts:
            return None
        rows = [pair_features(question, t, c) for t, c in zip(texts, self.cosines(question, texts), strict=True)]
        logits = self.scorer.pair_logits(rows)
        return [gate_features(lg, x, m, r, best, pf["coverage"]) for lg, x, m, r, pf in zip(
            logits, self.cross_scores(question, texts), self.late_interactions(question, texts), relevances, rows,
            strict=True)]

    def gate_probabilities(self, question: str, texts: Sequence[str], relevances: Sequence[float], best: float
                           ) -> list[float] | None:
        """Probability that each chosen passage answers its part, by the gate head (None: no gate head to use,
        or no cross-encoder: `gate_rows`)."""
        if self.scorer.gate is None:
            return None
        rows = self.gate_rows(question, texts, relevances, best)
        if rows is None:
            return None
        return [float(p) for p in sigmoid(self.scorer.gate.logits(rows))]

    def rank(self, question: str, candidates: Sequence[Candidate], *, context: bool = True) -> list[float]:
        """Probability that each candidate of a ranked list answers the question (rerank, selection).

        Of a `Candidate` it reads `text`, `heading`, `cosine`, `score`, the ranks, `document_id` and
        `ordinal` (its place, for the context head) and `neighbour`; `maxsim` and `cross` are computed here
        when the rank head reads them, for the best LATE_DEPTH by retrieval rank and for every neighbour.
        `context`: the context head's probabilities where the model has one (else the rank head's).
        """
        if not candidates:
            return []
        cos = [c.get("cosine") if self.shares_index else None for c in candidates]
        missing = [i for i, c in enumerate(cos) if c is None]
        if missing:
            fresh = self.cosines(question, [_embedding_text(candidates[i]) for i in missing])
            for i, value in zip(missing, fresh, strict=True):
                cos[i] = value
        rows = [pair_features(question, c["text"], float(x or 0.0), c.get("heading", ""))  # every x filled above
                for c, x in zip(candidates, cos, strict=True)]
        logits = self.scorer.pair_logits(rows)
        scored: Sequence[Mapping[str, Any]] = candidates
        if self.late or self.cross is not None:
            order = sorted(range(len(candidates)),
                           key=lambda i: (candidates[i].get("rank") is None, candidates[i].get("rank") or 0, i))
            best = order[:LATE_DEPTH] + [i for i in order[LATE_DEPTH:] if candidates[i].get("neighbour")]
            texts = [candidates[i]["text"] for i in best]
            computed = {}
            if self.late:
                computed[LATE_INTERACTION] = dict(zip(best, self.late_interactions(question, texts), strict=True))
            if self.cross is not None:
                computed[CROSS] = dict(zip(best, self.cross_scores(question, texts), strict=True))
            lowest = {name: min(scores.values()) for name, scores in computed.items()}
            scored = [{**c, **{name: scores.get(i, lowest[name]) for name, scores in computed.items()}}
                      for i, c in enumerate(candidates)]
        if self.context is not None and context:
            positions = [(c["document_id"], int(c["ordinal"])) if c.get("document_id") and c.get("ordinal") is not None
                         else None for c in scored]
            probs = self.scorer.context_probabilities(list(logits), scored, rows, positions, head=self.head)
        else:
            probs = self.scorer.rank_probabilities(list(logits), scored, rows, head=self.head)
        return [float(p) for p in probs]

    def rank_with_neighbours(self, question: str, candidates: list[Candidate],
                             neighbours: Callable[[list[Candidate]], list[Candidate]]
                             ) -> tuple[list[Candidate], list[float]]:
        """Rank a retrieval list, then add the chunks adjoining its best NEIGHBOUR_TOP and rank again.
        `neighbours(best)` returns candidates (`neighbour_candidate`: `neighbour` true, no ranks) for the
        chunks next to those candidates that the list lacks (the best first, each one's in document order). Returns the
        list (neighbours last) and its probabilities. Without a context head, the list as it came."""
        if self.context is None or not candidates:
            return candidates, self.rank(question, candidates)
        first = self.rank(question, candidates, context=False)  # the best by the rank head, as calibrated
        best = sorted(range(len(candidates)), key=lambda i: (-first[i], i))[:NEIGHBOUR_TOP]
        candidates = [*candidates, *neighbours([candidates[i] for i in best])]
        return candidates, self.rank(question, candidates)


def _embedding_text(c: Candidate) -> str:
    heading = c.get("heading") or ""
    return f"{heading}: {c['text']}" if heading and heading != c["text"] else c["text"]


@lru_cache(maxsize=1)
def _blas() -> ThreadpoolController:
    """The process's BLAS thread pools (found once: threadpoolctl reads the loaded libraries)."""
    return ThreadpoolController()


@lru_cache(maxsize=2)
def _onnx_encoder(directory: Path) -> OnnxEncoder:
    return OnnxEncoder(directory)
