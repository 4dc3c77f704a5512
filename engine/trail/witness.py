"""A witness of the trail: C2SP tlog-witness checks and tlog-cosignature/v1 signatures.

A witness has its own Ed25519 key and name (kept apart from the engine, on another machine in
production) and a state file: the origin, tree size and root of the last checkpoint it cosigned, and the
log key it trusts. Offered a checkpoint and an RFC 6962 consistency proof from that size, it verifies the
log's signature with the pinned key, the origin, and that the new tree extends the old one; only then does
it record the new state and return a signature line

    — <witness name> base64(key ID || 8-byte big-endian timestamp || Ed25519 signature)

over `cosignature/v1\\ntime <timestamp>\\n` and the note's text, the key ID being the first 4 bytes of
SHA-256(name || 0x0A || 0x04 || public key). A shrinking log, another root at the size it cosigned, or a
tree that does not extend it is refused (IntegrityError, exit 6) and the state is left as it was: a witness
never cosigns two histories, so a verifier requiring its cosignature cannot be shown a fork.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engine.errors import ConfigError, InputError, IntegrityError
from engine.trail import signing
from engine.trail.merkle import EMPTY_ROOT, verify_consistency
from engine.trail.notes import (
    COSIG_ALG,
    SIG_PREFIX,
    VerifyError,
    cosignature_message,
    note_key_id,
    parse_checkpoint,
    raw_public,
    split_note,
    verify_note,
)


class Identity(NamedTuple):
    """A witness: its key name and Ed25519 private key."""

    name: str
    key: Ed25519PrivateKey

    @property
    def vkey(self) -> str:
        return verifier_key(self.name, self.key.public_key())


class WitnessState(BaseModel):
    """The last checkpoint a witness cosigned (C2SP tlog-witness: one per log)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    origin: str = Field(description="The log's origin line")
    size: int = Field(ge=0, description="Tree size of the last checkpoint cosigned")
    root_hash: str = Field(description="Its root hash, hex")
    log_key: str = Field(description="The log's Ed25519 public key this witness trusts, raw hex")
    cosigned_at: int = Field(description="POSIX time of the last cosignature")


class Cosigned(NamedTuple):
    """What `cosign_with_state` did: the note cosigned, its cosignature line, the state written and the one
    before."""

    note: str
    line: str
    state: WitnessState
    previous: WitnessState | None


def verifier_key(name: str, public: Ed25519PublicKey) -> str:
    """The witness's C2SP verifier key `<name>+<hex key ID>+<base64(0x04 || public key)>`."""
    blob = base64.b64encode(bytes([COSIG_ALG]) + raw_public(public)).decode()
    return f"{name}+{note_key_id(name, public, COSIG_ALG).hex()}+{blob}"


def _vkey_file(key_file: Path) -> Path:
    return key_file.with_suffix(key_file.suffix + ".vkey")


def init(key_file: Path, name: str) -> tuple[Identity, bool]:
    """The witness key at `key_file`, made (PEM, mode 0600, with `<file>.vkey`) when missing. Returns
    (identity, created). An existing key keeps its name: another one is a ConfigError."""
    if not re.fullmatch(r"[^\s+]+", name):
        raise ConfigError(f"witness name {name!r} has a space or '+'; use a name such as witness.example.com/w1")
    if key_file.exists():
        return load(key_file, name), False
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    if not signing.publish_file(key_file, pem, mode=0o600):
        return load(key_file, name), False
    identity = Identity(name, key)
    signing.publish_file(_vkey_file(key_file), (identity.vkey + "\n").encode())
    return identity, True


def load(key_file: Path, name: str | None = None) -> Identity:
    """The witness at `key_file`; its name from `name`, else from `<file>.vkey` (written by `init`)."""
    if not key_file.exists():
        raise ConfigError(f"no witness key at {key_file}; make one with 'evidence trail witness init --key "
                          f"{key_file} --name NAME'")
    key = signing.load_existing(key_file)
    assert key is not None
    vkey = _vkey_file(key_file)
    known = vkey.read_text().split("+", 1)[0].strip() if vkey.exists() else None
    if name and known and name != known:
        raise ConfigError(f"{key_file} is the key of witness {known!r}, not {name!r}: a key cosigns under one name")
    if not (name or known):
        raise ConfigError(f"give the witness's --name ({vkey} is missing)")
    return Identity(name or known or "", key)


def read_state(path: Path) -> WitnessState | None:
    """The state file's last cosigned checkpoint; None when the file does not exist yet."""
    if not path.exists():
        return None
    try:
        return WitnessState.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise ConfigError(f"{path} is not a witness state file ({exc.error_count()} problem(s)); restore it: a "
                          "witness without its state cannot tell a fork from a new log") from exc


