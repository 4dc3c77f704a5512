"""An audit's review state from its sign-off decisions (`engine.trail.review`): one function, a table of cases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engine.trail.review import Decision, DuplicateDecision, check_new, review_state

T0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


def _d(seq: int, actor: str, decision: str, rid: str | None = None, comment: str = "") -> Decision:
    return Decision(seq=seq, record_id=f"AUD-s{seq}", audit_id="AUD-1", actor=actor, role="reviewer",
                    decision=decision, requirement_id=rid, comment=comment, at=T0 + timedelta(minutes=seq),
                    approved_hash="ab" * 32)


@pytest.mark.parametrize("decisions,state,approvers", [
    ([], "unreviewed", []),
    ([_d(1, "bob", "approve")], "in_review", ["bob"]),
    ([_d(1, "bob", "approve"), _d(2, "adam", "approve")], "approved", ["bob", "adam"]),
    ([_d(1, "bob", "approve"), _d(2, "bob", "approve")], "in_review", ["bob"]),  # one person counts once
    ([_d(1, "bob", "approve", "REQ-S001")], "in_review", []),  # a REQ approval is not the audit's
    ([_d(1, "bob", "approve"), _d(2, "adam", "approve"), _d(3, "carol", "reject", "REQ-S001", "wrong duty")],
     "changes_requested", []),  # a REQ rejection overrides both approvals
    ([_d(1, "bob", "approve"), _d(2, "carol", "reject", comment="no"), _d(3, "bob", "approve")], "in_review", ["bob"]),
    ([_d(1, "carol", "reject", comment="no"), _d(2, "bob", "approve"), _d(3, "adam", "approve")], "approved",
     ["bob", "adam"]),
], ids=["none", "one-approval", "two-approvals", "same-person-twice", "req-approval-only", "req-rejection-overrides",
        "new-round-after-rejection", "approved-after-rejection"])
def test_review_state(decisions, state, approvers) -> None:
    review = review_state(decisions, required=2)
    assert (review.state, review.approvers) == (state, approvers)


def test_summary_names_approvers_and_rejections() -> None:
    approved = review_state([_d(1, "bob", "approve"), _d(2, "adam", "approve")], required=2)
    assert approved.summary() == "approved by bob and adam (2 of 2)"
    rejected = review_state([_d(1, "bob", "approve"), _d(2, "adam", "approve"),
                             _d(3, "carol", "reject", "REQ-S001", "wrong duty")], required=2)
    assert rejected.summary() == "REQ-S001 rejected by carol: wrong duty"
    assert review_state([_d(1, "bob", "approve")], required=2).summary() == \
        "approvals by bob (1 of 2); 1 more approval(s) needed"
    assert review_state([], required=2).summary() == "not reviewed yet (2 approvals needed)"


def test_stale_after_the_last_decision_lapses_approvals() -> None:
    decisions = [_d(1, "bob", "approve"), _d(2, "adam", "approve")]
    changed = T0 + timedelta(minutes=10)
    stale = review_state(decisions, required=2, stale_since=changed)
    assert stale.state == "stale" and "stale since 2026-11-26 09:10 UTC" in stale.summary()
    assert review_state([], required=2, stale_since=changed).state == "stale"
    # A decision taken after the change (a rejection of the stale answer) is the state again.
    later = review_state([*decisions, _d(20, "carol", "reject", comment="outdated")], required=2, stale_since=changed)
    assert later.state == "changes_requested"


@pytest.mark.parametrize("decisions,new,refused", [
    ([_d(1, "bob", "approve")], ("bob", "approve", None), True),  # approving twice / a double submit
    ([_d(1, "bob", "approve")], ("bob", "approve", "REQ-S001"), False),  # another target
    ([_d(1, "bob", "approve")], ("adam", "approve", None), False),
    ([_d(1, "bob", "approve"), _d(2, "carol", "reject", comment="x")], ("bob", "approve", None), False),  # new round
    ([_d(1, "carol", "reject", "REQ-S001", "x")], ("carol", "reject", "REQ-S001"), True),
    ([_d(1, "bob", "reject", comment="x")], ("bob", "approve", None), False),  # changing one's mind
], ids=["repeat", "other-target", "other-person", "after-a-rejection", "repeat-rejection", "mind-changed"])
def test_a_repeated_decision_is_refused(decisions, new, refused) -> None:
    actor, decision, rid = new
    if refused:
        with pytest.raises(DuplicateDecision, match="already recorded"):
            check_new(decisions, actor=actor, decision=decision, requirement_id=rid)
    else:
        check_new(decisions, actor=actor, decision=decision, requirement_id=rid)
