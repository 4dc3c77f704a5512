"""SQL of the audit trail: append (serialized, hash-chained), read, search, checkpoints.

Appends are serialized explicitly: a transaction-scoped advisory lock, then the head is read and
the new record inserted with seq = head + 1 and prev_hash = head hash; UNIQUE (seq, prev_hash,
hash) and the insert trigger reject anything else, so concurrent writers give one chain, never a
fork. Writes run as the role `evidence_trail_writer` (INSERT and SELECT only) when it exists. The
insert's trigger also stores the tree's perfect subtrees the new leaf completes (`trail_nodes`, sql/015),
in the same transaction.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from pydantic import BaseModel, ConfigDict, Field

from engine import db
from engine.errors import InputError, NotFoundError, StorageError
from engine.trail.canonical import GENESIS_HASH, canonical_json, normalize, sha256_hex
from engine.trail.tree import Node, StoredTree

WRITER_ROLE = "evidence_trail_writer"
TRAIL_TABLES = ("audits", "audit_requirements", "audit_documents", "trail_checkpoints", "audit_embeddings",
                "trail_nodes")
_HEADER = ("seq, audit_id, kind, amends, run_id, batch_id, question, actor, created_at, status, "
           "grounding_confidence, backend, settings_hash, prev_hash, hash")


class Appended(BaseModel):
    """Where an audit sits in the trail: its sequence number and record hash (`engine.api.TrailEntry`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seq: int
    audit_id: str
    hash: str
    prev_hash: str
    created: bool = Field(default=True, description="False when the run had been recorded before (a resume)")


def envelope(seq: int, prev_hash: str, record: dict[str, Any]) -> str:
    """The canonical text that is stored and hashed: the record with its place in the chain."""
    return canonical_json({"seq": seq, "prev_hash": prev_hash, "record": record})


def crash_point(fault: str | None, point: str) -> None:
    """Fault injection for the crash tests: SIGKILL this process at `point` when configured
    (`stop@point`: SIGSTOP instead, a process that hangs with its connections open)."""
    if fault and fault == point:
        os.kill(os.getpid(), signal.SIGKILL)
    elif fault and fault == f"stop@{point}":
        os.kill(os.getpid(), signal.SIGSTOP)


def _as_writer(conn: psycopg.Connection) -> None:
    row = conn.execute("SELECT pg_has_role(current_user, rolname, 'MEMBER') FROM pg_roles WHERE rolname = %s",
                       (WRITER_ROLE,)).fetchone()
    if row and row[0]:
        conn.execute(f"SET LOCAL ROLE {WRITER_ROLE}")


def _header(record: dict[str, Any]) -> dict[str, Any]:
    answer = record.get("answer") or {}
    status = answer.get("status") or record["kind"].upper()
    return {"audit_id": record["audit_id"], "kind": record["kind"], "amends": record.get("amends"),
            "run_id": record.get("run_id"), "batch_id": record.get("batch_id"), "question": record["question"],
            "actor": record["actor"], "created_at": record["recorded_at"], "status": status,
            "grounding_confidence": answer.get("grounding_confidence"), "backend": record.get("backend"),
            "settings_hash": record.get("settings_hash")}


def requirement_rows(record: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The relational copy of the record's requirements (also what verify expects to find)."""
    return [(record["audit_id"], r["requirement_id"], bool(r["verified"]), bool(r.get("cited")),
             r.get("rejection_reason"), r["modality"], r["document_id"], r.get("source_key", ""),
             int(r["document_version"]), r.get("section_path", ""), r.get("section_number", ""), r["chunk_id"],
             int(r["doc_char_start"]), int(r["doc_char_end"]), r["exact_quote"])
            for r in record.get("requirements", [])]


def document_rows(record: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(record["audit_id"], d["document_id"], d["source_key"], int(d["version"]), d["content_sha256"],
             d["title"]) for d in record.get("corpus", [])]


_REQ_COLUMNS = ("audit_id, requirement_id, verified, cited, rejection_reason, modality, document_id, source_key, "
                "document_version, section_path, section_number, chunk_id, doc_char_start, doc_char_end, exact_quote")
_DOC_COLUMNS = "audit_id, document_id, source_key, version, content_sha256, title"


def append(conn: psycopg.Connection, record: dict[str, Any], *, vectors: tuple[np.ndarray, np.ndarray] | None = None,
           fault: str | None = None) -> Appended:
    """Append one record to the chain in one transaction. Returns its seq and hashes."""
    record = normalize(record)
    try:
        with conn.transaction():
            _as_writer(conn)
            db.xact_lock(conn, db.Lock.TRAIL_APPEND)
            head = conn.execute("SELECT seq, hash FROM audits ORDER BY seq DESC LIMIT 1").fetchone()
            seq, prev = (head[0] + 1, head[1]) if head else (1, GENESIS_HASH)
            text = envelope(seq, prev, record)
            digest = sha256_hex(text)
            header = _header(record)
            conn.execute(
                "INSERT INTO audits (seq, audit_id, kind, amends, run_id, batch_id, question, actor, created_at, "
                "status, grounding_confidence, backend, settings_hash, canonical, record, prev_hash, hash) VALUES "
                "(%(seq)s, %(audit_id)s, %(kind)s, %(amends)s, %(run_id)s, %(batch_id)s, %(question)s, %(actor)s, "
                "%(created_at)s, %(status)s, %(grounding_confidence)s, %(backend)s, %(settings_hash)s, "
                "%(canonical)s, %(record)s, %(prev)s, %(hash)s)",
                {**header, "seq": seq, "canonical": text, "record": Jsonb(record), "prev": prev, "hash": digest})
            crash_point(fault, "audit:during")
            _insert_details(conn, record, vectors)
    except psycopg.errors.UniqueViolation as exc:
        if record.get("run_id") and (existing := by_run(conn, record["run_id"])):
            return Appended(seq=existing["seq"], audit_id=existing["audit_id"], hash=existing["hash"],
                            prev_hash=existing["prev_hash"], created=False)
        raise StorageError(f"could not append audit {record['audit_id']}: {exc}") from exc
    return Appended(seq=seq, audit_id=record["audit_id"], hash=digest, prev_hash=prev)


def _insert_details(conn: psycopg.Connection, record: dict[str, Any],
                    vectors: tuple[np.ndarray, np.ndarray] | None) -> None:
    with conn.cursor() as cur:
        if rows := requirement_rows(record):
            cur.executemany(f"INSERT INTO audit_requirements ({_REQ_COLUMNS}) VALUES ({', '.join(['%s'] * 15)})",
                            rows)
        if rows := document_rows(record):
            cur.executemany(f"INSERT INTO audit_documents ({_DOC_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)", rows)
        if vectors is not None:
            cur.execute("INSERT INTO audit_embeddings (audit_id, question, answer) VALUES (%s, %s, %s)",
                        (record["audit_id"], vectors[0], vectors[1]))


def by_run(conn: psycopg.Connection, run_id: str) -> dict[str, Any] | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"SELECT {_HEADER} FROM audits WHERE run_id = %s", (run_id,)).fetchone()


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


AUDIT_ID_CASE = re.compile(r"(?i)aud-[0-9]{0,8}(-[0-9a-f]*)?$")


def resolve_id(conn: psycopg.Connection, given: str) -> str:
    """The audit id that `given` names: the id itself or any unique start of one (a pasted 'AUD-20261…'
    works too). NotFoundError when none matches, InputError when several do."""
    text = given.strip().rstrip("…").rstrip(".").strip()
    if AUDIT_ID_CASE.match(text):  # ids are 'AUD-' + date + lower-case hex; a copy may have changed the case
        text = "AUD-" + text[4:].lower()
    if not text:
        raise InputError("an audit id is empty; 'evidence trail list' shows the stored ones")
    if conn.execute("SELECT 1 FROM audits WHERE audit_id = %s", (text,)).fetchone():
        return text
    rows = [r[0] for r in conn.execute("SELECT audit_id FROM audits WHERE audit_id LIKE %s ORDER BY seq LIMIT 6",
                                       (_like_prefix(text),))]
    if not rows:
        raise NotFoundError(f"no audit '{given}' in the trail; 'evidence trail list' shows the stored ones")
    if len(rows) > 1:
        shown = ", ".join(rows[:5]) + (", ..." if len(rows) > 5 else "")
        raise InputError(f"'{given}' is the start of several audit ids ({shown}); give more of the id")
    return rows[0]


def get(conn: psycopg.Connection, audit_id: str) -> dict[str, Any]:
    """Header, canonical text and record of one audit. Raises NotFoundError."""
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(f"SELECT {_HEADER}, canonical, record FROM audits WHERE audit_id = %s",
                          (audit_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no audit '{audit_id}' in the trail; 'evidence trail list' shows the stored ones")
    return row


def amendments(conn: psycopg.Connection, audit_id: str) -> list[dict[str, Any]]:
    """Notes and corrections that point to `audit_id`, oldest first."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"SELECT {_HEADER}, record FROM audits WHERE amends = %s ORDER BY seq",
                           (audit_id,)).fetchall()


def list_audits(conn: psycopg.Connection, *, since: datetime | None = None, until: datetime | None = None,
                actor: str | None = None, documents: Sequence[str] | None = None, status: str | None = None,
                confidence: str | None = None, batch: str | None = None, kind: str | None = None,
                limit: int = 1000) -> list[dict[str, Any]]:
    """Audit headers matching every given filter, oldest first. Issued-report records (kind 'report') are listed
    only when `kind` asks for them: they record files handed out, not answers or reviews."""
    where = ["true" if kind is not None else "a.kind <> 'report'"]
    params: dict[str, Any] = {"limit": limit}
    for column, value, op in (("created_at", since, ">="), ("created_at", until, "<"), ("actor", actor, "="),
                              ("status", status, "="), ("grounding_confidence", confidence, "="),
                              ("batch_id", batch, "="), ("kind", kind, "=")):
        if value is not None:
            key = f"p{len(params)}"
            where.append(f"a.{column} {op} %({key})s")
            params[key] = value
    if documents:
        where.append("EXISTS (SELECT 1 FROM audit_requirements r WHERE r.audit_id = a.audit_id AND r.cited "
                     "AND (r.document_id = ANY(%(docs)s) OR r.source_key = ANY(%(docs)s)))")
        params["docs"] = list(documents)
    sql = (f"SELECT {', '.join('a.' + c.strip() for c in _HEADER.split(','))} FROM audits a "
           f"WHERE {' AND '.join(where)} ORDER BY a.seq LIMIT %(limit)s")
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(sql, params).fetchall()  # type: ignore[arg-type]


def search(conn: psycopg.Connection, vector: np.ndarray, k: int = 10) -> list[dict[str, Any]]:
    """Audits whose question or answer is nearest to `vector` (cosine), best first."""
    sql = (f"SELECT {', '.join('a.' + c.strip() for c in _HEADER.split(','))}, "
           "1 - LEAST(e.question <=> %(v)s, e.answer <=> %(v)s) AS similarity "
           "FROM audit_embeddings e JOIN audits a USING (audit_id) ORDER BY similarity DESC LIMIT %(k)s")
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(sql, {"v": vector, "k": k}).fetchall()


def similar_question(conn: psycopg.Connection, vector: np.ndarray, threshold: float) -> dict[str, Any] | None:
    """The answered audit whose question is nearest to `vector`, if its cosine reaches `threshold`."""
    sql = ("SELECT a.audit_id, a.question, 1 - (e.question <=> %(v)s) AS similarity FROM audit_embeddings e "
           "JOIN audits a USING (audit_id) WHERE a.kind = 'answer' AND a.status = 'ANSWERED' "
           "ORDER BY e.question <=> %(v)s, a.seq DESC LIMIT 1")
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(sql, {"v": vector}).fetchone()
        if row is None or row["similarity"] < threshold:
            return None
        chunks = cur.execute("SELECT DISTINCT chunk_id FROM audit_requirements WHERE audit_id = %s AND verified "
                             "ORDER BY chunk_id", (row["audit_id"],)).fetchall()
    return {**row, "similarity": float(row["similarity"]), "chunk_ids": [c["chunk_id"] for c in chunks]}


def chain(conn: psycopg.Connection, *, upto: int | None = None) -> list[dict[str, Any]]:
    """Every audit row in seq order (for verification)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"SELECT {_HEADER}, canonical, record FROM audits WHERE %(upto)s::bigint IS NULL "
                           "OR seq <= %(upto)s ORDER BY seq", {"upto": upto}).fetchall()


def stored_requirement_rows(conn: psycopg.Connection) -> list[tuple[Any, ...]]:
    return conn.execute(f"SELECT {_REQ_COLUMNS} FROM audit_requirements").fetchall()


def stored_document_rows(conn: psycopg.Connection) -> list[tuple[Any, ...]]:
    return conn.execute(f"SELECT {_DOC_COLUMNS} FROM audit_documents").fetchall()


def head(conn: psycopg.Connection) -> tuple[int, str] | None:
    row = conn.execute("SELECT seq, hash FROM audits ORDER BY seq DESC LIMIT 1").fetchone()
    return (int(row[0]), row[1]) if row else None


def record_hashes(conn: psycopg.Connection, upto: int | None = None) -> list[str]:
    """The record hashes of audits 1..upto (all when None), in seq order: the transparency log's leaves."""
    rows = conn.execute("SELECT hash FROM audits WHERE %(upto)s::bigint IS NULL OR seq <= %(upto)s ORDER BY seq",
                        {"upto": upto}).fetchall()
    return [r[0] for r in rows]


def hashes_at(conn: psycopg.Connection, seqs: Sequence[int]) -> dict[int, str]:
    """{seq: record hash} of the audits at `seqs` that exist."""
    rows = conn.execute("SELECT seq, hash FROM audits WHERE seq = ANY(%s)", (list(seqs),)).fetchall()
    return {int(r[0]): r[1] for r in rows}


def _nodes(conn: psycopg.Connection, nodes: Sequence[Node]) -> dict[Node, bytes]:
    rows = conn.execute("SELECT n.level, n.idx, n.hash FROM unnest(%s::int[], %s::bigint[]) AS w (level, idx) "
                        "JOIN trail_nodes n ON n.level = w.level AND n.idx = w.idx",
                        ([n[0] for n in nodes], [n[1] for n in nodes])).fetchall()
    return {(int(r[0]), int(r[1])): bytes(r[2]) for r in rows}


def fill_nodes(conn: psycopg.Connection) -> int:
    """Store every perfect subtree the audits imply and `trail_nodes` lacks (a trail loaded with triggers off);
    the number of nodes added."""
    with conn.transaction():
        _as_writer(conn)
        return int(conn.execute("SELECT trail_fill_nodes()").fetchone()[0])  # type: ignore[index]


def tree_nodes(conn: psycopg.Connection, nodes: Sequence[Node]) -> dict[Node, bytes]:
    """The stored hashes of the perfect subtrees `nodes` (sql/015); missing ones are filled first when the audits
    imply them, so a node still absent is one the trail cannot make."""
    found = _nodes(conn, nodes)
    if len(found) < len(set(nodes)):
        fill_nodes(conn)
        found = _nodes(conn, nodes)
    return found


def all_tree_nodes(conn: psycopg.Connection) -> dict[Node, bytes]:
    """Every stored perfect subtree (for verification)."""
    return {(int(r[0]), int(r[1])): bytes(r[2]) for r in conn.execute("SELECT level, idx, hash FROM trail_nodes")}


def stored_tree(conn: psycopg.Connection, size: int) -> StoredTree:
    """The transparency log's tree of `size` leaves, read from its stored nodes."""
    return StoredTree(size, lambda nodes: tree_nodes(conn, nodes))


def insert_checkpoint(conn: psycopg.Connection, *, seq: int, head_hash: str, signed_at: datetime,
                      key_fingerprint: str, payload: str, signature: str, format: str = "json-v1",
                      root_hash: str | None = None, origin: str | None = None, note: str | None = None) -> int:
    with conn.transaction():
        _as_writer(conn)
        row = db.one(
            conn, "INSERT INTO trail_checkpoints (seq, head_hash, signed_at, key_fingerprint, payload, signature, "
            "format, root_hash, origin, note) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (seq, head_hash, signed_at, key_fingerprint, payload, signature, format, root_hash, origin, note))
    return int(row[0])


_CHECKPOINT_COLUMNS = ("id, seq, head_hash, signed_at, key_fingerprint, payload, signature, format, root_hash, "
                       "origin, note")


def checkpoints(conn: psycopg.Connection) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"SELECT {_CHECKPOINT_COLUMNS} FROM trail_checkpoints ORDER BY seq, id").fetchall()


def latest_note_checkpoint(conn: psycopg.Connection) -> dict[str, Any] | None:
    """The signed-note checkpoint of the largest tree (the latest signed of those), or None."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"SELECT {_CHECKPOINT_COLUMNS} FROM trail_checkpoints WHERE format = 'c2sp-note' "
                           "ORDER BY seq DESC, id DESC LIMIT 1").fetchone()


def latest_checkpoint(conn: psycopg.Connection) -> dict[str, Any] | None:
    """The checkpoint of the largest tree in either format (the latest signed of those), or None."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"SELECT {_CHECKPOINT_COLUMNS} FROM trail_checkpoints ORDER BY seq DESC, id DESC "
                           "LIMIT 1").fetchone()


def has_checkpoint(conn: psycopg.Connection, payload: str, signature: str) -> bool:
    """Whether the database holds the checkpoint signed over `payload` with `signature`."""
    return conn.execute("SELECT 1 FROM trail_checkpoints WHERE payload = %s AND signature = %s LIMIT 1",
                        (payload, signature)).fetchone() is not None


def hash_at(conn: psycopg.Connection, seq: int) -> str | None:
    """The record hash of audit `seq`, or None when there is none."""
    row = conn.execute("SELECT hash FROM audits WHERE seq = %s", (seq,)).fetchone()
    return row[0] if row else None


def open_xact(conn: psycopg.Connection) -> str | None:
    """The id of the transaction `conn` is inside (one the caller opened and will commit), else None."""
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.INTRANS:
        return None
    return str(conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0])  # type: ignore[index]


