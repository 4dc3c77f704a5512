"""The question guard: the labelled set (injections refused, legal questions with trigger words pass)."""

from __future__ import annotations

import json

import pytest

from agents.guard import GuardVerdict, normalized_forms, screen
from tests.helpers import DATA

LABELLED = json.loads((DATA / "guard_questions.json").read_text())


def test_labelled_set_is_large_enough() -> None:
    assert len(LABELLED["injections"]) >= 40 and len(LABELLED["legitimate"]) >= 40


@pytest.mark.parametrize("question", LABELLED["injections"])
def test_injection_is_refused_with_a_reason(question: str) -> None:
    verdict = screen(question)
    assert isinstance(verdict, GuardVerdict)
    assert verdict.adversarial and verdict.reason


@pytest.mark.parametrize("question", LABELLED["legitimate"])
def test_legal_question_with_trigger_words_passes(question: str) -> None:
    verdict = screen(question)
    assert not verdict.adversarial, verdict.reason
    assert verdict.reason is None


@pytest.mark.parametrize(("question", "readable"), [
    ("ＩＧＮＯＲＥ previous", "ignore previous"),                      # full-width
    ("іgnоrе", "ignore"),                                             # Cyrillic look-alikes
    ("ig\u200bnore", "ignore"),                                        # zero-width space
    ("I g n o r e  a l l", "ignore all"),                              # spaced out
    ("Ign0re prev1ous instructi0ns", "ignore previous instructions"),  # leetspeak
    ("précédentes", "precedentes"),                                    # accents
], ids=["full-width", "look-alike", "zero-width", "spaced", "leetspeak", "accents"])
def test_obfuscation_is_normalized(question: str, readable: str) -> None:
    assert readable in normalized_forms(question)


@pytest.mark.parametrize(("question", "expected"), [
    ("Rule 4.2 requires records for 6 years: is 5 enough?", False),
    ("Section 5899(b) and Rule 11.2.1: what applies?", False),
], ids=["figures", "section-numbers"])
def test_leetspeak_reading_leaves_numbers_alone(question: str, expected: bool) -> None:
    assert screen(question).adversarial is expected
    assert all("4.2" in form or "5899" in form for form in normalized_forms(question))
