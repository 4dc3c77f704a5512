"""Signed checkpoints of the trail's transparency log, in the C2SP tlog-checkpoint signed-note format.

A checkpoint is the note

    <origin>
    <tree size>
    <base64 RFC 6962 root hash of audits 1..size>

    — <origin> <base64(key ID || Ed25519 signature)>

signed with the Ed25519 key kept outside the database (`engine.trail.signing`). Each one is stored in the
database (`trail_checkpoints`) and appended to a local log next to the key (`engine.trail.local_log`), so
deleting checkpoints from the database is noticed; `publish` appends the note to a witness file in a
folder of your choice (outside the database: another disk, a ticket system, an email). Before signing,
`engine.trail.presign` verifies the previous checkpoints (local log and database) with this host's key
and checks that the live log extends them: the engine never signs a rewritten history, never two roots
for one tree size, and never with a key other than the one that signed the log so far. Rows written
before the signed-note format (a signed `{seq, head_hash, signed_at}`) are still read and verified
(`format = 'json-v1'`).
"""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from pydantic import BaseModel, ConfigDict, Field

from engine.config import Settings
from engine.errors import EngineError, IntegrityError
from engine.trail import keyring, local_log, presign, signing
from engine.trail import store as audit_trail
from engine.trail.canonical import utc_timestamp
from engine.trail.notes import (
    VerifyError,
    parse_checkpoint,
    split_note,
    verified_checkpoint,
    witness_notes,
)
from engine.trail.signer import Signer

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
    return local_log.log_path(settings)


def origin_of(settings: Settings, key_fingerprint: str) -> str:
    """The checkpoint origin (also the signature's key name): configured, else the one kept at the first key
    rotation (`keyring.log_origin`), else derived from the key."""
    origin = settings.trail_origin or keyring.log_origin(settings) or f"evidence-engine/{key_fingerprint[:16]}"
    if not re.fullmatch(r"[^\s+]+", origin):
        raise EngineError(f"EVIDENCE_TRAIL_ORIGIN {origin!r} has a space or '+'; use a name such as "
                          "example.com/evidence-trail")
    return origin


def file_checkpoints(settings: Settings) -> list[dict[str, Any]]:
    """Checkpoints recorded in the local log (empty when there is none), both formats."""
    return local_log.entries(settings)


def signing_key(conn: psycopg.Connection, settings: Settings) -> tuple[Signer, bool]:
    """This host's signing key, created only while the log has no checkpoint (`presign.signing_key`)."""
    return presign.signing_key(conn, settings, local_log.latest_entries(settings))


def _row(row: dict[str, Any], created: bool, key_file: Path) -> Checkpoint:
    return Checkpoint(seq=row["seq"], head_hash=row["head_hash"], root_hash=row["root_hash"], origin=row["origin"],
                      note=row["note"], signed_at=utc_timestamp(row["signed_at"]),
                      key_fingerprint=row["key_fingerprint"], key_created=created, key_file=str(key_file))


def create_checkpoint(conn: psycopg.Connection, settings: Settings, *, rotate_to: Signer | None = None) -> Checkpoint:
    """Sign the current tree. Raises EngineError when the trail is empty; ConfigError when the key is missing
    although checkpoints exist (`presign.signing_key`); IntegrityError when a previous checkpoint is not signed
    by this key or the live log does not extend it (`presign.check`): signing would bless another history.

    Inside a transaction the caller has not committed yet (a batch), the local log's entry names that
    transaction, so a rollback leaves a recognisable leftover rather than a false tamper alarm.

    `rotate_to` (a key rotation, `engine.trail.rotation`): the checks are made with the current key, and the
    note is signed by `rotate_to` first and the current key after it, so either key vouches for it.
    """
    local = local_log.latest_entries(settings)
    priors = presign.previous(conn, settings, local)  # read before the head: the head is then never behind them
    head = audit_trail.head(conn)
    if head is None:
        raise EngineError("the trail is empty: there is nothing to checkpoint yet; answer a question first")
    size = head[0]
    key, created = presign.signing_key(conn, settings, local)
    origin = origin_of(settings, signing.fingerprint(key.public_key()))
    root = presign.check(conn, priors, key, origin, size, settings)  # O(log n): the stored tree's nodes
    body = f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n"
    note = signing.sign_note(rotate_to, origin, body, (key,)) if rotate_to else signing.sign_note(key, origin, body)
    fingerprint = signing.fingerprint((rotate_to or key).public_key())
    _, sigs = split_note(note)
    now = datetime.now(UTC)
    row: dict[str, Any] = {
        "seq": size, "head_hash": head[1], "signed_at": now, "key_fingerprint": fingerprint, "payload": body,
        "signature": sigs[0][1][4:].hex(), "format": "c2sp-note", "root_hash": root.hex(), "origin": origin,
        "note": note}
    xact = audit_trail.open_xact(conn)
    audit_trail.insert_checkpoint(conn, **row)
    local_log.append(settings, {"seq": size, "payload": body, "signature": row["signature"], "note": note,
                                "key_fingerprint": fingerprint, "head_hash": head[1], "root_hash": root.hex(),
                                **({"xact": xact} if xact else {})})
    return _row(row, created, settings.signing_key_file)


def latest(conn: psycopg.Connection) -> dict[str, Any] | None:
    """The most recent checkpoint in the database, either format (for reports)."""
    return audit_trail.latest_checkpoint(conn)  # by index: a trail may hold a checkpoint per audit


def covering(conn: psycopg.Connection, settings: Settings, seq: int) -> Checkpoint:
    """The latest signed-note checkpoint when it covers audit `seq`, else a new one of the current tree."""
    row = audit_trail.latest_note_checkpoint(conn)
    if row is not None and row["seq"] >= seq and _signed_here(row, settings):
        return _row(row, False, settings.signing_key_file)
    return create_checkpoint(conn, settings)  # an unsigned or foreign row: create_checkpoint says what is wrong


def _signed_here(row: dict[str, Any], settings: Settings) -> bool:
    public = keyring.current_public(settings)
    try:
        return public is not None and verified_checkpoint(row["note"] or "", public).size == row["seq"]
    except VerifyError:
        return False


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
    return [(f"{file}:{line}", note) for file in files
            for line, note in witness_notes(file.read_text(encoding="utf-8"))]


def parse_note(note: str, settings: Settings) -> dict[str, Any]:
    """A checkpoint note verified with the trail's checkpoint keys (the one that may sign its size, across
    rotations): its size and root. Raises IntegrityError."""
    spans = keyring.spans(settings)
    try:
        body, _ = split_note(note)
        size = parse_checkpoint(body).size
        public = keyring.keys_for_size(spans, size)
        if not spans:
            raise VerifyError(f"no public key at {signing.public_key_path(settings.signing_key_file)} to check "
                              f"the checkpoint for size {size}")
        if not public:
            raise VerifyError(f"no checkpoint key of this trail may sign tree size {size}")
        checkpoint = verified_checkpoint(note, public)
    except VerifyError as exc:
        raise IntegrityError(str(exc)) from exc
    return {"origin": checkpoint.origin, "size": checkpoint.size, "root_hash": checkpoint.root.hex()}
