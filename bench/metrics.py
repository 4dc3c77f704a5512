"""Retrieval figures shared by the benches (pure, no engine import: bench/retrain.py runs it on a GPU machine
that has none of the engine's database packages)."""

from __future__ import annotations


def recall_map(ranked: list[str], relevant: set[str], cutoff: int = 10) -> tuple[float, float]:
    """trec_eval recall.10 and map_cut.10 for one query."""
    hits, precision_sum = 0, 0.0
    for rank, doc in enumerate(ranked[:cutoff], start=1):
        if doc in relevant:
            hits += 1
            precision_sum += hits / rank
    return hits / len(relevant), precision_sum / len(relevant)
