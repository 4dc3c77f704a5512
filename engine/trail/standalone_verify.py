#!/usr/bin/env python3
"""Standalone verifier of Evidence Engine reports: Python 3.11+ standard library plus `cryptography`.

An outside auditor copies this one file and runs it with the trail's public key (the PEM printed
by `evidence trail public-key --all`: several blocks across a key rotation; it also certifies the
trail's certificate key, which issues the report signer's certificate), no engine, no database:

    python3 evidence_verify.py REPORT.pdf --public-key trail-key.pem
    python3 evidence_verify.py --proof PROOF.json --record AUD-….json --public-key trail-key.pem
    python3 evidence_verify.py REPORT.pdf --public-key trail-key.pem --state seen.txt --origin NAME
    python3 evidence_verify.py REPORT.pdf --public-key trail-key.pem --witness-key W1.vkey --witness-key W2.vkey

For a report PDF it checks, and says which check failed:
1. the PDF signature (PAdES, CMS detached): the report carries one signature (certified: no changes
   permitted), and its signed byte range covers the whole file except the signature value itself, so
   no byte was appended or changed after signing (an incremental update counts as a change, and so
   does a second signature over one, whoever made it); the CMS message digest equals the SHA-256 of
   the signed bytes; the signature verifies with the signer certificate; the signer certificate is
   issued by the trail key (or by a certificate given with --trust-cert, for an organisation's own
   certificate: its key usage must allow document signing, every issuer must be a CA, and the chain
   must be valid now, as a B-B signature carries no trusted time);
2. every audit record embedded in the PDF (`AUD-….json`, the canonical JSON the trail hashes) has an
   inclusion proof embedded beside it (`AUD-….proof.json`): SHA-256 of the record = the proof's record
   hash; the RFC 6962 leaf hash SHA-256(0x00 || record hash) leads along the audit path to the tree
   root; the root and tree size are those of a checkpoint in the C2SP signed-note format, signed with
   Ed25519 by the trail key.

Only the signed bytes are read for step 2, so nothing outside the signature can change what is checked.
3. with `--state FILE`: the report's checkpoints against every checkpoint this verifier accepted before
   (kept in FILE, a witness file): one tree size with two roots is a fork, and fails; the log's name is
   pinned (`--origin`, else the one in FILE). A verified report's checkpoints are added to FILE.
4. with `--witness-key VKEY` (repeatable) and `--min-witnesses N`: each of those checkpoints carries valid
   C2SP cosignature/v1 lines from at least N of the pinned witnesses (default: all of them), so a log that
   shows one history to some and another to others (a fork) needs the witnesses' keys too.
Exit status: 0 when everything verifies, 6 when anything does not, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

PROOF_FORMAT = "evidence-engine/inclusion-proof@1"
EXIT_FAILED = 6

# ---- RFC 6962 / RFC 9162 Merkle tree: hashes and proof verification ------------------------------------------

EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    """RFC 6962 leaf hash: SHA-256(0x00 || data). The trail's leaf data is the 32-byte record hash."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 6962 interior node hash: SHA-256(0x01 || left || right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def verify_inclusion(leaf: bytes, index: int, size: int, path: list[bytes], root: bytes) -> bool:
    """RFC 9162 section 2.1.3.2: does `path` prove leaf hash `leaf` at `index` in the tree of `size`?"""
    if not 0 <= index < size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: list[bytes]) -> bool:
    """RFC 9162 section 2.1.4.2: is the tree of `new_size` an append-only extension of the old one?"""
    if old_size > new_size or old_size < 0:
        return False
    if old_size == new_size:
        return not proof and old_root == new_root
    if old_size == 0:
        return not proof and old_root == EMPTY_ROOT
    if not proof:
        return False
    if old_size & (old_size - 1) == 0:  # a power of two: the old root is the first node of the path
        proof = [old_root, *proof]
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == old_root and sr == new_root


# ---- C2SP signed notes and tlog checkpoints (Ed25519) --------------------------------------------------------

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


def check_witnesses(result: Result, witnesses: list[WitnessKey], minimum: int) -> None:
    """Every checkpoint the records are proven in must carry valid cosignatures from `minimum` pinned witnesses."""
    pins = list({(n, raw_public(k)): (n, k) for n, k in witnesses}.values())
    for note in dict.fromkeys(result.checkpoints):
        size = parse_checkpoint(split_note(note)[0]).size
        good, bad = cosigned_by(note, pins)
        result.witnesses.append({"tree_size": size, "cosigned_by": good, "not_counted": bad, "required": minimum})
        if len(good) < minimum:
            missing = sorted({n for n, _ in pins} - {g["name"] for g in good})
            result.problems.append(
                f"the checkpoint of tree size {size} carries {len(good)} valid cosignature(s) from the pinned "
                f"witnesses, {minimum} required (none from: {', '.join(missing)}); a report made before the "
                "witnesses cosigned is issued again after 'evidence trail witness cosign'")


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


