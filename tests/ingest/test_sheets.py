"""Spreadsheets as documents: a control matrix's rows cited by their ids, other sheets as tables with their
headers, CSV in any of its dialects; damaged or empty workbooks refused saying what to do."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from engine.errors import IngestError
from engine.ingest.formats import detect_format, parse


def _matrix(path: Path) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Controls"
    sheet.append(["Controls matrix (test)"])  # a note above the table
    sheet.append([])
    sheet.append(["Control Domain", "Control Title", "Control ID", "Control Specification", "Review frequency"])
    sheet.append(["Audit & Assurance", "Audit and Assurance Policy and Procedures", "A&A-01",
                  "Establish and maintain audit and assurance policies.\nReview them at least annually.", "Annually"])
    sheet.append(["Identity & Access", "User Access Review", "IAM-08",
                  "Review and revalidate user access for least privilege.", "Quarterly"])
    retention = book.create_sheet("Retention")
    retention.append(["Record", "Period"])
    retention.append(["Access logs", "2 years"])
    lookup = book.create_sheet("Lookup")
    lookup.sheet_state = "hidden"
    lookup.append(["internal", "values"])
    book.properties.title = "Test Controls Matrix"
    book.save(path)
    return path


def test_a_control_matrix_row_is_a_section_cited_by_its_id(tmp_path: Path) -> None:
    path = _matrix(tmp_path / "matrix.xlsx")
    parsed = parse(path, path.read_bytes())
    assert (parsed.format, parsed.title) == ("xlsx", "Test Controls Matrix")
    blocks = {b.metadata.get("citation"): b for b in parsed.blocks}
    block = blocks["A&A-01"]
    # headed by its id and the title column's cell; its longest text first, each other cell after its header
    assert block.section_path == "Controls > A&A-01 Audit and Assurance Policy and Procedures"
    assert parsed.text[block.start:block.end] == (
        "Establish and maintain audit and assurance policies. Review them at least annually.\n\n"
        "Control Domain: Audit & Assurance\n\nReview frequency: Annually")
    assert "IAM-08" in blocks
    # a sheet without ids is a table under the sheet's name, its header first
    retention = next(b for b in parsed.blocks if b.section_path == "Retention")
    assert parsed.text[retention.start:retention.end] == "| Record | Period |\n|---|---|\n| Access logs | 2 years |"
    # a hidden sheet is not read, and the reader is told
    assert "internal" not in parsed.text
    assert any("hidden sheet(s) not read: Lookup" in w for w in parsed.warnings)


def test_a_checklist_is_cited_by_its_catalogue_ids_under_its_groups(tmp_path: Path) -> None:
    # as OWASP's mobile checklist lays its sheets out: an ordinal column ("1.1") beside the catalogue's own ids, some
    # typed with non-breaking hyphens; a group's row ("V2", its name) above its requirements
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Requirements"
    sheet.append(["ID", "MSTG-ID", "Detailed Verification Requirement", "Level 1"])
    sheet.append(["V1", None, "Architecture and design", None])
    sheet.append(["1.1", "MSTG-ARCH-1", "All app components are identified and known to be needed.", "\u2713"])
    sheet.append(["V2", None, "Data Storage and Privacy", None])
    sheet.append(["2.1", "MSTG-STORAGE\u20111", "System credential storage facilities need to be used.", "\u2713"])
    sheet.append(["2.2", "MSTG-STORAGE\u20112", "No sensitive data is written to application logs.", None])
    path = tmp_path / "checklist.xlsx"
    book.save(path)
    parsed = parse(path, path.read_bytes())
    blocks = {b.section_number: b for b in parsed.blocks}
    assert set(blocks) >= {"MSTG-ARCH-1", "MSTG-STORAGE-1", "MSTG-STORAGE-2"}  # not "1.1", nor "" for every row
    block = blocks["MSTG-STORAGE-1"]
    assert block.section_path == "Requirements > V2 Data Storage and Privacy > MSTG-STORAGE-1"
    assert parsed.text[block.start:block.end] == (
        "System credential storage facilities need to be used.\n\nID: 2.1\n\nLevel 1: \u2713")
    # a group's row heads its rows; it is not the text of the requirement above it
    assert "Data Storage" not in parsed.text[blocks["MSTG-ARCH-1"].start:blocks["MSTG-ARCH-1"].end]
    # the columns whose "Header: value" lines describe a row, for Extract (agents.extract._describes_row)
    assert block.metadata["fields"] == ["ID", "Level 1"]


@pytest.mark.parametrize("text", [
    f"ID{sep}Requirement{sep}Owner\nR-1{sep}Backups must be tested every quarter.{sep}IT\n"
    f"R-2{sep}Access must be reviewed yearly.{sep}Security\n" for sep in (";", ",", "\t")
], ids=["semicolons", "commas", "tabs"])
def test_a_csv_register_in_any_dialect(tmp_path: Path, text: str) -> None:
    path = tmp_path / "register.csv"
    path.write_text(text)
    parsed = parse(path, path.read_bytes())
    sections = {b.section_number: parsed.text[b.start:b.end] for b in parsed.blocks}
    assert sections["R-1"] == "Backups must be tested every quarter.\n\nOwner: IT"


def test_a_workbook_is_recognised_without_its_extension(tmp_path: Path) -> None:
    path = _matrix(tmp_path / "matrix.xlsx")
    assert detect_format(Path("matrix"), path.read_bytes()) == "xlsx"


def test_damaged_or_empty_workbooks_are_refused(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.xlsx"
    damaged.write_bytes(b"PK\x03\x04 not a workbook")
    with pytest.raises(IngestError, match="not a readable XLSX workbook.*save it again"):
        parse(damaged, damaged.read_bytes())
    empty = tmp_path / "empty.xlsx"
    openpyxl.Workbook().save(empty)
    with pytest.raises(IngestError, match="every sheet is empty"):
        parse(empty, empty.read_bytes())


@pytest.mark.parametrize(("value", "is_id"), [
    ("A&A-01", True), ("IAM-08", True), ("AC-2(1)", True), ("CIS 1.1", True), ("5.1.2", True), ("PR.AC-1", True),
    ("MSTG-ARCH-1", True), ("OSPS-AC-01.01", True), ("V1", True),
    ("Audit and Assurance 2", False), ("Review access", False), ("2 years", False),
])
def test_what_a_matrix_id_looks_like(value: str, is_id: bool) -> None:
    from engine.ingest.sheets import _ID

    assert bool(_ID.match(value)) is is_id