def xact_status(conn: psycopg.Connection, xact: str) -> str | None:
    """'committed', 'aborted' or 'in progress' for a transaction id; None when the server cannot say (too old,
    or an id from another server)."""
    try:
        with conn.transaction():  # a savepoint when inside a transaction: an error must not abort it
            row = conn.execute("SELECT pg_xact_status(%s::xid8)", (xact,)).fetchone()
    except psycopg.Error:
        return None
    return row[0] if row else None


def document_texts(conn: psycopg.Connection, ids: Sequence[str]) -> dict[str, str]:
    rows = conn.execute("SELECT id, text FROM documents WHERE id = ANY(%s)", (list(ids),)).fetchall()
    return {r[0]: r[1] for r in rows}


def superseded(conn: psycopg.Connection) -> dict[str, str]:
    """{audit id: the audit that answers it again} from `trail rerun` (its new answer's `supersedes`, or
    the correction that points to it)."""
    rows = conn.execute(
        "SELECT record->>'supersedes', audit_id, seq FROM audits WHERE kind = 'answer' AND record ? 'supersedes' "
        "UNION ALL SELECT amends, record->>'superseded_by', seq FROM audits "
        "WHERE kind = 'correction' AND record ? 'superseded_by' ORDER BY 3").fetchall()
    return {old: new for old, new, _ in rows}