# ---- Inclusion-proof bundles: one audit record in one signed checkpoint --------------------------------------

def _hex32(value: Any, what: str) -> bytes:
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-f]{64}", value):
        raise VerifyError(f"{what} is not 64 lowercase hex characters")
    return bytes.fromhex(value)


def verify_bundle(bundle: dict[str, Any], record: bytes, key: Keys) -> dict[str, Any]:
    """Check one record against its inclusion-proof bundle and the bundle's signed checkpoint.

    Returns the facts checked (audit id, leaf index, tree size, root, origin). Raises VerifyError.
    """
    if bundle.get("format") != PROOF_FORMAT:
        raise VerifyError(f"not an inclusion proof: format {bundle.get('format')!r}, expected {PROOF_FORMAT}")
    audit_id = str(bundle.get("audit_id"))
    record_hash = _hex32(bundle.get("record_hash"), f"{audit_id}: record_hash")
    if hashlib.sha256(record).digest() != record_hash:
        raise VerifyError(f"{audit_id}: the embedded record does not hash to the proof's record hash: the record "
                          "was edited, or the proof belongs to another record")
    try:
        envelope = json.loads(record.decode("utf-8"))
        seq, inner_id = int(envelope["seq"]), envelope["record"]["audit_id"]
    except (ValueError, KeyError, TypeError) as exc:
        raise VerifyError(f"{audit_id}: the embedded record is not an audit record envelope ({exc})") from exc
    index, size = bundle.get("leaf_index"), bundle.get("tree_size")
    if inner_id != audit_id or not isinstance(index, int) or index != seq - 1:
        raise VerifyError(f"{audit_id}: the proof names audit {audit_id} at leaf {index}, the record is {inner_id} "
                          f"at seq {seq} (leaf {seq - 1}): a proof of another record")
    if not isinstance(size, int) or not isinstance(bundle.get("inclusion_path"), list):
        raise VerifyError(f"{audit_id}: the proof lacks a tree size or an inclusion path")
    root = _hex32(bundle.get("root_hash"), f"{audit_id}: root_hash")
    path = [_hex32(p, f"{audit_id}: inclusion path entry") for p in bundle["inclusion_path"]]
    if not verify_inclusion(leaf_hash(record_hash), index, size, path, root):
        raise VerifyError(f"{audit_id}: the inclusion path does not lead from the record's leaf to the root "
                          f"of the tree of size {size}")
    checkpoint = verified_checkpoint(str(bundle.get("checkpoint", "")), key)
    if (checkpoint.size, checkpoint.root) != (size, root):
        raise VerifyError(f"{audit_id}: the signed checkpoint is for tree size {checkpoint.size}, root "
                          f"{checkpoint.root.hex()}; the proof claims size {size}, root {root.hex()}")
    return {"audit_id": audit_id, "seq": seq, "leaf_index": index, "tree_size": size, "root_hash": root.hex(),
            "record_hash": record_hash.hex(), "origin": checkpoint.origin}


# ---- DER and CMS SignedData (just what a PAdES signature needs) ----------------------------------------------

