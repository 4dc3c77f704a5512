"""SQL of batch runs: batches, their items, leases (claimed FOR UPDATE SKIP LOCKED, renewed by heartbeats),
failed attempts (error, back-off, failed state), operators' retry and skip, completion, and the wake-ups
(LISTEN/NOTIFY on one channel) that tell waiting workers an item changed."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from engine import db
from engine.errors import InputError, NotFoundError

CHANNEL = "evidence_batch"  # NOTIFY payload: the batch id whose items changed (freed, done, failed, reset)
# An item a worker may claim: not done, failed or skipped, and not waiting out a back-off.
_CLAIMABLE = ("{o}.audit_id IS NULL AND {o}.failed_at IS NULL AND {o}.skipped_at IS NULL "
              "AND ({o}.retry_at IS NULL OR {o}.retry_at <= now())")
_UNFINISHED = "{o}.audit_id IS NULL AND {o}.failed_at IS NULL AND {o}.skipped_at IS NULL"


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


def items_with_state(conn: psycopg.Connection, batch_id: str) -> list[dict[str, Any]]:
    """The items with their `state`: done, skipped, failed, leased (a live lease), retrying (waiting out a
    back-off) or open."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "SELECT o.*, CASE WHEN o.audit_id IS NOT NULL THEN 'done' WHEN o.skipped_at IS NOT NULL THEN 'skipped' "
            "  WHEN o.failed_at IS NOT NULL THEN 'failed' "
            f"  WHEN NOT {_not_live('o')} THEN 'leased' WHEN o.retry_at > now() THEN 'retrying' ELSE 'open' END "
            "  AS state FROM batch_items o WHERE o.batch_id = %s ORDER BY o.position", (batch_id,)).fetchall()


def list_batches(conn: psycopg.Connection) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "SELECT b.batch_id, b.name, b.actor, b.started_at, count(i.*) AS questions, count(i.audit_id) AS done, "
            "count(i.failed_at) AS failed, count(i.skipped_at) AS skipped, "
            "max(i.finished_at) AS finished_at FROM batches b JOIN batch_items i USING (batch_id) "
            "GROUP BY b.batch_id ORDER BY b.started_at").fetchall()


def register_worker(conn: psycopg.Connection, worker_id: str) -> None:
    """Take the worker's liveness lock for the life of this connection (released if the worker dies)."""
    db.session_lock(conn, db.Lock.WORKER, worker_id)


def _not_live(o: str) -> str:
    """SQL: the item is not held by a live lease (never claimed, expired, or its worker's connection gone)."""
    return (f"({o}.lease_owner IS NULL OR {o}.lease_expires_at < now() OR NOT "
            f"{db.lock_held(db.Lock.WORKER, o + '.lease_owner')})")


def claim_next(conn: psycopg.Connection, batch_id: str, worker_id: str, lease_s: float) -> dict[str, Any] | None:
    """Lease the next open item to `worker_id`: one never claimed, one whose lease expired, or one whose
    worker's connection is gone; items failed, skipped or waiting out a back-off are not claimed. A short
    transaction of its own (autocommit); None when nothing is free."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "UPDATE batch_items i SET lease_owner = %(w)s, lease_expires_at = now() + make_interval(secs => %(s)s),"
            " claims = i.claims + 1, leased_at = now() "
            "FROM (SELECT batch_id, question_id FROM batch_items o WHERE o.batch_id = %(b)s AND "
            f"      {_CLAIMABLE.format(o='o')} AND {_not_live('o')}"
            "      ORDER BY o.position LIMIT 1 FOR UPDATE SKIP LOCKED) AS next "
            "WHERE i.batch_id = next.batch_id AND i.question_id = next.question_id RETURNING i.*",
            {"w": worker_id, "s": float(lease_s), "b": batch_id}).fetchone()


def reclaim(conn: psycopg.Connection, batch_id: str, worker_id: str, lease_s: float) -> dict[str, Any] | None:
    """The item still leased to `worker_id` (a worker back after a lost connection resumes its question: no new
    attempt), its lease renewed; None when another worker took it over meanwhile, or it is finished."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "UPDATE batch_items o SET lease_expires_at = now() + make_interval(secs => %(s)s) "
            f"WHERE o.batch_id = %(b)s AND o.lease_owner = %(w)s AND {_UNFINISHED.format(o='o')} "
            "RETURNING o.*", {"w": worker_id, "s": float(lease_s), "b": batch_id}).fetchone()


