"""Report PDFs: write them (WeasyPrint, PDF/A-3b, canonical records attached) and read them back (pypdf).

A report PDF carries, for each audit it shows, the audit's canonical JSON (exactly the text the trail
hashes) as an embedded file `AUD-….json`, and states the record hash twice more: in the embedded
file's description ("… (SHA-256 …)") and printed on the page ("Record hash of AUD-…: …"). The hash
is not put in the document information dictionary: PDF/A-2/3 allow there only entries that have an
XMP equivalent. The renderer fetches nothing: every URL is refused, so no text in a document can
make it load a resource.
"""

from __future__ import annotations

import io
import json
import logging
import re
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from engine.errors import IntegrityError
from engine.report.view import attachment_name, proof_attachment_name
from engine.text import normalize_ws

PDF_VARIANT = "pdf/a-3b"
PRINTED_HASH = re.compile(r"Record hash of (AUD-[A-Za-z0-9-]+):\s*([0-9a-f]{64})")
DESCRIBED_HASH = re.compile(r"record (AUD-[A-Za-z0-9-]+) \(SHA-256 ([0-9a-f]{64})\)")


class Embedded(NamedTuple):
    """One audit record to attach: its id, canonical text and trail hash."""

    audit_id: str
    canonical: str
    hash: str
    recorded_at: datetime | None = None


def _no_fetch() -> Any:
    from weasyprint.urls import URLFetcher

    return URLFetcher(allowed_protocols=())


def _attachments(records: list[Embedded], proofs: dict[str, dict[str, Any]]) -> list[Any]:
    from weasyprint import Attachment


    out = []
    for r in records:
        out.append(Attachment(string=r.canonical.encode("utf-8"), name=attachment_name(r.audit_id),
                              description=f"Canonical audit record {r.audit_id} (SHA-256 {r.hash})",
                              created=r.recorded_at, modified=r.recorded_at, relationship="Source",
                              url_fetcher=_no_fetch()))
        if r.audit_id in proofs:
            bundle = proofs[r.audit_id]
            out.append(Attachment(
                string=json.dumps(bundle, indent=2, ensure_ascii=False).encode("utf-8"),
                name=proof_attachment_name(r.audit_id), relationship="Supplement", url_fetcher=_no_fetch(),
                description=f"Inclusion proof of {r.audit_id} in the trail's transparency log (tree size "
                            f"{bundle['tree_size']}) with the signed checkpoint"))
    return out


def html_to_pdf(html: str, target: Path | io.BytesIO, records: list[Embedded],
                proofs: dict[str, dict[str, Any]] | None = None) -> None:
    """Render `html` to a PDF/A-3b file with every record (and its inclusion proof, when given) attached."""
    from weasyprint import HTML

    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    HTML(string=html, url_fetcher=_no_fetch()).write_pdf(
        target, pdf_variant=PDF_VARIANT, attachments=_attachments(records, proofs or {}))


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
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

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
