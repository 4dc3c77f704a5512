"""Rewrite: a primary query and two alternatives in different vocabulary.

Rules: key phrases (content words), a terminology table (agents/terminology.json) for the first
alternative, and pseudo-relevance feedback (frequent terms of earlier evidence) for the second.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agents.runtime import llm_or_rules
from agents.state import ResearchState
from engine.search.spelling import correct, english_words
from engine.terms import QUERY_STOPWORDS, STOPWORDS, stem

if TYPE_CHECKING:
    from agents.deps import Deps

TERMINOLOGY_FILE = Path(__file__).with_name("terminology.json")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")


@lru_cache(maxsize=1)
def terminology() -> dict[str, list[str]]:
    data = json.loads(TERMINOLOGY_FILE.read_text())
    return {k.lower(): v for k, v in data.items() if not k.startswith("_")}


def key_phrases(text: str) -> list[str]:
    """Content words in order, without stopwords and question boilerplate."""
    words = [w for w in _WORD.findall(text) if w.lower() not in STOPWORDS and w.lower() not in QUERY_STOPWORDS]
    return list(dict.fromkeys(words))


def synonyms_query(text: str, used: set[str]) -> str:
    """Replace every word (and two-word phrase) found in the terminology table by an alternative not yet used."""
    table = terminology()
    lowered = text.lower()
    out: list[str] = []
    for phrase, alternatives in table.items():
        if " " in phrase and phrase in lowered:
            out.extend(a for a in alternatives[:2] if a.lower() not in used)
    for word in key_phrases(text):
        known = table.get(word.lower())
        if known:
            fresh = [a for a in known if a.lower() not in used] or known
            out.append(fresh[0])
        else:
            out.append(word)
    return " ".join(dict.fromkeys(out))


def feedback_terms(evidence_texts: list[str], exclude: set[str], n: int = 6) -> list[str]:
    """Most frequent content terms of earlier evidence (pseudo-relevance feedback), as surface words."""
    counts: Counter[str] = Counter()
    surface: dict[str, str] = {}
    for text in evidence_texts:
        for word in dict.fromkeys(key_phrases(text)):  # text order, not a set's: ties fall the same in every process
            token = stem(word.lower())
            if token not in exclude and len(word) > 3:
                counts[token] += 1
                surface.setdefault(token, word.lower())
    return [surface[t] for t, _ in counts.most_common(n)]


def rewrite_queries(aspect: str, *, attempt: int, tried: list[str], evidence_texts: list[str]) -> list[str]:
    """Three queries for one research step; a retry (attempt > 1) avoids the vocabulary already tried."""
    phrases = key_phrases(aspect)
    used = {w.lower() for q in tried for w in q.split()}
    primary = aspect.strip() if attempt == 1 else " ".join(phrases)
    alternative = synonyms_query(aspect, used if attempt > 1 else set())
    own = {stem(w.lower()) for w in phrases}
    feedback = feedback_terms(evidence_texts, own)
    third = " ".join(phrases[:4] + feedback) if feedback else " ".join(reversed(phrases))
    queries = [q for q in dict.fromkeys([primary, alternative, third]) if q.strip()]
    if attempt > 1:
        queries = [q for q in queries if q not in tried] or [alternative + " requirements"]
    return queries


class RewriteReply(BaseModel):
    """LLM reply schema for skills/rewrite.md."""

    model_config = ConfigDict(extra="forbid")

    primary: str
    alternatives: list[str] = Field(min_length=2, max_length=2)


def spelled(deps: Deps, aspect: str) -> tuple[str, list[tuple[str, str]]]:
    """The aspect with words unknown to the corpus corrected from its vocabulary (engine.search.spelling)."""
    conn, settings = getattr(deps, "conn", None), getattr(deps, "settings", None)
    if conn is None:
        return aspect, []
    english = english_words(settings.relevance_dir / "tokenizer.json") if settings is not None else frozenset()
    fixed = correct(conn, aspect, english)
    return fixed.text, fixed.changes


def rewrite_node(state: ResearchState, deps: Deps) -> dict[str, Any]:
    current = state["current"]
    tried = state["memory"].get("queries_tried", [])
    texts = [e["text"] for e in state["evidence"][:8]]
    # Lexical fallback: words the corpus does not hold are searched as its nearest words; the aspect as
    # written stays one of the queries, and 'searched for' tells the reader.
    aspect, changes = spelled(deps, current["aspect"])

    def rules() -> list[str]:
        return rewrite_queries(aspect, attempt=current["attempt"], tried=tried, evidence_texts=texts)

    def accept(reply: RewriteReply) -> list[str] | None:
        queries = [q.strip() for q in [reply.primary, *reply.alternatives] if q.strip()]
        return queries if len(set(queries)) == 3 else None

    queries, fallbacks = llm_or_rules(deps, "rewrite", "rewrite", RewriteReply, rules=rules,
                                      accept=accept, aspect=aspect, question=state["stem"],
                                      tried=tried, attempt=current["attempt"])
    update: dict[str, Any] = {"current": {**current, "queries": queries}, "fallbacks": fallbacks}
    if changes:
        if current["attempt"] == 1 and current["aspect"] not in queries:
            update["current"]["queries"] = [*queries, current["aspect"]]
        update["memory"] = {"spelling": [f"{a} -> {b}" for a, b in changes]}
        if not state["memory"].get("searched_for"):
            update["memory"]["searched_for"] = aspect
    if not state.get("steps") and current["attempt"] == 1:
        # The question itself, corrected the same way, is what the evidence stage judges passages against.
        stem, stem_changes = (aspect, changes) if current["aspect"] == state["stem"] else spelled(deps, state["stem"])
        if stem_changes:
            update["stem"] = stem
    return update
