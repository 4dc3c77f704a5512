"""SQL for the citation graph: cross-reference edges between chunks."""

from __future__ import annotations

import psycopg

from engine.models import Chunk
from engine.search import store


def known_references(conn: psycopg.Connection, chunk_id: str, resolver: str) -> list[tuple[str, str]]:
    """(ref_text, to_chunk_id) edges already resolved from a chunk by this resolver version."""
    return [(r[0], r[1]) for r in conn.execute(
        "SELECT ref_text, to_chunk_id FROM chunk_references WHERE from_chunk_id = %s AND resolver = %s "
        "ORDER BY ref_text, to_chunk_id", (chunk_id, resolver))]


def save_references(conn: psycopg.Connection, chunk_id: str, edges: list[tuple[str, str]], resolver: str) -> None:
    """Store resolved edges (idempotent)."""
    if edges:
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO chunk_references (from_chunk_id, to_chunk_id, ref_text, resolver) "
                            "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                            [(chunk_id, to, ref, resolver) for ref, to in edges])


def documents_by_title_words(conn: psycopg.Connection, words: list[str]) -> list[str]:
    """Current documents whose title contains every word (case-insensitive), best (shortest title) first."""
    if not words:
        return []
    clauses = " AND ".join("title ILIKE %s" for _ in words)
    rows = conn.execute(f"SELECT id FROM documents WHERE is_current AND {clauses} ORDER BY length(title), id",
                        [f"%{w}%" for w in words]).fetchall()
    return [r[0] for r in rows]


def section_chunks(conn: psycopg.Connection, number: str, document_id: str | None, limit: int = 6) -> list[Chunk]:
    return store.chunks_by_section(conn, number, document_id=document_id, limit=limit)