OIDS = {
    "2.16.840.1.101.3.4.2.1": "sha256", "2.16.840.1.101.3.4.2.2": "sha384", "2.16.840.1.101.3.4.2.3": "sha512",
    "1.2.840.113549.1.1.1": "rsa", "1.2.840.113549.1.1.11": "rsa-sha256", "1.2.840.113549.1.1.12": "rsa-sha384",
    "1.2.840.113549.1.1.13": "rsa-sha512", "1.2.840.113549.1.1.10": "rsa-pss",
    "1.2.840.10045.2.1": "ecdsa", "1.2.840.10045.4.3.2": "ecdsa-sha256", "1.2.840.10045.4.3.3": "ecdsa-sha384",
    "1.2.840.10045.4.3.4": "ecdsa-sha512", "1.3.101.112": "ed25519",
    "1.2.840.113549.1.7.2": "signedData", "1.2.840.113549.1.9.4": "messageDigest",
    "1.2.840.113549.1.9.5": "signingTime", "1.2.840.113549.1.9.16.2.47": "signingCertificateV2",
}
DIGESTS: dict[str, type[hashes.SHA256 | hashes.SHA384 | hashes.SHA512]] = {
    "sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512}


@dataclass(frozen=True)
class Tlv:
    tag: int
    data: bytes
    raw: bytes

    def children(self) -> list[Tlv]:
        return list(_read_all(self.data))


def _read(buf: bytes, pos: int) -> tuple[Tlv, int]:
    if pos + 2 > len(buf):
        raise VerifyError("bad DER in the signature: truncated")
    tag, length, start = buf[pos], buf[pos + 1], pos + 2
    if tag & 0x1F == 0x1F:
        raise VerifyError("bad DER in the signature: high tag numbers are not used by CMS")
    if length & 0x80:
        n = length & 0x7F
        if n == 0 or n > 4:
            raise VerifyError("bad DER in the signature: indefinite or huge length")
        length, start = int.from_bytes(buf[start:start + n], "big"), start + n
    end = start + length
    if end > len(buf):
        raise VerifyError("bad DER in the signature: a length runs past the end")
    return Tlv(tag, buf[start:end], buf[pos:end]), end


def _read_all(buf: bytes) -> Iterator[Tlv]:
    pos = 0
    while pos < len(buf):
        item, pos = _read(buf, pos)
        yield item


def _oid(tlv: Tlv) -> str:
    if tlv.tag != 0x06 or not tlv.data:
        raise VerifyError("bad DER in the signature: expected an object identifier")
    first, parts, value = tlv.data[0], [], 0
    parts += [str(min(first // 40, 2)), str(first - 40 * min(first // 40, 2))]
    for byte in tlv.data[1:]:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            parts.append(str(value))
            value = 0
    return ".".join(parts)


def _alg(tlv: Tlv) -> str:
    oid = _oid(tlv.children()[0])
    return OIDS.get(oid, oid)


@dataclass
class CmsSignature:
    signer: x509.Certificate
    certificates: list[x509.Certificate]
    digest: str
    signed_attrs: bytes  # re-tagged as SET OF, the bytes that are signed
    message_digest: bytes
    signature_alg: str
    signature: bytes
    signing_time: datetime | None
    signing_certificate_hash: bytes | None


def _attributes(tlv: Tlv) -> dict[str, Tlv]:
    out = {}
    for attr in tlv.children():
        oid_tlv, values = attr.children()[:2]
        out[OIDS.get(_oid(oid_tlv), _oid(oid_tlv))] = values.children()[0]
    return out


def _time(tlv: Tlv) -> datetime:
    text = tlv.data.decode("ascii")
    fmt = "%y%m%d%H%M%SZ" if tlv.tag == 0x17 else "%Y%m%d%H%M%SZ"
    return datetime.strptime(text, fmt).replace(tzinfo=UTC)


def parse_cms(der: bytes) -> CmsSignature:
    """The one signer of a CMS SignedData (detached), with its signed attributes. Raises VerifyError."""
    try:
        info, _ = _read(der, 0)
        oid, content = info.children()[:2]
        if OIDS.get(_oid(oid)) != "signedData":
            raise VerifyError("the signature is not CMS SignedData")
        items = content.children()[0].children()
        certs_tlv = next((t for t in items if t.tag == 0xA0), None)
        certificates = [x509.load_der_x509_certificate(c.raw) for c in (certs_tlv.children() if certs_tlv else [])]
        signer_infos = items[-1].children()
        if len(signer_infos) != 1:
            raise VerifyError(f"the signature has {len(signer_infos)} signers; a report has exactly one")
        si = signer_infos[0].children()
        sid, digest_alg = si[1], _alg(si[2])
        attrs_tlv = si[3]
        if attrs_tlv.tag != 0xA0:
            raise VerifyError("the signature has no signed attributes (PAdES requires them)")
        sig_alg, signature = _alg(si[4]), si[5].data
    except (IndexError, ValueError) as exc:
        raise VerifyError(f"the signature is not a CMS SignedData this verifier can read ({exc})") from exc
    signer = _find_signer(sid, certificates)
    attrs = _attributes(attrs_tlv)
    if "messageDigest" not in attrs:
        raise VerifyError("the signature's signed attributes hold no message digest")
    cert_hash = None
    if "signingCertificateV2" in attrs:
        first = attrs["signingCertificateV2"].children()[0].children()[0].children()
        cert_hash = next(t.data for t in first if t.tag == 0x04)
    return CmsSignature(signer=signer, certificates=certificates, digest=digest_alg,
                        signed_attrs=b"\x31" + attrs_tlv.raw[1:], message_digest=attrs["messageDigest"].data,
                        signature_alg=sig_alg, signature=signature,
                        signing_time=_time(attrs["signingTime"]) if "signingTime" in attrs else None,
                        signing_certificate_hash=cert_hash)


def _find_signer(sid: Tlv, certificates: list[x509.Certificate]) -> x509.Certificate:
    if sid.tag == 0x30:  # IssuerAndSerialNumber
        issuer, serial = sid.children()[:2]
        number = int.from_bytes(serial.data, "big", signed=True)
        for cert in certificates:
            if cert.serial_number == number and cert.issuer.public_bytes() == issuer.raw:
                return cert
    elif sid.tag == 0x80:  # SubjectKeyIdentifier
        for cert in certificates:
            try:
                ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
            except x509.ExtensionNotFound:
                continue
            if ski == sid.data:
                return cert
    raise VerifyError("the signer's certificate is not in the signature")


def _check_signature(public: Any, cms: CmsSignature) -> None:
    data, sig = cms.signed_attrs, cms.signature
    digest = DIGESTS.get(cms.digest)
    if digest is None:
        raise VerifyError(f"unsupported digest algorithm {cms.digest}")
    try:
        if isinstance(public, rsa.RSAPublicKey) and cms.signature_alg == "rsa-pss":
            public.verify(sig, data, padding.PSS(padding.MGF1(digest()), digest().digest_size), digest())
        elif isinstance(public, rsa.RSAPublicKey):
            public.verify(sig, data, padding.PKCS1v15(), digest())
        elif isinstance(public, ec.EllipticCurvePublicKey):
            public.verify(sig, data, ec.ECDSA(digest()))
        elif isinstance(public, ed25519.Ed25519PublicKey):
            public.verify(sig, data)
        else:
            raise VerifyError(f"unsupported signer key type {type(public).__name__}")
    except InvalidSignature as exc:
        raise VerifyError("the PDF signature does not verify with the signer's certificate") from exc


def _issued_by_key(cert: x509.Certificate, keys: Keys) -> bool:
    for key in key_list(keys):
        try:
            key.verify(cert.signature, cert.tbs_certificate_bytes)
            return True
        except (InvalidSignature, TypeError):
            continue
    return False


def _issued_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    if cert.issuer != issuer.subject:
        return False
    try:
        cert.verify_directly_issued_by(issuer)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _valid_at(cert: x509.Certificate, when: datetime) -> bool:
    return cert.not_valid_before_utc <= when <= cert.not_valid_after_utc


# Extended key usages fit for signing a document: document signing (RFC 9336), e-mail protection (S/MIME
# signing certificates), Adobe's authentic documents and Microsoft's document signing, or any.
SIGNING_EKUS = {"1.3.6.1.5.5.7.3.36": "documentSigning", "1.3.6.1.5.5.7.3.4": "emailProtection",
                "1.2.840.113583.1.1.5": "Adobe authentic documents", "1.3.6.1.4.1.311.10.3.12": "MS document signing",
                "2.5.29.37.0": "anyExtendedKeyUsage"}


def _extension(cert: x509.Certificate, kind: type) -> Any:
    try:
        return cert.extensions.get_extension_for_class(kind).value
    except x509.ExtensionNotFound:
        return None


def signer_usage_problem(cert: x509.Certificate) -> str | None:
    """Why `cert` may not sign a document (its key usage or extended key usage says otherwise), or None.
    An absent extension restricts nothing (RFC 5280)."""
    name = cert.subject.rfc4514_string()
    usage = _extension(cert, x509.KeyUsage)
    if usage is not None and not (usage.digital_signature or usage.content_commitment):
        return f"certificate {name} is not for signatures (key usage has neither digitalSignature nor nonRepudiation)"
    extended = _extension(cert, x509.ExtendedKeyUsage)
    if extended is not None and not {u.dotted_string for u in extended} & set(SIGNING_EKUS):
        names = ", ".join(getattr(u, "_name", u.dotted_string) for u in extended)
        return (f"certificate {name} is not for signing documents (extended key usage {names}; expected one of "
                f"{', '.join(SIGNING_EKUS.values())})")
    return None


def issuer_problem(cert: x509.Certificate) -> str | None:
    """Why `cert` may not issue certificates (not a CA, or its key usage lacks keyCertSign), or None."""
    constraints = _extension(cert, x509.BasicConstraints)
    if constraints is None or not constraints.ca:
        return f"certificate {cert.subject.rfc4514_string()} is not a CA and cannot vouch for another certificate"
    usage = _extension(cert, x509.KeyUsage)
    if usage is not None and not usage.key_cert_sign:
        return f"certificate {cert.subject.rfc4514_string()} may not sign certificates (key usage lacks keyCertSign)"
    return None


def trust_path(cms: CmsSignature, key: Keys, anchors: list[x509.Certificate],
               now: datetime | None = None) -> list[str]:
    """The signer's chain up to the trail key or a trusted certificate, as subject names. Raises VerifyError.

    Each link's signature is checked; the signer's key usage must allow signing documents and every
    issuer must be a CA. Validity: at the signing time the signature claims; for a chain that ends at a
    --trust-cert certificate also now, since a PAdES B-B signature carries no trusted time (an expired
    certificate's holder could claim any earlier time). With a trusted timestamp (B-T), `now` is its time.
    No revocation: offline.
    """
    now = now or datetime.now(UTC)
    when = cms.signing_time or now
    cert, path, chain = cms.signer, [], []
    if (problem := signer_usage_problem(cert)) is not None:
        raise VerifyError(problem)
    for _ in range(8):
        path.append(cert.subject.rfc4514_string())
        chain.append(cert)
        if not _valid_at(cert, when):
            raise VerifyError(f"certificate {cert.subject.rfc4514_string()} was not valid at the signing time "
                              f"{when:%Y-%m-%d %H:%M:%S} UTC")
        if _issued_by_key(cert, key):
            return [*path, "the trail key"]
        anchor = next((a for a in anchors if a == cert or _issued_by(cert, a)), None)
        if anchor is not None:
            for c in chain if anchor == cert else [*chain, anchor]:
                if not _valid_at(c, now):
                    raise VerifyError(f"certificate {c.subject.rfc4514_string()} is not valid now (valid "
                                      f"{c.not_valid_before_utc:%Y-%m-%d} to {c.not_valid_after_utc:%Y-%m-%d}); "
                                      "without a trusted timestamp the signing time the signature claims cannot "
                                      "be relied on")
            if anchor != cert and (problem := issuer_problem(anchor)) is not None:
                raise VerifyError(problem)
            return path if anchor == cert else [*path, anchor.subject.rfc4514_string()]
        issuer = next((c for c in cms.certificates if c != cert and _issued_by(cert, c)), None)
        if issuer is None:
            break
        if (problem := issuer_problem(issuer)) is not None:
            raise VerifyError(problem)
        cert = issuer
    raise VerifyError(f"the signer certificate {cms.signer.subject.rfc4514_string()} is not issued by the trail "
                      "key nor by a trusted certificate (--trust-cert): whoever signed this PDF is not the engine")


# ---- PDF: the signature's byte range and the embedded files inside it ----------------------------------------

BYTE_RANGE = re.compile(rb"/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]")
DOC_MDP = re.compile(rb"/Perms\s*<<\s*/DocMDP\b")  # a certification signature (ISO 32000-1, 12.8.2.2)
EMBEDDED = re.compile(rb"/Type\s*/EmbeddedFile\b")
OBJ_HEADER = re.compile(rb"(\d+)\s+(\d+)\s+obj\b")


@dataclass
class SignedRange:
    start: int
    gap_start: int
    gap_end: int
    end: int
    der: bytes


def signed_ranges(pdf: bytes) -> list[SignedRange]:
    """Every signature byte range in the file whose gap is exactly a hex string <…> of a DER value."""
    found = []
    for match in BYTE_RANGE.finditer(pdf):
        a, b, c, d = (int(x) for x in match.groups())
        if a != 0 or not b < c <= len(pdf) or c + d > len(pdf):
            continue
        gap = pdf[b:c]
        if not re.fullmatch(rb"<[0-9A-Fa-f]*>", gap) or (len(gap) - 2) % 2:
            continue
        blob = bytes.fromhex(gap[1:-1].decode("ascii"))
        tlv, used = _read(blob, 0) if blob else (None, 0)
        if tlv is None or blob[used:].strip(b"\x00"):
            continue  # anything but zero padding after the DER value is not a signature we made
        found.append(SignedRange(a, b, c, c + d, tlv.raw))
    return found


def describe_tail(tail: bytes) -> str:
    """What bytes after the signed range hold, in words: incremental updates and the objects they change."""
    updates = tail.count(b"%%EOF")
    objects = []
    for match in OBJ_HEADER.finditer(tail):
        head = tail[match.end():match.end() + 300].split(b"endobj", 1)[0]
        kind = re.search(rb"/Type\s*/(\w+)", head)
        objects.append(f"{match.group(1).decode()} {match.group(2).decode()}"
                       + (f" ({kind.group(1).decode()})" if kind else ""))
    if updates or objects:
        shown = ", ".join(objects[:12]) + (" …" if len(objects) > 12 else "")
        return (f"{len(tail)} byte(s) after the signed range: {updates} incremental update(s)"
                + (f" writing object(s) {shown}" if objects else ""))
    return f"{len(tail)} byte(s) appended after the signed range (not a PDF update)"


def embedded_files(pdf: bytes) -> list[bytes]:
    """The contents of every embedded file stream (/Type /EmbeddedFile) in `pdf`, decoded when Flate."""
    out = []
    for match in EMBEDDED.finditer(pdf):
        begin = pdf.rfind(b"obj", 0, match.start())
        stream = re.compile(rb"stream\r?\n").search(pdf, match.end())
        if begin < 0 or stream is None:
            continue
        head = pdf[begin:stream.start()]
        length = re.search(rb"/Length\s+(\d+)(?!\s+\d+\s+R)", head)
        if length is None:
            continue
        data = pdf[stream.end():stream.end() + int(length.group(1))]
        filters = re.search(rb"/Filter\s*(\[[^\]]*\]|/\w+)", head)
        names = re.findall(rb"/(\w+)", filters.group(1)) if filters else []
        try:
            for name in names:
                if name != b"FlateDecode":
                    raise ValueError(f"filter {name.decode()}")
                data = zlib.decompress(data)
        except (ValueError, zlib.error):
            continue
        out.append(data)
    return out


# ---- The whole report ----------------------------------------------------------------------------------------

@dataclass
class Result:
    """Outcome of verifying one report: ok only when nothing failed."""

    file: str
    signature: dict[str, Any] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    checkpoints: list[str] = field(default_factory=list)  # the signed notes the proven records are in
    state: dict[str, Any] = field(default_factory=dict)
    witnesses: list[dict[str, Any]] = field(default_factory=list)  # per checkpoint: who cosigned it

    @property
    def ok(self) -> bool:
        return not self.problems and bool(self.records)

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "ok": self.ok, "signature": self.signature, "records": self.records,
                "problems": self.problems, **({"state": self.state} if self.state else {}),
                **({"witnesses": self.witnesses} if self.witnesses else {})}


def _dictionary_time(after_gap: bytes) -> datetime | None:
    """The /M date of the signature dictionary (the bytes after its /Contents), as UTC."""
    head = after_gap.split(b"endobj", 1)[0]
    match = re.search(rb"/M\s*\(D(?::|\\072)(\d{14})", head)
    return datetime.strptime(match.group(1).decode(), "%Y%m%d%H%M%S").replace(tzinfo=UTC) if match else None


def check_signature(pdf: bytes, key: Keys, anchors: list[x509.Certificate], result: Result,
                    trusted_time: datetime | None = None) -> bytes | None:
    """Check the PDF signature, the signer's chain valid at `trusted_time` (a verified timestamp's) when given;
    return the signed bytes (None when no signature could be checked)."""
    ranges = signed_ranges(pdf)
    if not ranges:
        result.problems.append("the PDF is not signed (no signature byte range): it was not written by a signing "
                               "engine, or its signature was removed")
        return None
    rng = min(ranges, key=lambda r: r.end)  # the first signature: the one over the report as issued
    signed = pdf[rng.start:rng.gap_start] + pdf[rng.gap_end:rng.end]
    result.signature = {"byte_range": [rng.start, rng.gap_start, rng.gap_end, rng.end - rng.gap_end],
                        "file_size": len(pdf), "covers_whole_file": rng.end == len(pdf),
                        "signatures": len(ranges), "certified": bool(DOC_MDP.search(signed))}
    if len(ranges) > 1:
        result.problems.append(f"the PDF carries {len(ranges)} signatures: a revision was added after the first "
                               "signature and signed again (whoever signed it); a report is signed once, certified "
                               "with no changes permitted")
    if rng.end != len(pdf):
        result.problems.append("the PDF was changed after it was signed: " + describe_tail(pdf[rng.end:]))
    try:
        cms = parse_cms(rng.der)
        if cms.signing_time is None:  # PAdES puts the claimed signing time in the signature dictionary (/M)
            cms.signing_time = _dictionary_time(pdf[rng.gap_end:rng.gap_end + 2000])
        cms.signing_time = trusted_time or cms.signing_time
        result.signature.update(signer=cms.signer.subject.rfc4514_string(), digest=cms.digest,
                                signing_time=cms.signing_time.isoformat() if cms.signing_time else None,
                                certificate_sha256=cms.signer.fingerprint(hashes.SHA256()).hex())
        digest = hashlib.new(cms.digest, signed).digest()
        if digest != cms.message_digest:
            raise VerifyError("the signed bytes do not hash to the digest in the signature: the PDF was changed "
                              "inside the signed range")
        if cms.signing_certificate_hash is not None and cms.signing_certificate_hash != hashlib.sha256(
                cms.signer.public_bytes(serialization.Encoding.DER)).digest():
            raise VerifyError("the signing-certificate attribute does not name the signer's certificate")
        _check_signature(cms.signer.public_key(), cms)
        result.signature["trust_path"] = trust_path(cms, key, anchors, trusted_time)
    except VerifyError as exc:
        result.problems.append(str(exc))
        return None
    return signed


def check_records(signed: bytes, key: Keys, result: Result) -> None:
    """Every embedded record must be proven included in a checkpoint signed by `key`."""
    records: dict[str, bytes] = {}
    proofs: list[dict[str, Any]] = []
    for data in embedded_files(signed):
        try:
            value = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
        if isinstance(value, dict) and value.get("format") == PROOF_FORMAT:
            proofs.append(value)
        elif isinstance(value, dict) and isinstance(value.get("record"), dict) and "seq" in value:
            records[hashlib.sha256(data).hexdigest()] = data
    if not records:
        result.problems.append("the signed PDF holds no embedded audit record (AUD-….json)")
    proven: set[str] = set()
    for proof in proofs:
        digest = str(proof.get("record_hash"))
        record = records.get(digest)
        if record is None:
            result.problems.append(f"{proof.get('audit_id')}: no embedded record hashes to the proof's record hash "
                                   f"{digest}: the record was edited, or the proof belongs to another record")
            continue
        try:
            result.records.append(verify_bundle(proof, record, key))
            proven.add(digest)
            result.checkpoints.append(str(proof["checkpoint"]))
        except VerifyError as exc:
            result.problems.append(str(exc))
    for digest, record in records.items():
        if digest not in proven:
            audit_id = json.loads(record)["record"].get("audit_id")
            result.problems.append(f"{audit_id}: embedded without a valid inclusion proof (record SHA-256 {digest})")


def verify_report(pdf: bytes, key: Keys, anchors: list[x509.Certificate] | None = None, name: str = "report.pdf",
                  cert_keys: Keys | None = None, trusted_time: datetime | None = None) -> Result:
    """Verify a report PDF's signature, then each embedded record's inclusion in a checkpoint signed by `key`
    (or one of several keys). The signer certificate is issued by `cert_keys` (by `key` when None: one key for
    both roles); `trusted_time`: a verified signature timestamp's time."""
    result = Result(file=name)
    signed = check_signature(pdf, key if cert_keys is None else cert_keys, list(anchors or []), result, trusted_time)
    if signed is not None:
        check_records(signed, key, result)
    return result


def check_state(result: Result, key: Keys, state_file: Path | None, origin: str | None) -> None:
    """Hold the report's checkpoints against those accepted before (`state_file`, a witness file this verifier
    keeps) and the pinned origin (`origin`, else the state's). A fork from them is a problem; when the
    report verifies, its checkpoints are added to the state file.

    Offline, a fork shows as one tree size with two roots (or another origin); checkpoints of different
    sizes need a consistency proof (`evidence trail consistency STATE-FILE` where the trail is).
    """
    seen: list[tuple[str, Checkpoint]] = []
    if state_file is not None and state_file.exists():
        for line, note in witness_notes(state_file.read_text(encoding="utf-8")):
            try:
                seen.append((f"{state_file}:{line}", verified_checkpoint(note, key)))
            except VerifyError as exc:
                result.problems.append(f"state file {state_file}:{line}: {exc}")
                return
    pinned = origin or (seen[0][1].origin if seen else None)
    new: list[tuple[str, Checkpoint, str]] = []
    for note in dict.fromkeys(result.checkpoints):
        cp = verified_checkpoint(note, key)
        new.append((f"{result.file} (tree size {cp.size})", cp, note))
        if pinned is not None and cp.origin != pinned:
            result.problems.append(f"the report's checkpoint names the log '{cp.origin}', expected '{pinned}' "
                                   f"({'--origin' if origin else f'the state file {state_file}'})")
    result.problems.extend(forks(seen + [(where, cp) for where, cp, _ in new]))
    known = {(cp.origin, cp.size, cp.root) for _, cp in seen}
    added = [note for _, cp, note in new if (cp.origin, cp.size, cp.root) not in known]
    if state_file is not None and result.ok and added:
        before = "\n" if state_file.exists() and state_file.stat().st_size else ""
        with state_file.open("a", encoding="utf-8") as handle:
            handle.write(before + "\n".join(added))
    sizes = sorted({cp.size for _, cp in seen})
    result.state = {"file": str(state_file) if state_file else None, "origin": pinned, "remembered": len(seen),
                    "added": len(added) if result.ok else 0, "sizes_seen": sizes}


def _anchors(paths: list[str]) -> list[x509.Certificate]:
    certs = []
    for path in paths:
        data = Path(path).read_bytes()
        certs += x509.load_pem_x509_certificates(data) if b"-----BEGIN" in data else [
            x509.load_der_x509_certificate(data)]
    return certs


def _print(result: dict[str, Any]) -> None:
    sig = result.get("signature") or {}
    if sig.get("signer"):
        print(f"signature: {sig['signer']} ({sig.get('digest')}, signed {sig.get('signing_time')}), "
              f"chain: {' <- '.join(sig.get('trust_path') or ['not trusted'])}")
        print(f"signed range: {sig['byte_range']} of {sig['file_size']} bytes"
              f"{'' if sig.get('covers_whole_file') else ' (NOT the whole file)'}")
    for r in result.get("records", []):
        print(f"proven {r['audit_id']}: record {r['record_hash']} is leaf {r['leaf_index']} of the tree of size "
              f"{r['tree_size']}, root {r['root_hash']}, checkpoint signed by {r['origin']}")
    state = result.get("state")
    if state:
        print(f"state: {state['remembered']} checkpoint(s) accepted before (sizes {state['sizes_seen']}), origin "
              f"{state['origin']}; {state['added']} added to {state['file']}")
    for w in result.get("witnesses", []):
        names = ", ".join(f"{c['name']} ({c['time']})" for c in w["cosigned_by"]) or "no pinned witness"
        print(f"witnessed: tree size {w['tree_size']} cosigned by {names}; {w['required']} required")
        for line in w["not_counted"]:
            print(f"note: {line}", file=sys.stderr)
    for p in result.get("problems", []):
        print(f"FAIL {p}", file=sys.stderr)
    print("OK: the report verifies" if result["ok"] else "FAILED: the report does not verify")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pdf", nargs="?", help="a report PDF written by Evidence Engine")
    parser.add_argument("--public-key", required=True, help="the trail's public key (PEM from 'evidence trail "
                        "public-key', several PEM blocks across a key rotation, 64 hex characters, or a note "
                        "verifier key)")
    parser.add_argument("--cert-key", help="pin the trail's certificate key (PEM from 'evidence trail public-key "
                        "--certificates') instead of reaching it through the checkpoint key that certifies it")
    parser.add_argument("--trust-cert", action="append", default=[],
                        help="a certificate (PEM/DER) trusted to sign reports, when an organisation's certificate "
                             "signs them instead of the engine's own (repeatable)")
    parser.add_argument("--proof", help="an inclusion-proof bundle (evidence trail prove AUD-…), with --record")
    parser.add_argument("--record", help="the canonical record it proves (evidence trail show AUD-… --json, or "
                                         "the AUD-….json extracted from a report)")
    parser.add_argument("--state", help="a file this verifier keeps (a witness file of the checkpoints it accepted): "
                        "a report whose checkpoint forks from them fails; a verified one's are added")
    parser.add_argument("--origin", help="the log's name (origin) every checkpoint must carry, e.g. "
                        "evidence-engine/1a2b3c4d5e6f7a8b; default: the one in --state, if any")
    parser.add_argument("--witness-key", action="append", default=[], help="a witness's cosignature/v1 verifier "
                        "key (name+id+base64, or a file holding one) pinned to count its cosignatures (repeatable)")
    parser.add_argument("--min-witnesses", type=int, help="cosignatures from this many pinned witnesses each "
                        "checkpoint must carry (default: every --witness-key)")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    args = parser.parse_args(argv)
    try:
        key = load_public_keys(Path(args.public_key).read_bytes())
        cert_keys = load_public_keys(Path(args.cert_key).read_bytes()) if args.cert_key else None
        witnesses = [load_witness_key(Path(w).read_text() if Path(w).is_file() else w) for w in args.witness_key]
    except (OSError, VerifyError) as exc:
        parser.error(str(exc))
    minimum = len(witnesses) if args.min_witnesses is None else args.min_witnesses
    if not 0 <= minimum <= len(witnesses):
        parser.error(f"--min-witnesses {minimum} needs at least that many --witness-key (given {len(witnesses)})")
    if args.proof or args.record:
        if not (args.proof and args.record) or args.pdf:
            parser.error("--proof and --record go together, without a PDF")
        outcome = Result(file=args.record)
        try:
            bundle = json.loads(Path(args.proof).read_text(encoding="utf-8"))
            outcome.records.append(verify_bundle(bundle, Path(args.record).read_bytes().rstrip(b"\n"), key))
            outcome.checkpoints.append(str(bundle["checkpoint"]))
        except (OSError, ValueError, VerifyError) as exc:
            outcome.problems.append(str(exc))
    elif args.pdf:
        outcome = verify_report(Path(args.pdf).read_bytes(), key, _anchors(args.trust_cert), args.pdf, cert_keys)
    else:
        parser.error("give a report PDF, or --proof and --record")
    if witnesses:
        check_witnesses(outcome, witnesses, minimum)
    if args.state or args.origin:
        check_state(outcome, key, Path(args.state) if args.state else None, args.origin)
    result = outcome.as_dict()
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0 if outcome.ok else EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
