"""What a batch run gave: each question's result, expectations and state, the checklist's gate and exit
status (`outcome`: `evidence audit status`, the batch report, the OSCAL export and the web view read it),
and what changed between two runs of one checklist (`compare`). Reads only; the runs are `engine.batch.runner`."""

from __future__ import annotations

from typing import Any

import psycopg
from pydantic import BaseModel, ConfigDict, Field

from engine.batch import store as batch_store
from engine.batch.checklist import AuditDefinition, Expectation
from engine.errors import ExitCode
from engine.trail import store as audit_trail
from engine.trail.queries import diff_records


class QuestionOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question_id: str
    question: str
    control_id: str | None
    audit_id: str | None
    status: str | None = Field(description="ANSWERED | NO_AUTHORITATIVE_EVIDENCE | REJECTED; None: not run yet")
    grounding_confidence: str | None
    verified_requirements: int
    expectations: list[dict[str, Any]]
    state: str = Field(description="done | failed | skipped | leased | retrying | open")
    attempts: int = Field(description="Attempts made at the question (claims by workers)")
    last_error: str | None = Field(description="The last failed attempt's error (kept after a later success)")


class BatchOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    batch_id: str
    name: str
    all_ran: bool
    questions: list[QuestionOutcome]
    no_evidence: list[str]
    expectations_missed: list[str]
    failed: list[str] = Field(description="Questions whose attempts all failed ('evidence audit retry')")
    skipped: list[str] = Field(description="Questions set aside by an operator ('evidence audit skip')")
    queue: dict[str, Any] = Field(description="Items by state, live leases, the oldest lease's age, attempts")
    fail_on: str
    exit_code: int

    def gate_failures(self) -> set[str]:
        """The questions that fail the checklist's gate (`fail_on`): without evidence, missing an expectation."""
        return gate_failures(self.fail_on, self.no_evidence, self.expectations_missed)


def gate_failures(fail_on: str, no_evidence: list[str], missed: list[str]) -> set[str]:
    """Which questions fail a gate: 'any' both kinds, 'no-evidence' or 'expect' one, 'never' none."""
    return set({"any": no_evidence + missed, "no-evidence": no_evidence, "expect": missed, "never": []}[fail_on])


def _matches_document(name: str, req: dict[str, Any]) -> bool:
    low = name.strip().lower()
    key = (req.get("source_key") or "").lower()
    return low in ((req.get("document_title") or "").lower(), req["document_id"].lower(), key) or \
        key.endswith("/" + low)


def _matches_section(section: str | None, number: str) -> bool:
    if not section:
        return True
    want, have = section.strip().rstrip("."), (number or "").rstrip(".")
    return have == want or have.startswith(want + ".") or have.startswith(want + "(")


def check_expectations(record: dict[str, Any], expect: list[Expectation]) -> list[dict[str, Any]]:
    """Met when a requirement the answer cites comes from the expected document (and section)."""
    cited = [r for r in record.get("requirements", []) if r.get("cited")]
    out = []
    for e in expect:
        hits = [r["requirement_id"] for r in cited
                if _matches_document(e.document, r) and _matches_section(e.section, r.get("section_number", ""))]
        out.append({"document": e.document, "section": e.section, "met": bool(hits), "requirement_ids": hits})
    return out


def outcome(conn: psycopg.Connection, batch_id: str, *, fail_on: str | None = None) -> BatchOutcome:
    """Per-question results, the queue's state and the exit status: the checklist's gate, or 1 when a
    question failed (its attempts all raised; `evidence audit retry`)."""
    batch = batch_store.get(conn, batch_id)
    definition = AuditDefinition.model_validate(batch["definition"]["checklist"])
    texts = {q.id: q for q in definition.questions}
    rows = []
    for item in batch_store.items_with_state(conn, batch_id):
        q = texts[item["question_id"]]
        rec = audit_trail.get(conn, item["audit_id"])["record"] if item["audit_id"] else None
        answer = (rec or {}).get("answer") or {}
        rows.append(QuestionOutcome(
            question_id=q.id, question=q.text, control_id=q.control_id, audit_id=item["audit_id"],
            status=answer.get("status"), grounding_confidence=answer.get("grounding_confidence"),
            verified_requirements=sum(1 for r in (rec or {}).get("requirements", []) if r["verified"]),
            expectations=((rec or {}).get("batch") or {}).get("expectations", []), state=item["state"],
            attempts=item["claims"], last_error=item["last_error"]))
    no_evidence = [r.question_id for r in rows if r.status not in (None, "ANSWERED")]
    missed = [r.question_id for r in rows if any(not e["met"] for e in r.expectations)]
    failed = [r.question_id for r in rows if r.state == "failed"]
    gate = fail_on or definition.fail_on
    gate_failed = bool(gate_failures(gate, no_evidence, missed))
    code = ExitCode.GENERIC if failed else ExitCode.GATE_FAILED if gate_failed else ExitCode.SUCCESS
    return BatchOutcome(batch_id=batch_id, name=batch["name"], all_ran=all(r.audit_id for r in rows), questions=rows,
                        no_evidence=no_evidence, expectations_missed=missed, failed=failed,
                        skipped=[r.question_id for r in rows if r.state == "skipped"],
                        queue=batch_store.queue_stats(conn, batch_id), fail_on=gate, exit_code=code)


def compare(conn: psycopg.Connection, batch_a: str, batch_b: str) -> dict[str, Any]:
    """Per question id: what changed between two runs of the same checklist (like `trail diff`)."""

    a = {i["question_id"]: i for i in batch_store.items(conn, batch_a)}
    b = {i["question_id"]: i for i in batch_store.items(conn, batch_b)}
    out: dict[str, Any] = {"a": batch_a, "b": batch_b, "only_in_a": sorted(a.keys() - b.keys()),
                           "only_in_b": sorted(b.keys() - a.keys()), "questions": {}}
    for qid in [q for q in a if q in b]:
        if not (a[qid]["audit_id"] and b[qid]["audit_id"]):
            out["questions"][qid] = {"note": "not answered in both batches"}
            continue
        out["questions"][qid] = diff_records(audit_trail.get(conn, a[qid]["audit_id"])["record"],
                                             audit_trail.get(conn, b[qid]["audit_id"])["record"])
    return out
