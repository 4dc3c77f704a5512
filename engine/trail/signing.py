"""The Ed25519 key that signs trail checkpoints (and vouches for report signatures). It lives in a
file outside the database.

The private key is created on first use (PEM, PKCS#8, mode 0600) at `Settings.trail_key_file`, and
only while the log has no signed checkpoint (`engine.trail.presign.signing_key` decides); encrypted
(PKCS#8, the best encryption `cryptography` offers) when a passphrase is configured
(`Settings.trail_passphrase`), and an encrypted key is read only with it;
its public key is written next to it (`.pub`, raw hex) so that a verifier can be given only the
public half (`evidence trail public-key` prints it as PEM). The fingerprint is the SHA-256 of the
raw public key, in hex. Checkpoints are C2SP signed notes (`sign_note`): the text, a blank line,
and `— <key name> <base64(key ID || signature)>`, the key ID being the first 4 bytes of
SHA-256(name || 0x0A || 0x01 || public key).
"""

from __future__ import annotations

import base64
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from engine.errors import ConfigError
from engine.trail.notes import SIG_PREFIX, note_key_id, raw_public

_RAW = (serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def fingerprint(public: Ed25519PublicKey) -> str:
    return hashlib.sha256(public.public_bytes(*_RAW)).hexdigest()


def public_key_path(key_file: Path) -> Path:
    return key_file.with_suffix(key_file.suffix + ".pub")


def load_or_create(key_file: Path, passphrase: bytes | None = None) -> tuple[Ed25519PrivateKey, bool]:
    """The signing key, created (with its .pub) when missing, encrypted with `passphrase` when one is given.
    Returns (key, created)."""
    if key_file.exists():
        return _load(key_file, passphrase), False
    try:
        key_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ConfigError(f"cannot create {key_file.parent} for the signing key ({exc.strerror}); set "
                          "EVIDENCE_HOME (or EVIDENCE_TRAIL_KEY_FILE) to a place you can write to") from exc
    key = Ed25519PrivateKey.generate()
    pem = private_pem(key, passphrase)
    if not publish_file(key_file, pem, mode=0o600):  # another process created it first: use theirs
        return _load(key_file, passphrase), False
    publish_file(public_key_path(key_file), (key.public_key().public_bytes(*_RAW).hex() + "\n").encode())
    return key, True


def load_existing(key_file: Path, passphrase: bytes | None = None) -> Ed25519PrivateKey | None:
    """The signing key when its file exists, else None: never creates one (see `engine.trail.presign`)."""
    return _load(key_file, passphrase) if key_file.exists() else None


PASSPHRASE_HINT = ("give its passphrase with EVIDENCE_TRAIL_KEY_PASSPHRASE_FILE (a file holding it, e.g. a secret "
                   "mounted by the service manager) or EVIDENCE_TRAIL_KEY_PASSPHRASE")


def private_pem(key: Any, passphrase: bytes | None) -> bytes:
    """PEM (PKCS#8) of a private key, encrypted with `passphrase` when one is given."""
    encryption = (serialization.BestAvailableEncryption(passphrase) if passphrase
                  else serialization.NoEncryption())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def load_private_pem(data: bytes, passphrase: bytes | None, where: Path) -> Any:
    """The private key of PEM `data`, decrypted with `passphrase` when the PEM is encrypted. ConfigError naming
    `where` when it is encrypted and no passphrase (or the wrong one) is given."""
    encrypted = b"ENCRYPTED PRIVATE KEY" in data
    if encrypted and not passphrase:
        raise ConfigError(f"{where} is encrypted: {PASSPHRASE_HINT}")
    try:
        return serialization.load_pem_private_key(data, password=passphrase if encrypted else None)
    except (ValueError, TypeError) as exc:
        if encrypted:
            raise ConfigError(f"the passphrase does not decrypt {where}; {PASSPHRASE_HINT}") from exc
        raise ConfigError(f"{where} is not a PEM private key: {exc}; restore it from your backup (a new key "
                          "cannot vouch for old checkpoints)") from exc


def _load(key_file: Path, passphrase: bytes | None = None) -> Ed25519PrivateKey:
    key = load_private_pem(key_file.read_bytes(), passphrase, key_file)
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(f"{key_file} holds a {type(key).__name__}; the trail signs with Ed25519")
    return key


def _written_aside(path: Path, data: bytes, mode: int) -> str:
    """A new file beside `path` holding `data` with `mode`, complete when returned: its name."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def replace_file(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write `path` with `data` atomically (written aside, then renamed over it): a reader sees the old file or
    the new one, never part of one."""
    tmp = _written_aside(path, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def publish_file(path: Path, data: bytes, *, mode: int = 0o644) -> bool:
    """Create `path` with `data` only if it does not exist, atomically: written aside, then hard-linked.

    Concurrent processes (parallel `ask`, batch workers) may all try; exactly one wins and nobody can
    read a half-written file. Returns False when the file already existed.
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = _written_aside(path, data, mode)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)
    return True


def load_public(key_file: Path, passphrase: bytes | None = None) -> Ed25519PublicKey | None:
    """The public key: from `.pub` when present, else from the private key file; None if neither."""
    pub = public_key_path(key_file)
    if pub.exists():
        try:
            return Ed25519PublicKey.from_public_bytes(bytes.fromhex(pub.read_text().strip()))
        except ValueError as exc:
            raise ConfigError(f"{pub} does not hold a hex Ed25519 public key: {exc}") from exc
    if key_file.exists():
        return load_or_create(key_file, passphrase)[0].public_key()
    return None


def public_pem(public: Ed25519PublicKey) -> str:
    """The public key as PEM (SubjectPublicKeyInfo): what `evidence trail public-key` prints."""
    return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def verifier_key(name: str, public: Ed25519PublicKey) -> str:
    """The C2SP note verifier key `<name>+<hex key ID>+<base64(0x01 || public key)>`."""
    blob = base64.b64encode(b"\x01" + raw_public(public)).decode()
    return f"{name}+{note_key_id(name, public).hex()}+{blob}"


def sign_note(key: Any, name: str, text: str, also: tuple[Any, ...] = ()) -> str:
    """A C2SP signed note: `text` (newline-terminated), a blank line, one Ed25519 signature line by `key` (an
    `engine.trail.signer.Signer`: a private key, a file or an external signer), then one by each of `also` (a
    rotation's checkpoint: the new key first, the retired one after it)."""
    if not text.endswith("\n") or "\n\n" in text or " " in name or "+" in name or not name:
        raise ValueError("a note's text ends with a newline and has no blank line; a key name has no space or +")
    lines = [SIG_PREFIX + name + " " + base64.b64encode(note_key_id(name, k.public_key()) + k.sign(
        text.encode("utf-8"))).decode() + "\n" for k in (key, *also)]
    return f"{text}\n{''.join(lines)}"


def sign(key: Ed25519PrivateKey, payload: str) -> str:
    return key.sign(payload.encode("utf-8")).hex()


def verify(public: Ed25519PublicKey, payload: str, signature_hex: str) -> bool:
    try:
        public.verify(bytes.fromhex(signature_hex), payload.encode("utf-8"))
    except (InvalidSignature, ValueError):
        return False
    return True
