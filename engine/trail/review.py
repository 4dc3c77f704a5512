"""An audit's review: its sign-off decisions read back from the trail, and the one state they give.

A decision is a trail record of kind 'signoff' (`engine.web.signoff` builds it): a reviewer approves
or rejects the whole audit or one of its REQ-IDs. `review_state` is the only place that turns the
decisions into a state, so the web view (list, badge, filter, audit page, queue), the JSON API,
`evidence trail show`, the PDF and HTML reports and the OSCAL export all say the same thing:

* `unreviewed`: no decision yet;
* `in_review`: approvals since the last rejection, fewer than required;
* `approved`: `required` distinct reviewers approved the whole audit since the last rejection;
* `changes_requested`: the last decision that changed anything is a rejection, of the audit or of
  one REQ-ID (it overrides earlier approvals until someone decides again);
* `stale`: a quote the audit cites changed or vanished in its document after the last decision
  (approvals lapse with the evidence; `trail rerun` answers the question again for a new review).

A reviewer's second identical decision in a round (a double submit, approving twice) is refused:
`record_decision` checks under the trail's append lock, so two concurrent submits cannot both land.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from engine import db
from engine.errors import InputError
from engine.trail import store as audit_trail
from engine.trail.queries import stale_audits
from engine.trail.store import Appended

STATES = ("unreviewed", "in_review", "approved", "changes_requested", "stale")
LABELS = {"unreviewed": "unreviewed", "in_review": "in review", "approved": "approved",
          "changes_requested": "changes requested", "stale": "stale"}


class DuplicateDecision(InputError):
    """The reviewer already made this decision in this round (a repeat or a double submit)."""


@dataclass(frozen=True)
class Decision:
    """One sign-off record: who decided what about which part of an audit, when."""

    seq: int
    record_id: str
    audit_id: str
    actor: str
    role: str
    decision: str  # approve | reject
    requirement_id: str | None  # None: the whole audit
    comment: str
    at: datetime
    approved_hash: str

    @property
    def target(self) -> str:
        return self.requirement_id or "the whole audit"

    def to_dict(self) -> dict[str, Any]:
        return {"record_id": self.record_id, "seq": self.seq, "actor": self.actor, "role": self.role,
                "decision": self.decision, "requirement_id": self.requirement_id, "comment": self.comment,
                "at": self.at.isoformat(), "approved_hash": self.approved_hash}


@dataclass(frozen=True)
class Review:
    """The state of one audit's review and what it rests on."""

    state: str
    required: int
    approvals: list[Decision] = field(default_factory=list)  # whole-audit approvals of the current round
    rejections: list[Decision] = field(default_factory=list)  # rejections that hold (no decision after them)
    decisions: list[Decision] = field(default_factory=list)  # every decision, oldest first
    stale_since: datetime | None = None

    @property
    def label(self) -> str:
        return LABELS[self.state]

    @property
    def approvers(self) -> list[str]:
        return [d.actor for d in self.approvals]

    def summary(self) -> str:
        """One line a reviewer reads first: 'approved by alice and bob (2 of 2)', 'REQ-S001 rejected by carol', ..."""
        parts: list[str] = []
        if self.approvals:
            parts.append(f"{'approved' if self.state == 'approved' else 'approvals'} by {_names(self.approvers)} "
                         f"({len(self.approvals)} of {self.required})")
        for r in self.rejections:
            parts.append(f"{r.target} rejected by {r.actor}" + (f": {r.comment}" if r.comment else ""))
        if self.state == "stale" and self.stale_since is not None:
            parts.append(f"stale since {self.stale_since:%Y-%m-%d %H:%M} UTC: a cited quote changed in its document"
                         + (" after the last decision" if self.decisions else ""))
        if not parts:
            return "not reviewed yet" + (f" ({self.required} approvals needed)" if self.required else "")
        if self.state == "in_review":
            parts.append(f"{self.required - len(self.approvals)} more approval(s) needed")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "label": self.label, "summary": self.summary(), "required": self.required,
                "approvers": self.approvers, "rejections": [r.to_dict() for r in self.rejections],
                "stale_since": self.stale_since.isoformat() if self.stale_since else None,
                "decisions": [d.to_dict() for d in self.decisions]}


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def review_state(decisions: list[Decision], *, required: int, stale_since: datetime | None = None) -> Review:
    """The review of one audit from its decisions (oldest first) and when its evidence went stale (None: current)."""
    decisions = sorted(decisions, key=lambda d: d.seq)
    last_reject = max((i for i, d in enumerate(decisions) if d.decision == "reject"), default=-1)
    after = decisions[last_reject + 1:]
    approvals: dict[str, Decision] = {}
    for d in after:
        if d.decision == "approve" and d.requirement_id is None:
            approvals.setdefault(d.actor, d)
    last_approve = max((i for i, d in enumerate(decisions) if d.decision == "approve"), default=-1)
    rejections = [] if after else [d for d in decisions[last_approve + 1:] if d.decision == "reject"]
    if stale_since is not None and (not decisions or stale_since >= decisions[-1].at):
        state = "stale"
    elif not decisions:
        state = "unreviewed"
    elif not after:
        state = "changes_requested"
    else:
        state = "approved" if len(approvals) >= required else "in_review"
    return Review(state=state, required=required, approvals=list(approvals.values()), rejections=rejections,
                  decisions=decisions, stale_since=stale_since)


