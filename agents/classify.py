"""Classify: one rule or definition (simple) versus several interacting concepts (multi_hop)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from agents.runtime import llm_or_rules
from agents.state import ResearchState
from engine.terms import tokenize

if TYPE_CHECKING:
    from agents.deps import Deps

MULTI_HOP_CUES = re.compile(
    r"\b(and|or|as well as|in addition|including|both|compare|compared|versus|vs\.?|differ|difference|"
    r"interact|relationship|unless|except|exception|provided that|where|when|if|whether|while|"
    r"conflict|consequences?|implications?|steps|process|procedures?)\b", re.IGNORECASE)
SIMPLE_CUES = re.compile(r"^\s*(what is|what does .{1,40} mean|define|definition of|who is)\b", re.IGNORECASE)


def concepts(question: str) -> list[str]:
    """Distinct content terms of the question (a proxy for the concepts it involves)."""
    return list(dict.fromkeys(tokenize(question, query=True)))


def classify_question(question: str) -> str:
    """'simple' only when the question is short, single-concept and has no connective; else 'multi_hop'."""
    terms = concepts(question)
    cues = MULTI_HOP_CUES.findall(question)
    if SIMPLE_CUES.search(question) and len(terms) <= 6 and not cues:
        return "simple"
    if len(terms) <= 5 and not cues:
        return "simple"
    return "multi_hop"


class ClassifyReply(BaseModel):
    """LLM reply schema for skills/classify.md."""

    model_config = ConfigDict(extra="forbid")

    question_type: Literal["simple", "multi_hop"]
    reason: str = ""


def classify_node(state: ResearchState, deps: Deps) -> dict[str, Any]:
    stem = state["stem"]
    kind, fallbacks = llm_or_rules(deps, "classify", "classify", ClassifyReply,
                                   rules=lambda: classify_question(stem), accept=lambda r: r.question_type,
                                   question=stem)
    llm = deps.llm
    if llm is not None and kind == "simple":  # a simple question gets the smaller call budget
        llm.budget = min(llm.budget, deps.settings.llm_budget_simple)
    return {"question_type": kind, "fallbacks": fallbacks}
