"""Cross-references: when evidence cites another provision, fetch it too.

"see section 4.2", "Rule 11.2.1", "§ 5899(b)", "Chapter 11 of MKT", "section 3.1 of the Client
Assessment Rules". A reference naming another document is resolved by its title words; otherwise
the citing chunk's own document is tried first. Depth limit, visited set and a character budget
bound the expansion; resolved edges are stored (engine/search/references.py) for reuse.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import psycopg

from agents.state import EvidenceItem
from engine.search import references, store
from engine.terms import STOPWORDS

if TYPE_CHECKING:
    from engine.models import Chunk, Hit

# Keywords match in any case; a named document must be capitalized words ("of the Client Assessment Rules").
REFERENCE = re.compile(
    r"(?:\b(?i:sections?|rules?|articles?|paragraphs?|parts?|chapters?|regulations?)|§)\s*"
    r"(?P<num>\d+(?:\.\d+)*)(?:\s*\((?P<sub>[a-zA-Z0-9]{1,4})\))*"
    r"(?:\s+(?i:of)\s+(?:(?i:the)\s+)?(?P<doc>[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,7}))?",
)
_THIS = {"this", "these", "that"}
RESOLVER = "crossref-2"  # bump when the resolving rules change: stored edges of other versions are ignored


def find_references(text: str) -> list[tuple[str, str, list[str]]]:
    """(reference text, section number, title words of a named document or [])."""
    found = []
    for match in REFERENCE.finditer(text):
        doc = (match.group("doc") or "").strip()
        words = [w for w in re.findall(r"[A-Za-z][\w-]+", doc) if w.lower() not in STOPWORDS]
        if words and words[0].lower() in _THIS | {"regulation", "act", "rules"} and len(words) == 1:
            words = []
        if words and words[0].lower() in _THIS:
            words = []
        found.append((match.group(0).strip(), match.group("num"), words))
    return found


def resolve(conn: psycopg.Connection, chunk: EvidenceItem, ref: tuple[str, str, list[str]]) -> list[str]:
    """Chunk ids a reference points to (excluding the citing chunk)."""
    _, number, words = ref
    if words:  # a named document: only that one
        doc_ids = references.documents_by_title_words(conn, words)
        scopes: list[str | None] = [*doc_ids[:1]]
    else:  # unnamed: the citing document; other documents only if it has no such section at all
        scopes = [chunk["document_id"], None]
    for document_id in scopes:
        found = references.section_chunks(conn, number, document_id)
        if found:
            return [c.id for c in found if c.id != chunk["chunk_id"]]
    return []


def expand(conn: psycopg.Connection, evidence: list[EvidenceItem], *, visited: set[str], depth: int = 2,
           char_budget: int = 4000) -> list[EvidenceItem]:
    """Evidence items for the chunks cited by `evidence`, breadth first, within depth and budget."""
    added: list[EvidenceItem] = []
    frontier = list(evidence)
    spent = 0
    for level in range(1, depth + 1):
        next_frontier = []
        for item in frontier:
            edges = references.known_references(conn, item["chunk_id"], RESOLVER)
            if not edges:
                edges = [(ref[0], to) for ref in find_references(item["text"]) for to in resolve(conn, item, ref)]
                references.save_references(conn, item["chunk_id"], edges, RESOLVER)
            new_ids = [to for _, to in edges if to not in visited]
            chunks = store.get_chunks(conn, list(dict.fromkeys(new_ids)))
            for ref_text, to in edges:
                if to in visited or to not in chunks or spent + len(chunks[to].text) > char_budget:
                    continue
                visited.add(to)
                spent += len(chunks[to].text)
                entry = evidence_entry(chunks[to], score=0.0, query="", via=f"{ref_text} (from {item['chunk_id']})",
                                       depth=level)
                added.append(entry)
                next_frontier.append(entry)
        frontier = next_frontier
    return added


def evidence_entry(chunk: Chunk, *, score: float, query: str, via: str | None = None, depth: int = 0,
                   dense: float | None = None, lexical: float | None = None, hit: Hit | None = None
                   ) -> EvidenceItem:
    """The serializable evidence record kept in graph state (`hit`: the retrieval hit, for its ranks)."""
    entry: EvidenceItem = {
        "chunk_id": chunk.id, "document_id": chunk.document_id, "document_title": chunk.document_title,
        "document_version": chunk.document_version, "source_type": chunk.source_type,
        "section_path": chunk.section_path, "section_number": chunk.section_number,
        "section_heading": chunk.section_heading, "text": chunk.text,
        "score": round(score, 6), "dense_score": dense, "lexical_score": lexical, "query": query,
        "dense_rank": getattr(hit, "dense_rank", None), "lexical_rank": getattr(hit, "lexical_rank", None),
        "relevance": getattr(hit, "relevance", None), "cross_reference": via, "depth": depth,
        "ordinal": chunk.ordinal, "neighbour_of": getattr(hit, "neighbour_of", None)}
    if chunk.metadata.get("fields"):  # a spreadsheet row's (engine.ingest.sheets.Sheet)
        entry["fields"] = list(chunk.metadata["fields"])
    return entry
