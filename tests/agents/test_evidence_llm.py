"""The evidence stage's llm backend against a scripted chat model: sound replies are used; invented or
altered quotes, unknown IDs and unsupported sentences never get through; failures fall back to rules,
recorded. No network, no API key."""

from __future__ import annotations

import pytest

from agents.compose import ComposedAnswer, Statement, compose_rules
from agents.deps import Deps
from agents.evidence import run_evidence
from agents.extract import Modality, ProposedQuote, Requirement, requirements_from_proposals
from agents.quotes import locate
from agents.research import run_research
from agents.review import review_answer
from agents.routing import after_review
from agents.verify import JudgedRequirement, LLMVerdict, apply_llm_verdicts
from engine.config import EvidenceSettings
from tests.fakes import scripted, tool_reply

QUESTION = "How long must transaction records be kept?"
SIX = "A firm must retain transaction records for at least six years from the date of the transaction."
MEDIUM = ("Records must be kept in a durable medium that allows them to be retrieved and reproduced in their "
          "original form.")
FIVE = "Staff must retain transaction records for at least five years after the end of the client relationship."
PASSWORDS = "Passwords must be at least twelve characters long and must not be reused across systems."
EVIDENCE = [
    {"chunk_id": "chk_reg", "text": f"{SIX}\n{MEDIUM}", "source_type": "regulation", "document_id": "doc_reg",
     "document_version": 1, "document_title": "Retention Regulation", "section_path": "4 > 4.2 Retention periods"},
    {"chunk_id": "chk_pol", "text": f"{FIVE}  {PASSWORDS}", "source_type": "policy", "document_id": "doc_pol",
     "document_version": 2, "document_title": "Records Policy", "section_path": "3.1 Retention"},
]
SOUND_EXTRACT = {"quotes": [{"chunk_id": "chk_reg", "quote": SIX}, {"chunk_id": "chk_pol", "quote": FIVE}]}
SOUND_VERIFY = {"verdicts": [
    {"requirement_id": "REQ-S001", "verified": True, "rejection_reason": None, "rationale": "states the period"},
    {"requirement_id": "REQ-P001", "verified": True, "rejection_reason": None, "rationale": "states the period"}]}
SOUND_STATEMENT = {"text": f'The sources differ: Retention Regulation (section 4.2) states "{SIX}" [REQ-S001], while '
                           f'Records Policy states "{FIVE}" [REQ-P001].', "requirement_ids": ["REQ-S001", "REQ-P001"]}
SOUND_COMPOSE = {"statements": [SOUND_STATEMENT]}
NO_FINDINGS = {"findings": []}


def _deps(corpus_conn, corpus_settings, embedder, *replies, budget: int | None = None) -> Deps:
    settings = corpus_settings.model_copy(update={"llm_backoff_base_s": 0.0, **(
        {"llm_budget_evidence": budget} if budget is not None else {})})
    model = scripted(*(tool_reply(r) if isinstance(r, dict) else r for r in replies))
    return Deps.build(corpus_conn, settings, embedder=embedder, backend="llm", chat_model=model)


@pytest.fixture()
def rules_result(corpus_conn, corpus_settings, embedder):
    return run_evidence(QUESTION, EVIDENCE, Deps.build(corpus_conn, corpus_settings, embedder=embedder,
                                                       backend="rules"))


def _assert_grounded(result) -> None:
    """Every statement cites verified IDs only; every verified quote is the chunk text at its offsets."""
    verified = {r["requirement_id"]: r for r in result.verified_requirements}
    for statement in result.statements:
        assert statement["requirement_ids"] and set(statement["requirement_ids"]) <= verified.keys()
    for req in result.verified_requirements:
        text = result.evidence_chunks[req["chunk_id"]]["text"]
        assert " ".join(text[req["char_start"]:req["char_end"]].split()) == " ".join(req["exact_quote"].split())


# --- happy path --------------------------------------------------------------------------------------

def test_sound_replies_are_used(corpus_conn, corpus_settings, embedder) -> None:
    deps = _deps(corpus_conn, corpus_settings, embedder, SOUND_EXTRACT, SOUND_VERIFY, SOUND_COMPOSE, NO_FINDINGS)
    result = run_evidence(QUESTION, EVIDENCE, deps)
    assert result.backend == "llm" and result.fallbacks == [] and result.llm_calls == 4
    assert [s["text"] for s in result.statements] == [SOUND_STATEMENT["text"]]
    assert [r["requirement_id"] for r in result.verified_requirements] == ["REQ-S001", "REQ-P001"]
    assert {r["decided_by"] for r in result.verified_requirements} == {"llm"}
    assert result.review == {"passed": True, "reasons": [], "revised": False, "composer": "llm"}
    assert result.conflicts and result.conflicts[0]["requirement_ids"] == ["REQ-S001", "REQ-P001"]
    assert deps.llm.skill_hashes.keys() == {"extract", "verify", "compose", "review"}
    _assert_grounded(result)


