"""The checkpoint log kept beside the signing key (`keys/checkpoints.jsonl`), outside the database.

Every checkpoint this host signs is appended here as one JSON line, so a checkpoint deleted from the
database is still known. A checkpoint signed inside a transaction that is not committed yet (a batch
records its audit and marks the question done in one transaction) carries that transaction's id
(`xact`, PostgreSQL's `pg_current_xact_id()`): should the transaction roll back, the database forgets
the audit and the checkpoint, and the entry is an *uncommitted leftover*, not a deleted checkpoint.
`settle` tells the two apart by asking the server whether that transaction committed.

States of an entry (`settle`):
* `stored`: the database holds the same signed checkpoint;
* `missing`: not in the database although it was committed (or was written after a commit): deleted;
* `rolled_back`: its transaction rolled back; the note covers audits that were never recorded;
* `pending`: its transaction is still open (another process is between signing and committing).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import psycopg

from engine.config import Settings
from engine.trail import store as audit_trail

State = Literal["stored", "missing", "rolled_back", "pending"]
TAIL_BYTES = 1 << 18  # a few hundred checkpoints: far more than are signed while one is being signed


def log_path(settings: Settings) -> Path:
    return settings.signing_key_file.parent / "checkpoints.jsonl"


def entries(settings: Settings) -> list[dict[str, Any]]:
    """Checkpoints recorded in the local log (empty when there is none), both formats, oldest first."""
    path = log_path(settings)
    if not path.exists():
        return []
    lines = _whole_lines(path.read_text())
    return [_entry(line, number) for number, line in enumerate(lines, 1) if line.strip()]


def latest_entries(settings: Settings, span: int = TAIL_BYTES) -> list[dict[str, Any]]:
    """The entries of the last `span` bytes of the local log: what signing compares with, read without the
    whole file (it grows by one line per checkpoint). Their `line` is None (not counted)."""
    path = log_path(settings)
    if not path.exists():
        return []
    with path.open("rb") as handle:
        size = handle.seek(0, 2)
        handle.seek(max(0, size - span))
        lines = _whole_lines(handle.read().decode("utf-8", errors="replace"))  # the first line may be cut
    if size > span:
        lines = lines[1:]  # the first one is cut
    return [_entry(line, None) for line in lines if line.strip()]


def _whole_lines(text: str) -> list[str]:
    """The lines of `text`, less a last one without its newline: another process signs outside the append
    lock and may be writing it right now (a reader can see part of a write in progress)."""
    return text.split("\n")[:-1]  # the text after the last newline: empty, or a line not yet written whole


def _entry(line: str, number: int | None) -> dict[str, Any]:
    item = json.loads(line)
    fmt = "c2sp-note" if item.get("note") else "json-v1"
    head = item.get("head_hash") if item.get("note") else json.loads(item["payload"])["head_hash"]
    return {**item, "format": fmt, "head_hash": head, "line": number}


def append(settings: Settings, entry: dict[str, Any]) -> None:
    """Add one signed checkpoint to the local log (one line, written with a single call)."""
    with log_path(settings).open("a") as handle:
        handle.write(json.dumps(entry) + "\n")


def settle(conn: psycopg.Connection, items: list[dict[str, Any]],
           stored: set[tuple[str, str]] | None = None) -> list[tuple[dict[str, Any], State]]:
    """Each local entry with its state against the database (see the module docstring).

    `stored`: the (payload, signature) pairs of the database's checkpoints, when the caller has them;
    otherwise each entry is looked up. A transaction too old for the server to remember is judged by
    the tree: a leftover's signed head is not the committed audit at its size.
    """
    out: list[tuple[dict[str, Any], State]] = []
    for item in items:
        key = (item["payload"], item["signature"])
        present = key in stored if stored is not None else audit_trail.has_checkpoint(conn, *key)
        if present:
            out.append((item, "stored"))
        elif not item.get("xact"):
            out.append((item, "missing"))
        else:
            out.append((item, _by_transaction(conn, item)))
    return out


def _by_transaction(conn: psycopg.Connection, item: dict[str, Any]) -> State:
    status = audit_trail.xact_status(conn, item["xact"])
    if status == "in progress":
        return "pending"
    if status == "aborted":
        return "rolled_back"
    if status == "committed":
        return "missing"
    committed = audit_trail.hash_at(conn, item["seq"])  # unknown: the server no longer remembers it
    return "rolled_back" if committed != item.get("head_hash") else "missing"
