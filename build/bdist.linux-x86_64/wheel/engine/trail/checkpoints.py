"""Signed checkpoints of the trail's transparency log, in the C2SP tlog-checkpoint signed-note format.

A checkpoint is the note

    <origin>
    <tree size>
    <base64 RFC 6962 root hash of audits 1..size>

    — <origin> <base64(key ID || Ed25519 signature)>

signed with the Ed25519 key kept outside the database (`engine.trail.signing`). Each one is stored in the
database (`trail_checkpoints`) and appended to a local log next to the key (`checkpoints.jsonl`), so
deleting checkpoints from the database is noticed; `publish` appends the note to a witness file in a
folder of your choice (outside the database: another disk, a ticket system, an email). A new
checkpoint is refused when the live log no longer reproduces the latest signed root: the engine never
signs a rewritten history. Rows written before the signed-note format (a signed
`{seq, head_hash, signed_at}`) are still read and verified (`format = 'json-v1'`).
"""

from __future__ import annotations

import base64
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from pydantic import BaseModel, ConfigDict, Field

from engine.config import Settings
from engine.errors import EngineError, IntegrityError
from engine.report.standalone_verify import SIG_PREFIX, VerifyError, parse_checkpoint, split_note, verified_checkpoint
from engine.trail import signing
from engine.trail import store as audit_trail
from engine.trail import tree as trail_tree
from engine.trail.canonical import utc_timestamp

WITNESS_FILE = "trail-checkpoints.txt"


class Checkpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    seq: int = Field(description="The tree size: the checkpoint covers audits 1..seq")
    head_hash: str = Field(description="Record hash of audit `seq`")
    root_hash: str = Field(description="RFC 6962 root of the tree of size `seq`, hex")
    origin: str
    note: str = Field(description="The C2SP signed note, exactly as signed")
    signed_at: str
    key_fingerprint: str
    key_created: bool = False
    key_file: str


def log_path(settings: Settings) -> Path:
    return settings.signing_key_file.parent / "checkpoints.jsonl"


def origin_of(settings: Settings, key_fingerprint: str) -> str:
    """The checkpoint origin (also the signature's key name): configured, or derived from the key."""
    origin = settings.trail_origin or f"evidence-engine/{key_fingerprint[:16]}"
    if not re.fullmatch(r"[^\s+]+", origin):
        raise EngineError(f"EVIDENCE_TRAIL_ORIGIN {origin!r} has a space or '+'; use a name such as "
                          "example.com/evidence-trail")
    return origin


def file_checkpoints(settings: Settings) -> list[dict[str, Any]]:
    """Checkpoints recorded in the local log (empty when there is none), both formats."""
    path = log_path(settings)
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            item = json.loads(line)
            if item.get("note"):
                out.append({**item, "format": "c2sp-note", "head_hash": item.get("head_hash")})
            else:
                out.append({**item, "format": "json-v1", "head_hash": json.loads(item["payload"])["head_hash"]})
    return out


def _row(row: dict[str, Any], created: bool, key_file: Path) -> Checkpoint:
    return Checkpoint(seq=row["seq"], head_hash=row["head_hash"], root_hash=row["root_hash"], origin=row["origin"],
                      note=row["note"], signed_at=utc_timestamp(row["signed_at"]),
                      key_fingerprint=row["key_fingerprint"], key_created=created, key_file=str(key_file))


