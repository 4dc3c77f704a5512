"""Provisions a question names and asks about whole (agents.provisions)."""

from __future__ import annotations

import pytest

from agents.provisions import asked_provisions, asks_all, named_provisions
from engine.terms import key_terms


@pytest.mark.parametrize(("question", "numbers"), [
    # an EU act's article, a paragraph of it, and the act named after it
    ("What does Article 11 require?", ["11"]),
    ("What does Article 11(6) of DORA require?", ["11(6)"]),
    # a US rule's section, a policy's section, a rulebook's rule
    ("What does § 164.312 say?", ["164.312"]),
    ("Summarise section 6.1", ["6.1"]),
    ("What are the requirements of Rule 3.2?", ["3.2"]),
    # a control catalogue's control, its enhancement, another catalogue's id
    ("What is required by AC-2?", ["AC-2"]),
    ("What does AC-2(1) say?", ["AC-2(1)"]),
    ("What does ISM-1784 require?", ["ISM-1784"]),
    # counter-examples: the question asks something of the provision, or names none
    ("Under Article 11, how often must plans be tested?", []),
    ("How does Article 11 apply to small firms?", []),
    ("Does AC-2 require automated account management?", []),
    ("What must we do when a data breach is discovered?", []),
], ids=["article", "paragraph-and-act", "us-section", "policy-section", "rule", "control", "enhancement", "ism-id",
        "asks-a-time", "asks-scope", "asks-a-yes-no", "names-none"])
def test_a_question_asks_about_the_provisions_it_names_whole_only_when_it_asks_nothing_else(
        question: str, numbers: list[str]) -> None:
    names = frozenset(key_terms("Regulation (EU) 2022/2554 (DORA)"))
    assert asked_provisions(question, names) == numbers
    assert asks_all(question) is (bool(numbers) or question.startswith("What must we do"))


def test_a_named_provision_keeps_its_subdivision_and_a_control_its_enhancement() -> None:
    assert named_provisions("See Article 11(6) and AC-2 (1), then section 4.2") == [
        ("Article 11(6)", "11(6)"), ("section 4.2", "4.2"), ("AC-2 (1)", "AC-2(1)")]
