"""The trail's keys by role, and their history across rotations.

Two roles, two keys (both Ed25519, in `<home>/keys/` beside each other):

* the **checkpoint key** (`Settings.signing_key_file`, or an external signer, `engine.trail.signer`) signs
  the log's checkpoints;
* the **certificate key** (`report-ca.ed25519.pem`) issues the certificate of the key that signs report
  PDFs (`engine.report.sign`); the checkpoint key certifies it once (a CA certificate), so verifiers
  that pin only the checkpoint key still reach it.

A new installation makes both when it signs its first checkpoint. An installation from before the split
has only the checkpoint key, which then also issues the report certificate, as it always did, until
`evidence trail rotate-key --certificates` gives certificates a key of their own.

Rotations are recorded in `key-history.jsonl` (append-only, one JSON line per rotation: the role, the
retired and the new public key, where the retired private key was archived, and for checkpoint keys the
tree size of the checkpoint both keys signed). Retired keys are kept, never deleted, in `keys/retired/`.
The history gives each checkpoint key the span of tree sizes it may sign (`spans`): the retired key up to
the rotation checkpoint, the new one from it on; a checkpoint signed by a retired key beyond its span is
refused. The log's name (origin) recorded at the first rotation stays the log's name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from engine.config import Settings
from engine.errors import ConfigError
from engine.trail import signing
from engine.trail.signer import FileSigner, Signer, command_signer

CERT_KEY_FILE = "report-ca.ed25519.pem"
REPORT_IDENTITY_FILE = "report-signing.pem"  # the report-signing key and its certificate chain (engine.report.sign)
HISTORY_FILE = "key-history.jsonl"
RETIRED_DIR = "retired"


def keys_dir(settings: Settings) -> Path:
    return settings.signing_key_file.parent


def cert_key_file(settings: Settings) -> Path:
    return keys_dir(settings) / CERT_KEY_FILE


def history_path(settings: Settings) -> Path:
    return keys_dir(settings) / HISTORY_FILE


def retired_dir(settings: Settings) -> Path:
    return keys_dir(settings) / RETIRED_DIR


def history(settings: Settings) -> list[dict[str, Any]]:
    """The rotations so far, oldest first (a last line without its newline is still being written)."""
    path = history_path(settings)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n")[:-1] if line.strip()]


def append_history(settings: Settings, entry: dict[str, Any]) -> None:
    """Record one rotation (one line, one write)."""
    path = history_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry, sort_keys=True) + "\n")


def log_origin(settings: Settings) -> str | None:
    """The log's name fixed at its first checkpoint-key rotation (the derived name follows the first key)."""
    return next((e["origin"] for e in history(settings) if e.get("role") == "checkpoints"), None)


def checkpoint_signer(settings: Settings) -> Signer | None:
    """The checkpoint signer: the external command when configured, else the key file (None when missing)."""
    external = command_signer(settings)
    if external is not None:
        return external
    key = signing.load_existing(settings.signing_key_file, settings.trail_passphrase)
    return None if key is None else FileSigner(key, settings.signing_key_file)


def current_public(settings: Settings) -> Ed25519PublicKey | None:
    """The current checkpoint key's public half (the external signer's, the `.pub`, or the key file's)."""
    external = command_signer(settings)
    if external is not None:
        return external.public_key()
    return signing.load_public(settings.signing_key_file, settings.trail_passphrase)


@dataclass(frozen=True)
class Span:
    """A checkpoint key and the tree sizes it may sign: `first`..`last` (None: no end, the current key)."""

    public: Ed25519PublicKey
    first: int
    last: int | None

    def covers(self, size: int) -> bool:
        return self.first <= size and (self.last is None or size <= self.last)


def _public(hex_key: str) -> Ed25519PublicKey:
    return Ed25519PublicKey.from_public_bytes(bytes.fromhex(hex_key))


def spans(settings: Settings) -> list[Span]:
    """Every checkpoint key with the tree sizes it may sign, oldest first; the current key last."""
    out: list[Span] = []
    start = 0
    for entry in (e for e in history(settings) if e.get("role") == "checkpoints"):
        out.append(Span(_public(entry["retired_public"]), start, entry["tree_size"]))
        start = entry["tree_size"]
    current = current_public(settings)
    if current is not None:
        out.append(Span(current, start, None))
    return out


def public_keys(settings: Settings) -> list[Ed25519PublicKey]:
    """Every checkpoint key, the current one first, then the retired ones (newest first)."""
    return [s.public for s in reversed(spans(settings))]


def keys_for_size(all_spans: list[Span], size: int) -> list[Ed25519PublicKey]:
    """The checkpoint keys that may sign a checkpoint of tree size `size`."""
    return [s.public for s in all_spans if s.covers(size)]


def cert_public_keys(settings: Settings) -> list[Ed25519PublicKey] | None:
    """The keys that issued report certificates: the certificate key and every key it replaced (the checkpoint
    key of an installation from before the split among them). None while there is no certificate key: the
    checkpoint key issues certificates (and verifiers accept it for them)."""
    path = cert_key_file(settings)
    if not path.exists():
        return None
    current = signing.load_public(path, settings.trail_passphrase)
    earlier = [_public(e["retired_public"]) for e in reversed(history(settings)) if e.get("role") == "certificates"]
    return [k for k in [current, *earlier] if k is not None]


def cert_issuer(settings: Settings) -> tuple[Ed25519PrivateKey, str]:
    """The key that issues the report-signing certificate, and its role in words: the certificate key, or on an
    installation from before the split the checkpoint key. ConfigError when neither exists."""
    key = signing.load_existing(cert_key_file(settings), settings.trail_passphrase)
    if key is not None:
        return key, "certificate key"
    if command_signer(settings) is not None:
        raise ConfigError(f"checkpoints are signed by EVIDENCE_TRAIL_SIGNER_COMMAND and there is no certificate key "
                          f"{cert_key_file(settings)} to issue the report-signing certificate: run 'evidence trail "
                          "rotate-key --certificates' to make one, or set EVIDENCE_REPORT_SIGNING_P12")
    key = signing.load_existing(settings.signing_key_file, settings.trail_passphrase)  # never made here
    if key is None:
        raise ConfigError(f"the trail signing key {settings.signing_key_file} is missing; restore it from your "
                          "backup, or set EVIDENCE_TRAIL_KEY_FILE to the key this deployment shares")
    return key, "checkpoint key (one key for both roles: 'evidence trail rotate-key --certificates' splits them)"


def create_cert_key(settings: Settings) -> bool:
    """Make the certificate key of a new installation (beside the checkpoint key just made). True when made."""
    return signing.load_or_create(cert_key_file(settings), settings.trail_passphrase)[1]
