"""Signed checkpoints of the trail head: {seq, head_hash, signed_at} signed with Ed25519.

Each checkpoint is stored in the database (`trail_checkpoints`) and appended to a local log next
to the key (`checkpoints.jsonl`), so deleting checkpoints from the database is noticed too.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from pydantic import BaseModel, ConfigDict

from engine import audit_trail, signing
from engine.canonical import canonical_json, utc_timestamp
from engine.config import Settings
from engine.errors import EngineError


class Checkpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    seq: int
    head_hash: str
    signed_at: str
    key_fingerprint: str
    signature: str
    key_created: bool = False
    key_file: str


def log_path(settings: Settings) -> Path:
    return settings.signing_key_file.parent / "checkpoints.jsonl"


def file_checkpoints(settings: Settings) -> list[dict[str, Any]]:
    """Checkpoints recorded in the local log (empty when there is none)."""
    path = log_path(settings)
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            item = json.loads(line)
            out.append({**item, "head_hash": json.loads(item["payload"])["head_hash"]})
    return out


def create_checkpoint(conn: psycopg.Connection, settings: Settings) -> Checkpoint:
    """Sign the current head of the chain. Raises EngineError when the trail is empty."""
    head = audit_trail.head(conn)
    if head is None:
        raise EngineError("the trail is empty: there is nothing to checkpoint yet; answer a question first")
    key, created = signing.load_or_create(settings.signing_key_file)
    now = datetime.now(UTC)
    payload = canonical_json({"seq": head[0], "head_hash": head[1], "signed_at": utc_timestamp(now)})
    signature = signing.sign(key, payload)
    fp = signing.fingerprint(key.public_key())
    audit_trail.insert_checkpoint(conn, seq=head[0], head_hash=head[1], signed_at=now, key_fingerprint=fp,
                                  payload=payload, signature=signature)
    with log_path(settings).open("a") as handle:
        handle.write(json.dumps({"seq": head[0], "payload": payload, "signature": signature,
                                 "key_fingerprint": fp}) + "\n")
    return Checkpoint(seq=head[0], head_hash=head[1], signed_at=utc_timestamp(now), key_fingerprint=fp,
                      signature=signature, key_created=created, key_file=str(settings.signing_key_file))


def latest(conn: psycopg.Connection) -> dict[str, Any] | None:
    """The most recent checkpoint in the database (for reports)."""
    rows = audit_trail.checkpoints(conn)
    return max(rows, key=lambda c: (c["seq"], c["id"])) if rows else None
