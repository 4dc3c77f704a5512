"""`evidence report verify FILE.pdf`: is the record embedded in a report the one in the trail?

For every embedded `AUD-….json` the SHA-256 of its bytes is recomputed and compared with:
* the trail (when a database is at hand): the stored hash and canonical text of that audit;
* the hashes the PDF states itself (offline): the one printed on the page and the one in the
  embedded file's description.

The offline comparison only shows that the attachment is the record the report was laid out from:
whoever can rewrite the whole PDF can make all three agree. Only the trail, or a signed checkpoint
whose head the record leads to, proves the hash genuine; the report says which checks ran.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import psycopg
from pydantic import BaseModel, ConfigDict, Field

from engine import audit_trail
from engine.canonical import canonical_json, sha256_hex
from engine.errors import IntegrityError, NotFoundError
from engine.report_pdf import PdfFacts, parse_envelope, read_pdf
from engine.report_view import attachment_name

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
    """Outcome of `verify_pdf`: ok only when every embedded record matched everything it was checked against."""

    model_config = ConfigDict(extra="forbid")

    file: str
    ok: bool
    trail_checked: bool
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
    if check["trail"] == "not_checked" and "match" not in (check["printed"], check["described"]):
        problems.append(f"{name}: no trail at hand and no hash stated in the PDF to compare with")
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


def verify_pdf(path: Path, conn: psycopg.Connection | None = None) -> PdfVerifyReport:
    """Check every audit record embedded in a report PDF (against the trail when `conn` is given)."""
    facts = read_pdf(path)
    records, problems = [], []
    for name, data in sorted(facts.attachments.items()):
        if not name.endswith(".json"):
            continue
        try:
            records.append(check_record(name, data, facts, conn))
        except IntegrityError as exc:
            problems.append(str(exc))
    if not records and not problems:
        problems.append("the PDF holds no embedded audit record (AUD-….json); was it written by 'evidence report'?")
    embedded = {r.audit_id for r in records}
    for audit_id in sorted((set(facts.printed_hashes) | set(facts.described_hashes)) - embedded):
        problems.append(f"the report shows {audit_id} but holds no record of it (attachment removed?)")
    ok = not problems and all(r.ok for r in records)
    return PdfVerifyReport(file=str(path), ok=ok, trail_checked=conn is not None, records=records, problems=problems)