def test_code_assigns_offsets_and_ids_not_the_model(corpus_conn, corpus_settings, embedder) -> None:
    spaced = {"quotes": [{"chunk_id": "chk_pol", "quote": FIVE.replace(" ", "\n  ")},
                         {"chunk_id": "chk_reg", "quote": SIX}]}
    deps = _deps(corpus_conn, corpus_settings, embedder, spaced, SOUND_VERIFY, SOUND_COMPOSE, NO_FINDINGS)
    result = run_evidence(QUESTION, EVIDENCE, deps)
    policy, regulation = result.extracted_requirements
    assert (policy["requirement_id"], regulation["requirement_id"]) == ("REQ-P001", "REQ-S001")
    assert EVIDENCE[1]["text"][policy["char_start"]:policy["char_end"]] == FIVE
    assert policy["exact_quote"] == FIVE  # the stored text, not the model's spacing
    assert policy["modality"] == "obligation"


def test_revision_with_the_reasons_is_used_when_it_passes(corpus_conn, corpus_settings, embedder) -> None:
    unsupported = {"statements": [{"text": f'"{SIX}" [REQ-S001]. Firms must also encrypt these records nightly.',
                                   "requirement_ids": ["REQ-S001"]}]}
    deps = _deps(corpus_conn, corpus_settings, embedder, SOUND_EXTRACT, SOUND_VERIFY, unsupported, SOUND_COMPOSE,
                 NO_FINDINGS)
    result = run_evidence(QUESTION, EVIDENCE, deps)
    assert result.review["passed"] and result.review["revised"] and result.review["composer"] == "llm"
    assert "encrypt" in result.review["reasons"][0]
    assert [s["text"] for s in result.statements] == [SOUND_STATEMENT["text"]]
    assert result.fallbacks == []


# --- hostile replies: none of it gets through ----------------------------------------------------------

INVENTED = "A firm must retain transaction records for ten years after the account is closed."
ONE_CHAR = SIX.replace("six", "sex")


@pytest.mark.parametrize("proposal", [
    {"chunk_id": "chk_reg", "quote": INVENTED},
    {"chunk_id": "chk_reg", "quote": ONE_CHAR},
    {"chunk_id": "chk_reg", "quote": SIX[3:]},  # "irm must retain ...": starts inside a word
    {"chunk_id": "chk_nowhere", "quote": SIX},
    {"chunk_id": "chk_pol", "quote": SIX},  # real text, wrong chunk
], ids=["invented-quote", "one-character-changed", "word-fragment", "unknown-chunk", "wrong-chunk"])
def test_quotes_not_verbatim_are_rejected_whatever_the_model_says(proposal, corpus_conn, corpus_settings,
                                                                  embedder) -> None:
    extract = {"quotes": [proposal, {"chunk_id": "chk_pol", "quote": FIVE}]}
    on_regulation = proposal["chunk_id"] == "chk_reg"  # an unknown chunk has no source type: REQ-P
    bad_id, good_id = ("REQ-S001", "REQ-P001") if on_regulation else ("REQ-P001", "REQ-P002")
    verify = {"verdicts": [{"requirement_id": bad_id, "verified": True, "rationale": "trust me"},
                           {"requirement_id": good_id, "verified": True, "rationale": "states the period"}]}
    compose = {"statements": [{"text": f'"{proposal["quote"]}" [{bad_id}]', "requirement_ids": [bad_id]}]}
    deps = _deps(corpus_conn, corpus_settings, embedder, extract, verify, compose, compose)
    result = run_evidence(QUESTION, EVIDENCE, deps)
    rejected = {r["requirement_id"]: r for r in result.rejected_requirements}
    assert rejected[bad_id]["rejection_reason"] == "not_verbatim" and rejected[bad_id]["decided_by"] == "code"
    assert [r["requirement_id"] for r in result.verified_requirements] == [good_id]
    assert any(f.startswith("verify: ignored llm verdicts") and bad_id in f for f in result.fallbacks)
    assert "compose: the revised llm answer failed review; rules composition used" in result.fallbacks
    assert all(bad_id not in s["requirement_ids"] for s in result.statements)
    assert proposal["quote"] not in result.final_answer
    _assert_grounded(result)


