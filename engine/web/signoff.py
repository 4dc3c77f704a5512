"""Sign-offs: a reviewer approves or rejects an audit, or one of its requirements, as a trail record.

A sign-off is an amendment of kind 'signoff' (`amends` = the audit): who, role, when, the comment,
the decision, what it covers (the whole audit or one REQ-ID) and the hash of the audit record
approved (plus, for one requirement, the SHA-256 of its quote), so what was approved can be proven
later against the chain. It is appended like a note; the audit itself never changes.

Four-eyes: nobody signs off an audit they asked (the audit's `actor`). The same decisions, per
requirement, are labelled pairs for the relevance model (`feedback_pairs`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from engine.errors import EngineError, ExitCode, InputError

DECISIONS = ("approve", "reject")


class FourEyesError(EngineError):
    """The signer asked the question themselves (or the record may not be signed)."""

    exit_code = ExitCode.CONFIG


class SignoffRequest(BaseModel):
    """What a reviewer submits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    decision: Literal["approve", "reject"] = Field(description="approve or reject")
    requirement_id: str | None = Field(default=None, description="One REQ-ID of the audit, or None: the whole audit")
    comment: str = Field(default="", max_length=4000, description="The reviewer's reason or remark")


def quote_sha256(quote: str) -> str:
    return hashlib.sha256(quote.encode("utf-8")).hexdigest()


def check_signable(row: dict[str, Any], signer: str, request: SignoffRequest) -> dict[str, Any] | None:
    """Refuse what may not be signed; return the requirement signed (None: the whole audit).

    FourEyesError when `signer` asked the audit; InputError for a record that is not an answer, an
    unknown REQ-ID, or a rejection without a comment.
    """
    record = row["record"]
    if record.get("kind") != "answer":
        raise InputError(f"{row['audit_id']} is a {record.get('kind')} of {record.get('amends')}, not an answer; "
                         f"sign off {record.get('amends')} instead")
    if record.get("actor") == signer:
        raise FourEyesError(f"four-eyes rule: {signer} asked {row['audit_id']} and may not sign it off; another "
                            "reviewer must")
    if request.decision == "reject" and not request.comment.strip():
        raise InputError("a rejection needs a comment saying what is wrong")
    if request.requirement_id is None:
        return None
    requirement = next((r for r in record.get("requirements", [])
                        if r["requirement_id"] == request.requirement_id), None)
    if requirement is None:
        known = ", ".join(r["requirement_id"] for r in record.get("requirements", []) if r.get("cited")) or "none"
        raise InputError(f"{row['audit_id']} has no requirement '{request.requirement_id}' (cited: {known})")
    return requirement


def build_signoff(row: dict[str, Any], *, signer: str, role: str, request: SignoffRequest,
                  amendment: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """The sign-off record to append (checked with `check_signable` first).

    `amendment(target_record, kind=, reason=, text=, actor=)` makes the trail's amendment record
    (`Backend.amendment`), to which the sign-off's own part is added.
    """
    requirement = check_signable(row, signer, request)
    what = f"requirement {request.requirement_id}" if requirement is not None else "the whole audit"
    record = amendment(row["record"], kind="signoff", reason=f"{request.decision} {what} ({role})",
                       text=request.comment.strip(), actor=signer)
    record["signoff"] = {
        "decision": request.decision, "scope": "requirement" if requirement is not None else "audit",
        "requirement_id": request.requirement_id, "role": role,
        "approved_hash": row["hash"], "approved_seq": row["seq"],
        **({"quote_sha256": quote_sha256(requirement["exact_quote"]), "document_id": requirement["document_id"],
            "document_version": requirement["document_version"]} if requirement is not None else {}),
    }
    return record


def feedback_pairs(signoffs: list[dict[str, Any]], records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """(question, passage, label) pairs from reviewers' decisions, in the format `engine.relevance.pairs` reads.

    Per requirement, the latest decision about it counts: approving or rejecting that requirement, or,
    for the cited requirements, approving the whole audit (label 1). Rejecting a whole audit says
    nothing about which passage was wrong, so it gives no pair. The passage is the cited chunk's text
    as the record holds it (the unit the relevance model scores), else the quote.
    """
    labels: dict[tuple[str, str], int] = {}
    for s in signoffs:
        info, record = s["signoff"] or {}, records.get(s["amends"])
        if record is None:
            continue
        if info.get("scope") == "requirement":
            labels[(s["amends"], info["requirement_id"])] = 1 if info["decision"] == "approve" else 0
        elif info.get("decision") == "approve":
            for r in record.get("requirements", []):
                if r.get("cited") and r.get("verified"):
                    labels[(s["amends"], r["requirement_id"])] = 1
    pairs = []
    for (audit_id, rid), label in labels.items():
        record = records[audit_id]
        req = next((r for r in record.get("requirements", []) if r["requirement_id"] == rid), None)
        if req is None:
            continue
        chunk = (record.get("evidence_chunks") or {}).get(req.get("chunk_id", "")) or {}
        pairs.append({"question": record["question"], "passage": chunk.get("text") or req["exact_quote"],
                      "label": label, "question_id": audit_id, "source": f"signoff:{audit_id}:{rid}"})
    return pairs
