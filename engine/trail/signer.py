"""Who signs checkpoints: a `Signer` is anything with `sign(message) -> Ed25519 signature` and `public_key()`.

Two implementations:

* `FileSigner`: the Ed25519 key in a PEM file beside the trail (`engine.trail.signing`), the default;
* `CommandSigner`: an external command (`EVIDENCE_TRAIL_SIGNER_COMMAND`) that reads the message on stdin
  and writes its 64-byte Ed25519 signature on stdout, raw or as hex, exit status 0. It fronts whatever
  holds the key (a PKCS#11 token through `pkcs11-tool`, a cloud KMS through its CLI); the engine never
  sees the private key. Its public key is configured (`EVIDENCE_TRAIL_SIGNER_PUBLIC_KEY`) and every
  signature the command returns is verified with it before use, so a misconfigured command (the wrong
  key, a truncated output) fails loudly instead of writing a checkpoint nobody can verify.

docs/trail.md ("Key custody") shows wrappers for PKCS#11 and for a KMS.
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from engine.config import Settings
from engine.errors import ConfigError
from engine.trail.notes import VerifyError, load_public_key

SIGNER_TIMEOUT_S = 30.0


@runtime_checkable
class Signer(Protocol):
    """What signs a checkpoint note: an Ed25519 signature over the message, and the public key that checks it.
    (`Ed25519PrivateKey` itself is one.)"""

    def sign(self, data: bytes) -> bytes: ...

    def public_key(self) -> Ed25519PublicKey: ...


@dataclass(frozen=True)
class FileSigner:
    """An Ed25519 private key read from a file (`path`)."""

    key: Ed25519PrivateKey
    path: Path

    def sign(self, data: bytes) -> bytes:
        return self.key.sign(data)

    def public_key(self) -> Ed25519PublicKey:
        return self.key.public_key()


@dataclass(frozen=True)
class CommandSigner:
    """An external command that signs: message on stdin, 64-byte Ed25519 signature (raw or hex) on stdout."""

    command: str
    public: Ed25519PublicKey

    def public_key(self) -> Ed25519PublicKey:
        return self.public

    def sign(self, data: bytes) -> bytes:
        where = f"EVIDENCE_TRAIL_SIGNER_COMMAND ({self.command!r})"
        try:
            done = subprocess.run(shlex.split(self.command), input=data, capture_output=True,
                                  timeout=SIGNER_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ConfigError(f"{where} could not be run: {exc}") from exc
        if done.returncode != 0:
            tail = done.stderr.decode("utf-8", errors="replace").strip()[-300:]
            raise ConfigError(f"{where} failed with exit status {done.returncode}: {tail or '(no message)'}")
        signature = _signature(done.stdout)
        if signature is None:
            raise ConfigError(f"{where} wrote {len(done.stdout)} bytes; expected a 64-byte Ed25519 signature, raw "
                              "or as 128 hex characters")
        try:
            self.public.verify(signature, data)
        except InvalidSignature as exc:
            raise ConfigError(f"{where} returned a signature that does not verify with "
                              "EVIDENCE_TRAIL_SIGNER_PUBLIC_KEY: the command signs with another key (or another "
                              "algorithm than Ed25519); nothing was signed") from exc
        return signature


def _signature(out: bytes) -> bytes | None:
    if len(out) == 64:
        return out
    text = out.strip()
    if len(text) == 128:
        try:
            return bytes.fromhex(text.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            return None
    return None


def command_signer(settings: Settings) -> CommandSigner | None:
    """The configured external signer, or None when EVIDENCE_TRAIL_SIGNER_COMMAND is unset."""
    if not settings.trail_signer_command:
        return None
    path = settings.trail_signer_public_key
    if path is None:
        raise ConfigError("EVIDENCE_TRAIL_SIGNER_COMMAND is set without EVIDENCE_TRAIL_SIGNER_PUBLIC_KEY: give the "
                          "external signer's Ed25519 public key (PEM or 64 hex characters), so every signature it "
                          "returns is checked")
    try:
        public = load_public_key(path.read_bytes())
    except (OSError, VerifyError) as exc:
        raise ConfigError(f"EVIDENCE_TRAIL_SIGNER_PUBLIC_KEY={path}: {exc}") from exc
    return CommandSigner(settings.trail_signer_command, public)