def test_verdicts_on_unknown_ids_are_ignored(corpus_conn, corpus_settings, embedder) -> None:
    verify = {"verdicts": [*SOUND_VERIFY["verdicts"][:1],
                           {"requirement_id": "REQ-S099", "verified": True, "rationale": "invented"}]}
    deps = _deps(corpus_conn, corpus_settings, embedder, SOUND_EXTRACT, verify, SOUND_COMPOSE, NO_FINDINGS)
    result = run_evidence(QUESTION, EVIDENCE, deps)
    assert "REQ-S099" not in {r["requirement_id"] for r in result.extracted_requirements}
    assert any("REQ-S099" in f for f in result.fallbacks)
    assert any("no llm verdict for REQ-P001; rules verdict kept" in f for f in result.fallbacks)
    assert {r["requirement_id"]: r["decided_by"] for r in result.verified_requirements}["REQ-S001"] == "llm"


@pytest.mark.parametrize("statement", [
    {"text": f'Retention Regulation states "{SIX}" [REQ-S099].', "requirement_ids": ["REQ-S099"]},
    {"text": f'Retention Regulation states "{MEDIUM}" [REQ-S002].', "requirement_ids": ["REQ-S002"]},
    {"text": f'Retention Regulation states "{SIX}".', "requirement_ids": []},
    {"text": f'Retention Regulation states "{SIX}" [REQ-S001]. Firms must also encrypt backups offsite nightly.',
     "requirement_ids": ["REQ-S001"]},
    {"text": "A firm must retain transaction records for at least ten years [REQ-S001].",
     "requirement_ids": ["REQ-S001"]},
    {"text": "A firm may retain transaction records for at least six years [REQ-S001].",
     "requirement_ids": ["REQ-S001"]},
    {"text": '"A firm must keep its records for six years" [REQ-S001]', "requirement_ids": ["REQ-S001"]},
], ids=["unknown-id", "rejected-id", "no-id", "unsupported-sentence", "changed-figure", "changed-force",
        "paraphrase-in-quotation-marks"])
def test_ungrounded_composition_never_reaches_the_answer(statement, corpus_conn, corpus_settings, embedder) -> None:
    extract = {"quotes": [{"chunk_id": "chk_reg", "quote": SIX}, {"chunk_id": "chk_reg", "quote": MEDIUM}]}
    verify = {"verdicts": [
        {"requirement_id": "REQ-S001", "verified": True, "rationale": "states the period"},
        {"requirement_id": "REQ-S002", "verified": False, "rejection_reason": "requires_inference",
         "rationale": "no period"}]}
    bad = {"statements": [statement]}
    deps = _deps(corpus_conn, corpus_settings, embedder, extract, verify, bad, bad)
    result = run_evidence(QUESTION, EVIDENCE, deps)
    assert "compose: the revised llm answer failed review; rules composition used" in result.fallbacks
    assert result.review["passed"] and result.review["revised"] and result.review["composer"] == "rules"
    assert len(result.review["reasons"]) >= 2  # the first answer's and the revision's
    assert statement["text"] not in result.final_answer
    assert [s["requirement_ids"] for s in result.statements] == [["REQ-S001"], ["REQ-S001"]]  # direct, then quote
    assert result.statements[0]["kind"] == "direct"
    _assert_grounded(result)


def test_llm_review_can_fail_an_answer_but_not_pass_one(corpus_conn, corpus_settings, embedder) -> None:
    finding = {"findings": [{"statement": 1, "problem": "adds a conclusion"}, {"statement": 9, "problem": "none"}]}
    deps = _deps(corpus_conn, corpus_settings, embedder, SOUND_EXTRACT, SOUND_VERIFY, SOUND_COMPOSE, finding,
                 SOUND_COMPOSE, NO_FINDINGS)
    result = run_evidence(QUESTION, EVIDENCE, deps)
    assert result.review["reasons"] == ["statement 1 says more than its quotes (llm review: adds a conclusion)"]
    assert result.review["passed"] and result.review["revised"]


# --- failures fall back to rules, recorded ---------------------------------------------------------------

@pytest.mark.parametrize("failure", [
    ["{not json"] * 3,
    [tool_reply({"requirements": ["A firm must"]})] * 3,
    [TimeoutError("endpoint timed out")] * 3,
], ids=["broken-json", "wrong-schema", "exceptions"])
def test_failing_extract_falls_back_to_rules(failure, corpus_conn, corpus_settings, embedder, rules_result) -> None:
    verify = {"verdicts": [{"requirement_id": r["requirement_id"], "verified": r["verified"],
                            "rejection_reason": r["rejection_reason"], "rationale": "as rules"}
                           for r in rules_result.extracted_requirements]}
    rules_statements = {"statements": rules_result.statements}
    deps = _deps(corpus_conn, corpus_settings, embedder, *failure, verify, rules_statements, NO_FINDINGS)
    result = run_evidence(QUESTION, EVIDENCE, deps)
    assert result.fallbacks[0].startswith("extract: skill 'extract':")
    assert [r["exact_quote"] for r in result.extracted_requirements] == \
           [r["exact_quote"] for r in rules_result.extracted_requirements]
    assert result.statements == rules_result.statements and result.review["passed"]


