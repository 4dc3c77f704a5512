"""Retrieve: multi-query hybrid search, pooled, excluding every chunk earlier steps already used."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents.crossref import evidence_entry, expand
from agents.state import ResearchState

if TYPE_CHECKING:
    from agents.deps import Deps


def retrieve_node(state: ResearchState, deps: Deps) -> dict[str, Any]:
    current = state["current"]
    used = [e["chunk_id"] for e in state["evidence"]]
    k = deps.settings.research_k if state["steps"] else deps.settings.research_k_first
    hits = deps.retriever.search_many(current["queries"], k, exclude_ids=used)
    found = [evidence_entry(h.chunk, score=h.score, query=h.query, dense=h.dense_score, lexical=h.lexical_score,
                            hit=h) for h in hits]
    best = f"; best: {found[0]['document_title']} {found[0]['section_path']}" if found else ""
    return {"evidence": found, "current": {**current, "found": [e["chunk_id"] for e in found]},
            "memory": {"queries_tried": current["queries"],
                       "findings": [f"'{current['queries'][0]}' found {len(found)} chunks{best}"]}}


def crossref_node(state: ResearchState, deps: Deps) -> dict[str, Any]:
    """Add the provisions that this step's evidence cites."""
    current = state["current"]
    mine = [e for e in state["evidence"] if e["chunk_id"] in set(current.get("found", []))]
    visited = {e["chunk_id"] for e in state["evidence"]}
    added = [e for e in expand(deps.conn, mine, visited=visited, depth=deps.settings.crossref_depth,
                               char_budget=deps.settings.crossref_char_budget)
             if deps.retriever.in_scope(e["source_type"], e["document_id"])]
    leads = [f"{e['cross_reference']} -> {e['document_title']} {e['section_path']}" for e in added]
    return {"evidence": added, "current": {**current, "cross_references": [e["chunk_id"] for e in added]},
            "memory": {"leads": leads}}
