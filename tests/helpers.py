"""Small builders for test fixtures (files in every supported format)."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"  # fixtures shared by the test packages

RETENTION_MD = """# Test Retention Regulation

## 1. Purpose

This Regulation sets out the background to record keeping in the test jurisdiction.

## 4. Records

### 4.2 Retention periods

A firm must retain transaction records for at least six years from the date of the transaction.
A firm must not destroy client records while an investigation is pending.

### 4.3 Access

Access to records is restricted to authorised staff. See section 4.2 for periods.
"""


def write_pdf(path: Path, html: str) -> Path:
    from weasyprint import HTML

    HTML(string=html).write_pdf(path)
    return path


def parsed_file(path: Path, text: str):  # noqa: ANN201 - engine.ingest.sections.ParsedDocument
    """`text` written to `path` (UTF-8) and parsed as `evidence ingest` would read that file."""
    from engine.ingest.formats import parse

    path.write_text(text, encoding="utf-8")
    return parse(path, path.read_bytes())


def write_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    document.core_properties.title = "Access Control Standard"
    document.add_heading("3. Access control", level=1)
    document.add_heading("3.1 Reviews", level=2)
    document.add_paragraph("Managers must review user access rights every quarter. Access shall be revoked "
                           "within 24 hours of termination.")
    document.save(path)
    return path


def write_obliqa(path: Path, document_id: int = 7, passages: list[tuple[str, str]] | None = None) -> Path:
    passages = passages or [
        ("1.", "GENERAL"),
        ("1.1", "Record keeping"),
        ("1.1.1", "An Authorised Person must keep records of each transaction for six years."),
        ("1.1.2", "Records may be kept in electronic form."),
    ]
    data = [{"ID": f"uid-{document_id}-{i}", "DocumentID": document_id, "PassageID": pid, "Passage": text}
            for i, (pid, text) in enumerate(passages)]
    path.write_text(json.dumps(data))
    return path