def test_every_step_failing_gives_the_rules_result(corpus_conn, corpus_settings, embedder, rules_result) -> None:
    deps = _deps(corpus_conn, corpus_settings, embedder, *(["{not json"] * 20))
    result = run_evidence(QUESTION, EVIDENCE, deps)
    assert [f.split(":")[0] for f in result.fallbacks] == ["extract", "verify", "compose"]
    # three unusable replies in a row open the circuit: verify and compose do not call at all
    assert result.llm_calls == corpus_settings.llm_breaker_failures == 3
    assert all("LLM unavailable: circuit open after 3 consecutive failed requests" in f for f in result.fallbacks[1:])
    same = ("status", "statements", "verified_requirements", "conflicts", "final_answer", "review")
    assert {k: getattr(result, k) for k in same} == {k: getattr(rules_result, k) for k in same}


@pytest.mark.parametrize(("budget", "expected"), [
    (4, []),
    (1, ["verify", "compose"]),
], ids=["budget-enough", "budget-spent"])
def test_evidence_budget(budget, expected, corpus_conn, corpus_settings, embedder) -> None:
    deps = _deps(corpus_conn, corpus_settings, embedder, SOUND_EXTRACT, SOUND_VERIFY, SOUND_COMPOSE, NO_FINDINGS,
                 budget=budget)
    result = run_evidence(QUESTION, EVIDENCE, deps)
    assert [f.split(":")[0] for f in result.fallbacks] == expected
    assert all("budget" in f for f in result.fallbacks)
    assert result.llm_calls == min(budget, 4)
    _assert_grounded(result)


# --- the graph: four nodes after research ------------------------------------------------------------------

RESEARCH_REPLIES = [{"adversarial": False}, {"question_type": "simple"},
                    {"primary": "transaction records retention period",
                     "alternatives": ["how many years keep transaction records", "retain records of transactions"]}]


SHRED = "Paper records containing personal data must be shredded before disposal."
DISPOSAL = "How must paper records containing personal data be disposed of?"


def test_graph_runs_extract_verify_compose_review_with_the_llm(corpus_conn, corpus_settings, embedder) -> None:
    # A question with one answering rule and no conflict, so that each of the four nodes calls once.
    probe = run_research(DISPOSAL, _deps(corpus_conn, corpus_settings, embedder, *RESEARCH_REPLIES))
    chunk = next(e for e in probe.evidence if SHRED in e["text"])
    rid = "REQ-S001" if chunk["source_type"] in ("statute", "regulation") else "REQ-P001"
    extract = {"quotes": [{"chunk_id": chunk["chunk_id"], "quote": SHRED}]}
    verify = {"verdicts": [{"requirement_id": rid, "verified": True, "rationale": "states how"}]}
    compose = {"statements": [{"text": f'"{SHRED}" [{rid}]', "requirement_ids": [rid]}]}
    deps = _deps(corpus_conn, corpus_settings, embedder, *RESEARCH_REPLIES, extract, verify, compose, NO_FINDINGS)
    result = run_research(DISPOSAL, deps)
    nodes = [m["node"] for m in result.metrics]
    assert nodes[-4:] == ["extract", "verify", "compose", "review"]
    assert {m["node"]: m["llm_calls"] for m in result.metrics if m["node"] in nodes[-4:]} == \
           {"extract": 1, "verify": 1, "compose": 1, "review": 1}
    answer = result.evidence_result
    assert answer["fallbacks"] == [] and result.fallbacks == []
    assert [{k: st[k] for k in ("text", "requirement_ids")} for st in answer["statements"]] == compose["statements"]
    assert answer["review"]["passed"]


# --- the pieces alone ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("review", "route"), [
    ({"passed": True, "revised": False}, "done"),
    ({"passed": False, "revised": True}, "done"),
    ({"passed": False, "revised": False}, "revise"),
], ids=["passed", "failed-after-revision", "failed-first-time"])
def test_after_review(review: dict, route: str) -> None:
    assert after_review({"review": review}) == route