def citing(conn: psycopg.Connection, keys: Sequence[str] | None, section: str | None) -> list[dict[str, Any]]:
    """Requirements of answers that rest on a document (by id or source key; None: any), optionally one section."""
    sql = ("SELECT r.*, a.seq, a.question, a.created_at, a.status FROM audit_requirements r "
           "JOIN audits a USING (audit_id) WHERE r.cited AND a.kind = 'answer' AND (%(k)s::text[] IS NULL OR "
           "r.document_id = ANY(%(k)s) OR r.source_key = ANY(%(k)s))")
    params: dict[str, Any] = {"k": None if keys is None else list(keys)}
    if section:
        sql += (" AND (rtrim(r.section_number, '.') = %(s)s OR r.section_number LIKE %(p1)s "
                "OR r.section_number LIKE %(p2)s)")
        params.update(s=section.rstrip("."), p1=section.rstrip(".") + ".%", p2=section.rstrip(".") + "(%")
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(sql + " ORDER BY a.seq, r.requirement_id", params).fetchall()  # type: ignore[arg-type]


def insert_cosignature(conn: psycopg.Connection, *, origin: str, tree_size: int, root_hash: str, witness: str,
                       key_id: str, cosigned_at: datetime, line: str) -> bool:
    """Keep a witness's cosignature line of a checkpoint (sql/016). False when it was kept before."""
    with conn.transaction():
        _as_writer(conn)
        row = conn.execute(
            "INSERT INTO trail_cosignatures (origin, tree_size, root_hash, witness, key_id, cosigned_at, line) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (line) DO NOTHING RETURNING id",
            (origin, tree_size, root_hash, witness, key_id, cosigned_at, line)).fetchone()
    return row is not None


def cosignature_lines(conn: psycopg.Connection, origin: str, tree_size: int, root_hash: str) -> list[str]:
    """The witnesses' cosignature lines kept for one checkpoint, oldest first."""
    rows = conn.execute("SELECT line FROM trail_cosignatures WHERE origin = %s AND tree_size = %s AND root_hash = %s "
                        "ORDER BY id", (origin, tree_size, root_hash)).fetchall()
    return [r[0] for r in rows]


def latest_cosigned_checkpoint(conn: psycopg.Connection, min_seq: int) -> dict[str, Any] | None:
    """The signed-note checkpoint of the largest tree of at least `min_seq` audits that a witness cosigned."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"SELECT {_CHECKPOINT_COLUMNS} FROM trail_checkpoints c WHERE format = 'c2sp-note' "
                           "AND seq >= %s AND EXISTS (SELECT 1 FROM trail_cosignatures w WHERE w.origin = c.origin "
                           "AND w.tree_size = c.seq AND w.root_hash = c.root_hash) ORDER BY seq DESC, id DESC LIMIT 1",
                           (min_seq,)).fetchone()
