"""Extract -> Verify -> Compose -> Review over the research evidence, in the output shape of issue 4."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agents.compose import ComposedAnswer, compose_rules, grounding_confidence, select_option
from agents.evaluate import uncovered_terms
from agents.extract import Requirement, extract_from_chunks, is_verbatim
from agents.review import Review, review_answer
from agents.verify import decide, features, score_of

NO_EVIDENCE = "NO_AUTHORITATIVE_EVIDENCE"


class JudgedRequirement(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    requirement: Requirement
    verified: bool
    rejection_reason: str | None
    rationale: str
    score: float


class EvidenceResult(BaseModel):
    """The answer and its whole evidential chain."""

    model_config = ConfigDict(extra="forbid")

    question: str
    status: str = Field(description="ANSWERED or NO_AUTHORITATIVE_EVIDENCE")
    grounding_confidence: str
    extracted_requirements: list[dict[str, Any]]
    verified_requirements: list[dict[str, Any]]
    rejected_requirements: list[dict[str, Any]]
    final_answer: str
    statements: list[dict[str, Any]]
    requirement_references: dict[str, dict[str, Any]]
    unused_requirements: list[str]
    conflicts: list[dict[str, Any]]
    missing_evidence: list[str]
    review: dict[str, Any]
    evidence_audit_trail: dict[str, Any]
    evidence_chunks: dict[str, dict[str, Any]]
    backend: str
    fallbacks: list[str] = Field(default_factory=list)
    selected_option: dict[str, Any] | None = Field(default=None, description="Multiple-choice questions only")


def verify_requirements(question: str, requirements: list[Requirement], chunks: dict[str, dict[str, Any]],
                        embedder: Any) -> list[JudgedRequirement]:
    """The grounding gate; the verbatim check comes first and is decided by code alone."""
    judged = []
    for req in requirements:
        chunk = chunks.get(req.chunk_id)
        if chunk is None or not is_verbatim(chunk["text"], req.char_start, req.char_end, req.exact_quote):
            judged.append(JudgedRequirement(requirement=req, verified=False, rejection_reason="not_verbatim",
                                            rationale="the quote is not the chunk text at its offsets", score=0.0))
            continue
        f = features(question, req.exact_quote, embedder)
        verified, reason, rationale = decide(f)
        judged.append(JudgedRequirement(requirement=req, verified=verified, rejection_reason=reason,
                                        rationale=rationale, score=score_of(f)))
    return judged


def _compose_and_review(verified: list[Requirement]) -> tuple[ComposedAnswer, Review]:
    answer = compose_rules(verified)
    review = review_answer(answer, verified)
    if not review.passed:  # one revision, then finalize with the verdict recorded
        answer = compose_rules(verified)
        second = review_answer(answer, verified)
        review = Review(passed=second.passed, reasons=review.reasons + second.reasons, revised=True)
    return answer, review


def _row(j: JudgedRequirement) -> dict[str, Any]:
    return {**j.requirement.model_dump(mode="json"), "verified": j.verified, "rejection_reason": j.rejection_reason,
            "rationale": j.rationale, "score": j.score}


def _reference(r: Requirement) -> dict[str, Any]:
    return {"document_title": r.document_title, "document_id": r.document_id, "document_version": r.document_version,
            "section_path": r.section_path, "chunk_id": r.chunk_id, "quote": r.exact_quote}


def run_evidence(question: str, evidence: list[dict[str, Any]], deps: Any,
                 options: list[str] | None = None) -> EvidenceResult:
    """Answer `question` from research evidence (chunk dicts in order found). Deterministic (rules)."""
    chunks = {e["chunk_id"]: e for e in evidence}
    requirements = extract_from_chunks(evidence)
    judged = verify_requirements(question, requirements, chunks, deps.embedder)
    verified = [j.requirement for j in judged if j.verified]
    answer, review = _compose_and_review(verified)
    cited = {i for s in answer.statements for i in s.requirement_ids}
    by_reason: dict[str, int] = {}
    for j in judged:
        if not j.verified:
            by_reason[j.rejection_reason or "?"] = by_reason.get(j.rejection_reason or "?", 0) + 1
    status = "ANSWERED" if verified else NO_EVIDENCE
    missing = [] if verified else [
        "a requirement that explicitly addresses: " + (", ".join(uncovered_terms(question, []) or [question]))]
    final = answer.text if verified else (
        "No authoritative evidence: no requirement in the corpus explicitly answers this question. "
        f"{len(requirements)} candidate requirement(s) were examined and rejected.")
    fallbacks = ["evidence stage: the llm backend is not built yet; rules used"] if deps.llm is not None else []
    return EvidenceResult(
        question=question, status=status, grounding_confidence=grounding_confidence(verified),
        extracted_requirements=[_row(j) for j in judged],
        verified_requirements=[_row(j) for j in judged if j.verified],
        rejected_requirements=[_row(j) for j in judged if not j.verified],
        final_answer=final, statements=[s.model_dump() for s in answer.statements],
        requirement_references={r.requirement_id: _reference(r) for r in verified if r.requirement_id in cited},
        unused_requirements=answer.unused_requirement_ids, conflicts=[c.model_dump() for c in answer.conflicts],
        missing_evidence=missing, review=review.model_dump(),
        evidence_audit_trail={"extracted": len(judged), "verified": len(verified),
                              "rejected": len(judged) - len(verified),
                              "pass_rate": round(len(verified) / len(judged), 4) if judged else 0.0,
                              "by_reason": by_reason},
        evidence_chunks={cid: {"text": chunks[cid]["text"], "document_id": chunks[cid]["document_id"]}
                         for cid in dict.fromkeys(j.requirement.chunk_id for j in judged)},
        backend="rules", fallbacks=fallbacks,
        selected_option=select_option(options, verified).model_dump() if options else None)
