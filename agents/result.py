"""The evidence stage's result: the answer and its whole evidential chain (`EvidenceResult`), assembled by
the review node from the stage's state and the final, reviewed composition."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agents.compose import ComposedAnswer, grounding_confidence, select_option
from agents.extract import Requirement
from agents.modality import DUTIES
from agents.provisions import asks_all, provision_parts
from agents.state import EvidenceState
from agents.verify import JudgedRequirement
from engine.terms import key_words, tokenize

if TYPE_CHECKING:
    from agents.deps import Deps

NO_EVIDENCE = "NO_AUTHORITATIVE_EVIDENCE"


class Review(BaseModel):
    """The review's verdict on the composed answer, and who wrote the final one."""

    model_config = ConfigDict(extra="forbid")

    passed: bool
    reasons: list[str] = Field(default_factory=list)
    revised: bool = False
    composer: str = Field(default="rules", description="Who wrote the final answer: rules or llm")


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
    fallbacks: list[str] = Field(default_factory=list, description="The evidence stage's fallbacks to rules")
    selected_option: dict[str, Any] | None = Field(default=None, description="Multiple-choice questions only")
    direct_answer: str = Field(default="", description="The one-sentence answer(s), before the supporting requirements")
    parts: list[dict[str, Any]] = Field(default_factory=list, description="Per part of the question: its question, "
                                        "direct answer, cited REQ-IDs, conflicts and missing evidence")
    llm_calls: int = Field(default=0, description="LLM calls the evidence stage spent (llm_budget_evidence)")


def _row(j: JudgedRequirement) -> dict[str, Any]:
    return {**j.requirement.model_dump(mode="json"), "verified": j.verified, "rejection_reason": j.rejection_reason,
            "rationale": j.rationale, "score": j.score, "decided_by": j.decided_by, "part": j.part,
            "relevance": j.relevance}


def duties_found(question: str, verified: list[Requirement], provision: bool | None = None
                 ) -> dict[str, int] | None:
    """For a broad question ("What must we do when ...?"), how many requirements the sources were found to
    state on it: in the law (statutes and regulations: REQ-S), elsewhere (policies, standards, guidance:
    REQ-P), and of these the duties and prohibitions; the same for a question that asks what a provision says
    (agents.provisions; `provision`: as the selection found, where known). None for any other question. Pure."""
    if not asks_all(question, provision):
        return None
    return {"total": len(verified), "law": sum(r.requirement_id.startswith("REQ-S") for r in verified),
            "other": sum(r.requirement_id.startswith("REQ-P") for r in verified),
            "duties": sum(r.modality in DUTIES for r in verified)}


def _with_cited(found: dict[str, int] | None, cited: int) -> dict[str, int] | None:
    """A broad part's `found` with how many of them its answer cites ("cited"; the answer shows at most
    `AnswerSettings.broad_max_supporting` quotes besides its direct answer and conflicts). Pure."""
    return None if found is None else {**found, "cited": min(cited, found["total"])}


def _parts(state: EvidenceState, answer: ComposedAnswer, verified: dict[int, list[Requirement]]
           ) -> list[dict[str, Any]]:
    """One entry per part of the question (a one-part question has one); `verified`: each part's verified
    requirements."""
    questions = [p["question"] for p in state.get("parts") or []] or [state["stem"]]
    rows = {p["index"]: p for p in state.get("parts") or []}
    whole = provision_parts(state.get("parts"))
    by_index = {p.index: p for p in answer.parts}
    out = []
    examined = [e["text"] for e in state["evidence"]]
    for index, question in enumerate(questions):
        mine = [s for s in answer.statements if s.part == index]
        part = by_index.get(index)
        missing = part.missing_evidence if part else ([] if mine else ["a requirement that explicitly addresses: "
                                                                        + question])
        missing = [*missing, *_not_mentioned(question, examined)] if missing else missing
        missing = [*_not_held(rows[index].get("foreign", []) if index in rows else []), *missing]
        cited = part.requirement_ids if part else list(dict.fromkeys(i for s in mine for i in s.requirement_ids))
        out.append({"index": index, "question": question,
                    "direct_answer": next((s.text for s in mine if s.kind == "direct"), ""),
                    "requirement_ids": cited,
                    "conflicts": [c.model_dump() for c in answer.conflicts if c.part == index],
                    "missing_evidence": missing,
                    "found": _with_cited(duties_found(question, verified.get(index, []),
                                                      None if whole is None else index in whole), len(cited))})
    return out


def _reference(r: Requirement) -> dict[str, Any]:
    return {"document_title": r.document_title, "document_id": r.document_id, "document_version": r.document_version,
            "section_path": r.section_path, "chunk_id": r.chunk_id, "quote": r.exact_quote}


def _audit_trail(judged: list[JudgedRequirement], verified: list[Requirement]) -> dict[str, Any]:
    by_reason: dict[str, int] = {}
    for j in judged:
        if not j.verified:
            by_reason[j.rejection_reason or "?"] = by_reason.get(j.rejection_reason or "?", 0) + 1
    return {"extracted": len(judged), "verified": len(verified), "rejected": len(judged) - len(verified),
            "pass_rate": round(len(verified) / len(judged), 4) if judged else 0.0, "by_reason": by_reason}


def unmentioned(question: str, examined: list[str]) -> list[str]:
    """The question's key words (as written) that none of the `examined` passages holds, compared by stem: what
    the corpus, as far as it was searched, does not speak of ("press", "crypto"). Pure."""
    held = {t for text in examined for t in tokenize(text)}
    return [w for w in key_words(question) if not set(tokenize(w, query=True)) & held]


