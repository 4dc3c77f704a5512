"""Pure parts of the web view: sign-offs and feedback pairs, the login limiter, passwords, redirects."""

from __future__ import annotations

import pytest

from engine.errors import InputError
from engine.relevance.pairs import Pair
from engine.web import security, signoff
from engine.web.backend import Backend
from engine.web.routes_auth import _safe_next


def _so(amends: str, decision: str, rid: str | None = None) -> dict:
    return {"amends": amends, "signoff": {"decision": decision, "scope": "requirement" if rid else "audit",
                                          "requirement_id": rid}}


RECORD = {"question": "When must a breach be notified?", "actor": "alice", "kind": "answer",
          "requirements": [
              {"requirement_id": "REQ-S001", "cited": True, "verified": True, "chunk_id": "c1",
               "exact_quote": "The controller shall notify the Commissioner within 72 hours.", "document_id": "d",
               "document_version": 1},
              {"requirement_id": "REQ-P001", "cited": True, "verified": True, "chunk_id": "c2",
               "exact_quote": "Staff must report a breach within 4 hours.", "document_id": "d", "document_version": 1},
              {"requirement_id": "REQ-S002", "cited": False, "verified": False, "chunk_id": "c1",
               "exact_quote": "Rejected words.", "document_id": "d", "document_version": 1}],
          "evidence_chunks": {"c1": {"text": "4.1 The controller shall notify the Commissioner within 72 hours."}}}


def test_feedback_pairs_latest_decision_per_requirement() -> None:
    rows = [_so("A", "approve"), _so("A", "reject", "REQ-P001")]
    pairs = signoff.feedback_pairs(rows, {"A": RECORD})
    by_req = {p["source"].rsplit(":", 1)[1]: p for p in pairs}
    assert {r: p["label"] for r, p in by_req.items()} == {"REQ-S001": 1, "REQ-P001": 0}
    assert by_req["REQ-S001"]["passage"].startswith("4.1 The controller")  # the chunk, the unit the model scores
    assert by_req["REQ-P001"]["passage"] == "Staff must report a breach within 4 hours."  # no chunk kept: the quote
    assert all(Pair.model_validate(p).question_id == "A" for p in pairs)


def test_feedback_pairs_whole_audit_rejection_says_nothing() -> None:
    assert signoff.feedback_pairs([_so("A", "reject")], {"A": RECORD}) == []
    assert signoff.feedback_pairs([_so("B", "approve")], {}) == []  # an audit not given is skipped


def test_build_signoff_pins_what_was_approved() -> None:
    row = {"audit_id": "AUD-1", "seq": 3, "hash": "ab" * 32, "record": {**RECORD, "audit_id": "AUD-1"}}
    ask = signoff.SignoffRequest(decision="approve", requirement_id="REQ-S001", comment=" fine ")
    record = signoff.build_signoff(row, signer="bob", role="reviewer", request=ask, amendment=Backend.amendment)
    assert record["kind"] == "signoff" and record["amends"] == "AUD-1" and record["actor"] == "bob"
    assert record["text"] == "fine" and record["reason"] == "approve requirement REQ-S001 (reviewer)"
    info = record["signoff"]
    assert info["approved_hash"] == "ab" * 32 and info["approved_seq"] == 3 and info["scope"] == "requirement"
    assert info["quote_sha256"] == signoff.quote_sha256(RECORD["requirements"][0]["exact_quote"])


@pytest.mark.parametrize("record,signer,request_,error", [
    ({**RECORD}, "alice", signoff.SignoffRequest(decision="approve"), signoff.FourEyesError),
    ({**RECORD, "kind": "note", "amends": "AUD-0"}, "bob", signoff.SignoffRequest(decision="approve"), InputError),
    ({**RECORD}, "bob", signoff.SignoffRequest(decision="reject", comment=" "), InputError),
    ({**RECORD}, "bob", signoff.SignoffRequest(decision="approve", requirement_id="REQ-Z1"), InputError),
], ids=["four-eyes", "not-an-answer", "reject-without-comment", "unknown-req"])
def test_check_signable_refuses(record, signer, request_, error) -> None:
    with pytest.raises(error):
        signoff.check_signable({"audit_id": "AUD-1", "seq": 1, "hash": "0", "record": record}, signer, request_)


def test_login_limiter_counts_before_the_hash_per_pair_account_and_address() -> None:
    limiter = security.LoginLimiter(attempts=2, window_s=60, spread=2)
    assert limiter.begin("vera", "1.2.3.4") == 0 and limiter.begin("Vera", "1.2.3.4") == 0  # names without case
    assert limiter.begin("vera", "1.2.3.4") > 0  # the pair waits ...
    assert limiter.begin("other", "1.2.3.4") == 0  # ... not another user behind the same address
    assert limiter.begin("vera", "5.6.7.8") == 0  # nor the same user elsewhere, until the account's own limit:
    assert limiter.begin("vera", "5.6.7.8") == 0
    assert limiter.begin("vera", "9.9.9.9") > 0  # 2 x 2 failures of vera from anywhere: the account waits
    limiter.succeeded("other", "1.2.3.4")  # a good login gives its reserved attempt back
    assert limiter.begin("third", "1.2.3.4") == 0  # the address has 3 of its 4 ...
    assert limiter.begin("fourth", "1.2.3.4") == 0
    assert limiter.begin("fifth", "1.2.3.4") > 0  # ... spraying from one address: it waits


def test_passwords_are_argon2id_and_checked() -> None:
    stored = security.hash_password("correct horse battery")
    assert stored.startswith("$argon2id$") and "correct" not in stored
    assert security.check_password(stored, "correct horse battery") == (True, None)
    assert security.check_password(stored, "wrong")[0] is False
    assert security.check_password(None, "anything") == (False, None)  # unknown user: same work, no match
    assert security.check_password("not a hash", "x") == (False, None)


@pytest.mark.parametrize("target,expected", [
    ("/audits/AUD-1", "/audits/AUD-1"), ("//evil.example", "/audits"), ("https://evil.example", "/audits"),
    ("/\\evil.example", "/audits"), (None, "/audits"), ("", "/audits")])
def test_login_redirect_stays_on_this_site(target, expected) -> None:
    assert _safe_next(target) == expected
