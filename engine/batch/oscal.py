"""OSCAL Assessment Results (1.1.x) for a batch: one result, an observation per question, a
finding per question that names a control statement, and the evidence in back-matter.

Mapping: each answered question is an observation (methods EXAMINE and TEST, origin = this engine
as a tool, `collected` = when the audit was recorded) whose relevant-evidence entries point to
back-matter resources, one per verified requirement, carrying the quote (citation) and the
source document with its SHA-256 (rlink hash). A finding targets the question's control
statement: satisfied when the answer is grounded with confidence medium or high and no
expectation was missed, otherwise not-satisfied with the reason. UUIDs are v5, derived from the
batch and audit ids, so exporting the same batch twice gives the same document.
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from engine.batch import store as batch_store
from engine.batch.results import outcome
from engine.config import Settings, load_settings
from engine.text import normalize_ws
from engine.trail import review
from engine.trail import store as audit_trail
from engine.trail.canonical import utc_timestamp
from engine.trail.record import engine_version

OSCAL_VERSION = "1.1.2"
NS = uuid.UUID("8b0e8f4c-6d0a-5a57-9f43-2f1e0c9a7e11")
PROP_NS = "https://evidence-engine.dev/ns/oscal"
GROUNDED = ("high", "medium")


def _uuid(*parts: str) -> str:
    return str(uuid.uuid5(NS, "/".join(parts)))


def _prop(name: str, value: Any) -> dict[str, str]:
    return {"name": name, "ns": PROP_NS, "value": str(value)}


def _tool_uuid() -> str:
    return _uuid("tool", "evidence-engine", engine_version())


def _tool(batch_id: str) -> dict[str, Any]:
    tool = _tool_uuid()
    return {"components": [{"uuid": tool, "type": "software", "title": f"Evidence Engine {engine_version()}",
                            "description": "Evidence-first compliance engine: verbatim requirement quotes checked by "
                                           "code, answers recorded in a hash-chained audit trail.",
                            "props": [_prop("engine-version", engine_version())], "status": {"state": "operational"}}],
            "assessment-platforms": [{"uuid": _uuid(batch_id, "platform"), "title": "Evidence Engine",
                                      "uses-components": [{"component-uuid": tool}]}]}


def _evidence(rec: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(relevant-evidence entries, back-matter resources) for the verified requirements of one audit."""
    docs = {d["document_id"]: d for d in rec.get("corpus", [])}
    relevant, resources = [], []
    for req in (r for r in rec.get("requirements", []) if r["verified"]):
        res = _uuid(rec["audit_id"], req["requirement_id"])
        doc = docs.get(req["document_id"], {})
        quote = normalize_ws(req["exact_quote"])
        resources.append({
            "uuid": res, "title": f"{req['requirement_id']}: {req.get('document_title', '')} "
                                  f"v{req['document_version']}, {req.get('section_path', '')}".strip(),
            "description": f"{req['modality']} quoted verbatim from {req['document_id']} at characters "
                           f"{req['doc_char_start']}-{req['doc_char_end']} (audit {rec['audit_id']})",
            "props": [_prop("requirement-id", req["requirement_id"]), _prop("audit-id", rec["audit_id"]),
                      _prop("document-id", req["document_id"])],
            "citation": {"text": quote},
            "rlinks": [{"href": f"urn:evidence-engine:document:{req['document_id']}", "media-type": "text/plain",
                        "hashes": [{"algorithm": "SHA-256", "value": doc.get("content_sha256", "")}]}]})
        relevant.append({"href": f"#{res}", "description": f"{req['requirement_id']} ({req['modality']}): \"{quote}\""})
    return relevant, resources


def _observation(rec: dict[str, Any], qid: str, relevant: list[dict[str, Any]], state: review.Review
                 ) -> dict[str, Any]:
    answer = rec["answer"]
    obs = {"uuid": _uuid(rec["audit_id"], "observation"), "title": f"{qid}: {rec['question']}",
           "description": answer.get("final_answer") or answer["status"], "methods": ["EXAMINE", "TEST"],
           "types": ["control-objective"],
           "props": [_prop("audit-id", rec["audit_id"]), _prop("result", answer["status"]),
                     _prop("grounding-confidence", answer.get("grounding_confidence")),
                     _prop("review-state", state.state)],
           "remarks": f"Review: {state.label}: {state.summary()}",
           "origins": [{"actors": [{"type": "tool", "actor-uuid": _tool_uuid()}]}],
           "collected": rec["recorded_at"]}
    if relevant:
        obs["relevant-evidence"] = relevant
    return obs


