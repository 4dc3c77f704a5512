"""Report PDFs: what they carry, and reading them back (pypdf); `engine.report.pdfa` writes them (WeasyPrint).

A report PDF carries, for each audit it shows, the audit's canonical JSON (exactly the text the trail
hashes) as an embedded file `AUD-….json`, and states the record hash twice more: in the embedded
file's description ("… (SHA-256 …)") and printed on the page ("Record hash of AUD-…: …"). The hash
is not put in the document information dictionary: PDF/A-2/3 allow there only entries that have an
XMP equivalent.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from pypdf import PdfReader
from pypdf.errors import PdfReadError

from engine.errors import IntegrityError
from engine.text import normalize_ws

PRINTED_HASH = re.compile(r"Record hash of (AUD-[A-Za-z0-9-]+):\s*([0-9a-f]{64})")
DESCRIBED_HASH = re.compile(r"record (AUD-[A-Za-z0-9-]+) \(SHA-256 ([0-9a-f]{64})\)")


class Embedded(NamedTuple):
    """One audit record to attach: its id, canonical text and trail hash."""

    audit_id: str
    canonical: str
    hash: str
    recorded_at: datetime | None = None


class PdfFacts(NamedTuple):
    """What a report PDF holds: attached records, the hashes it states, its text and metadata."""

    attachments: dict[str, bytes]
    described_hashes: dict[str, str]
    printed_hashes: dict[str, str]
    text: str
    metadata: dict[str, str]
    xmp: str


def _xmp(reader: Any) -> str:
    meta = reader.trailer["/Root"].get("/Metadata")
    return meta.get_object().get_data().decode("utf-8", "replace") if meta is not None else ""


def read_pdf(path: Path) -> PdfFacts:
    """Read a report PDF. Raises IntegrityError when the file is not a readable PDF."""
    try:
        reader = PdfReader(str(path))
        attachments = {name: blobs[0] for name, blobs in reader.attachments.items() if blobs}
        described = dict(DESCRIBED_HASH.findall(" ".join(f.description or "" for f in reader.attachment_list)))
        text = "\n".join(page.extract_text() or "" for page in reader.pages)
        info = {k: str(v) for k, v in (reader.metadata or {}).items()}
        xmp = _xmp(reader)
    except (PdfReadError, OSError, ValueError, KeyError) as exc:
        raise IntegrityError(f"{path} is not a readable report PDF ({exc}); expected a PDF written by "
                             "'evidence report --pdf'") from exc
    flat = normalize_ws(text)
    return PdfFacts(attachments=attachments, described_hashes=described,
                    printed_hashes=dict(PRINTED_HASH.findall(flat)), text=text, metadata=info, xmp=xmp)


def parse_envelope(name: str, data: bytes) -> dict[str, Any]:
    """The `{seq, prev_hash, record}` envelope in an attachment. Raises IntegrityError if it is not one."""
    try:
        envelope = json.loads(data.decode("utf-8"))
        audit_id = envelope["record"]["audit_id"]
        int(envelope["seq"])
        str(envelope["prev_hash"])
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise IntegrityError(f"attachment {name} is not an audit record envelope ({exc})") from exc
    return {**envelope, "audit_id": audit_id}
