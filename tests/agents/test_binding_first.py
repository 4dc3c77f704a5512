"""Binding text first (agents.verify._binding_first): a part that only non-binding text answers cites the binding
quote of the same matter that the gate or the selection cut set aside. Examples and counter-examples from a
regulation with recitals, a control catalogue with its discussion text and a regulator's rules with guidance."""

from __future__ import annotations

import pytest

from agents.extract import Modality, Requirement
from agents.verify import JudgedRequirement, Rejection, _binding_first

GATED = "the gate scores its passage 0.237, below the gate (0.383; ranking 0.106, the passage alone 0.059)"


def _req(rid: str, quote: str, *, binding: bool, modality: Modality = Modality.OBLIGATION) -> Requirement:
    return Requirement(requirement_id=rid, source_type="regulation", document_id="doc", document_version=1,
                       document_title="Reg", section_path="Article 9", chunk_id=f"chk_{rid}", char_start=0,
                       char_end=len(quote), exact_quote=quote, modality=modality, extraction_confidence="high",
                       confidence_reason="", refers_elsewhere=False, binding=binding)


def _verified(req: Requirement, part: int = 0) -> JudgedRequirement:
    return JudgedRequirement(requirement=req, verified=True, rejection_reason=None, rationale="answers", score=0.2,
                             part=part, relevance=0.4)


def _rejected(req: Requirement, reason: str = Rejection.OFF_QUESTION, why: str = GATED, part: int = 0,
              by: str = "rules") -> JudgedRequirement:
    return JudgedRequirement(requirement=req, verified=False, rejection_reason=reason, rationale=why, score=0.05,
                             part=part, relevance=0.1, decided_by=by)


# (the non-binding quote that passed, the binding quote set aside): the binding one is cited
EXPLAINED = [
    ("(61) Where an incident is still ongoing when the final report falls due, Member States should ensure that the "
     "entities concerned provide a progress report then and a final report within one month of handling it.",
     "(e) where the incident is still ongoing when the final report falls due, Member States shall ensure that the "
     "entities concerned provide a progress report at that time and a final report within one month of handling it;"),
    ("Ideally, restoration of backups should be tested at least once when first implemented and each time "
     "fundamental infrastructure changes occur.",
     "Restoration of backups is tested at least once when initially implemented and each time fundamental "
     "information technology infrastructure changes occur."),
    ("A firm should keep the records of its client assessments for at least six years after the relationship ends.",
     "A firm must keep records of each client assessment for at least six years after the relationship ends."),
]


@pytest.mark.parametrize(("note", "rule"), EXPLAINED, ids=["recital", "discussion", "guidance"])
def test_the_binding_statement_of_the_same_matter_is_cited(note: str, rule: str) -> None:
    context = _verified(_req("REQ-P001", note, binding=False, modality=Modality.RECOMMENDATION))
    binding = _rejected(_req("REQ-S001", rule, binding=True))
    changed = _binding_first({"REQ-P001": context, "REQ-S001": binding})
    assert list(changed) == ["REQ-S001"]
    assert changed["REQ-S001"].verified and changed["REQ-S001"].rejection_reason is None
    assert "REQ-P001" in changed["REQ-S001"].rationale and GATED in changed["REQ-S001"].rationale


# (the non-binding quote, the binding quote, why it stays set aside)
KEPT_ASIDE = [
    # another matter: the recital explains reporting, the article is about registration
    ("(61) Where an incident is still ongoing when the final report falls due, Member States should ensure that the "
     "entities concerned provide a progress report then and a final report within one month of handling it.",
     "Member States shall ensure that entities submit their name, address and contact details to the competent "
     "authority.", {}),
    # set aside for what it does not state, not for being off the question
    ("Ideally, restoration of backups should be tested at least once when first implemented and each time "
     "fundamental infrastructure changes occur.",
     "Restoration of backups is tested as part of business continuity exercises.",
     {"reason": Rejection.INFERENCE, "why": "the question asks for a time or period; the quote states none"}),
    # it imposes nothing
    ("A firm should keep the records of its client assessments for at least six years after the relationship ends.",
     "Records of client assessments kept for at least six years after the relationship ends are records for the "
     "purposes of this chapter.", {"modality": Modality.NONE}),
    # a code check's verdict stands
    ("A firm should keep the records of its client assessments for at least six years after the relationship ends.",
     "A firm must keep records of each client assessment for at least six years after the relationship ends.",
     {"by": "code", "reason": Rejection.NOT_VERBATIM, "why": "the quote is not the chunk text at its offsets"}),
    # another part's
    ("A firm should keep the records of its client assessments for at least six years after the relationship ends.",
     "A firm must keep records of each client assessment for at least six years after the relationship ends.",
     {"part": 1}),
]


@pytest.mark.parametrize(("note", "rule", "how"), KEPT_ASIDE,
                         ids=["other-matter", "states-no-time", "imposes-nothing", "code-check", "other-part"])
def test_a_binding_quote_stays_aside(note: str, rule: str, how: dict[str, object]) -> None:
    context = _verified(_req("REQ-P001", note, binding=False, modality=Modality.RECOMMENDATION))
    binding = _rejected(_req("REQ-S001", rule, binding=True, modality=how.get("modality", Modality.OBLIGATION)),
                        reason=how.get("reason", Rejection.OFF_QUESTION), why=how.get("why", GATED),
                        part=how.get("part", 0), by=how.get("by", "rules"))
    assert _binding_first({"REQ-P001": context, "REQ-S001": binding}) == {}


def test_a_part_with_binding_text_cited_is_left_as_it_is() -> None:
    note, rule = EXPLAINED[2]
    context = _verified(_req("REQ-P001", note, binding=False, modality=Modality.RECOMMENDATION))
    cited = _verified(_req("REQ-S002", "A firm must record the client's investment objectives.", binding=True))
    binding = _rejected(_req("REQ-S001", rule, binding=True))
    assert _binding_first({"REQ-P001": context, "REQ-S002": cited, "REQ-S001": binding}) == {}


def test_the_closest_binding_quote_is_the_one_cited() -> None:
    note, rule = EXPLAINED[0]
    context = _verified(_req("REQ-P001", note, binding=False, modality=Modality.RECOMMENDATION))
    closest = _rejected(_req("REQ-S001", rule, binding=True))
    further = _rejected(_req("REQ-S002", "(d) a final report not later than one month after the incident "
                                         "notification, including a detailed description of the incident;",
                             binding=True))
    changed = _binding_first({"REQ-P001": context, "REQ-S002": further, "REQ-S001": closest})
    assert list(changed) == ["REQ-S001"]


def test_a_regulators_guidance_answers_as_it_is() -> None:
    note, rule = EXPLAINED[2]
    context = _verified(_req("REQ-P001", note, binding=False, modality=Modality.RECOMMENDATION))
    binding = _rejected(_req("REQ-S001", rule, binding=True))
    assert _binding_first({"REQ-P001": context, "REQ-S001": binding}, frozenset({"REQ-P001"})) == {}


def test_the_pipeline_marks_a_guidance_paragraph_so() -> None:
    from agents.quotes import non_binding

    chunk = {"chunk_id": "chk", "text": "", "section_path": "8.3.2.Guidance on CDD.7.", "section_heading": ""}
    assert non_binding(chunk, "A Relevant Person should consider ...") == "guidance"  # type: ignore[arg-type]
    recital = {"chunk_id": "chk", "text": "", "section_path": "Recitals > Recital 102", "section_heading": ""}
    assert non_binding(recital, "(102) Where essential entities ...") == "recital"  # type: ignore[arg-type]
