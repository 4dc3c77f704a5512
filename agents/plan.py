"""Plan: strip multiple-choice options, consult QA memory, split the question into aspects."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agents.classify import concepts
from agents.state import ResearchState
from engine.ingest.language import question_language
from engine.search import store

if TYPE_CHECKING:
    from agents.deps import Deps

_OPTION = re.compile(r"(?:^|\s)\(?([A-D])[).:]\s+", re.MULTILINE)
_QUESTION_WORD = r"(?:what|how|when|which|who|whether|where|why|does|do|is|are|must|should|can)\b"
_SPLIT = re.compile(r"[;?]|,\s*(?:and|or|including|as well as)\s+|\s+as well as\s+|"
                    rf"\s+and\s+(?={_QUESTION_WORD})|,\s*(?={_QUESTION_WORD})", re.IGNORECASE)

MemoryLookup = Callable[[str], "dict[str, Any] | None"]


def strip_options(question: str) -> tuple[str, list[str]]:
    """Split '... ? (A) x (B) y (C) z (D) w' into the stem and the options (none: options == [])."""
    matches = list(_OPTION.finditer(question))
    letters = [m.group(1) for m in matches]
    if len(matches) < 2 or letters != [chr(ord("A") + i) for i in range(len(letters))]:
        return question.strip(), []
    stem = question[: matches[0].start()].strip()
    options = []
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(question)
        options.append(question[match.end():end].strip())
    return stem, options


def split_aspects(stem: str, question_type: str) -> list[str]:
    """Aspects to research: the whole question first, then its clauses with their own concepts."""
    if question_type == "simple":
        return [stem]
    aspects = [stem]
    for part in _SPLIT.split(stem):
        part = part.strip(" ,.")
        if len(concepts(part)) >= 2 and part.lower() != stem.lower().strip(" ?"):
            aspects.append(part)
    return list(dict.fromkeys(aspects))


def find_memory(lookup: MemoryLookup | None, stem: str) -> dict[str, Any] | None:
    """A previous answered audit with a near-identical question, noted in working memory.

    `lookup` returns {'audit_id', 'question', 'similarity', 'chunk_ids'} or None; it is supplied by the
    audit trail when one exists (the threshold, 0.92 by default, is applied there). The hit is a lead
    for the reader only: it lends no evidence, so asking again on an unchanged corpus with unchanged
    settings gives the same evidence and the same answer (an earlier answer never steers a later one).
    """
    return lookup(stem) if lookup else None


def plan_node(state: ResearchState, deps: Deps) -> dict[str, Any]:
    """Options are stripped before classify (see prepare_node); here aspects and memory are planned."""
    aspects = split_aspects(state["stem"], state["question_type"])
    hit = find_memory(getattr(deps, "qa_memory", None), state["stem"])
    update: dict[str, Any] = {"aspects": aspects, "memory_hit": hit,
                              "current": {"aspect": aspects[0], "attempt": 1}, "decision": "next_step"}
    if hit:
        update["memory"] = {"leads": [f"memory: {hit['audit_id']} (similarity {hit['similarity']:.2f}) asked "
                                      f"'{hit['question']}'; researched afresh, not reused"]}
    return update


def prepare_node(state: ResearchState, deps: Deps) -> dict[str, Any]:
    """Options stripped; the question's language detected and compared with the corpus's."""
    stem, options = strip_options(state["question"])
    return {"stem": stem, "options": options, "iterations": 0,
            "language": question_language(stem, store.current_languages(deps.conn)),
            "memory": {"queries_tried": [], "findings": [], "leads": [], "dead_ends": []}}
