"""Retrieval on the development corpora: Recall@10 and MAP@10 per corpus, for one relevance model.

    python bench/corpora_retrieval.py [--model DIR] [--corpus NAME ...] [--limit N]

The questions are the answerable ones of bench/corpora/ (layout in bench/corpora/README.md), split as
bench/corpora_pairs.py splits them (by gold section, seed 13, train/heldout 50/50; a judge corpus's questions
all held out): the first block is the
heldout questions, whose answering chunks no model trained on those pairs has seen; the second block is
every answerable question (train and heldout), labelled as not held out.

A question's relevant items are its gold sections (corpus|doc|section). A retrieved chunk counts for the
first of them it is a right section for (bench/corpora.py's `right_section`: the gold's document, and its
section label in the chunk's section path or citation, or its text in the chunk); chunks of a section
already found count once, as bench/obliqa.py counts a passage split over chunks once. Recall@10 and MAP@10
are trec_eval's `recall.10` and `map_cut.10` over the first 10 items of the 30 chunks searched
(bench/obliqa.py's `recall_map`), in three modes of the engine's Retriever:

* dense: the encoder alone (`dense_weight` 1.0, no reranking; bench/obliqa.py --dense-weight 1.0 --no-rerank);
* fused: hybrid dense + BM25 fusion, no reranking (bench/obliqa.py --no-rerank);
* reranked: the engine's default search, fused then ordered by the relevance model's rank head.

The database is bench/corpora.py's, one per encoder (bench/.cache/corpora-<encoder sha256[:12]>): a new
model's home is ingested on first use (a few minutes). The last line is one JSON object with every figure.
These are development sets: a figure used to choose something is not a held-out figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpora_pairs import Corpus, corpora_databases, load_corpus, question_split, section_key  # noqa: E402
from bench.obliqa import recall_map  # noqa: E402
from engine import db as dbmod  # noqa: E402
from engine.config import Settings, shipped_relevance_model  # noqa: E402
from engine.models import Chunk  # noqa: E402
from engine.search.embeddings import Embedder  # noqa: E402
from engine.search.retrieval import Retriever  # noqa: E402

MODES: dict[str, dict[str, Any]] = {
    "dense": {"rerank": False, "dense_weight": 1.0},
    "fused": {"rerank": False},
    "reranked": {},
}
DEPTH = 30
BLOCKS = ("heldout", "all_not_held_out")


def item_of(corpus: Corpus, chunk: Chunk, golds: list[dict[str, Any]]) -> str:
    """The first gold section `chunk` is a right section for, else the chunk itself."""
    for gold in golds:
        if corpus.right(chunk, gold):
            return section_key(corpus.name, gold)
    return f"chunk:{chunk.id}"


def question_figures(corpus: Corpus, question: dict[str, Any], chunks: list[Chunk]) -> tuple[float, float]:
    """(Recall@10, MAP@10) of one question's ranked chunks."""
    ranked = list(dict.fromkeys(item_of(corpus, c, question["gold"]) for c in chunks))
    return recall_map(ranked, {section_key(corpus.name, g) for g in question["gold"]})


def corpus_scores(corpus: Corpus, settings: Settings, embedder: Embedder, limit: int | None
                  ) -> list[dict[str, Any]]:
    """Per answerable question: its split and (recall, map) per mode."""
    questions = corpus.answerable()[:limit]
    rows: list[dict[str, Any]] = [{"split": "heldout" if corpus.judge
                                   else question_split([section_key(corpus.name, g) for g in q["gold"]])}
                                  for q in questions]
    for mode, overrides in MODES.items():
        with dbmod.connection(settings) as conn, dbmod.connection(settings) as lexical_conn:
            retriever = Retriever(conn, embedder, settings.model_copy(update=overrides), lexical_conn=lexical_conn)
            try:
                for q, row in zip(questions, rows, strict=True):
                    hits = retriever.search(q["question"], k=DEPTH)
                    row[mode] = question_figures(corpus, q, [h.chunk for h in hits])
            finally:
                retriever.close()
    return rows


def block(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(rows)}
    for mode in MODES:
        out[mode] = ({"recall@10": round(statistics.mean(r[mode][0] for r in rows), 4),
                      "map@10": round(statistics.mean(r[mode][1] for r in rows), 4)} if rows else None)
    return out


def line(name: str, figures: dict[str, Any]) -> str:
    modes = "  ".join(f"{m} R@10 {f['recall@10']:.4f} MAP@10 {f['map@10']:.4f}" if f else f"{m} -"
                      for m, f in ((m, figures[m]) for m in MODES))
    return f"  {name:<14} n={figures['questions']:<4} {modes}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=shipped_relevance_model(), help="relevance model directory")
    parser.add_argument("--corpus", action="append", default=None, help="a folder name under bench/corpora")
    parser.add_argument("--limit", type=int, default=None, help="first N answerable questions of each corpus")
    args = parser.parse_args(argv)

    settings = Settings(memory_enabled=False, relevance_model=args.model.resolve(), embedding_backend="onnx")
    embedder = Embedder.from_settings(settings)
    embedder.encode_query("warm-up")
    rows: dict[str, list[dict[str, Any]]] = {}
    with corpora_databases(args.corpus, embedder, settings) as databases:
        for folder, corpus_settings in databases:
            with dbmod.connection(corpus_settings) as conn:
                corpus = load_corpus(conn, folder)
            rows[corpus.name] = corpus_scores(corpus, corpus_settings, embedder, args.limit)
            print(f"{corpus.name}: {len(rows[corpus.name])} questions searched", flush=True)
    figures: dict[str, Any] = {}
    for name in BLOCKS:
        pick = (lambda r: r["split"] == "heldout") if name == "heldout" else (lambda r: True)
        mine = {c: block([r for r in rs if pick(r)]) for c, rs in rows.items()}
        mine["all_corpora"] = block([r for rs in rows.values() for r in rs if pick(r)])
        figures[name] = mine
        print("heldout questions (split of bench/corpora_pairs.py):" if name == "heldout"
              else "all answerable questions, train and heldout (NOT held out):")
        for corpus_name, f in mine.items():
            print(line(corpus_name, f))
    print(json.dumps({"model": str(args.model), "encoder_sha256": embedder.sha256, "depth": DEPTH,
                      "modes": MODES, **figures}))


if __name__ == "__main__":
    main()
