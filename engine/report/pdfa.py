"""Writing a report PDF: WeasyPrint renders the report's HTML to PDF/A-3b with each record (and its inclusion
proof) attached, fetching nothing: every URL is refused, so no text in a document can make it load a resource.
Imported when a PDF is written (`engine.report.render`), so that reading reports does not load WeasyPrint; what
a report PDF carries, and reading it back, is `engine.report.pdf`.
"""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

from weasyprint import HTML, Attachment
from weasyprint.urls import URLFetcher

from engine.report.pdf import Embedded
from engine.report.view import attachment_name, proof_attachment_name

PDF_VARIANT = "pdf/a-3b"


def _no_fetch() -> Any:
    return URLFetcher(allowed_protocols=())


def _attachments(records: list[Embedded], proofs: dict[str, dict[str, Any]]) -> list[Any]:

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
    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    HTML(string=html, url_fetcher=_no_fetch()).write_pdf(
        target, pdf_variant=PDF_VARIANT, attachments=_attachments(records, proofs or {}))
