"""`evidence export AUDIT_ID... --format csv|xlsx|json`: the requirements of stored audits as the table an
auditor pastes into working papers: audit, REQ-ID, citation, verbatim quote, modality, verdict, and the
document's title, id, version and SHA-256. Read from the hashed records, never recomputed.

Formula injection (OWASP CSV injection): a spreadsheet runs a cell that starts with = + - @, a tab or a
carriage return. In CSV such a cell gets a leading apostrophe ("'=HYPERLINK(...)"), the mark spreadsheets
read as "text"; in XLSX every value is a string or a number, never a formula, and such a cell also carries
Excel's quote-prefix style (it stays text when someone edits it), its text unchanged. The JSON export and
the hashed record keep every quote verbatim.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import psycopg

from engine.errors import InputError
from engine.ingest.citations import derived_citation
from engine.search import store
from engine.trail import store as audit_trail

FORMATS = ("csv", "xlsx", "json")
COLUMNS = ("audit_id", "requirement_id", "citation", "exact_quote", "modality", "verdict", "cited", "binding",
           "document_title", "document_id", "document_version", "document_sha256", "section_path", "question",
           "recorded_at")


def requirement_rows(conn: psycopg.Connection, audit_ids: list[str], *, cited_only: bool = False
                     ) -> list[dict[str, Any]]:
    """One row per requirement of each audit (answers only), in the audits' and the requirements' order."""
    rows = []
    for audit_id in audit_ids:
        record = audit_trail.get(conn, audit_id)["record"]
        if record.get("kind") != "answer":
            raise InputError(f"{audit_id} is a {record.get('kind')} of {record.get('amends')}, not an answer; "
                             "export the audit it amends")
        hashes = {d["document_id"]: d["content_sha256"] for d in record.get("corpus", [])}
        for req in record.get("requirements", []):
            if cited_only and not (req.get("cited") and req.get("verified")):
                continue
            sha = hashes.get(req["document_id"])
            if sha is None:  # a pinned, superseded version: not in the snapshot of current documents
                doc = store.get_document(conn, req["document_id"])
                sha = doc.content_sha256 if doc else ""
            rows.append({
                "audit_id": record["audit_id"], "requirement_id": req["requirement_id"],
                "citation": req.get("citation") or derived_citation(req.get("section_number") or "",
                                                                    req.get("section_path") or ""),
                "exact_quote": req["exact_quote"], "modality": req.get("modality", ""),
                "verdict": "verified" if req.get("verified") else (req.get("rejection_reason") or "rejected"),
                "cited": bool(req.get("cited")), "binding": req.get("binding", True) is not False,
                "document_title": req.get("document_title", ""), "document_id": req["document_id"],
                "document_version": req.get("document_version"), "document_sha256": sha,
                "section_path": req.get("section_path", ""), "question": record["question"],
                "recorded_at": record.get("recorded_at", "")})
    return rows


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def formula_like(value: Any) -> bool:
    """Whether a spreadsheet would take the cell for a formula."""
    return isinstance(value, str) and value.startswith(FORMULA_STARTS)


def neutralised(value: Any) -> Any:
    """The cell as CSV writes it: a formula-like text gets a leading apostrophe."""
    return f"'{value}" if formula_like(value) else value


def to_csv(rows: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: neutralised(v) for k, v in row.items()} for row in rows)
    return buffer.getvalue()


def to_json(rows: list[dict[str, Any]]) -> str:
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"


def write_xlsx(rows: list[dict[str, Any]], path: Path) -> Path:
    """One sheet 'requirements' with a header row; text cells are never formulas."""
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    book = Workbook()
    sheet = book.active
    sheet.title = "requirements"
    sheet.append(list(COLUMNS))
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for row in rows:
        sheet.append([row[c] for c in COLUMNS])
        for cell in sheet[sheet.max_row]:
            if isinstance(cell.value, str):
                cell.data_type = "s"  # '=...' in a quote is text, not a formula
                cell.quotePrefix = formula_like(cell.value)  # and stays text when edited
    quote = COLUMNS.index("exact_quote") + 1
    for index in range(2, sheet.max_row + 1):
        sheet.cell(row=index, column=quote).alignment = Alignment(wrap_text=True, vertical="top")
    sheet.column_dimensions[sheet.cell(row=1, column=quote).column_letter].width = 80
    sheet.freeze_panes = "A2"
    path.parent.mkdir(parents=True, exist_ok=True)
    book.save(path)
    return path
