"""Embedder throughput by batch size (and max sequence length) on this machine.

    python bench/embed_speed.py --passages ../shared/obliqa/documents/5.json [--n 1000]

Prints one JSON line: texts per second for each (max_seq_length, batch_size), and the lowest
cosine between vectors of the default batch size and of batch size 64 (batching must not move
vectors).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.config import load_settings  # noqa: E402
from engine.embeddings import Embedder  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=Path, required=True, help="an ObliQA document JSON file")
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args()
    texts = [p["Passage"] for p in json.loads(args.passages.read_text())][: args.n]
    settings = load_settings()
    embedder = Embedder.from_settings(settings)
    model = embedder._load()
    embedder.encode(texts[:32])
    rates: dict[str, float] = {}
    vectors: dict[int, np.ndarray] = {}
    for length, batch in ((256, 64), (256, 32), (256, 16), (256, 8), (256, 4), (128, 8)):
        model.max_seq_length, embedder.batch_size = length, batch
        started = time.perf_counter()
        out = embedder.encode(texts)
        rates[f"len{length}_batch{batch}"] = round(len(texts) / (time.perf_counter() - started), 1)
        if length == 256:
            vectors[batch] = out
    default = vectors[settings.embedding_batch_size]
    print(json.dumps({"texts": len(texts), "texts_per_s": rates, "default_batch": settings.embedding_batch_size,
                      "min_cosine_default_vs_64": round(float((default * vectors[64]).sum(1).min()), 6)}))


if __name__ == "__main__":
    main()
