"""The Ed25519 key that signs trail checkpoints. It lives in a file outside the database.

The private key is created on first use (PEM, PKCS#8, mode 0600) at `Settings.trail_key_file`;
its public key is written next to it (`.pub`, raw hex) so that a verifier can be given only the
public half. The fingerprint is the SHA-256 of the raw public key, in hex.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from engine.errors import ConfigError

_RAW = (serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def fingerprint(public: Ed25519PublicKey) -> str:
    return hashlib.sha256(public.public_bytes(*_RAW)).hexdigest()


def public_key_path(key_file: Path) -> Path:
    return key_file.with_suffix(key_file.suffix + ".pub")


def load_or_create(key_file: Path) -> tuple[Ed25519PrivateKey, bool]:
    """The signing key, created (with its .pub) when missing. Returns (key, created)."""
    if key_file.exists():
        try:
            key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{key_file} is not an unencrypted PEM private key: {exc}; restore it from "
                              "your backup (a new key cannot vouch for old checkpoints)") from exc
        if not isinstance(key, Ed25519PrivateKey):
            raise ConfigError(f"{key_file} holds a {type(key).__name__}; the trail signs with Ed25519")
        return key, False
    try:
        key_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ConfigError(f"cannot create {key_file.parent} for the signing key ({exc.strerror}); set "
                          "EVIDENCE_HOME (or EVIDENCE_TRAIL_KEY_FILE) to a place you can write to") from exc
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    public_key_path(key_file).write_text(key.public_key().public_bytes(*_RAW).hex() + "\n")
    return key, True


def load_public(key_file: Path) -> Ed25519PublicKey | None:
    """The public key: from `.pub` when present, else from the private key file; None if neither."""
    pub = public_key_path(key_file)
    if pub.exists():
        try:
            return Ed25519PublicKey.from_public_bytes(bytes.fromhex(pub.read_text().strip()))
        except ValueError as exc:
            raise ConfigError(f"{pub} does not hold a hex Ed25519 public key: {exc}") from exc
    if key_file.exists():
        return load_or_create(key_file)[0].public_key()
    return None


def sign(key: Ed25519PrivateKey, payload: str) -> str:
    return key.sign(payload.encode("utf-8")).hex()


def verify(public: Ed25519PublicKey, payload: str, signature_hex: str) -> bool:
    try:
        public.verify(bytes.fromhex(signature_hex), payload.encode("utf-8"))
    except (InvalidSignature, ValueError):
        return False
    return True
