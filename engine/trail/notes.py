"""C2SP signed notes and tlog checkpoints (Ed25519), the trail's public keys, witness cosignatures
(cosignature/v1) and witness files, and forks: what no single append-only log can have signed.

Part of the standalone verifier (`engine.trail.standalone_build` writes it out as one file): standard library
plus `cryptography`. The trail signs and cosigns with these primitives (`signing`, `checkpoints`, `witness`).
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

SIG_PREFIX = "\u2014 "  # an em dash and a space open every signature line


class VerifyError(Exception):
    """A check failed; the message says which and why."""


def raw_public(key: ed25519.Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def note_key_id(name: str, key: ed25519.Ed25519PublicKey, alg: int = 1) -> bytes:
    """C2SP signed-note key ID: the first 4 bytes of SHA-256(name || 0x0A || alg || public key); `alg` 0x01 is
    a plain Ed25519 note signature, 0x04 a tlog-cosignature/v1 (a witness's)."""
    return hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([alg]) + raw_public(key)).digest()[:4]


def split_note(text: str) -> tuple[str, list[tuple[str, bytes]]]:
    """A signed note's text and its signature lines as (key name, key ID + signature bytes)."""
    if "\n\n" not in text:
        raise VerifyError("not a signed note: no blank line between the text and the signatures")
    body, _, sigs = text.partition("\n\n")
    body += "\n"
    signatures = []
    for line in sigs.splitlines():
        if not line:
            continue
        if not line.startswith(SIG_PREFIX) or line.count(" ") != 2:
            raise VerifyError(f"not a signed note: bad signature line {line[:60]!r}")
        _, name, blob = line.split(" ")
        try:
            signatures.append((name, base64.b64decode(blob, validate=True)))
        except ValueError as exc:
            raise VerifyError(f"not a signed note: signature of {name} is not base64") from exc
    if not signatures:
        raise VerifyError("not a signed note: no signature line")
    return body, signatures


Keys = ed25519.Ed25519PublicKey | list[ed25519.Ed25519PublicKey]  # one key, or a log's keys across rotations


def key_list(keys: Keys) -> list[ed25519.Ed25519PublicKey]:
    return list(keys) if isinstance(keys, list | tuple) else [keys]


def verify_note(text: str, key: Keys) -> tuple[str, str]:
    """The note's text and the key name whose Ed25519 signature by `key` (or one of several keys) verifies.
    Raises VerifyError."""
    body, signatures = split_note(text)
    for one in key_list(key):
        for name, blob in signatures:
            if len(blob) == 68 and blob[:4] == note_key_id(name, one):
                try:
                    one.verify(blob[4:], body.encode("utf-8"))
                except InvalidSignature as exc:
                    raise VerifyError(f"the checkpoint's signature by '{name}' does not verify with the given "
                                      "public key: the checkpoint was changed or forged") from exc
                return body, name
    names = ", ".join(name for name, _ in signatures)
    raise VerifyError(f"the checkpoint is not signed by the given public key (signed by: {names}); a checkpoint "
                      "signed by another key proves nothing about this trail")


