"""ObliQA dev -> labelled pairs for `evidence relevance train`, split by question.

Each dev question's gold passages are positives (label 1); its hard negatives (label 0) are the
best BM25 passages (the engine's own tokenizer and k1/b) that are not gold. Every row carries its
split (`engine.relevance.pairs.split_of`: train 60% / calibrate 20% / heldout 20%, by question id),
and one file per split is written:

    python bench/obliqa_pairs.py --documents ../shared/obliqa/documents \
        --questions ../shared/obliqa/ObliQA_dev.json --out out/pairs [--negatives 5]

Only the dev split is read; ObliQA's test split is a held-out judge and is never used here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.ingest.formats import normalize  # noqa: E402
from engine.relevance.pairs import SPLITS, split_of, write_pairs  # noqa: E402
from engine.search.lexical import query_terms, tokenize  # noqa: E402


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
    args = parser.parse_args(argv)

    passages = load_passages(args.documents)
    by_key: dict[str, list[str]] = {}
    for p in passages:
        by_key.setdefault(p["key"], []).append(p["text"])
    index = bm25s.BM25(method="lucene", k1=1.0, b=0.6)
    index.index([tokenize(p["text"]) for p in passages], show_progress=False)
    rows: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for q in json.loads(args.questions.read_text()):
        split = split_of(q["QuestionID"], seed=args.seed)
        gold = {f"{p['DocumentID']}|{p['PassageID']}" for p in q["Passages"]}
        base = {"question": q["Question"], "question_id": q["QuestionID"], "split": split}
        for key in sorted(gold):
            for text in by_key.get(key, []):
                rows[split].append({**base, "passage": text, "label": 1, "passage_key": key})
        scores = index.get_scores(list(query_terms(q["Question"])))
        taken = 0
        for i in scores.argsort()[::-1][:50]:
            if passages[i]["key"] in gold or len(passages[i]["text"].split()) < 8:
                continue
            rows[split].append({**base, "passage": passages[i]["text"], "label": 0, "passage_key": passages[i]["key"],
                                "bm25_rank": taken + 1})
            taken += 1
            if taken == args.negatives:
                break
    for split, items in rows.items():
        n = write_pairs(args.out / f"{split}.jsonl", items)
        questions = len({r["question_id"] for r in items})
        print(f"{split}: {questions} questions, {n} pairs -> {args.out / f'{split}.jsonl'}")


if __name__ == "__main__":
    main()