def fail_exhausted(conn: psycopg.Connection, batch_id: str, max_attempts: int) -> list[str]:
    """Fail the items that used up their attempts without recording an error: the worker of the last one died
    or lost its lease (a question that kills its process is not handed on for ever). Their question ids."""
    rows = conn.execute(
        "UPDATE batch_items o SET failed_at = now(), retry_at = NULL, last_error_at = now(), "
        "  last_error = format('no attempt finished: the worker of attempt %%s of %%s (%%s) died or lost its "
        "lease%%s', o.claims, %(m)s::int, coalesce(o.lease_owner, '-'), "
        "  ' (an earlier attempt: ' || o.last_error || ')'), "
        "  lease_owner = NULL, lease_expires_at = NULL "
        f"WHERE o.batch_id = %(b)s AND {_UNFINISHED.format(o='o')} AND o.claims >= %(m)s "
        f"  AND o.lease_owner IS NOT NULL AND {_not_live('o')} RETURNING o.question_id",
        {"b": batch_id, "m": max_attempts}).fetchall()
    return [r[0] for r in rows]


def fail_attempt(conn: psycopg.Connection, batch_id: str, question_id: str, worker_id: str, error: str, *,
                 max_attempts: int, backoff_s: float, backoff_max_s: float, final: bool = False
                 ) -> dict[str, Any] | None:
    """An attempt of `worker_id` raised: store the error and give the lease back, the item to be claimed again
    after a back-off (`backoff_s` doubled per attempt, at most `backoff_max_s`), or failed once it has had
    `max_attempts` attempts (or `final`). The item's row; None when the lease was no longer this worker's."""
    with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(
            "UPDATE batch_items SET last_error = %(e)s, last_error_at = now(), lease_owner = NULL, "
            "  lease_expires_at = NULL, "
            "  failed_at = CASE WHEN %(f)s OR claims >= %(m)s THEN now() END, "
            "  retry_at = CASE WHEN %(f)s OR claims >= %(m)s THEN NULL ELSE now() + make_interval(secs => "
            "    least(%(cap)s, %(base)s * power(2, greatest(claims - 1, 0)))) END "
            "WHERE batch_id = %(b)s AND question_id = %(q)s AND lease_owner = %(w)s AND audit_id IS NULL "
            "RETURNING *",
            {"e": error, "f": final, "m": max_attempts, "cap": float(backoff_max_s), "base": float(backoff_s),
             "b": batch_id, "q": question_id, "w": worker_id}).fetchone()
        _notify(conn, batch_id)
    return row


def renew(conn: psycopg.Connection, batch_id: str, question_id: str, worker_id: str, lease_s: float) -> bool:
    """Heartbeat: extend the lease; False when it is no longer this worker's (taken over, or done)."""
    row = conn.execute("UPDATE batch_items SET lease_expires_at = now() + make_interval(secs => %s) "
                       "WHERE batch_id = %s AND question_id = %s AND lease_owner = %s AND audit_id IS NULL "
                       "RETURNING 1", (float(lease_s), batch_id, question_id, worker_id)).fetchone()
    return row is not None


def lock_item(conn: psycopg.Connection, batch_id: str, question_id: str) -> dict[str, Any]:
    """The item's lease and audit, row-locked until the caller's transaction ends (before recording)."""
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute("SELECT audit_id, lease_owner FROM batch_items WHERE batch_id = %s AND question_id = %s "
                          "FOR UPDATE", (batch_id, question_id)).fetchone()
    if row is None:
        raise NotFoundError(f"batch {batch_id} has no question {question_id}")
    return row


def mark_done(conn: psycopg.Connection, batch_id: str, question_id: str, audit_id: str, worker_id: str) -> None:
    conn.execute("UPDATE batch_items SET audit_id = %s, finished_at = now(), done_by = %s, lease_owner = NULL, "
                 "lease_expires_at = NULL, retry_at = NULL WHERE batch_id = %s AND question_id = %s "
                 "AND audit_id IS NULL AND failed_at IS NULL AND skipped_at IS NULL",
                 (audit_id, worker_id, batch_id, question_id))
    _notify(conn, batch_id)


def open_count(conn: psycopg.Connection, batch_id: str) -> int:
    """Items still to be answered (leased to a worker, waiting out a back-off, or free); failed and skipped
    items are not open."""
    return int(db.one(conn, f"SELECT count(*) FROM batch_items o WHERE o.batch_id = %s AND "
                            f"{_UNFINISHED.format(o='o')}", (batch_id,))[0])


def next_change_in(conn: psycopg.Connection, batch_id: str) -> float | None:
    """Seconds until an open item may become claimable by the clock alone (a back-off ends, a lease
    expires); None when no such time is set."""
    row = db.one(conn, "SELECT extract(epoch FROM least(min(o.retry_at), min(o.lease_expires_at)) - now()) "
                       f"FROM batch_items o WHERE o.batch_id = %s AND {_UNFINISHED.format(o='o')}", (batch_id,))
    return None if row[0] is None else max(0.0, float(row[0]))