def create_checkpoint(conn: psycopg.Connection, settings: Settings) -> Checkpoint:
    """Sign the current tree. Raises EngineError when the trail is empty, IntegrityError when the live log
    no longer reproduces the latest signed checkpoint (it would bless a rewritten history)."""
    previous = audit_trail.latest_note_checkpoint(conn)  # read before the head: the head is then never behind it
    head = audit_trail.head(conn)
    if head is None:
        raise EngineError("the trail is empty: there is nothing to checkpoint yet; answer a question first")
    size = head[0]
    key, created = signing.load_or_create(settings.signing_key_file)
    fingerprint = signing.fingerprint(key.public_key())
    origin = origin_of(settings, fingerprint)
    leaves = trail_tree.leaves(audit_trail.record_hashes(conn, upto=size))
    sizes = [size] + ([previous["seq"]] if previous and previous["seq"] <= size else [])
    roots = trail_tree.roots_at(leaves, sizes)
    if previous is not None and (previous["seq"] > size or roots[previous["seq"]].hex() != previous["root_hash"]):
        raise IntegrityError(f"the live log does not reproduce the checkpoint signed at tree size {previous['seq']}: "
                             "it was rewritten or cut; no new checkpoint is signed. Run 'evidence trail verify'")
    root = roots[size]
    body = f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n"
    note = signing.sign_note(key, origin, body)
    _, sigs = split_note(note)
    now = datetime.now(UTC)
    row = {"seq": size, "head_hash": head[1], "signed_at": now, "key_fingerprint": fingerprint, "payload": body,
           "signature": sigs[0][1][4:].hex(), "format": "c2sp-note", "root_hash": root.hex(), "origin": origin,
           "note": note}
    audit_trail.insert_checkpoint(conn, **row)
    with log_path(settings).open("a") as handle:
        handle.write(json.dumps({"seq": size, "payload": body, "signature": row["signature"], "note": note,
                                 "key_fingerprint": fingerprint, "head_hash": head[1],
                                 "root_hash": root.hex()}) + "\n")
    return _row(row, created, settings.signing_key_file)


def latest(conn: psycopg.Connection) -> dict[str, Any] | None:
    """The most recent checkpoint in the database, either format (for reports)."""
    rows = audit_trail.checkpoints(conn)
    return max(rows, key=lambda c: (c["seq"], c["id"])) if rows else None


def covering(conn: psycopg.Connection, settings: Settings, seq: int) -> Checkpoint:
    """The latest signed-note checkpoint when it covers audit `seq`, else a new one of the current tree."""
    row = audit_trail.latest_note_checkpoint(conn)
    if row is not None and row["seq"] >= seq:
        return _row(row, False, settings.signing_key_file)
    return create_checkpoint(conn, settings)


def after_append(conn: psycopg.Connection, settings: Settings, seq: int) -> Checkpoint | None:
    """The checkpoint written after an append (ask, batch, amend), unless turned off by configuration."""
    return covering(conn, settings, seq) if settings.checkpoint_on_append else None


def publish(note: str, out_dir: Path) -> Path:
    """Append a signed note to the witness file in `out_dir` (notes separated by one empty line)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / WITNESS_FILE
    with path.open("a", encoding="utf-8") as handle:
        handle.write(("\n" if path.stat().st_size else "") + note)
    return path


def read_notes(path: Path) -> list[tuple[str, str]]:
    """Signed notes in a witness file (or in every witness file of a folder): (where, note text) pairs."""
    files = sorted(path.glob(f"**/{WITNESS_FILE}")) if path.is_dir() else [path]
    if path.is_dir() and not files:
        raise EngineError(f"no {WITNESS_FILE} under {path}; write one with 'evidence trail checkpoint --out {path}'")
    notes = []
    for file in files:
        lines, start, seen_sig = [], 1, False
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if not line and seen_sig:
                notes.append((f"{file}:{start}", "\n".join(lines) + "\n"))
                lines, start, seen_sig = [], number + 1, False
                continue
            lines.append(line)
            seen_sig = seen_sig or line.startswith(SIG_PREFIX)
        if any(lines):
            notes.append((f"{file}:{start}", "\n".join(lines) + "\n"))
    return notes


def parse_note(note: str, settings: Settings) -> dict[str, Any]:
    """A checkpoint note verified with the trail's public key: its size and root. Raises IntegrityError."""
    public = signing.load_public(settings.signing_key_file)
    try:
        if public is None:
            body, _ = split_note(note)
            raise VerifyError(f"no public key at {signing.public_key_path(settings.signing_key_file)} to check "
                              f"the checkpoint for size {parse_checkpoint(body).size}")
        checkpoint = verified_checkpoint(note, public)
    except VerifyError as exc:
        raise IntegrityError(str(exc)) from exc
    return {"origin": checkpoint.origin, "size": checkpoint.size, "root_hash": checkpoint.root.hex()}
