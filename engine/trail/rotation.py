"""`evidence trail rotate-key`: a new key in place of the current one, the old one retired and archived.

Checkpoint key: the engine checks the log as before any signing (`engine.trail.presign`), then signs a
checkpoint of the current tree with the new key and the old one (one C2SP note, two signature lines),
stores it like any other, archives the old key in `keys/retired/` (the private key as it was, encrypted
or not, and its `.pub`), records the rotation in `keys/key-history.jsonl` (`engine.trail.keyring`), and
only then puts the new key in place. Verifiers given both public keys accept the whole history: the old
key's checkpoints up to the rotation, the new key's from it on; the rotation checkpoint links the two.

Certificate key (`--certificates`): a new key to issue the report-signing certificate; the old one (or,
on an installation from before the split, the checkpoint key) is recorded as an earlier issuer, so old
reports still verify, and the report-signing key and certificate are archived so the next report gets a
new certificate from the new key.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from engine.config import Settings
from engine.errors import ConfigError
from engine.trail import checkpoints, keyring, signing
from engine.trail.notes import raw_public
from engine.trail.signer import FileSigner


def _archive(settings: Settings, path: Path, tag: str) -> Path:
    """Copy a key file (and its .pub) into keys/retired/ under a name that says whose and when; never overwrites."""
    target = keyring.retired_dir(settings) / f"{tag}-{path.name}"
    if not signing.publish_file(target, path.read_bytes(), mode=0o600):
        raise ConfigError(f"{target} already exists: a rotation of this key was begun before; look at "
                          f"{keyring.history_path(settings)} and keys/retired/ before rotating again")
    pub = signing.public_key_path(path)
    if pub.exists():
        signing.publish_file(signing.public_key_path(target), pub.read_bytes())
    return target


def _install(settings: Settings, key_file: Path, key: Ed25519PrivateKey) -> None:
    signing.replace_file(key_file, signing.private_pem(key, settings.trail_passphrase), mode=0o600)
    signing.replace_file(signing.public_key_path(key_file), (raw_public(key.public_key()).hex() + "\n").encode())


def _stamp(public: Ed25519PublicKey) -> str:
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{signing.fingerprint(public)[:16]}"


def rotate_checkpoint_key(conn: psycopg.Connection, settings: Settings) -> dict[str, Any]:
    """Rotate the checkpoint key (see the module docstring). Returns what was done. ConfigError when the key is
    held by an external signer or missing; IntegrityError when the log fails the checks before signing."""
    if settings.trail_signer_command:
        raise ConfigError("the checkpoint key is held by EVIDENCE_TRAIL_SIGNER_COMMAND: rotate it in the HSM or KMS "
                          "that holds it; 'rotate-key' rotates a key file")
    old = keyring.checkpoint_signer(settings)
    if not isinstance(old, FileSigner):
        raise ConfigError(f"there is no checkpoint key {settings.signing_key_file} to rotate: restore it from your "
                          "backup (a rotation is signed by the old key and the new one)")
    new = Ed25519PrivateKey.generate()
    checkpoint = checkpoints.create_checkpoint(conn, settings, rotate_to=new)
    archived = _archive(settings, old.path, _stamp(old.public_key()))
    entry = {"role": "checkpoints", "at": datetime.now(UTC).isoformat(), "origin": checkpoint.origin,
             "tree_size": checkpoint.seq, "root_hash": checkpoint.root_hash, "note": checkpoint.note,
             "retired": signing.fingerprint(old.public_key()), "retired_public": raw_public(old.public_key()).hex(),
             "archived": str(archived), "new": checkpoint.key_fingerprint,
             "new_public": raw_public(new.public_key()).hex()}
    keyring.append_history(settings, entry)
    _install(settings, old.path, new)
    return entry


def rotate_cert_key(settings: Settings) -> dict[str, Any]:
    """Give report certificates a new key (or, on an installation from before the split, a key of their own).
    Returns what was done."""
    path = keyring.cert_key_file(settings)
    old, role = keyring.cert_issuer(settings)
    new = Ed25519PrivateKey.generate()
    entry: dict[str, Any] = {"role": "certificates", "at": datetime.now(UTC).isoformat(),
                             "retired": signing.fingerprint(old.public_key()),
                             "retired_public": raw_public(old.public_key()).hex(), "retired_role": role.split(" (")[0],
                             "new": signing.fingerprint(new.public_key()),
                             "new_public": raw_public(new.public_key()).hex()}
    if path.exists():
        entry["archived"] = str(_archive(settings, path, _stamp(old.public_key())))
    identity = keyring.keys_dir(settings) / keyring.REPORT_IDENTITY_FILE
    if identity.exists():
        entry["archived_identity"] = str(_archive(settings, identity, _stamp(old.public_key())))
    keyring.append_history(settings, entry)
    _install(settings, path, new)
    if identity.exists():
        identity.unlink()  # archived above: the next report is signed under a certificate from the new key
    return entry
