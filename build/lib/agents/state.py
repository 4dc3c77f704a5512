"""Graph state: TypedDicts with explicit reducers. Everything in them is JSON-serializable so the
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


class EvidenceState(TypedDict):
    """Extract -> verify -> compose -> review. Also run on its own (`agents.evidence.run_evidence`)."""

    stem: str                     # the question without multiple-choice options
    options: list[str]            # multiple-choice options, stripped before research
    evidence: Annotated[list[dict[str, Any]], merge_evidence]
    metrics: Annotated[list[dict[str, Any]], operator.add]
    fallbacks: Annotated[list[str], operator.add]
    parts: list[dict[str, Any]]              # extract: the question's parts with their ranked chunks (agents.select)
    requirements: list[dict[str, Any]]       # extract: Requirement records, numbered per answer
    judged: list[dict[str, Any]]             # verify: JudgedRequirement records (verdict per requirement)
    composition: dict[str, Any] | None       # compose: the latest ComposedAnswer
    review: dict[str, Any] | None            # review: the latest verdict (a failed first one sends back to compose)
    evidence_fallbacks: Annotated[list[str], operator.add]  # the evidence stage's share of `fallbacks`
    evidence_llm_calls: Annotated[int, operator.add]        # spent from settings.llm_budget_evidence
    evidence_result: dict[str, Any] | None   # the final EvidenceResult
    language: dict[str, Any] | None          # question / corpus language (engine.ingest.language.question_language)


class ResearchState(EvidenceState):
    question: str                 # the question as asked
    rejected: bool
    rejection_reason: str | None
    question_type: str            # simple | multi_hop
    aspects: list[str]            # what the question asks about, in research order
    current: dict[str, Any] | None  # the step being researched: aspect, attempt, queries
    steps: Annotated[list[dict[str, Any]], operator.add]
    memory: Annotated[dict[str, Any], merge_memory]
    iterations: int
    decision: str                 # last replan decision: next_step | retry | complete
    memory_hit: dict[str, Any] | None
    scope: dict[str, Any] | None  # the documents / source types the question is limited to (engine.search.scope)
