"""Graph state: TypedDicts with explicit reducers. Everything in them is JSON-serializable so the
Postgres checkpointer can store it; side effects (Deps) travel in the run config instead."""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired, TypedDict


class EvidenceItem(TypedDict):
    """One chunk found by research (`agents.crossref.evidence_entry` makes it): the chunk, where it stands,
    and how it was found (scores and ranks of the search, or the cross-reference it was followed from)."""

    chunk_id: str
    document_id: str
    document_title: str
    document_version: int
    source_type: str
    section_path: str
    section_number: str
    section_heading: str
    text: str
    score: float
    dense_score: float | None
    lexical_score: float | None
    query: str
    dense_rank: int | None
    lexical_rank: int | None
    relevance: float | None
    cross_reference: str | None   # "section 4.2 (from <chunk id>)" when followed from a citing chunk
    depth: int                    # cross-reference depth: 0 for a search hit
    ordinal: NotRequired[int]     # the chunk's place in its document (absent in runs checkpointed before it)
    neighbour_of: NotRequired[str | None]  # added by reranking as the neighbour of this chunk, not found by search
    fields: NotRequired[list[str]]  # a spreadsheet row's column headers whose "Header: value" lines describe it


class RequirementRow(TypedDict):
    """`agents.extract.Requirement` as stored in state (`model_dump(mode="json")`)."""

    requirement_id: str
    source_type: str
    document_id: str
    document_version: int
    document_title: str
    section_path: str
    chunk_id: str
    char_start: int
    char_end: int
    exact_quote: str
    modality: str
    extraction_confidence: str
    confidence_reason: str
    refers_elsewhere: bool
    binding: bool
    table_header: NotRequired[str | None]


class JudgedRow(TypedDict):
    """`agents.verify.JudgedRequirement` as stored in state: a requirement and the gate's verdict."""

    requirement: RequirementRow
    verified: bool
    rejection_reason: str | None
    rationale: str
    score: float
    decided_by: str
    part: int
    relevance: float | None
    also_parts: list[int]


class RankedRow(TypedDict):
    """`agents.select.RankedChunk` as stored in state."""

    chunk_id: str
    relevance: float
    selected: bool
    section_of: NotRequired[str | None]
    law: NotRequired[bool]
    rival: NotRequired[bool]
    provision: NotRequired[bool]


class PartRow(TypedDict):
    """`agents.select.Part` as stored in state: one part of the question and its ranked chunks."""

    index: int
    question: str
    ranked: list[RankedRow]
    best: float
    named: NotRequired[list[str]]
    foreign: NotRequired[list[str]]


class CurrentStep(TypedDict):
    """The research step under way; rewrite, retrieve and crossref add to it."""

    aspect: str
    attempt: int
    queries: NotRequired[list[str]]           # rewrite
    found: NotRequired[list[str]]             # retrieve: chunk ids
    cross_references: NotRequired[list[str]]  # crossref: chunk ids


class ResearchStep(TypedDict):
    """A finished research step, as evaluate logs it."""

    index: int
    aspect: str
    attempt: int
    queries: list[str]
    retrieved: list[dict[str, Any]]  # chunk_id, score, dense_score, lexical_score
    cross_references: list[str]
    confidence: float
    status: str                      # completed | failed
    covered_by_earlier_evidence: bool


def merge_evidence(left: list[EvidenceItem], right: list[EvidenceItem]) -> list[EvidenceItem]:
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
    """Translate -> question_parts -> select -> extract -> verify -> compose -> review. Also run on its own
    (`agents.evidence.run_evidence`)."""

    stem: str                     # the question without multiple-choice options
    options: list[str]            # multiple-choice options, stripped before research
    evidence: Annotated[list[EvidenceItem], merge_evidence]
    metrics: Annotated[list[dict[str, Any]], operator.add]
    fallbacks: Annotated[list[str], operator.add]
    relevance_question: str                  # translate: the question in the corpus's language (else the stem)
    part_questions: list[str]                # question_parts: the parts of relevance_question (agents.parts)
    parts: list[PartRow]                     # select: each part with its ranked chunks (agents.select)
    requirements: list[RequirementRow]       # extract: Requirement records, numbered per answer
    judged: list[JudgedRow]                  # verify: JudgedRequirement records (verdict per requirement)
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
    current: CurrentStep          # the step being researched (set by plan, then by replan)
    steps: Annotated[list[ResearchStep], operator.add]
    memory: Annotated[dict[str, Any], merge_memory]
    iterations: int
    decision: str                 # last replan decision: next_step | retry | complete
    memory_hit: dict[str, Any] | None
    scope: dict[str, Any] | None  # the documents / source types the question is limited to (engine.search.scope)