@pytest.mark.parametrize(("chunk", "quote", "found"), [
    ("A firm must act.\nIt must   keep records.", "It must keep records.", "It must   keep records."),
    ("A firm must act.\nIt must keep records.", " A firm\nmust act. ", "A firm must act."),
    ("A firm must act.", "A firm must act!", None),
    ("A firm must act.", "firm must ac", None),
    ("A firm must act.", "   ", None),
], ids=["spacing-normalized", "line-break-in-quote", "punctuation-changed", "word-fragment", "empty"])
def test_locate(chunk: str, quote: str, found: str | None) -> None:
    span = locate(chunk, quote)
    assert (chunk[span[0]:span[1]] if span else None) == found


def test_proposals_get_code_ids_and_long_quotes_are_cut() -> None:
    long_sentence = "A firm must " + " ".join(f"word{i}" for i in range(160)) + " and keep records."
    chunks = [{**EVIDENCE[0], "text": f"{long_sentence} {SIX}"}, EVIDENCE[1]]
    reqs = requirements_from_proposals([ProposedQuote(chunk_id="chk_pol", quote=FIVE),
                                        ProposedQuote(chunk_id="chk_reg", quote=long_sentence),
                                        ProposedQuote(chunk_id="chk_reg", quote=SIX),
                                        ProposedQuote(chunk_id="chk_reg", quote=SIX)], chunks)
    assert [r.requirement_id for r in reqs] == ["REQ-P001", "REQ-S001", "REQ-S002"]  # the duplicate dropped
    assert len(reqs[1].exact_quote.split()) == EvidenceSettings().max_quote_words
    assert reqs[1].extraction_confidence == "medium"


def _judged(rid: str, verified: bool, decided_by: str = "rules") -> JudgedRequirement:
    req = Requirement(requirement_id=rid, source_type="regulation", document_id="d", document_version=1,
                      document_title="T", section_path="", chunk_id="c", char_start=0, char_end=len(SIX),
                      exact_quote=SIX, modality=Modality.OBLIGATION, extraction_confidence="high",
                      confidence_reason="", refers_elsewhere=False)
    return JudgedRequirement(requirement=req, verified=verified, rejection_reason=None if verified else
                             "not_verbatim" if decided_by == "code" else "does_not_address_question",
                             rationale="", score=0.5, decided_by=decided_by)


@pytest.mark.parametrize(("verdicts", "verified", "note"), [
    ([LLMVerdict(requirement_id="REQ-S003", verified=True)], {"REQ-S003"}, None),
    ([LLMVerdict(requirement_id="REQ-S003", verified=False, rejection_reason="requires_inference")], set(), None),
    ([LLMVerdict(requirement_id="REQ-S001", verified=True)], None, "accepting REQ-S001: code rejected them"),
    ([LLMVerdict(requirement_id="REQ-S002", verified=True)], None, "accepting REQ-S002: code rejected them"),
    ([LLMVerdict(requirement_id="REQ-S003", verified=True, rejection_reason="requires_inference")], None,
     "contradictory REQ-S003"),
    ([LLMVerdict(requirement_id="REQ-S009", verified=True)], None, "contradictory REQ-S009"),
], ids=["agrees-with-code", "rejects-what-code-accepts", "accepts-what-the-gate-rejected",
        "accepts-what-code-found-not-verbatim", "contradictory", "unknown-id"])
def test_apply_llm_verdicts_may_reject_never_accept(verdicts, verified, note) -> None:
    notes: list[str] = []
    judged = apply_llm_verdicts([_judged("REQ-S001", False), _judged("REQ-S002", False, "code"),
                                 _judged("REQ-S003", True)], verdicts, notes)
    assert (None if judged is None else {j.requirement.requirement_id for j in judged if j.verified}) == verified
    assert (note is None and not notes) or any(note in n for n in notes)


def test_rules_composition_with_conflict_passes_the_stricter_review() -> None:
    verified = [_judged("REQ-S001", True).requirement,
                _judged("REQ-P001", True).requirement.model_copy(update={"exact_quote": FIVE, "source_type": "policy",
                                                                         "document_id": "doc_pol"})]
    answer = compose_rules(verified)
    assert answer.conflicts and review_answer(answer, verified).passed
    paraphrase = ComposedAnswer(statements=[Statement(
        text="A firm must retain transaction records for at least six years [REQ-S001].",
        requirement_ids=["REQ-S001"])], composer="llm")
    assert review_answer(paraphrase, verified[:1]).passed
    hidden = review_answer(paraphrase, verified)  # the policy that says five years is left out
    assert not hidden.passed and "although they conflict (six years vs five years)" in hidden.reasons[0]