@dataclass(frozen=True)
class Checkpoint:
    """A C2SP tlog checkpoint: origin, tree size, root hash (and any extension lines)."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()


def parse_checkpoint(body: str) -> Checkpoint:
    lines = body.split("\n")[:-1]
    if len(lines) < 3:
        raise VerifyError("a checkpoint needs three lines: origin, tree size, base64 root hash")
    origin, size, root = lines[:3]
    if not origin or not re.fullmatch(r"0|[1-9][0-9]*", size):
        raise VerifyError(f"bad checkpoint: origin {origin!r}, tree size {size!r}")
    try:
        digest = base64.b64decode(root, validate=True)
    except ValueError as exc:
        raise VerifyError("bad checkpoint: the root hash is not base64") from exc
    if len(digest) != 32:
        raise VerifyError("bad checkpoint: the root hash is not 32 bytes")
    return Checkpoint(origin, int(size), digest, tuple(lines[3:]))


def verified_checkpoint(note: str, key: Keys) -> Checkpoint:
    """Verify a signed checkpoint note with `key` and parse it. Raises VerifyError."""
    body, _ = verify_note(note, key)
    return parse_checkpoint(body)


def load_public_key(text: str | bytes) -> ed25519.Ed25519PublicKey:
    """An Ed25519 public key from PEM, 64 hex characters, or a note verifier key (name+id+base64)."""
    data = text.encode() if isinstance(text, str) else text
    stripped = data.strip()
    try:
        if stripped.startswith(b"-----BEGIN"):
            key = serialization.load_pem_public_key(stripped)
            if not isinstance(key, ed25519.Ed25519PublicKey):
                raise VerifyError(f"the public key is a {type(key).__name__}; the trail signs with Ed25519")
            return key
        if re.fullmatch(rb"[0-9a-fA-F]{64}", stripped):
            return ed25519.Ed25519PublicKey.from_public_bytes(bytes.fromhex(stripped.decode()))
        if stripped.count(b"+") >= 2:
            blob = base64.b64decode(stripped.split(b"+", 2)[2], validate=True)  # base64 may hold a +
            if len(blob) == 33 and blob[0] == 1:
                return ed25519.Ed25519PublicKey.from_public_bytes(blob[1:])
    except ValueError as exc:
        raise VerifyError(f"cannot read the public key: {exc}") from exc
    raise VerifyError("cannot read the public key: expected a PEM public key (evidence trail public-key), "
                      "64 hex characters, or a note verifier key")


def load_public_keys(data: bytes) -> list[ed25519.Ed25519PublicKey]:
    """Every Ed25519 public key of a file: several PEM blocks (a log's keys across a rotation), or one key."""
    blocks = re.findall(rb"-----BEGIN PUBLIC KEY-----.+?-----END PUBLIC KEY-----", data, re.S)
    return [load_public_key(b) for b in blocks] if len(blocks) > 1 else [load_public_key(data)]


# ---- Witness cosignatures (C2SP tlog-cosignature, cosignature/v1: Ed25519, key ID type 0x04) -----------------

COSIG_ALG = 4
WitnessKey = tuple[str, ed25519.Ed25519PublicKey]  # (key name, public key)


def cosignature_message(body: str, timestamp: int) -> bytes:
    """What a cosignature/v1 signs: `cosignature/v1`, `time <POSIX seconds>`, then the checkpoint note's text."""
    return f"cosignature/v1\ntime {timestamp}\n{body}".encode()


def load_witness_key(vkey: str) -> WitnessKey:
    """A witness's (name, public key) from its verifier key `<name>+<hex key ID>+<base64(0x04 || key)>`."""
    try:
        name, key_id, blob = vkey.strip().split("+", 2)
        raw = base64.b64decode(blob, validate=True)
        if len(raw) != 33 or raw[0] != COSIG_ALG:
            raise ValueError(f"type 0x{raw[:1].hex() or '??'}, {len(raw)} bytes; a cosignature/v1 key is 0x04 and "
                             "32 bytes (a type 0x01 key is a log's note key, not a witness's)")
        key = ed25519.Ed25519PublicKey.from_public_bytes(raw[1:])
    except ValueError as exc:
        raise VerifyError(f"witness key {vkey.strip()[:60]!r}: not a cosignature/v1 verifier key ({exc})") from exc
    if not name or note_key_id(name, key, COSIG_ALG).hex() != key_id.lower():
        raise VerifyError(f"witness key {vkey.strip()[:60]!r}: its key ID {key_id} is not the one of name "
                          f"{name!r} and its key")
    return name, key


def cosigned_by(note: str, witnesses: list[WitnessKey]) -> tuple[list[dict[str, Any]], list[str]]:
    """The pinned witnesses whose cosignature/v1 on `note` verifies ({name, time}), and the lines that name a
    pinned witness but do not verify. Signature lines of other keys are ignored (C2SP signed-note)."""
    body, signatures = split_note(note)
    good: dict[str, dict[str, Any]] = {}
    bad = []
    for name, key in witnesses:
        key_id = note_key_id(name, key, COSIG_ALG)
        for signer, blob in signatures:
            if signer != name or blob[:4] != key_id or name in good:
                continue
            stamp = int.from_bytes(blob[4:12], "big")
            try:
                if len(blob) != 76 or stamp >= 1 << 63:
                    raise InvalidSignature
                key.verify(blob[12:], cosignature_message(body, stamp))
                good[name] = {"name": name, "time": datetime.fromtimestamp(stamp, UTC).isoformat()}
            except InvalidSignature:
                bad.append(f"a cosignature line of witness {name} does not verify with its pinned key (forged, "
                           "or made over another checkpoint): not counted")
    return list(good.values()), bad
# ---- Witness files and forks: every checkpoint accepted so far, and what no single log can have signed -------

def witness_notes(text: str) -> list[tuple[int, str]]:
    """The signed notes of a witness file (notes one after another, a blank line after each one's
    signatures), each with the line it starts on."""
    notes: list[tuple[int, str]] = []
    lines: list[str] = []
    start, seen_sig = 1, False
    for number, line in enumerate(text.splitlines(), 1):
        if not line and seen_sig:
            notes.append((start, "\n".join(lines) + "\n"))
            lines, start, seen_sig = [], number + 1, False
            continue
        lines.append(line)
        seen_sig = seen_sig or line.startswith(SIG_PREFIX)
    if any(lines):
        notes.append((start, "\n".join(lines) + "\n"))
    return notes


def forks(seen: list[tuple[str, Checkpoint]]) -> list[str]:
    """What no single append-only log can have signed, in words: checkpoints naming two logs (origins), or
    one tree size with two roots. `seen` holds (where, checkpoint) pairs, each signature already verified."""
    problems = []
    origins = sorted({cp.origin for _, cp in seen})
    if len(origins) > 1:
        problems.append(f"checkpoints of {len(origins)} different logs: {', '.join(origins)}")
    first: dict[tuple[str, int], tuple[str, Checkpoint]] = {}
    told: set[tuple[str, int, bytes]] = set()
    for where, cp in seen:
        earlier = first.setdefault((cp.origin, cp.size), (where, cp))
        if earlier[1].root != cp.root and (cp.origin, cp.size, cp.root) not in told:
            told.add((cp.origin, cp.size, cp.root))
            problems.append(f"fork: {earlier[0]} and {where} both sign tree size {cp.size} of {cp.origin}, with "
                            f"different roots {earlier[1].root.hex()[:16]}… and {cp.root.hex()[:16]}…")
    return problems
