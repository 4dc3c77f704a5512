"""Citation benchmark: do an answer's citations land on the passages that answer the question?

    python bench/citations.py --documents ../shared/obliqa/documents \
        --questions ../shared/obliqa/ObliQA_dev.json [--limit 200] [--two-part 100 [--two-part-only]] [--no-rerank]

Held-out ObliQA dev questions only (bench.obliqa.obliqa_split == "heldout": by passage, every gold
passage of the question falls in the held-out share, so the relevance model never trained or calibrated on
the passages that answer them; `--split-by question` gives the split by question id used before 0.5.0,
which leaked: 55% of its held-out questions had a gold passage the encoder trained on). Each question is
asked as `evidence ask` asks it (research loop, extract, verify, compose, review; rules backend, no QA
memory). A passage is *cited* when an answer statement cites a verified quote from it. Printed per run:

* citation precision (cited gold / cited, over answered questions) and recall (cited gold / gold, over
  all questions), answered share, passages cited per answer, ask p50/p95 seconds;
* reference lines: retrieval's own top-1/2/3 passages cited alone (one search, same settings);
* two-part questions (`--two-part N`): two held-out questions from different documents joined as
  "…, and …?"; the share split at the join (`two_part_detected`; each question may itself be answered
  in more than one part) and the share whose both questions cite a gold passage of their own in their
  own parts; beside it, the share of pairs whose two questions each cite a gold passage when asked alone
  (`two_part_both_cited_alone`, unless `--two-part-only`) and the pairs that do alone but not joined
  (`two_part_lost_by_joining`).

The last line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.obliqa import SPLIT_BY, gold_passages, ingest, obliqa_split  # noqa: E402
from engine import db as dbmod  # noqa: E402
from engine.config import Settings  # noqa: E402
from engine.search import store  # noqa: E402
from engine.search.embeddings import Embedder  # noqa: E402
from engine.search.retrieval import Retriever  # noqa: E402


def gold_of(question: dict) -> set[str]:
    return set(gold_passages(question))


def cited_passages(result: dict, keys: dict[str, str], part: int | None = None) -> set[str]:
    """Passages holding a verified quote that a statement cites (of one part, when given)."""
    verified = {r["requirement_id"]: r for r in result.get("verified_requirements", [])}
    cited = set()
    for statement in result.get("statements", []):
        if part is not None and statement.get("part", 0) != part:
            continue
        for rid in statement["requirement_ids"]:
            if rid in verified and verified[rid]["chunk_id"] in keys:
                cited.add(keys[verified[rid]["chunk_id"]])
    return cited


def passage_keys(conn: object, chunk_ids: list[str]) -> dict[str, str]:
    chunks = store.get_chunks(conn, chunk_ids)  # type: ignore[arg-type]
    return {cid: f"{c.metadata.get('DocumentID')}|{c.metadata.get('PassageID')}" for cid, c in chunks.items()}


def joined(a: dict, b: dict) -> str:
    first = a["Question"].strip().rstrip("?").rstrip(".")
    second = b["Question"].strip()
    return f"{first}, and {second[:1].lower()}{second[1:]}"


class Tally:
    def __init__(self) -> None:
        self.precision: list[float] = []
        self.recall: list[float] = []
        self.cited: list[int] = []
        self.answered = 0
        self.n = 0

    def add(self, cited: set[str], gold: set[str]) -> None:
        self.n += 1
        self.recall.append(len(cited & gold) / len(gold))
        if cited:
            self.answered += 1
            self.precision.append(len(cited & gold) / len(cited))
            self.cited.append(len(cited))

    def figures(self) -> dict:
        p = statistics.mean(self.precision) if self.precision else 0.0
        r = statistics.mean(self.recall) if self.recall else 0.0
        return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
                "answered": round(self.answered / self.n, 4) if self.n else 0.0,
                "passages_cited_per_answer": round(statistics.mean(self.cited), 2) if self.cited else 0.0,
                "questions": self.n}


def main(argv: list[str] | None = None) -> None:
    from agents.deps import Deps
    from agents.research import run_research

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None, help="first N held-out questions")
    parser.add_argument("--two-part", type=int, default=0, help="also N joined two-part questions")
    parser.add_argument("--no-rerank", action="store_true", help="retrieval without the learned reranker")
    parser.add_argument("--two-part-only", action="store_true",
                        help="ask only the --two-part questions (the held-out questions are their pool, unasked)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--split-by", choices=SPLIT_BY, default="passage",
                        help="'passage' (default: no held-out question shares a passage with training) or "
                             "'question' (the split by question id before 0.5.0, which leaked; comparison only)")
    parser.add_argument("--out", type=Path, default=None,
                        help="write one JSON line per question (gold, cited, seconds, each part's ranked evidence)")
    args = parser.parse_args(argv)

    settings = Settings(memory_enabled=False, rerank=not args.no_rerank)
    embedder = Embedder.from_settings(settings)
    home = ROOT / "bench" / ".cache" / f"obliqa-{embedder.sha256[:12]}"
    home.mkdir(parents=True, exist_ok=True)
    settings = settings.model_copy(update={"home": home})
    ingest(settings, embedder, args.documents)
    questions = [q for q in json.loads(args.questions.read_text()) if obliqa_split(q, by=args.split_by) == "heldout"]
    questions = questions[: args.limit]
    answer, tops = Tally(), {k: Tally() for k in (1, 2, 3)}
    alone: dict[str, bool] = {}  # each question asked alone: does it cite a gold passage
    seconds: list[float] = []
    out = args.out.open("w") if args.out else None
    with dbmod.connection(settings) as conn:
        retriever = Retriever(conn, embedder, settings)
        deps = Deps(conn=conn, embedder=embedder, settings=settings, retriever=retriever)
        embedder.encode_query("warm-up")
        run_research("warm-up question about record keeping", deps)
        for i, q in enumerate([] if args.two_part_only else questions, 1):
            gold = gold_of(q)
            started = time.perf_counter()  # first: the reference search below would warm the caches
            result = run_research(q["Question"], deps).evidence_result or {}
            seconds.append(time.perf_counter() - started)
            hits = retriever.search(q["Question"], k=10)
            ranked = list(dict.fromkeys(f"{h.chunk.metadata.get('DocumentID')}|{h.chunk.metadata.get('PassageID')}"
                                        for h in hits))
            for k, tally in tops.items():
                tally.add(set(ranked[:k]), gold)
            keys = passage_keys(conn, [r["chunk_id"] for r in result.get("extracted_requirements", [])])
            cited = cited_passages(result, keys)
            answer.add(cited, gold)
            alone[q["QuestionID"]] = bool(cited & gold)
            if out:
                extracted = [{"chunk": keys.get(r["chunk_id"]) or r["chunk_id"],
                              **{k: r.get(k) for k in ("verified", "rejection_reason", "relevance", "part", "score")}}
                             for r in result.get("extracted_requirements", [])]
                out.write(json.dumps({"id": q["QuestionID"], "question": q["Question"], "gold": sorted(gold),
                                      "cited": sorted(cited), "seconds": round(seconds[-1], 3), "top10": ranked,
                                      "extracted": extracted}) + "\n")
            if i % 25 == 0:
                print(f"{i}/{len(questions)} {json.dumps(answer.figures())}", file=sys.stderr, flush=True)
        two_part = _two_part(questions, args.two_part, args.seed, deps, conn, run_research,
                             out, alone) if args.two_part else {}
        if out:
            out.close()
    seconds.sort()
    print(json.dumps({
        "split": "heldout", "split_by": args.split_by, "rerank": settings.rerank, **answer.figures(),
        "ask_seconds_p50": round(seconds[len(seconds) // 2], 3) if seconds else None,
        "ask_seconds_p95": round(seconds[int(len(seconds) * 0.95)], 3) if seconds else None,
        **{f"top{k}_alone": t.figures() for k, t in tops.items()}, **two_part,
        "relevance_model": embedder.identity,
    }))


def _as_asked(part: str) -> str:
    """A part as the question words it, without the subject `agents.parts` completed it with ("By when is the final
    write-up due (major incident)?" -> "By when is the final write-up due?")."""
    return re.sub(r"\s*\([^()]*\)\?$", "?", part)


def _two_part(questions: list[dict], n: int, seed: int, deps: object, conn: object, run_research: object,
              out: Any = None, alone: dict[str, bool] | None = None) -> dict:
    """Join pairs of held-out questions about different documents; both parts must cite their own gold. `out`:
    a file that gets one JSON line per joined question (each question's id, the parts, what each cited).
    `alone`: whether each question, asked alone, cited a gold passage; then the share of pairs whose questions
    both did so alone is given beside (`two_part_both_cited_alone`), and the pairs that did alone but not
    joined (`two_part_lost_by_joining`): what joining costs, apart from what each question costs alone."""
    rng = random.Random(seed)
    pool = list(questions)
    both = detected = 0
    asked = 0
    both_alone = lost = 0
    for _ in range(n):
        a, b = rng.sample(pool, 2)
        if {p["DocumentID"] for p in a["Passages"]} & {p["DocumentID"] for p in b["Passages"]}:
            continue
        asked += 1
        result = run_research(joined(a, b), deps).evidence_result or {}  # type: ignore[operator]
        keys = passage_keys(conn, [r["chunk_id"] for r in result.get("verified_requirements", [])])
        parts = result.get("parts") or []
        # A part belongs to the second question when its words open a stretch of it; either question may
        # itself be answered in several parts (ObliQA questions often ask two things).
        second = " ".join(b["Question"].lower().split())
        # (without the subject a completion added to a part: "Are due to mature within 30 days (transactions ...)?")
        of_b = [i for i, p in enumerate(parts)
                if " ".join(_as_asked(p["question"]).lower().split())[:40].rstrip("?") in second]
        of_a = [i for i in range(len(parts)) if i not in of_b]
        split = bool(of_a and of_b and max(of_a) < min(of_b))
        detected += split
        cited_a = set().union(*(cited_passages(result, keys, i) for i in of_a)) if split else set()
        cited_b = set().union(*(cited_passages(result, keys, i) for i in of_b)) if split else set()
        joined_ok = bool(cited_a & gold_of(a)) and bool(cited_b & gold_of(b))
        both += joined_ok
        if alone:
            alone_ok = alone.get(a["QuestionID"], False) and alone.get(b["QuestionID"], False)
            both_alone += alone_ok
            lost += alone_ok and not joined_ok
        if out is not None:
            out.write(json.dumps({"two_part": [a["QuestionID"], b["QuestionID"]], "question": joined(a, b),
                                  "parts": [p["question"] for p in parts], "split": split,
                                  "gold": [sorted(gold_of(a)), sorted(gold_of(b))],
                                  "cited": [sorted(cited_a), sorted(cited_b)]}) + "\n")
    figures = {"two_part_questions": asked, "two_part_detected": round(detected / asked, 4) if asked else None,
               "two_part_both_cited": round(both / asked, 4) if asked else None}
    if alone:
        figures |= {"two_part_both_cited_alone": round(both_alone / asked, 4) if asked else None,
                    "two_part_lost_by_joining": lost}
    return figures


if __name__ == "__main__":
    main()