def _finding(rec: dict[str, Any], qid: str, control_id: str, missed: list[dict[str, Any]]) -> dict[str, Any]:
    answer = rec["answer"]
    grounded = answer["status"] == "ANSWERED" and answer.get("grounding_confidence") in GROUNDED
    if grounded and not missed:
        status = {"state": "satisfied", "reason": "pass"}
        why = f"grounded answer (confidence {answer['grounding_confidence']})"
    else:
        reasons = [] if grounded else [f"{answer['status']}, grounding confidence {answer.get('grounding_confidence')}"]
        reasons += [f"expected citation of {m['document']}" + (f" section {m['section']}" if m["section"] else "")
                    + " not found" for m in missed]
        why = "; ".join(reasons)
        status = {"state": "not-satisfied", "reason": "fail", "remarks": why}
    return {"uuid": _uuid(rec["audit_id"], "finding"), "title": f"{control_id} ({qid})", "description": why,
            "target": {"type": "statement-id", "target-id": control_id, "status": status},
            "related-observations": [{"observation-uuid": _uuid(rec["audit_id"], "observation")}]}


def _control(statement_id: str) -> str:
    return statement_id.split("_smt")[0]


def export_batch(conn: psycopg.Connection, batch_id: str, *, settings: Settings | None = None) -> dict[str, Any]:
    """The OSCAL Assessment Results document of a batch (answered questions only); each observation carries
    its audit's review state now (`engine.trail.review`, approvals needed from `settings`)."""
    batch = batch_store.get(conn, batch_id)
    result = outcome(conn, batch_id)
    reviews = review.reviews(conn, [q.audit_id for q in result.questions if q.audit_id is not None],
                             required=(settings or load_settings()).review_approvals)
    observations, findings = [], []
    resources = [{"uuid": _uuid(batch_id, "definition"), "title": f"Audit definition: {batch['name']}",
                  "description": "The checklist run (stands in for the assessment plan).",
                  "rlinks": [{"href": batch["definition_path"], "media-type": "application/yaml",
                              "hashes": [{"algorithm": "SHA-256", "value": batch["definition_sha256"]}]}]}]
    for q in result.questions:
        if q.audit_id is None:
            continue
        rec = audit_trail.get(conn, q.audit_id)["record"]
        relevant, res = _evidence(rec)
        resources += res
        observations.append(_observation(rec, q.question_id, relevant, reviews[q.audit_id]))
        if q.control_id:
            findings.append(_finding(rec, q.question_id, q.control_id, [e for e in q.expectations if not e["met"]]))
    controls = sorted({_control(q.control_id) for q in result.questions if q.control_id})
    selection: dict[str, Any] = ({"include-controls": [{"control-id": c} for c in controls]} if controls
                                 else {"include-all": {}})
    finished = [q.audit_id for q in result.questions if q.audit_id is not None]
    end = max((audit_trail.get(conn, a)["created_at"] for a in finished), default=batch["started_at"])
    res_block = {"uuid": _uuid(batch_id, "result"), "title": batch["name"],
                 "description": batch["definition"].get("description") or batch["name"],
                 "start": utc_timestamp(batch["started_at"]), "end": utc_timestamp(end),
                 "props": [_prop("batch-id", batch_id)], "local-definitions": {"assessment-assets": _tool(batch_id)},
                 "reviewed-controls": {"control-selections": [selection]}, "observations": observations}
    if findings:
        res_block["findings"] = findings
    return {"assessment-results": {
        "uuid": _uuid(batch_id, "assessment-results"),
        "metadata": {"title": f"Assessment results: {batch['name']}", "last-modified": utc_timestamp(end),
                     "version": batch_id, "oscal-version": OSCAL_VERSION,
                     "props": [_prop("batch-id", batch_id)]},
        "import-ap": {"href": f"#{_uuid(batch_id, 'definition')}"},
        "results": [res_block], "back-matter": {"resources": resources}}}
