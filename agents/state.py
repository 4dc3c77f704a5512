"""Graph state: a TypedDict with explicit reducers. Everything in it is JSON-serializable so the
Postgres checkpointer can store it; side effects (Deps) travel in the run config instead."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


def merge_evidence(left: list[dict[str, Any]], right: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Append new evidence, keeping the first appearance of each chunk (order = order found)."""
    seen = {e["chunk_id"] for e in left}
    return left + [e for e in right if e["chunk_id"] not in seen and not seen.add(e["chunk_id"])]  # type: ignore[func-returns-value]


def merge_memory(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    """Working memory: lists are extended, other keys replaced."""
    out = dict(left or {})
    for key, value in (right or {}).items():
        out[key] = (out.get(key) or []) + value if isinstance(value, list) else value
    return out


class ResearchState(TypedDict):
    question: str                 # the question as asked
    stem: str                     # the question without multiple-choice options
    options: list[str]            # multiple-choice options, stripped before research
    rejected: bool
    rejection_reason: str | None
    question_type: str            # simple | multi_hop
    aspects: list[str]            # what the question asks about, in research order
    current: dict[str, Any] | None  # the step being researched: aspect, attempt, queries
    steps: Annotated[list[dict[str, Any]], operator.add]
    evidence: Annotated[list[dict[str, Any]], merge_evidence]
    memory: Annotated[dict[str, Any], merge_memory]
    metrics: Annotated[list[dict[str, Any]], operator.add]
    fallbacks: Annotated[list[str], operator.add]
    iterations: int
    decision: str                 # last replan decision: next_step | retry | complete
    memory_hit: dict[str, Any] | None
    evidence_result: dict[str, Any] | None  # extract -> verify -> compose -> review
