"""SQL of batch runs: batches, their items, leases (claimed FOR UPDATE SKIP LOCKED, renewed by heartbeats)
and completion."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from engine import db
from engine.errors import NotFoundError


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


def register_worker(conn: psycopg.Connection, worker_id: str) -> None:
    """Take the worker's liveness lock for the life of this connection (released if the worker dies)."""
    db.session_lock(conn, db.Lock.WORKER, worker_id)


def claim_next(conn: psycopg.Connection, batch_id: str, worker_id: str, lease_s: float) -> dict[str, Any] | None:
    """Lease the next open item to `worker_id`: one never claimed, one whose lease expired, or one whose
    worker's connection is gone. A short transaction of its own (autocommit); None when nothing is free."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "UPDATE batch_items i SET lease_owner = %(w)s, lease_expires_at = now() + make_interval(secs => %(s)s),"
            " claims = i.claims + 1 "
            "FROM (SELECT batch_id, question_id FROM batch_items o WHERE o.batch_id = %(b)s AND o.audit_id IS NULL"
            "      AND (o.lease_owner IS NULL OR o.lease_expires_at < now() OR NOT "
            f"           {db.lock_held(db.Lock.WORKER, 'o.lease_owner')})"
            "      ORDER BY o.position LIMIT 1 FOR UPDATE SKIP LOCKED) AS next "
            "WHERE i.batch_id = next.batch_id AND i.question_id = next.question_id RETURNING i.*",
            {"w": worker_id, "s": float(lease_s), "b": batch_id}).fetchone()


def renew(conn: psycopg.Connection, batch_id: str, question_id: str, worker_id: str, lease_s: float) -> bool:
    """Heartbeat: extend the lease; False when it is no longer this worker's (taken over, or done)."""
    row = conn.execute("UPDATE batch_items SET lease_expires_at = now() + make_interval(secs => %s) "
                       "WHERE batch_id = %s AND question_id = %s AND lease_owner = %s AND audit_id IS NULL "
                       "RETURNING 1", (float(lease_s), batch_id, question_id, worker_id)).fetchone()
    return row is not None


def lock_item(conn: psycopg.Connection, batch_id: str, question_id: str) -> dict[str, Any]:
    """The item's lease and audit, row-locked until the caller's transaction ends (before recording)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute("SELECT audit_id, lease_owner FROM batch_items WHERE batch_id = %s AND question_id = %s "
                           "FOR UPDATE", (batch_id, question_id)).fetchone()


def mark_done(conn: psycopg.Connection, batch_id: str, question_id: str, audit_id: str, worker_id: str) -> None:
    conn.execute("UPDATE batch_items SET audit_id = %s, finished_at = now(), done_by = %s, lease_owner = NULL, "
                 "lease_expires_at = NULL WHERE batch_id = %s AND question_id = %s AND audit_id IS NULL",
                 (audit_id, worker_id, batch_id, question_id))


def open_count(conn: psycopg.Connection, batch_id: str) -> int:
    """Items without an audit yet (leased to a worker or not)."""
    return int(conn.execute("SELECT count(*) FROM batch_items WHERE batch_id = %s AND audit_id IS NULL",
                            (batch_id,)).fetchone()[0])


def try_lock(conn: psycopg.Connection, batch_id: str) -> bool:
    """Session lock held by the coordinator of a batch while it runs (released when it exits or dies)."""
    return db.try_session_lock(conn, db.Lock.BATCH, batch_id)
