"""ObliQA dev -> labelled pairs for `evidence relevance train`, split by passage.

Each dev question's gold passages are positives (label 1); its hard negatives (label 0) are the
best BM25 passages (the engine's own tokenizer and k1/b) that are not gold. Every row carries its
split, and one file per split is written. The split is by passage (`engine.relevance.pairs.passage_split`:
each passage falls in train 60% / calibrate 20% / heldout 20% by its key's hash): a calibrate or heldout
question is one whose gold passages all fall there; a train question is any with a gold passage in train,
and it is trained on those passages only, against negatives that are train passages too. So no passage
that answers a calibration or held-out question is seen in training (`--split-by question`, the split
used before version 0.5.0, leaked: 55% of its held-out questions had a gold passage that trained the
encoder).

    python bench/obliqa_pairs.py --documents ../shared/obliqa/documents \
        --questions ../shared/obliqa/ObliQA_dev.json --out out/pairs [--negatives 5]

`--retrieval-negatives MODEL_DIR`: the `train` questions' negatives are instead the best non-gold passages
of the engine's own hybrid retrieval (no reranking) over the documents embedded by that relevance model
(a benchmark database under bench/.cache, ingested when missing), skipping near-duplicates of a gold
passage (word Jaccard > 0.8): what the encoder is trained to push down is then what it and BM25
actually confuse with the answer. The other splits keep BM25 negatives, so the scorer and the gate are
calibrated as before.

Only the dev split is read; ObliQA's test split is a held-out judge and is never used here.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.ingest.formats import normalize  # noqa: E402
from engine.relevance.pairs import SPLITS, passage_split, split_of, write_pairs  # noqa: E402
from engine.terms import query_terms, tokenize  # noqa: E402


def load_passages(documents: Path) -> list[dict]:
    out = []
    for path in sorted(documents.glob("*.json"), key=lambda p: int(p.stem) if p.stem.isdigit() else p.stem):
        for p in json.loads(path.read_text()):
            text = normalize(p["Passage"]).strip()
            if text:
                out.append({"key": f"{p['DocumentID']}|{p['PassageID']}", "text": text})
    return out


def main(argv: list[str] | None = None) -> None:
    import bm25s

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True, help="directory for <split>.jsonl")
    parser.add_argument("--negatives", type=int, default=5, help="hard negatives per question")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--split-by", choices=("passage", "question"), default="passage")
    parser.add_argument("--retrieval-negatives", type=Path, default=None, metavar="MODEL_DIR",
                        help="train questions' negatives from hybrid retrieval with this relevance model")
    args = parser.parse_args(argv)

    passages = load_passages(args.documents)
    by_key: dict[str, list[str]] = {}
    for p in passages:
        by_key.setdefault(p["key"], []).append(p["text"])
    index = bm25s.BM25(method="lucene", k1=1.0, b=0.6)
    index.index([tokenize(p["text"]) for p in passages], show_progress=False)
    rows: dict[str, list[dict]] = {s: [] for s in SPLITS}
    with ExitStack() as stack:
        mined = (stack.enter_context(retrieval_miner(args.retrieval_negatives, args.documents, by_key))
                 if args.retrieval_negatives else None)
        for q in json.loads(args.questions.read_text()):
            gold = {f"{p['DocumentID']}|{p['PassageID']}" for p in q["Passages"]}
            split = question_split(q["QuestionID"], gold, args.split_by, args.seed)
            if split is None:
                continue
            base = {"question": q["Question"], "question_id": q["QuestionID"], "split": split}
            usable = passage_filter(split, args.split_by, args.seed)
            for key in sorted(k for k in gold if usable(k)):
                for text in by_key.get(key, []):
                    rows[split].append({**base, "passage": text, "label": 1, "passage_key": key})
            if mined is not None and split == "train":
                rows[split].extend({**base, "passage": text, "label": 0, "passage_key": key, "retrieval_rank": rank}
                                   for rank, (key, text) in enumerate(mined(q["Question"], gold, args.negatives), 1)
                                   if usable(key))
                continue
            scores = index.get_scores(list(query_terms(q["Question"])))
            taken = 0
            for i in scores.argsort()[::-1][:50]:
                if passages[i]["key"] in gold or len(passages[i]["text"].split()) < 8 or not usable(passages[i]["key"]):
                    continue
                rows[split].append({**base, "passage": passages[i]["text"], "label": 0,
                                    "passage_key": passages[i]["key"], "bm25_rank": taken + 1})
                taken += 1
                if taken == args.negatives:
                    break
    for split, items in rows.items():
        n = write_pairs(args.out / f"{split}.jsonl", items)
        questions = len({r["question_id"] for r in items})
        print(f"{split}: {questions} questions, {n} pairs -> {args.out / f'{split}.jsonl'}")


def question_split(question_id: str, gold: set[str], by: str, seed: int) -> str | None:
    """The question's split: by its id, or by its gold passages (train when any falls in train)."""
    if by == "question":
        return split_of(question_id, seed=seed)
    return passage_split(gold, seed=seed, role="train") or passage_split(gold, seed=seed)


def passage_filter(split: str, by: str, seed: int):  # noqa: ANN201
    """Which passages a question of `split` may use: in a passage split, a train question only train
    passages (as positives and as negatives), so no other split's passage is seen in training."""
    if by == "passage" and split == "train":
        return lambda key: passage_split([key], seed=seed) == "train"
    return lambda key: True


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


@contextmanager
def retrieval_miner(model_dir: Path, documents: Path, by_key: dict[str, list[str]]):  # noqa: ANN201
    """A function (question, gold keys, n) -> n (key, text) negatives from the engine's hybrid retrieval,
    searching over one database connection held while the context is open."""
    from bench.calibrate_relevance import key_of
    from bench.obliqa import ingest
    from engine import db as dbmod
    from engine.config import Settings
    from engine.search.embeddings import Embedder
    from engine.search.retrieval import Retriever

    encoder_sha = json.loads((model_dir / "relevance.json").read_text())["sha256"]
    home = ROOT / "bench" / ".cache" / f"obliqa-{encoder_sha[:12]}"
    home.mkdir(parents=True, exist_ok=True)
    settings = Settings(home=home, relevance_model=model_dir, embedding_backend="onnx", rerank=False)
    embedder = Embedder.from_settings(settings)
    ingest(settings, embedder, documents)

    def mine(question: str, gold: set[str], n: int) -> list[tuple[str, str]]:
        gold_words = [_words(t) for k in gold for t in by_key.get(k, [])]
        hits = retriever.search(question, k=30)
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        for h in hits:
            key = key_of(h.chunk)
            if key in gold or key in seen:
                continue
            seen.add(key)  # a passage's first chunk in the list decides for the passage
            text = normalize(h.chunk.text).strip()
            words = _words(text)
            if any(len(words & g) / max(1, len(words | g)) > 0.8 for g in gold_words):
                continue
            out.append((key, text))
            if len(out) == n:
                break
        return out

    with dbmod.connection(settings) as conn:
        retriever = Retriever(conn, embedder, settings)
        yield mine


if __name__ == "__main__":
    main()