def _selected(conn: psycopg.Connection, batch_id: str, question_ids: list[str]) -> list[dict[str, Any]]:
    """The batch's items named (all when none are), row-locked; InputError naming an unknown id."""
    get(conn, batch_id)
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute("SELECT * FROM batch_items WHERE batch_id = %s ORDER BY position FOR UPDATE",
                           (batch_id,)).fetchall()
    known = {r["question_id"] for r in rows}
    if unknown := [q for q in question_ids if q not in known]:
        raise InputError(f"batch {batch_id} has no question {', '.join(unknown)}; its questions are "
                         f"{', '.join(sorted(known))} ('evidence audit status {batch_id}')")
    return [r for r in rows if not question_ids or r["question_id"] in question_ids]


def retry(conn: psycopg.Connection, batch_id: str, question_ids: list[str]) -> list[str]:
    """Give failed, skipped or backing-off items (those named, else every one of the batch) a fresh set of
    attempts, claimable at once. The last error stays on record until an attempt succeeds. The ids reset."""
    with conn.transaction():
        rows = [r for r in _selected(conn, batch_id, question_ids) if r["audit_id"] is None and
                (r["failed_at"] or r["skipped_at"] or r["retry_at"])]
        ids = [r["question_id"] for r in rows]
        conn.execute("UPDATE batch_items SET failed_at = NULL, skipped_at = NULL, skipped_by = NULL, "
                     "skip_reason = NULL, retry_at = NULL, claims = 0 WHERE batch_id = %s AND question_id = ANY(%s)",
                     (batch_id, ids))
        _notify(conn, batch_id)
    return ids


def skip(conn: psycopg.Connection, batch_id: str, question_ids: list[str], *, actor: str, reason: str) -> list[str]:
    """Set unanswered items aside: no worker claims them and a worker answering one records nothing (its lease
    is taken away). The ids skipped (an answered question cannot be skipped: its audit stands)."""
    with conn.transaction():
        rows = [r for r in _selected(conn, batch_id, question_ids) if r["audit_id"] is None and not r["skipped_at"]]
        ids = [r["question_id"] for r in rows]
        conn.execute("UPDATE batch_items SET skipped_at = now(), skipped_by = %s, skip_reason = %s, failed_at = NULL,"
                     " retry_at = NULL, lease_owner = NULL, lease_expires_at = NULL "
                     "WHERE batch_id = %s AND question_id = ANY(%s)", (actor, reason, batch_id, ids))
        _notify(conn, batch_id)
    return ids


def queue_stats(conn: psycopg.Connection, batch_id: str) -> dict[str, Any]:
    """The batch's queue as an operator watches it: items by state, live leases and the oldest one's age,
    attempts made."""
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(
            "SELECT count(*) AS questions, count(o.audit_id) AS done, count(o.failed_at) AS failed, "
            "count(o.skipped_at) AS skipped, "
            f"count(*) FILTER (WHERE {_UNFINISHED.format(o='o')} AND NOT {_not_live('o')}) AS leased, "
            f"count(*) FILTER (WHERE {_UNFINISHED.format(o='o')} AND o.retry_at > now() AND {_not_live('o')})"
            "  AS retrying, "
            f"count(*) FILTER (WHERE {_CLAIMABLE.format(o='o')} AND {_not_live('o')}) AS open, "
            f"extract(epoch FROM now() - min(o.leased_at) FILTER (WHERE {_UNFINISHED.format(o='o')} "
            f"  AND NOT {_not_live('o')}))::float AS oldest_lease_age_s, "
            "coalesce(sum(o.claims), 0)::int AS attempts, coalesce(max(o.claims), 0) AS max_attempts_used, "
            "count(*) FILTER (WHERE o.claims > 1) AS retried "
            "FROM batch_items o WHERE o.batch_id = %s", (batch_id,)).fetchone()
    return row or {}


def try_lock(conn: psycopg.Connection, batch_id: str) -> bool:
    """Session lock held by the coordinator of a batch while it runs (released when it exits or dies)."""
    return db.try_session_lock(conn, db.Lock.BATCH, batch_id)


def listen(conn: psycopg.Connection) -> None:
    """Have `conn` receive the wake-ups of every batch (`wait_for_change`)."""
    conn.execute(f"LISTEN {CHANNEL}")


def drop_wakeups(conn: psycopg.Connection) -> None:
    """Forget the wake-ups received so far (before looking at the queue: they are answered by that look)."""
    for _ in conn.notifies(timeout=0):
        pass


def wait_for_change(conn: psycopg.Connection, batch_id: str, timeout: float) -> bool:
    """Wait up to `timeout` seconds for a wake-up about `batch_id` on a listening connection; one received
    since `drop_wakeups` ends the wait at once. Whether one came."""
    return any(n.payload == batch_id for n in conn.notifies(timeout=timeout, stop_after=1))


def _notify(conn: psycopg.Connection, batch_id: str) -> None:
    conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, batch_id))
