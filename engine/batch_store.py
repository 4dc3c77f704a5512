"""SQL of batch runs: batches, their items, claims (FOR UPDATE SKIP LOCKED) and completion."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from engine.errors import NotFoundError

BATCH_LOCK_NS = 7702007  # advisory lock namespace: one coordinator per batch


def create(conn: psycopg.Connection, *, batch_id: str, name: str, path: str, sha256: str,
           definition: dict[str, Any], actor: str, settings_hash: str, items: list[tuple[str, str]]) -> None:
    """A batch and its items ((question_id, run_id) in checklist order), in one transaction."""
    with conn.transaction():
        conn.execute("INSERT INTO batches (batch_id, name, definition_path, definition_sha256, definition, actor, "
                     "settings_hash) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                     (batch_id, name, path, sha256, Jsonb(definition), actor, settings_hash))
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO batch_items (batch_id, question_id, position, run_id) VALUES (%s, %s, %s, %s)",
                            [(batch_id, qid, i, run_id) for i, (qid, run_id) in enumerate(items)])


def get(conn: psycopg.Connection, batch_id: str) -> dict[str, Any]:
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute("SELECT * FROM batches WHERE batch_id = %s", (batch_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no batch '{batch_id}'; 'evidence audit list' shows the batches run here")
    return row


def items(conn: psycopg.Connection, batch_id: str) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute("SELECT * FROM batch_items WHERE batch_id = %s ORDER BY position", (batch_id,)).fetchall()


def list_batches(conn: psycopg.Connection) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "SELECT b.batch_id, b.name, b.actor, b.started_at, count(i.*) AS questions, count(i.audit_id) AS done, "
            "max(i.finished_at) AS finished_at FROM batches b JOIN batch_items i USING (batch_id) "
            "GROUP BY b.batch_id ORDER BY b.started_at").fetchall()


def claim_next(conn: psycopg.Connection, batch_id: str) -> dict[str, Any] | None:
    """Lock the next unanswered item nobody else holds (call inside a transaction; the lock is the claim)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute("SELECT * FROM batch_items WHERE batch_id = %s AND audit_id IS NULL ORDER BY position "
                           "LIMIT 1 FOR UPDATE SKIP LOCKED", (batch_id,)).fetchone()


def mark_done(conn: psycopg.Connection, batch_id: str, question_id: str, audit_id: str) -> None:
    conn.execute("UPDATE batch_items SET audit_id = %s, finished_at = now() WHERE batch_id = %s AND question_id = %s",
                 (audit_id, batch_id, question_id))


def try_lock(conn: psycopg.Connection, batch_id: str) -> bool:
    """Session lock held by the coordinator of a batch while it runs (released when it exits or dies)."""
    return bool(conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (BATCH_LOCK_NS, batch_id)).fetchone()[0])