def check_new(decisions: list[Decision], *, actor: str, decision: str, requirement_id: str | None) -> None:
    """DuplicateDecision when `actor` made the same decision about the same target and nobody decided
    the other way since (a second approval of the same round, a double submit)."""
    mine = [d for d in decisions if d.actor == actor and d.requirement_id == requirement_id
            and d.decision == decision]
    if not mine:
        return
    last = mine[-1]
    if any(d.seq > last.seq and d.decision != decision for d in decisions):
        return
    target = requirement_id or "this audit"
    raise DuplicateDecision(f"{actor} already recorded '{decision}' for {target} ({last.record_id}, "
                            f"{last.at:%Y-%m-%d %H:%M} UTC); a decision counts once per reviewer and round")


def decisions(conn: psycopg.Connection, audit_ids: list[str] | None = None) -> dict[str, list[Decision]]:
    """The decisions on each audit (of the given ones, or of all), oldest first."""
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            "SELECT seq, audit_id, amends, actor, created_at, record->'signoff' AS signoff, "
            "coalesce(record->>'text', '') AS comment FROM audits WHERE kind = 'signoff' "
            "AND (%(ids)s::text[] IS NULL OR amends = ANY(%(ids)s)) ORDER BY seq", {"ids": audit_ids}).fetchall()
    out: dict[str, list[Decision]] = {}
    for r in rows:
        s = r["signoff"] or {}
        out.setdefault(r["amends"], []).append(Decision(
            seq=r["seq"], record_id=r["audit_id"], audit_id=r["amends"], actor=r["actor"], role=s.get("role", ""),
            decision=s.get("decision", ""), requirement_id=s.get("requirement_id") if s.get("scope") == "requirement"
            else None, comment=r["comment"], at=r["created_at"], approved_hash=s.get("approved_hash", "")))
    return out


def stale_since(conn: psycopg.Connection) -> dict[str, datetime]:
    """For each stale audit (`engine.trail.queries.stale_audits`), when its evidence changed."""
    now = datetime.now(UTC)  # a removed document: the evidence is gone as of now
    return {a["audit_id"]: a["since"] or now for a in stale_audits(conn)}


def reviews(conn: psycopg.Connection, audit_ids: list[str] | None = None, *, required: int) -> dict[str, Review]:
    """The review of each audit that has a decision or stale evidence (others are unreviewed)."""
    by_audit = decisions(conn, audit_ids)
    stale = stale_since(conn)
    ids = set(by_audit) | set(stale) if audit_ids is None else set(audit_ids)
    return {a: review_state(by_audit.get(a, []), required=required, stale_since=stale.get(a)) for a in ids}


def review_of(conn: psycopg.Connection, audit_id: str, *, required: int) -> Review:
    return reviews(conn, [audit_id], required=required)[audit_id]


def record_decision(conn: psycopg.Connection, record: dict[str, Any], *, required: int) -> Appended:
    """Append a sign-off record unless it repeats its signer's decision or approves stale evidence; the check
    and the append hold the trail's append lock together."""
    info = record["signoff"]
    changed = stale_since(conn).get(record["amends"])  # read before the lock: it scans the citations
    with conn.transaction():
        db.xact_lock(conn, db.Lock.TRAIL_APPEND)
        review = review_state(decisions(conn, [record["amends"]]).get(record["amends"], []), required=required,
                              stale_since=changed)
        requirement_id = info["requirement_id"] if info["scope"] == "requirement" else None
        check_new(review.decisions, actor=record["actor"], decision=info["decision"], requirement_id=requirement_id)
        if review.state == "stale" and info["decision"] == "approve":
            raise InputError(f"{record['amends']} cites a quote that changed in its document since "
                             f"{review.stale_since:%Y-%m-%d %H:%M} UTC; approvals lapse with the evidence: answer "
                             f"it again ('evidence trail rerun {record['amends']}') and review the new audit")
        return audit_trail.append(conn, record)
