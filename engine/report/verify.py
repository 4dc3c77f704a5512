"""`evidence report verify FILE.pdf`: is this the report the engine signed, and is its record in the trail?

Three layers, each reported:
1. **Offline** (`engine.trail.standalone_verify`, the same code an outside auditor runs): the PDF signature
   covers every byte of the file (so any byte appended or changed after signing, an incremental
   update included, fails it), the signer certificate is issued by the trail key (or a trusted
   certificate), and every embedded record is proven, by its embedded inclusion proof, to be in a
   checkpoint signed by the trail key. When the file was changed after signing, pypdf compares the
   signed revision with the file as a reader shows it and says what changed.
2. **Inside the PDF** (pypdf): each embedded record is in canonical form and matches the hash
   printed on the page and the one in the attachment's description.
   With a signature timestamp (PAdES B-T, `engine.report.timestamp`) from a trusted authority, the signer's
   chain must be valid at the timestamp's time; the level (B-B or B-T) is reported.
3. **Against the live trail** (when a database is at hand and not `--offline`): the stored hash and
   text of each record, and the log's consistency with each embedded checkpoint: the live log must
   reproduce the checkpoint's root, and lead from it to the latest signed checkpoint.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any, Literal

import psycopg
from pydantic import BaseModel, ConfigDict, Field
from pypdf import PdfReader

from engine.errors import IntegrityError, NotFoundError
from engine.report import timestamp as signature_timestamp
from engine.report.pdf import PdfFacts, parse_envelope, read_pdf
from engine.report.view import attachment_name
from engine.trail import standalone_verify as evidence_verify
from engine.trail import store as audit_trail
from engine.trail import tree as trail_tree
from engine.trail.canonical import canonical_json, sha256_hex

Outcome = Literal["match", "mismatch", "absent", "not_found", "not_checked"]


class RecordCheck(BaseModel):
    """The checks of one embedded record."""

    model_config = ConfigDict(extra="forbid")

    audit_id: str
    attachment: str
    sha256: str = Field(description="SHA-256 of the attachment's bytes")
    canonical: bool = Field(description="The attachment is in the trail's canonical form")
    trail: Outcome = Field(description="Against the stored hash and text (not_checked when offline)")
    printed: Outcome = Field(description="Against the hash printed on the report's pages")
    described: Outcome = Field(description="Against the hash in the embedded file's description")
    ok: bool
    problems: list[str]


class PdfVerifyReport(BaseModel):
    """Outcome of `verify_pdf`: ok only when the signature, every proof and every record check passed."""

    model_config = ConfigDict(extra="forbid")

    file: str
    ok: bool
    trail_checked: bool
    signature: dict[str, Any] = Field(description="The PDF signature: byte range, signer, trust path")
    level: str = Field(default="B-B", description="PAdES level: B-B, or B-T with a trusted signature timestamp")
    timestamp: signature_timestamp.Timestamp | None = Field(default=None, description="The signature timestamp, if any")
    proofs: list[dict[str, Any]] = Field(description="Records proven included in a signed checkpoint")
    changes: list[str] = Field(description="What differs from the signed revision, when the file was changed")
    consistency: list[dict[str, Any]] = Field(description="Each embedded checkpoint against the live log")
    issued: dict[str, Any] | None = Field(default=None, description="The trail's record that the engine issued "
                                                                    "this very file (online only)")
    witnesses: list[dict[str, Any]] = Field(default_factory=list, description="Per checkpoint: the pinned witnesses "
                                            "whose cosignature verifies, when witnesses are required")
    records: list[RecordCheck]
    problems: list[str]


def _compare(digest: str, stated: str | None) -> Outcome:
    if stated is None:
        return "absent"
    return "match" if stated == digest else "mismatch"


def _trail(conn: psycopg.Connection | None, audit_id: str, text: str, digest: str) -> Outcome:
    if conn is None:
        return "not_checked"
    try:
        row = audit_trail.get(conn, audit_id)
    except NotFoundError:
        return "not_found"
    return "match" if row["hash"] == digest and row["canonical"] == text else "mismatch"


def _problems(check: dict[str, object], name: str) -> list[str]:
    problems = []
    if not check["canonical"]:
        problems.append(f"{name} is not in the trail's canonical form (it was re-serialized or edited)")
    labels = {"trail": "the trail", "printed": "the hash printed in the report",
              "described": "the hash in the attachment's description"}
    for key, label in labels.items():
        if check[key] == "mismatch":
            problems.append(f"{name}: SHA-256 {check['sha256']} does not match {label}")
    if check["trail"] == "not_found":
        problems.append(f"{check['audit_id']} is not in this trail (another database, or deleted)")
    return problems


def check_record(name: str, data: bytes, facts: PdfFacts, conn: psycopg.Connection | None) -> RecordCheck:
    """Check one attachment. Raises IntegrityError when it is not an audit record at all."""
    envelope = parse_envelope(name, data)
    text = data.decode("utf-8")
    audit_id = envelope["audit_id"]
    digest = sha256_hex(text)
    check: dict[str, object] = {
        "audit_id": audit_id, "attachment": name, "sha256": digest,
        "canonical": canonical_json(json.loads(text)) == text,
        "trail": _trail(conn, audit_id, text, digest),
        "printed": _compare(digest, facts.printed_hashes.get(audit_id)),
        "described": _compare(digest, facts.described_hashes.get(audit_id)),
    }
    problems = _problems(check, name)
    if name != attachment_name(audit_id):
        problems.append(f"{name} holds audit {audit_id}; expected the name {attachment_name(audit_id)}")
    return RecordCheck(**check, ok=not problems, problems=problems)  # type: ignore[arg-type]


def describe_changes(data: bytes, signed_end: int) -> list[str]:
    """What a reader sees differently from the signed revision (document info, pages, annotations, files)."""
    try:
        old, new = PdfReader(io.BytesIO(data[:signed_end])), PdfReader(io.BytesIO(data))
        changes = []
        before, after = dict(old.metadata or {}), dict(new.metadata or {})
        for key in sorted(set(before) | set(after)):
            if before.get(key) != after.get(key):
                changes.append(f"document information {key}: {before.get(key)!r} -> {after.get(key)!r}")
        if len(old.pages) != len(new.pages):
            changes.append(f"page count {len(old.pages)} -> {len(new.pages)}")
        for number, (p, q) in enumerate(zip(old.pages, new.pages, strict=False), 1):
            changes += _page_changes(number, p, q)
        if {n: b[0] for n, b in old.attachments.items()} != {n: b[0] for n, b in new.attachments.items()}:
            changes.append(f"embedded files {sorted(old.attachments)} -> {sorted(new.attachments)}")
        if old.xmp_metadata is not None and new.xmp_metadata is not None and _xmp(old) != _xmp(new):
            changes.append("XMP metadata changed")
    except Exception as exc:  # a damaged update must still be reported, not crash the verifier
        return [f"(could not compare the revisions: {exc})"]
    return changes


def _xmp(reader: Any) -> bytes:
    """The raw XMP metadata stream of a PDF read by pypdf."""
    return bytes(reader.trailer["/Root"]["/Metadata"].get_object().get_data())


def _page_changes(number: int, p: Any, q: Any) -> list[str]:
    out = []
    contents = (p.get_contents(), q.get_contents())
    if (contents[0].get_data() if contents[0] else b"") != (contents[1].get_data() if contents[1] else b""):
        out.append(f"page {number}: content changed")
    old_annots = [a.get_object() for a in p.get("/Annots") or []]
    for annot in [a.get_object() for a in q.get("/Annots") or []][len(old_annots):]:
        text = annot.get("/Contents")
        out.append(f"page {number}: {annot.get('/Subtype', 'annotation')} added" + (f": {str(text)!r}" if text else ""))
    return out


def _consistency(conn: psycopg.Connection, proofs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Each embedded checkpoint (tree size, root) against the live log and its latest signed checkpoint."""
    leaves = trail_tree.leaves(audit_trail.record_hashes(conn))
    latest = audit_trail.latest_note_checkpoint(conn)
    results, problems = [], []
    for size, root in sorted({(p["tree_size"], p["root_hash"]) for p in proofs}):
        if size > len(leaves):
            problems.append(f"the report's checkpoint covers {size} audits; the live log holds {len(leaves)}: "
                            "records were removed after the report was signed")
            results.append({"tree_size": size, "consistent": False})
            continue
        live_root = trail_tree.roots_at(leaves, [size])[size].hex()
        entry: dict[str, Any] = {"tree_size": size, "root_hash": root, "live_root": live_root,
                                 "consistent": live_root == root}
        if live_root != root:
            problems.append(f"the live log does not reproduce the checkpoint in the report (tree size {size}): the "
                            "trail was rewritten after the report was signed; run 'evidence trail verify'")
        elif latest is not None and latest["seq"] >= size:
            proof = trail_tree.consistency_proof(size, leaves[:latest["seq"]])
            entry.update(latest_size=latest["seq"], latest_root=latest["root_hash"], proof=[p.hex() for p in proof])
            entry["consistent"] = evidence_verify.verify_consistency(
                size, latest["seq"], bytes.fromhex(root), bytes.fromhex(latest["root_hash"]), proof)
            if not entry["consistent"]:
                problems.append(f"the latest signed checkpoint (size {latest['seq']}) is not consistent with the "
                                f"report's (size {size})")
        results.append(entry)
    return results, problems


