"""OSCAL mapping of one audit, without a database: when a finding is satisfied, what evidence an observation
points to, and that every part parses as trestle's OSCAL model of it. The whole exported document of a real
batch is checked in tests/batch/test_audit.py (trestle validators, references)."""

from __future__ import annotations

import pytest
from trestle.oscal.common import Finding, Observation, Resource

from engine.batch import oscal
from engine.trail.review import review_state

UNREVIEWED = review_state([], required=2)

SHA = "a" * 64


def _record(status: str = "ANSWERED", confidence: str = "high", verified: bool = True) -> dict:
    requirement = {"requirement_id": "REQ-S001", "verified": verified, "document_id": "doc_1", "document_version": 2,
                   "document_title": "Conduct Regulation", "section_path": "4 > 4.2", "modality": "obligation",
                   "exact_quote": "A firm must retain\n transaction records for six years.", "doc_char_start": 10,
                   "doc_char_end": 60}
    return {"audit_id": "AUD-1", "question": "How long must records be kept?", "recorded_at": "2026-01-02T03:04:05Z",
            "answer": {"status": status, "grounding_confidence": confidence, "final_answer": "Six years [REQ-S001]."},
            "requirements": [requirement],
            "corpus": [{"document_id": "doc_1", "content_sha256": SHA}]}


@pytest.mark.parametrize(("record", "missed", "state", "remark"), [
    (_record(), [], "satisfied", None),
    (_record(confidence="medium"), [], "satisfied", None),
    (_record(confidence="low"), [], "not-satisfied", "ANSWERED, grounding confidence low"),
    (_record(status="NO_AUTHORITATIVE_EVIDENCE", confidence="none", verified=False), [], "not-satisfied",
     "NO_AUTHORITATIVE_EVIDENCE, grounding confidence none"),
    (_record(), [{"document": "Conduct Regulation", "section": "4.2"}], "not-satisfied",
     "expected citation of Conduct Regulation section 4.2 not found"),
], ids=["grounded-high", "grounded-medium", "weak", "no-evidence", "expectation-missed"])
def test_a_finding_is_satisfied_only_by_a_grounded_answer_that_meets_its_expectations(record, missed, state,
                                                                                       remark) -> None:
    finding = oscal._finding(record, "REC-1", "au-11_smt", missed)
    parsed = Finding.model_validate(finding)
    assert parsed.target.status.state.value == state and parsed.target.target_id == "au-11_smt"
    assert finding["target"]["status"].get("remarks") == remark
    assert [r.observation_uuid for r in parsed.related_observations] == [oscal._uuid("AUD-1", "observation")]


def test_an_observation_points_at_its_verified_quotes_with_the_source_hash() -> None:
    record = _record()
    relevant, resources = oscal._evidence(record)
    observation = Observation.model_validate(oscal._observation(record, "REC-1", relevant, UNREVIEWED))
    assert {p.name: p.value for p in observation.props}["review-state"] == "unreviewed"
    assert observation.remarks == "Review: unreviewed: not reviewed yet (2 approvals needed)"
    (resource,) = [Resource.model_validate(r) for r in resources]
    assert [e.href for e in observation.relevant_evidence] == [f"#{resource.uuid}"]
    assert resource.citation.text == "A firm must retain transaction records for six years."  # whitespace folded
    assert resource.rlinks[0].href == "urn:evidence-engine:document:doc_1"
    assert resource.rlinks[0].hashes[0].value == SHA
    assert observation.collected.isoformat().startswith("2026-01-02T03:04:05")


def test_rejected_quotes_are_no_evidence() -> None:
    record = _record(status="NO_AUTHORITATIVE_EVIDENCE", confidence="none", verified=False)
    relevant, resources = oscal._evidence(record)
    assert relevant == [] and resources == []
    assert Observation.model_validate(oscal._observation(record, "GAP-1", relevant, UNREVIEWED)
                                      ).relevant_evidence is None


def test_uuids_are_stable_and_distinct() -> None:
    assert oscal._uuid("AUD-1", "finding") == oscal._uuid("AUD-1", "finding")
    assert len({oscal._uuid("AUD-1", "finding"), oscal._uuid("AUD-2", "finding"),
                oscal._uuid("AUD-1", "observation")}) == 3
