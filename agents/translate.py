"""Translate: a question asked in another language than the corpus's is put into the corpus's language
for relevance (llm backend).

The relevance model reads the corpus's language (English for the shipped model): a German question
against English passages scores every passage as off-topic. With an LLM configured, the evidence stage
asks it once for the question in the corpus's language and selects and gates passages against that
rendering; code accepts a rendering only when it is detected as the corpus's language. Quotes stay
verbatim and the answer is written in the question's language. Without an LLM (or when the rendering is
refused), the question is judged as asked and the language note says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agents.runtime import evidence_allowance, evidence_update, llm_or_rules_within
from engine.ingest.language import UNDETERMINED, detect, language_name
from engine.text import normalize_ws

if TYPE_CHECKING:
    from agents.deps import Deps
    from agents.state import EvidenceState


class TranslateReply(BaseModel):
    """LLM reply schema for skills/translate.md."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=2000, description="The question in the documents' language")


def needs_translation(language: dict[str, Any] | None) -> bool:
    """The question and the corpus are in two determined, different languages."""
    language = language or {}
    asked, corpus = language.get("question"), language.get("corpus")
    return bool(asked and corpus and UNDETERMINED not in (asked, corpus) and asked != corpus)


def accepted(reply: TranslateReply, corpus: str) -> str | None:
    """The rendering, when code detects it as the corpus's language. Pure."""
    text = normalize_ws(reply.question)
    return text if text and detect(text).language == corpus else None


def relevance_question(state: EvidenceState, deps: Deps) -> tuple[str, list[str], int]:
    """(the question to select and gate passages against, fallbacks, LLM calls spent)."""
    stem = state["stem"]
    language = state.get("language")
    if deps.llm is None or not needs_translation(language):
        return stem, [], 0
    assert language is not None  # needs_translation
    return llm_or_rules_within(deps, evidence_allowance(state, deps), "translate", "translate", TranslateReply,
                               rules=lambda: stem, accept=lambda reply: accepted(reply, language["corpus"]),
                               question=stem, question_language=language_name(language["question"]),
                               language=language_name(language["corpus"]))


def translate_node(state: EvidenceState, deps: Deps) -> dict[str, Any]:
    """Graph node: `relevance_question`, the question that the parts are split from and passages are selected
    and gated against (its LLM call, if any, counts in the evidence stage's budget)."""
    asked, fallbacks, calls = relevance_question(state, deps)
    return evidence_update(fallbacks, calls, relevance_question=asked)