def issued_record(conn: psycopg.Connection, sha256: str) -> dict[str, Any] | None:
    """The trail's record that the engine issued a file with this SHA-256 (id, seq, when, by whom), or None."""
    row = conn.execute("SELECT audit_id, seq, created_at, actor FROM audits WHERE kind = 'report' "
                       "AND record->'report'->>'sha256' = %s ORDER BY seq LIMIT 1", (sha256,)).fetchone()
    return None if row is None else {"record_id": row[0], "seq": row[1], "issued_at": row[2].isoformat(),
                                     "actor": row[3], "sha256": sha256}


def verify_pdf(path: Path, conn: psycopg.Connection | None = None, *, public_key: Any = None,
               trust: list[Any] | None = None, witnesses: list[evidence_verify.WitnessKey] | None = None,
               min_witnesses: int = 0, cert_keys: Any = None, tsa_trust: list[Any] | None = None) -> PdfVerifyReport:
    """Check a report PDF: signature and proofs (offline, with `public_key`: one key or the log's keys across
    rotations), embedded records, and the trail when `conn` is given. The signer certificate must be issued by
    `cert_keys` (by `public_key` when None, an installation with one key). A signature timestamp is checked
    against `tsa_trust`. With `witnesses` (name, key) pinned, each checkpoint the records are proven in
    must carry valid cosignatures from `min_witnesses` of them. Raises IntegrityError when the file is not a
    readable PDF."""
    data = path.read_bytes()
    stamp = signature_timestamp.check(data, tsa_trust or [])
    problems: list[str] = list(stamp.problems)
    offline = evidence_verify.Result(file=str(path))
    if public_key is None:
        problems.append("no public key of the trail to check the signature and checkpoints with: give "
                        "--public-key (the PEM from 'evidence trail public-key')")
    else:
        offline = evidence_verify.verify_report(data, public_key, trust or [], str(path), cert_keys,
                                                stamp.trusted_time)
        if witnesses:
            evidence_verify.check_witnesses(offline, witnesses, min_witnesses)
        problems += offline.problems
    signature = offline.signature
    changes = []
    if signature and not signature.get("covers_whole_file"):
        end = signature["byte_range"][2] + signature["byte_range"][3]
        changes = describe_changes(data, end)
        problems += [f"changed after signing: {c}" for c in changes]
    facts = read_pdf(path)
    records = []
    for name, blob in sorted(facts.attachments.items()):
        if not name.endswith(".json") or name.endswith(".proof.json"):
            continue
        try:
            records.append(check_record(name, blob, facts, conn))
        except IntegrityError as exc:
            problems.append(str(exc))
    if not records and not facts.attachments:
        problems.append("the PDF holds no embedded audit record (AUD-….json); was it written by 'evidence report'?")
    embedded = {r.audit_id for r in records}
    for audit_id in sorted((set(facts.printed_hashes) | set(facts.described_hashes)) - embedded):
        problems.append(f"the report shows {audit_id} but holds no record of it (attachment removed?)")
    consistency: list[dict[str, Any]] = []
    issued = None
    if conn is not None and offline.records:
        consistency, found = _consistency(conn, offline.records)
        problems += found
    if conn is not None:
        issued = issued_record(conn, hashlib.sha256(data).hexdigest())
        if issued is None:
            problems.append("the trail has no record of issuing this file (no issued-report record with its "
                            "SHA-256): the engine did not hand it out, so it may be assembled around a genuine "
                            "record; ask for the report again ('evidence report AUD-…')")
    ok = not problems and bool(records) and all(r.ok for r in records) and bool(offline.records)
    return PdfVerifyReport(file=str(path), ok=ok, trail_checked=conn is not None, signature=signature, issued=issued,
                           level=stamp.level, timestamp=stamp if stamp.time or stamp.problems else None,
                           proofs=offline.records, changes=changes, consistency=consistency, records=records,
                           witnesses=offline.witnesses,
                           problems=list(dict.fromkeys(problems)))