def _not_held(names: list[str]) -> list[str]:
    """What a question asked under texts no document in scope is or mentions (`names`: agents.select.Part.foreign)
    lacks, one line each."""
    return [f"the text it asks under, {name}: no document in scope is {name} or mentions it (ingest it to ask "
            "under it)" for name in names]


def _not_mentioned(question: str, examined: list[str]) -> list[str]:
    """What is missing besides a requirement: the question's words no passage examined holds, as one line."""
    absent = unmentioned(question, examined) if examined else []
    return [f"none of the {len(examined)} passage(s) examined mentions: {', '.join(absent)}"] if absent else []


def _final_answer(question: str, answer: ComposedAnswer, verified: list[Requirement],
                  judged: list[JudgedRequirement], examined: list[str]) -> tuple[str, list[str]]:
    """The answer text and what is missing (never an answer without a verified requirement): a requirement that
    addresses the question's words, and those of its words that no passage examined holds."""
    if verified:
        return answer.text, []
    # the question's words as written, not their stems, as each part's missing evidence names them
    missing = ["a requirement that explicitly addresses: " + (", ".join(key_words(question)) or question)]
    missing += _not_mentioned(question, examined)
    return ("No authoritative evidence: no requirement in the corpus explicitly answers this question. "
            f"{len(judged)} candidate requirement(s) were examined and rejected.{_closest(judged)}"), missing


_SET_ASIDE = {"does_not_address_question": "it does not answer the question as asked",
              "requires_inference": "it does not state what the question asks for",
              "incomplete_quote": "it is not a complete requirement on its own",
              "not_verbatim": "it is not the source's text", "repeated_quote": "it repeats another quote"}


def _closest(judged: list[JudgedRequirement]) -> str:
    """Where the best-ranked candidate stands and why it was set aside, so a reader can check it (" The closest
    candidate, in Cloud Service Agreement, 5 Term & Termination > 5.3 Termination, was set aside: it does not
    answer the question as asked."); "" with none. Never a quote: nothing here is an answer."""
    best = max(judged, key=lambda j: (j.relevance or 0.0, j.score), default=None)
    if best is None:
        return ""
    where = ", ".join(x for x in (best.requirement.document_title, best.requirement.section_path) if x)
    why = _SET_ASIDE.get(best.rejection_reason or "", "it was rejected")
    return f" The closest candidate{', in ' + where + ',' if where else ''} was set aside: {why}."


def assemble_result(state: EvidenceState, deps: Deps, answer: ComposedAnswer, review: Review, *,
                    extra_fallbacks: list[str], extra_calls: int) -> EvidenceResult:
    """The EvidenceResult from the evidence stage's state and the final (reviewed) composition."""
    question = state["stem"]
    judged = [JudgedRequirement.model_validate(j) for j in state.get("judged") or []]
    verified = [j.requirement for j in judged if j.verified]
    cited = {i for s in answer.statements for i in s.requirement_ids}
    chunks = {e["chunk_id"]: e for e in state["evidence"]}
    final, missing = _final_answer(question, answer, verified, judged, [e["text"] for e in state["evidence"]])
    away = list(dict.fromkeys(n for p in state.get("parts") or [] for n in p.get("foreign", [])))
    missing = [*_not_held(away), *missing]
    if away and not verified:  # why, first: not that nothing matched, but that the text asked under is not here
        final = (f"No authoritative evidence: the question asks under {' and '.join(away)}, which no document in "
                 f"scope is or mentions; ingest it to have the question answered from it. {len(judged)} candidate "
                 "requirement(s) of other texts were examined and set aside.")
    by_part: dict[int, list[Requirement]] = {}
    for j in judged:
        if j.verified:
            by_part.setdefault(j.part, []).append(j.requirement)
    parts = _parts(state, answer, by_part)
    if verified:
        missing = [f"part {p['index'] + 1}: {m}" if len(parts) > 1 else m for p in parts for m in p["missing_evidence"]]
    options = state.get("options") or []
    return EvidenceResult(
        question=question, status="ANSWERED" if verified else NO_EVIDENCE,
        grounding_confidence=grounding_confidence(
            verified, {j.requirement.requirement_id: j.relevance for j in judged if j.verified},
            {j.requirement.requirement_id: j.part for j in judged if j.verified}, max(1, len(parts)),
            {j.requirement.requirement_id: j.also_parts for j in judged if j.verified}),
        extracted_requirements=[_row(j) for j in judged],
        verified_requirements=[_row(j) for j in judged if j.verified],
        rejected_requirements=[_row(j) for j in judged if not j.verified],
        final_answer=final, statements=[s.model_dump() for s in answer.statements],
        requirement_references={r.requirement_id: _reference(r) for r in verified if r.requirement_id in cited},
        unused_requirements=answer.unused_requirement_ids, conflicts=[c.model_dump() for c in answer.conflicts],
        missing_evidence=missing, review=review.model_dump(), evidence_audit_trail=_audit_trail(judged, verified),
        evidence_chunks={cid: {"text": chunks[cid]["text"], "document_id": chunks[cid]["document_id"]}
                         for cid in dict.fromkeys(j.requirement.chunk_id for j in judged) if cid in chunks},
        backend=deps.backend, fallbacks=[*(state.get("evidence_fallbacks") or []), *extra_fallbacks],
        selected_option=select_option(options, verified, need=deps.settings.answer.option_support,
                                      margin=deps.settings.answer.option_margin).model_dump() if options else None,
        llm_calls=int(state.get("evidence_llm_calls") or 0) + extra_calls,
        direct_answer="\n".join(p["direct_answer"] for p in parts if p["direct_answer"]), parts=parts)


