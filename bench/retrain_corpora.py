"""The development corpora's selection set for bench/retrain.py: written by `prepare` (here, with the corpora
database), read by `train` (on the GPU machine, which has no database and no engine storage packages).

The questions are the held-out half of bench/corpora_pairs.py (answerable questions all of whose gold
sections are heldout under seed 13; none of their answering chunks is in the training pairs), split again
by gold section: a question is "calibrate" when every one of its gold section keys is "train" under
`section_split(key, seed=14)`, else "evaluate". Calibrate questions choose the encoder budget and the
cross-encoder epoch (with ObliQA's calibrate questions); evaluate questions are only printed.

One JSON object per corpus: `corpus`, `chunks` (every current chunk: `id`, `heading` (the section heading the
dense index reads before the text, "" when none) and `text`) and `questions` (`question_id`, `question`,
`split`, `gold`: per gold in order its section `key` and the ids of the chunks that are a right section for
it, by bench/corpora.py's rule through `Corpus.matches`).

Figures are bench/corpora_retrieval.py's, in its dense mode: a ranked chunk counts for the first gold it is
right for, chunks of an already-found gold count once, Recall@10 and MAP@10 over the first 10 items of the
`DEPTH` chunks searched (bench/metrics.recall_map). The cross-encoder's figure is MRR@10 of the first right
chunk after reranking the dense top `RERANK_DEPTH`.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.metrics import recall_map

SEED = 14
SPLITS = ("calibrate", "evaluate")
DEPTH = 30
RERANK_DEPTH = 20


# ---- the preparing half (here: the corpora database) ----

def calibration_split(keys: list[str]) -> str:
    """"calibrate" when every gold section key is "train" under seed 14, else "evaluate"."""
    from bench.corpora_pairs import section_split

    return "calibrate" if all(section_split(k, seed=SEED) == "train" for k in keys) else "evaluate"


def corpus_record(corpus: Any) -> dict[str, Any]:
    """One corpus's chunks and held-out questions (a bench.corpora_pairs.Corpus) as the file holds them."""
    from bench.corpora_pairs import question_split, section_key

    questions = []
    for q in corpus.answerable():
        keys = [section_key(corpus.name, g) for g in q["gold"]]
        if question_split(keys) != "heldout" and not corpus.judge:
            continue
        gold = [{"key": key, "chunks": [corpus.chunks[i].id for i in corpus.matches(g)]}
                for g, key in zip(q["gold"], keys, strict=True)]
        # a judge corpus (`judge: true`) chooses nothing: all its questions only evaluate
        questions.append({"question_id": f"{corpus.name}:{q['id']}", "question": q["question"],
                          "split": "evaluate" if corpus.judge else calibration_split(keys), "gold": gold})
    chunks = [{"id": c.id, "heading": c.section_heading if c.section_heading != c.text else "", "text": c.text}
              for c in corpus.chunks]
    return {"corpus": corpus.name, "chunks": chunks, "questions": questions}


def corpora_records(names: list[str] | None = None) -> list[dict[str, Any]]:
    """Every corpus's record, from bench/corpora.py's database (started, and stopped unless already running)."""
    from bench.corpora_pairs import corpora_databases, load_corpus
    from engine import db as dbmod

    out = []
    with corpora_databases(names) as databases:
        for folder, settings in databases:
            with dbmod.connection(settings) as conn:
                out.append(corpus_record(load_corpus(conn, folder)))
    return out