def write_state(path: Path, state: WitnessState) -> None:
    """Replace the state file atomically (written aside, synced, renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(state.model_dump(), indent=2) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _when(stamp: int) -> str:
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _check(state: WitnessState | None, origin: str | None, size: int, root: bytes, proof: list[bytes],
           note_origin: str) -> None:
    """Refuse what a witness must never cosign (C2SP tlog-witness), saying what differs."""
    pinned = origin or (state.origin if state else None)
    if pinned is not None and note_origin != pinned:
        raise IntegrityError(f"the checkpoint names the log {note_origin!r}; this witness watches {pinned!r}")
    if size == 0 and root != EMPTY_ROOT:
        raise IntegrityError("a checkpoint of tree size 0 must have the empty tree's root")
    old_size, old_root = (state.size, bytes.fromhex(state.root_hash)) if state else (0, EMPTY_ROOT)
    seen = f"this witness cosigned tree size {old_size} (root {old_root.hex()[:16]}…)" + (
        f" on {_when(state.cosigned_at)}" if state else "")
    if size < old_size:
        raise IntegrityError(f"the log shrank: offered tree size {size}, but {seen}: records were removed")
    if size == old_size and root != old_root:
        raise IntegrityError(f"fork: offered tree size {size} with root {root.hex()[:16]}…, but {seen}: two roots "
                             "for one tree size; not cosigned")
    if not verify_consistency(old_size, size, old_root, root, proof):
        raise IntegrityError(f"the checkpoint of tree size {size} (root {root.hex()[:16]}…) does not extend what "
                             f"{seen}: the consistency proof fails (a rewritten or forked log); not cosigned")


def cosign(identity: Identity, note: str, proof: list[bytes], log_key: Ed25519PublicKey,
           state: WitnessState | None, *, origin: str | None = None, now: int | None = None
           ) -> tuple[str, WitnessState]:
    """Check a checkpoint note and cosign it: (the cosignature line, the witness's new state).

    `proof` is the RFC 6962 consistency proof from the state's tree size to the note's. Raises IntegrityError
    when the note is not signed by `log_key`, names another origin, or does not extend the state; ConfigError
    when the state was kept for another log key.
    """
    if state is not None and state.log_key != raw_public(log_key).hex():
        raise ConfigError(f"the witness state was kept for the log key {state.log_key[:16]}…, not the one given "
                          f"({raw_public(log_key).hex()[:16]}…); a witness keeps one state file per log")
    try:
        body, _ = verify_note(note, log_key)
        checkpoint = parse_checkpoint(body)
    except VerifyError as exc:
        raise IntegrityError(f"not cosigned: {exc}") from exc
    _check(state, origin, checkpoint.size, checkpoint.root, proof, checkpoint.origin)
    stamp = int(time.time()) if now is None else now
    public = identity.key.public_key()
    blob = (note_key_id(identity.name, public, COSIG_ALG) + stamp.to_bytes(8, "big")
            + identity.key.sign(cosignature_message(body, stamp)))
    line = f"{SIG_PREFIX}{identity.name} {base64.b64encode(blob).decode()}"
    return line, WitnessState(origin=checkpoint.origin, size=checkpoint.size, root_hash=checkpoint.root.hex(),
                              log_key=raw_public(log_key).hex(), cosigned_at=stamp)


def cosign_with_state(identity: Identity, log_key: Ed25519PublicKey, state_file: Path,
                      offered: Callable[[int], tuple[str, list[bytes]]], *, origin: str | None = None) -> Cosigned:
    """Cosign what `offered(old size)` returns (a note and the consistency proof from that size), holding a lock
    on the state file from reading it to writing the new state, which is on disk before the line is returned
    (C2SP tlog-witness: two concurrent runs cannot roll the state back)."""
    lock = state_file.with_name(state_file.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        previous = read_state(state_file)
        note, proof = offered(previous.size if previous else 0)
        line, state = cosign(identity, note, proof, log_key, previous, origin=origin)
        write_state(state_file, state)
    return Cosigned(note, line, state, previous)


def add_cosignatures(note: str, lines: list[str]) -> str:
    """`note` with the cosignature lines added after its signatures (one per key name and ID: a line of a key
    that already signed the note is left out)."""
    _, signatures = split_note(note)
    keys = {(name, blob[:4]) for name, blob in signatures}
    out = note if note.endswith("\n") else note + "\n"
    for line in lines:
        name, blob = split_note(f"-\n\n{line}\n")[1][0]
        if (name, blob[:4]) not in keys:
            keys.add((name, blob[:4]))
            out += line.rstrip("\n") + "\n"
    return out


def format_request(old_size: int, proof: list[bytes], note: str) -> str:
    """A C2SP tlog-witness add-checkpoint body: `old <size>`, the proof's hashes in base64, an empty line, the note."""
    return "".join([f"old {old_size}\n", *(base64.b64encode(h).decode() + "\n" for h in proof), "\n", note])


def parse_request(text: str) -> tuple[int, list[bytes], str]:
    """(old size, consistency proof, note) of an add-checkpoint body. Raises InputError when malformed."""
    head, sep, note = text.partition("\n\n")
    lines = head.split("\n")
    match = re.fullmatch(r"old (0|[1-9][0-9]*)", lines[0])
    try:
        if not sep or match is None or len(lines) > 64:
            raise ValueError("expected 'old <size>', at most 63 proof lines, an empty line, then the checkpoint")
        proof = [base64.b64decode(line, validate=True) for line in lines[1:]]
        if any(len(h) != 32 for h in proof):
            raise ValueError("a proof line is not a base64 SHA-256 hash")
        old = int(match.group(1))
        if old > parse_checkpoint(split_note(note)[0]).size:
            raise ValueError(f"old size {old} is larger than the checkpoint's")
    except (ValueError, VerifyError) as exc:
        raise InputError(f"not a tlog-witness add-checkpoint request: {exc}") from exc
    return old, proof, note


def request_offer(request: str) -> Callable[[int], tuple[str, list[bytes]]]:
    """What `cosign_with_state` is offered by a request made elsewhere: its note and proof, when the request's old
    size is the size this witness last cosigned (else InputError naming that size, C2SP's 409)."""
    old, proof, note = parse_request(request)

    def offered(size: int) -> tuple[str, list[bytes]]:
        if size != old:
            raise InputError(f"the request proves from tree size {old}; this witness last cosigned tree size {size}: "
                             f"make the request again with 'evidence trail witness request --old {size}'")
        return note, proof

    return offered
