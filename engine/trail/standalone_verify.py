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

The engine keeps this verifier's code in four modules the trail itself runs (engine/trail/merkle.py, notes.py,
pades.py and standalone_verify.py); `python -m engine.trail.standalone_build evidence_verify.py` writes them out
as the one file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization

from engine.trail.merkle import EMPTY_ROOT, leaf_hash, node_hash, verify_consistency, verify_inclusion
from engine.trail.notes import (
    COSIG_ALG,
    SIG_PREFIX,
    Checkpoint,
    Keys,
    VerifyError,
    WitnessKey,
    cosignature_message,
    cosigned_by,
    forks,
    key_list,
    load_public_key,
    load_public_keys,
    load_witness_key,
    note_key_id,
    parse_checkpoint,
    raw_public,
    split_note,
    verified_checkpoint,
    verify_note,
    witness_notes,
)
from engine.trail.pades import (
    DOC_MDP,
    CmsSignature,
    SignedRange,
    _check_signature,
    _dictionary_time,
    describe_tail,
    embedded_files,
    issuer_problem,
    parse_cms,
    signed_ranges,
    signer_usage_problem,
    trust_path,
)

# What the verifier offers a program that imports it (the engine does, and so may an auditor's own script).
__all__ = [
    "EMPTY_ROOT", "leaf_hash", "node_hash", "verify_consistency", "verify_inclusion",  # merkle
    "COSIG_ALG", "SIG_PREFIX", "Checkpoint", "Keys", "VerifyError", "WitnessKey", "cosignature_message",  # notes
    "cosigned_by", "forks", "key_list", "load_public_key", "load_public_keys", "load_witness_key", "note_key_id",
    "parse_checkpoint", "raw_public", "split_note", "verified_checkpoint", "verify_note", "witness_notes",
    "CmsSignature", "SignedRange", "describe_tail", "embedded_files", "issuer_problem", "parse_cms",  # pades
    "signed_ranges", "signer_usage_problem", "trust_path",
    "EXIT_FAILED", "PROOF_FORMAT", "Result", "check_records", "check_signature", "check_state",  # this module
    "check_witnesses", "main", "verify_bundle", "verify_report",
]

PROOF_FORMAT = "evidence-engine/inclusion-proof@1"
EXIT_FAILED = 6

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