def counts(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    return {r["corpus"]: {"chunks": len(r["chunks"]), **{s: sum(q["split"] == s for q in r["questions"])
                                                         for s in SPLITS}} for r in records}


# ---- the training half (GPU machine; pure but for the encoder passed in) ----

def embedding_text(chunk: dict[str, Any]) -> str:
    """What the engine's dense index reads of a chunk (engine.ingest.pipeline.embedding_text)."""
    return f"{chunk['heading']}: {chunk['text']}" if chunk["heading"] else chunk["text"]


def item_of(chunk_id: str, gold: list[dict[str, Any]]) -> str:
    """The key of the first gold `chunk_id` is right for, else the chunk itself."""
    return next((g["key"] for g in gold if chunk_id in g["chunks"]), f"chunk:{chunk_id}")


def question_figures(ranked: list[str], gold: list[dict[str, Any]]) -> tuple[float, float]:
    """(Recall@10, MAP@10) over gold sections of one question's ranked chunk ids."""
    items = list(dict.fromkeys(item_of(c, gold) for c in ranked))
    return recall_map(items, {g["key"] for g in gold})


def reciprocal_rank(ranked: list[str], gold: list[dict[str, Any]], cutoff: int = 10) -> float:
    """1 / rank of the first chunk right for any gold within `cutoff`, else 0."""
    right = {c for g in gold for c in g["chunks"]}
    return next((1 / (r + 1) for r, c in enumerate(ranked[:cutoff]) if c in right), 0.0)


def smaller(records: list[dict[str, Any]], questions: int, others: int) -> list[dict[str, Any]]:
    """A smoke-test sized copy: per corpus the first `questions` of each split, their right chunks and the
    first `others` chunks."""
    out = []
    for r in records:
        kept = [q for s in SPLITS for q in [q for q in r["questions"] if q["split"] == s][:questions]]
        wanted = {c for q in kept for g in q["gold"] for c in g["chunks"]}
        chunks = [c for i, c in enumerate(r["chunks"]) if i < others or c["id"] in wanted]
        out.append({**r, "questions": kept, "chunks": chunks})
    return out


class CorporaIndex:
    """Every corpus's chunks encoded by one model, searched per corpus by cosine."""

    def __init__(self, model: Any, records: list[dict[str, Any]]) -> None:
        import torch

        self.model, self.records, self.matrices = model, records, []
        with torch.no_grad():
            for r in records:
                self.matrices.append(model.encode([embedding_text(c) for c in r["chunks"]], batch_size=256,
                                                  convert_to_tensor=True, normalize_embeddings=True,
                                                  show_progress_bar=False))

    def ranked(self, split: str, depth: int) -> dict[str, list[tuple[dict[str, Any], list[int]]]]:
        """Per corpus, per question of `split`: (question, its best `depth` chunk indexes)."""
        import torch

        out: dict[str, list[tuple[dict[str, Any], list[int]]]] = {}
        for r, matrix in zip(self.records, self.matrices, strict=True):
            mine = [q for q in r["questions"] if q["split"] == split]
            if not mine:
                continue
            with torch.no_grad():
                q = self.model.encode([x["question"] for x in mine], batch_size=256, convert_to_tensor=True,
                                      normalize_embeddings=True, show_progress_bar=False)
                top = torch.topk(q @ matrix.T, min(depth, matrix.shape[0]), dim=1).indices.cpu().tolist()
            out[r["corpus"]] = list(zip(mine, top, strict=True))
        return out

    def chunk(self, corpus: str, i: int) -> dict[str, Any]:
        return next(r for r in self.records if r["corpus"] == corpus)["chunks"][i]


def _summary(per_corpus: dict[str, dict[str, Any]], names: tuple[str, ...]) -> dict[str, Any]:
    """`per_corpus` plus "mean": each figure's mean over the corpora (each corpus weighs the same)."""
    if not per_corpus:
        return {"mean": None}
    mean = {n: round(statistics.mean(f[n] for f in per_corpus.values()), 4) for n in names}
    return {**per_corpus, "mean": {**mean, "questions": sum(f["questions"] for f in per_corpus.values())}}


def dense_figures(index: CorporaIndex, split: str) -> dict[str, Any]:
    """Per corpus dense Recall@10 / MAP@10 on the questions of `split`, and their mean over corpora."""
    per_corpus = {}
    for corpus, rows in index.ranked(split, DEPTH).items():
        pairs = [question_figures([index.chunk(corpus, i)["id"] for i in top], q["gold"]) for q, top in rows]
        per_corpus[corpus] = {"recall@10": round(statistics.mean(p[0] for p in pairs), 4),
                              "map@10": round(statistics.mean(p[1] for p in pairs), 4), "questions": len(pairs)}
    return _summary(per_corpus, ("recall@10", "map@10"))


def rerank_figures(index: CorporaIndex, split: str, score: Callable[[str, list[str]], list[float]] | None
                   ) -> dict[str, Any]:
    """Per corpus MRR@10 of the dense top `RERANK_DEPTH` reordered by `score(question, texts)` (the
    cross-encoder reads the chunk text alone), or in dense order when `score` is None; and the mean."""
    per_corpus = {}
    for corpus, rows in index.ranked(split, RERANK_DEPTH).items():
        total = 0.0
        for q, top in rows:
            chunks = [index.chunk(corpus, i) for i in top]
            order = list(range(len(chunks)))
            if score is not None:
                logits = score(q["question"], [c["text"] for c in chunks])
                order.sort(key=lambda i: -logits[i])
            total += reciprocal_rank([chunks[i]["id"] for i in order], q["gold"])
        per_corpus[corpus] = {"mrr@10": round(total / len(rows), 4), "questions": len(rows)}
    return _summary(per_corpus, ("mrr@10",))


def read_records(path: Path) -> list[dict[str, Any]]:
    import gzip
    import json

    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
