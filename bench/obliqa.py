"""ObliQA retrieval benchmark: Recall@10 and MAP@10 (trec_eval `recall.10`, `map_cut.10`).

Ingests the ObliQA documents into the benchmark's own database (reused when unchanged),
searches every question, writes a TREC run (docno `DocumentID|PassageID`), and prints as its
last line one JSON object with the figures.

    python bench/obliqa.py --documents ../shared/obliqa/documents \
        --questions ../shared/obliqa/ObliQA_dev.json --run out/obliqa.trec [--limit N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import db as dbmod  # noqa: E402
from engine.config import Settings  # noqa: E402
from engine.embeddings import Embedder  # noqa: E402
from engine.ingest import ingest_paths  # noqa: E402
from engine.models import Hit  # noqa: E402
from engine.retrieval import Retriever  # noqa: E402


def docno(hit: Hit) -> str:
    meta = hit.chunk.metadata
    return f"{meta.get('DocumentID')}|{meta.get('PassageID')}"


def passages(hits: list[Hit], n: int = 10) -> list[tuple[str, float]]:
    """Unique passages in rank order (a passage split over chunks counts once)."""
    seen: dict[str, float] = {}
    for hit in hits:
        seen.setdefault(docno(hit), hit.score)
        if len(seen) == n:
            break
    return list(seen.items())


def recall_map(ranked: list[str], relevant: set[str], cutoff: int = 10) -> tuple[float, float]:
    """trec_eval recall.10 and map_cut.10 for one query."""
    hits, precision_sum = 0, 0.0
    for rank, doc in enumerate(ranked[:cutoff], start=1):
        if doc in relevant:
            hits += 1
            precision_sum += hits / rank
    return hits / len(relevant), precision_sum / len(relevant)


def ingest(settings: Settings, embedder: Embedder, documents: Path) -> dict[str, float | int | None]:
    files = sorted(documents.glob("*.json"), key=lambda p: int(p.stem) if p.stem.isdigit() else p.stem)
    started = time.perf_counter()
    with dbmod.connection(settings) as conn:
        summary = ingest_paths(conn, embedder, settings, files, fmt="obliqa")
        passages_in = conn.execute("SELECT count(DISTINCT metadata->>'ID') FROM chunks WHERE document_id = ANY(%s)",
                                   ([f.document_id for f in summary.files if f.status != "unchanged"],)).fetchone()[0]
    seconds = time.perf_counter() - started
    if summary.failed:
        raise SystemExit(f"ingest failed: {summary.failed}")
    stats_file = settings.home / "ingest_stats.json"
    if passages_in:
        stats = {"passages": passages_in, "seconds": round(seconds, 1),
                 "passages_per_s": round(passages_in / seconds, 1)}
        stats_file.write_text(json.dumps(stats))
    else:  # everything reused: report the figure measured when it was ingested
        stats = json.loads(stats_file.read_text()) if stats_file.exists() else {"passages_per_s": None}
        stats["reused"] = True
    return stats


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--run", type=Path, required=True, help="TREC run file to write")
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    parser.add_argument("--home", type=Path, default=ROOT / "bench" / ".cache" / "obliqa",
                        help="benchmark data directory (its own embedded database)")
    parser.add_argument("--dense-weight", type=float, default=None, help="1.0 = dense only, 0.0 = lexical only")
    parser.add_argument("--fusion", choices=("weighted", "rrf"), default=None)
    parser.add_argument("--tag", default="evidence-hybrid")
    args = parser.parse_args(argv)

    args.home.mkdir(parents=True, exist_ok=True)
    overrides: dict[str, object] = {"home": args.home}
    if args.dense_weight is not None:
        overrides["dense_weight"] = args.dense_weight
    if args.fusion:
        overrides["fusion"] = args.fusion
    settings = Settings(**overrides)  # type: ignore[arg-type]
    embedder = Embedder.from_settings(settings)
    ingest_stats = ingest(settings, embedder, args.documents)

    questions = json.loads(args.questions.read_text())[: args.limit]
    embedder.encode_query("warm-up")
    recalls, maps, times = [], [], []
    args.run.parent.mkdir(parents=True, exist_ok=True)
    with dbmod.connection(settings) as conn, dbmod.connection(settings) as lexical_conn, args.run.open("w") as run:
        retriever = Retriever(conn, embedder, settings, lexical_conn=lexical_conn)
        for q in questions:
            started = time.perf_counter()
            hits = retriever.search(q["Question"], k=30)
            times.append((time.perf_counter() - started) * 1000)
            ranked = passages(hits)
            for rank, (doc, score) in enumerate(ranked, start=1):
                run.write(f"{q['QuestionID']} Q0 {doc} {rank} {score:.6f} {args.tag}\n")
            relevant = {f"{p['DocumentID']}|{p['PassageID']}" for p in q["Passages"]}
            r, m = recall_map([d for d, _ in ranked], relevant)
            recalls.append(r)
            maps.append(m)
    times.sort()
    print(json.dumps({
        "questions": len(questions),
        "recall@10": round(statistics.mean(recalls), 4),
        "map@10": round(statistics.mean(maps), 4),
        "search_ms_p50": round(times[len(times) // 2], 1),
        "search_ms_p95": round(times[int(len(times) * 0.95)], 1),
        "ingest_passages_per_s": ingest_stats.get("passages_per_s"),
        "dense_weight": settings.dense_weight,
        "fusion": settings.fusion,
    }))


if __name__ == "__main__":
    main()
