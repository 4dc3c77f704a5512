"""The log's side of witnessing: what a witness is offered (the latest checkpoint and a consistency proof
from the size it last cosigned), keeping the cosignature lines it returns (`trail_cosignatures`,
sql/016), and the cosigned checkpoint reports are proven in (`engine.trail.proofs`), its note carrying
every witness's line. The witness itself is `engine.trail.witness`.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

import psycopg
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from engine.config import Settings
from engine.errors import ConfigError, EngineError, IntegrityError
from engine.trail import checkpoints, keyring, witness
from engine.trail import store as audit_trail
from engine.trail import tree as trail_tree
from engine.trail.canonical import utc_timestamp
from engine.trail.notes import (
    SIG_PREFIX,
    VerifyError,
    WitnessKey,
    cosigned_by,
    parse_checkpoint,
    split_note,
    verified_checkpoint,
    witness_notes,
)


def offer(conn: psycopg.Connection, old_size: int) -> tuple[str, list[bytes]]:
    """The latest signed checkpoint note and the consistency proof to it from tree size `old_size`, built from
    the live log (the witness verifies it against the root it remembers, so the database is not trusted)."""
    row = audit_trail.latest_note_checkpoint(conn)
    if row is None:
        raise EngineError("no signed checkpoint to cosign yet: run 'evidence trail checkpoint'")
    leaves = trail_tree.leaves(audit_trail.record_hashes(conn, upto=row["seq"]))
    proof = trail_tree.consistency_proof(old_size, leaves) if old_size <= len(leaves) else []
    return row["note"], proof


def record(conn: psycopg.Connection, note: str, line: str, witness_key: Ed25519PublicKey, name: str
           ) -> bool:
    """Keep a witness's cosignature line of `note` once it verifies with the witness's key. False when kept
    before. Raises IntegrityError for a line that does not verify."""
    body, _ = split_note(note)
    good, _ = cosigned_by(f"{body}\n{line}\n", [(name, witness_key)])  # this very line, not another of the note
    if not good:
        raise IntegrityError(f"the cosignature line of witness {name} does not verify over this checkpoint")
    cp = parse_checkpoint(body)
    blob = base64.b64decode(line.split(" ")[2])
    return audit_trail.insert_cosignature(
        conn, origin=cp.origin, tree_size=cp.size, root_hash=cp.root.hex(), witness=name, key_id=blob[:4].hex(),
        cosigned_at=datetime.fromtimestamp(int.from_bytes(blob[4:12], "big"), UTC), line=line)


def keep(conn: psycopg.Connection, settings: Settings, text: str, pins: list[WitnessKey]) -> list[dict[str, Any]]:
    """Keep the cosignature lines of the pinned witnesses found in `text` (cosigned notes, as `witness cosign
    --request` prints them, or a witness file of them): each note must be a checkpoint signed by this trail's key,
    each line must verify. Returns what was found ({tree_size, witness, kept}); IntegrityError when none verifies."""
    public = keyring.public_keys(settings)
    if not public:
        raise ConfigError(f"no trail key at {settings.signing_key_file} to check the cosigned checkpoints with")
    found: list[dict[str, Any]] = []
    for where, note in witness_notes(text):
        try:
            size = verified_checkpoint(note, public).size
        except VerifyError as exc:
            raise IntegrityError(f"line {where}: {exc}; nothing of it kept") from exc
        for line in note.split("\n\n", 1)[1].splitlines():
            for name, key in pins:
                if not line.startswith(f"{SIG_PREFIX}{name} "):
                    continue
                try:
                    found.append({"tree_size": size, "witness": name, "kept": record(conn, note, line, key, name)})
                except IntegrityError:
                    continue  # another key under this name, or a forged line: not kept
    if not found:
        raise IntegrityError("no cosignature of a pinned witness verifies in the text given: nothing kept")
    return found


def witnessed(conn: psycopg.Connection, settings: Settings, seq: int) -> checkpoints.Checkpoint | None:
    """The latest checkpoint covering audit `seq` that a witness cosigned and this trail's key signed, its note
    carrying the cosignature lines kept for it; None when there is none."""
    row = audit_trail.latest_cosigned_checkpoint(conn, seq)
    public = keyring.public_keys(settings)
    if row is None or not public:
        return None
    try:
        if verified_checkpoint(row["note"], public).size != row["seq"]:
            return None
    except VerifyError:
        return None
    lines = audit_trail.cosignature_lines(conn, row["origin"], row["seq"], row["root_hash"])
    return checkpoints.Checkpoint(
        seq=row["seq"], head_hash=row["head_hash"], root_hash=row["root_hash"], origin=row["origin"],
        note=witness.add_cosignatures(row["note"], lines), signed_at=utc_timestamp(row["signed_at"]),
        key_fingerprint=row["key_fingerprint"], key_file=str(settings.signing_key_file))
