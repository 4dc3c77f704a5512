"""What a compliance officer meets day to day: readable `ask` output, full ids and id prefixes, scoped
questions, stale answers asked again, exports, misspelled questions. Real database, rules backend."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.cli.main import app
from engine.ingest.pipeline import ingest_paths
from engine.report.export import COLUMNS, write_xlsx
from engine.report.terminal import answer_lines, research_line
from engine.search import store
from engine.search.spelling import correct, edit_distance, english_words
from engine.trail import store as audit_trail
from engine.trail.queries import diff_records, stale_audits
from engine.trail.verify import verify_trail
from tests.helpers import DATA

runner = CliRunner()
EU = DATA / "legal" / "eu-client-data-regulation.txt"
UNANSWERABLE = "What is the capital gains tax rate on cryptocurrency staking rewards?"
POLICY = """# Incident Reporting Policy

## 2. Reporting

### 2.1 Access cards

Every leaver must return the access card to reception on the last working day.

### 2.2 Reporting to the regulator

The Data Protection Officer must report a personal data breach to the regulator within 5 business days.
"""


def _cli(settings, *args: str):
    env = {"DATABASE_URL": settings.database_url, "EVIDENCE_HOME": str(settings.home), "COLUMNS": "80"}
    return runner.invoke(app, list(args), env=env)


def _record(conn, audit_id: str) -> dict:
    return audit_trail.get(conn, audit_id)["record"]


def _audit_id(output: str) -> str:
    return next(line.split()[1] for line in output.splitlines() if line.startswith("audit AUD-"))


def test_unanswerable_question_prints_at_most_40_lines_at_80_columns(trail_conn, trail_settings) -> None:
    result = _cli(trail_settings, "ask", UNANSWERABLE)
    assert result.exit_code == 0, result.output
    audit_id = _audit_id(result.stdout)
    assert audit_id.startswith("AUD-") and len(audit_id) == len("AUD-20261122-884bebfb20")
    record = _record(trail_conn, audit_id)
    assert record["answer"]["status"] == "NO_AUTHORITATIVE_EVIDENCE"
    lines = [line.text for line in answer_lines(record, width=80) + research_line(record, 80)] + ["", "audit", "hash"]
    print(f"unanswerable question: {len(lines)} lines at 80 columns")  # the figure for the report
    assert len(lines) <= 40 and all(len(line) <= 80 for line in lines)
    assert "Missing evidence" in result.stdout


def test_rejected_candidates_only_on_request(trail_conn, trail_settings) -> None:
    record = _record(trail_conn, _audit_id(_cli(trail_settings, "ask", "How long must transaction records be kept?"
                                                ).stdout))
    rejected = [r for r in record["requirements"] if not r["verified"]]
    assert rejected, "the sample corpus gives this question rejected candidates"
    plain = "\n".join(line.text for line in answer_lines(record, width=80))
    shown = "\n".join(line.text for line in answer_lines(record, width=80, show_rejected=True))
    assert "Cited requirements" in plain and "Section 4.2" in plain
    assert f"{len(rejected)} rejected candidate(s) not shown" in plain and "rejected:" not in plain
    assert all(r["requirement_id"] in shown for r in rejected) and "rejected:" in shown
    # ... each with why it was set aside, as the verifier wrote it (wrapped at 80 columns)
    assert shown.count("why: ") == sum(bool(r.get("rationale")) for r in rejected) > 0
    first = next(r for r in rejected if r.get("rationale"))
    assert " ".join(first["rationale"].split()[:4]) in " ".join(shown.split())
    for line in shown.splitlines():  # REQ-IDs and audit ids are never cut
        assert "…" not in line


@pytest.fixture()
def legal(trail_conn, trail_settings, embedder, tmp_path: Path):
    """The sample corpus plus the EU-shaped regulation and an incident policy."""
    policy = tmp_path / "incident-policy.md"
    policy.write_text(POLICY)
    summary = ingest_paths(trail_conn, embedder, trail_settings, [EU, policy])
    assert not summary.failed
    eu_id = next(f.document_id for f in summary.files if f.path == str(EU))
    return trail_conn, trail_settings, eu_id, policy


def test_scoped_question_cites_articles_of_the_eu_regulation(legal) -> None:
    conn, settings, eu_id, _ = legal
    result = _cli(settings, "ask", "Who must designate a data protection officer?", "--document", eu_id[:12])
    assert result.exit_code == 0, result.output
    record = _record(conn, _audit_id(result.stdout))
    assert [d["document_id"] for d in record["scope"]["documents"]] == [eu_id]
    cited = [r for r in record["requirements"] if r["cited"]]
    assert cited and {r["document_id"] for r in record["requirements"]} == {eu_id}
    assert "Art. 37(1)" in {r["citation"] for r in cited}
    assert "Art. 37(1)" in result.stdout and "Scope: documents" in result.stdout
    print("EU fixture citations:", sorted({r["citation"] for r in record["requirements"]}))


@pytest.mark.parametrize(("args", "status", "message"), [
    (["--document", "no-such-regulation.md"], 7, "names no document"),
    (["--source-type", "memo"], 2, "not a source type"),
], ids=["unknown-document", "unknown-source-type"])
def test_scope_that_names_nothing_is_refused(trail_settings, args: list[str], status: int, message: str) -> None:
    result = _cli(trail_settings, "ask", "How long must transaction records be kept?", *args)
    assert result.exit_code == status and message in result.stderr


def test_misspelled_question_finds_its_evidence(legal) -> None:
    conn, settings, eu_id, _ = legal
    result = _cli(settings, "ask", "Who must designate a data protecion oficer?")
    assert result.exit_code == 0, result.output
    assert "searched for: Who must designate a data protection officer?" in result.stdout
    record = _record(conn, _audit_id(result.stdout))
    assert record["answer"]["status"] == "ANSWERED"
    assert any(r["cited"] and r["citation"] == "Art. 37(1)" for r in record["requirements"])


def test_spelling_correction_leaves_real_words_alone(legal) -> None:
    conn, settings, _, _ = legal
    english = english_words(settings.relevance_dir / "tokenizer.json")
    fixed = correct(conn, "When must a data protecion oficer be apointed?", english)
    assert fixed.text == "When must a data protection officer be appointed?"
    assert correct(conn, UNANSWERABLE, english).changes == []  # 'staking', 'rate': English, not typos
    assert correct(conn, "Who must designate a data protection officer?", english).changes == []


@pytest.mark.parametrize(("a", "b", "distance"), [("oficer", "officer", 1), ("recrods", "records", 1),
                                                  ("protecion", "protection", 1), ("abc", "xyz", 3)],
                         ids=["missing-letter", "swap", "long", "unrelated"])
def test_edit_distance(a: str, b: str, distance: int) -> None:
    assert edit_distance(a, b) == distance


@pytest.mark.slow
def test_changed_quote_makes_only_its_audits_stale_and_rerun_supersedes(legal, embedder) -> None:
    conn, settings, _, policy = legal
    regulator = _audit_id(_cli(settings, "ask", "How quickly must the Data Protection Officer report a personal data "
                                                "breach to the regulator?", "--document", policy.name).stdout)
    internal = _audit_id(_cli(settings, "ask", "When must a leaver return the access card?", "--document",
                              policy.name).stdout)
    policy.write_text(POLICY.replace("within 5 business days", "within 72 hours"))
    ingest_paths(conn, embedder, settings, [policy])
    impact = json.loads(_cli(settings, "trail", "impact", policy.name, "--json").stdout)
    assert {a["audit_id"] for a in impact["audits"]} == {regulator, internal}
    assert impact["stale_audits"] == [regulator]  # the other one's quote is still in version 2
    missing = _cli(settings, "trail", "impact", f"{policy.name}#9.9")
    assert missing.exit_code == 7 and "no such section '9.9'" in missing.stderr

    rerun = _cli(settings, "trail", "rerun", "--stale", "--json")
    assert rerun.exit_code == 0, rerun.output
    [done] = json.loads(rerun.stdout)
    assert done["old_audit_id"] == regulator
    assert _record(conn, done["new_audit_id"])["supersedes"] == regulator
    correction = _record(conn, done["correction_id"])
    assert (correction["kind"], correction["amends"], correction["superseded_by"]) == (
        "correction", regulator, done["new_audit_id"])
    assert "5 business days" in json.dumps(_record(conn, regulator)["requirements"])  # the old record stays
    assert stale_audits(conn) == [] and verify_trail(conn, settings).ok

    diff = _cli(settings, "trail", "diff", regulator, done["new_audit_id"][:18])
    assert diff.exit_code == 0, diff.output
    assert "Citations: 0 unchanged, 1 changed, 0 added, 0 removed" in diff.stdout
    assert "[-5 business days.-] {+72 hours.+}" in " ".join(diff.stdout.split())


def _with_quote(record: dict, index: int, quote: str, new_id: str) -> dict:
    changed = json.loads(json.dumps(record))
    changed["requirements"][index]["exact_quote"] = quote
    changed["requirements"][index]["requirement_id"] = new_id
    return changed


def test_diff_matches_citations_by_place_and_text_not_by_number(trail_conn, trail_settings) -> None:
    record = _record(trail_conn, _audit_id(_cli(trail_settings, "ask", "How long must transaction records be kept?"
                                                ).stdout))
    index = next(i for i, r in enumerate(record["requirements"]) if r["cited"] and r["verified"])
    quote = record["requirements"][index]["exact_quote"]
    later = _with_quote(record, index, quote.rstrip(".") + " in every case.", "REQ-S099")
    later["audit_id"] = "AUD-later"
    d = diff_records(record, later)
    assert len(d["citations"]["changed"]) == 1 and not d["citations"]["added"] and not d["citations"]["removed"]
    change = d["citations"]["changed"][0]
    assert change["after"]["requirement_id"] == "REQ-S099" and "{+transaction in every case.+}" in change["words"]
    same = diff_records(record, {**json.loads(json.dumps(record)), "audit_id": "AUD-same"})
    assert not same["direct_answer"]["changed"] and not same["citations"]["changed"]


@pytest.mark.slow
def test_ids_are_whole_and_any_unique_start_works(trail_conn, trail_settings) -> None:
    first = _audit_id(_cli(trail_settings, "ask", UNANSWERABLE).stdout)
    second = _audit_id(_cli(trail_settings, "ask", "How long must transaction records be kept?").stdout)
    listed = _cli(trail_settings, "trail", "list")
    assert first in listed.stdout and second in listed.stdout
    shown = _cli(trail_settings, "trail", "show", second[:-3], "--brief")
    assert shown.exit_code == 0 and second in shown.stdout
    assert _cli(trail_settings, "trail", "show", second[:-4] + "…").exit_code == 0  # pasted with the ellipsis
    common = next(i for i in range(len(first)) if first[i] != second[i])
    ambiguous = _cli(trail_settings, "trail", "show", first[:common])
    assert ambiguous.exit_code == 2 and "several audit ids" in ambiguous.stderr
    assert _cli(trail_settings, "trail", "show", "AUD-00000000-nope").exit_code == 7
    docs = _cli(trail_settings, "documents")
    assert all(d.id in docs.stdout for d in store.list_documents(trail_conn))


def test_export_requirements_as_csv_json_and_xlsx(trail_conn, trail_settings, tmp_path: Path) -> None:
    from openpyxl import load_workbook

    audit_id = _audit_id(_cli(trail_settings, "ask", "How long must transaction records be kept?").stdout)
    record = _record(trail_conn, audit_id)
    result = _cli(trail_settings, "export", audit_id[:16], "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == len(record["requirements"]) and tuple(rows[0]) == COLUMNS
    cited = [r for r in rows if r["cited"] == "True" and r["verdict"] == "verified"]
    assert cited and all(r["citation"] and len(r["document_sha256"]) == 64 and r["audit_id"] == audit_id
                         for r in cited)
    only = json.loads(_cli(trail_settings, "export", audit_id, "-f", "json", "--cited-only").stdout)
    assert len(only) == len(cited)
    path = tmp_path / "papers.xlsx"
    assert _cli(trail_settings, "export", audit_id, "-f", "xlsx", "-o", str(path)).exit_code == 0
    sheet = load_workbook(path)["requirements"]
    assert [c.value for c in sheet[1]] == list(COLUMNS) and sheet.max_row == len(rows) + 1


@pytest.mark.parametrize(("args", "message"), [
    (["-f", "xlsx"], "--output"),
    (["-f", "pdf"], "is not one of"),
], ids=["xlsx-needs-a-file", "unknown-format"])
def test_export_refuses_what_it_cannot_do(trail_settings, args: list[str], message: str) -> None:
    result = _cli(trail_settings, "export", "AUD-whatever", *args)
    assert result.exit_code == 2 and message in result.stderr


def test_xlsx_quotes_are_text_never_formulas(tmp_path: Path) -> None:
    from openpyxl import load_workbook

    row = dict.fromkeys(COLUMNS, "")
    row.update(exact_quote="=HYPERLINK(\"http://example.invalid\")", document_version=2, cited=True)
    path = write_xlsx([row], tmp_path / "x.xlsx")
    cell = load_workbook(path)["requirements"].cell(row=2, column=COLUMNS.index("exact_quote") + 1)
    assert cell.data_type == "s" and cell.value.startswith("=HYPERLINK")


def test_ask_of_an_empty_corpus_says_how_to_ingest(conn, settings) -> None:
    result = _cli(settings, "ask", "How long must transaction records be kept?")
    assert result.exit_code == 7, result.output
    assert "nothing is ingested yet" in result.stderr and "evidence ingest" in result.stderr
    assert "no authoritative evidence" not in result.output.lower()


def test_a_broad_question_gets_every_duty_law_first(trail_conn, trail_settings) -> None:
    result = _cli(trail_settings, "ask", "What must be done when a data breach is discovered?")
    assert result.exit_code == 0, result.output
    record = _record(trail_conn, _audit_id(result.stdout))
    cited = [r for r in record["requirements"] if r["cited"]]
    acts = {r["citation"] for r in cited if r["requirement_id"].startswith("REQ-S")}
    # the Act's duties (notify within 72 hours, contain, document), not only the policy's internal steps
    assert {"Section 4.1", "Section 4.3"} <= acts, sorted(acts)
    assert any(r["requirement_id"].startswith("REQ-P") for r in cited)
    statements = [s for s in record["answer"]["statements"] if s["kind"] == "supporting"]
    order = [s["requirement_ids"][0][4] for s in statements]
    assert order == sorted(order, key=lambda k: k != "S")  # the law's duties before the policies'


def test_a_broad_answer_says_how_many_requirements_it_found() -> None:
    found = {"total": 7, "law": 3, "other": 4, "duties": 6}
    record = {"question": "What must happen when an employee leaves?", "requirements": [], "answer": {
        "status": "ANSWERED", "grounding_confidence": "medium", "direct_answer": "Access is revoked [REQ-S001].",
        "parts": [{"index": 0, "question": "What must happen when an employee leaves?", "found": found}]}}
    text = "\n".join(line.text for line in answer_lines(record, width=80))
    assert ("7 requirement(s) found: 3 in the law (REQ-S), 4 in other sources (REQ-P); 6 of them duties or "
            "prohibitions") in " ".join(text.split())
    assert "cited" not in text  # a record before 0.6.11 does not say how many it cites
    # where the answer cites fewer than it found (at most 12 quotes besides its direct answer), it says so
    record["answer"]["parts"][0]["found"] = {**found, "total": 45, "cited": 12}
    text = " ".join("\n".join(line.text for line in answer_lines(record, width=80)).split())
    assert "45 requirement(s) found" in text and "12 cited, the others verified but not cited" in text
    record["answer"]["parts"][0]["found"] = {**found, "cited": 7}  # all cited: nothing more to say
    assert "cited" not in "\n".join(line.text for line in answer_lines(record, width=80))
    record["answer"]["parts"][0]["found"] = None  # not a broad question: nothing said
    assert "found:" not in "\n".join(line.text for line in answer_lines(record, width=80))


def test_missing_evidence_is_listed_once() -> None:
    # the answer's list names each part ("part 2: ..."); the parts' own lists said the same again unnamed
    record = {"question": "Who must notify a breach, and how fast?", "requirements": [], "answer": {
        "status": "ANSWERED", "grounding_confidence": "low", "direct_answer": "The DPO [REQ-P001].",
        "missing_evidence": ["part 2: a requirement that explicitly addresses: fast"],
        "parts": [{"index": 0, "question": "Who must notify a breach?", "missing_evidence": []},
                  {"index": 1, "question": "How fast?", "missing_evidence": [
                      "a requirement that explicitly addresses: fast"]}]}}
    text = "\n".join(line.text for line in answer_lines(record, width=80))
    missing = text[text.index("Missing evidence"):]
    assert "part 2: a requirement that explicitly addresses: fast" in missing
    assert missing.count("explicitly addresses") == 1
    # a record whose answer keeps no list of its own shows its parts'
    del record["answer"]["missing_evidence"]
    text = "\n".join(line.text for line in answer_lines(record, width=80))
    assert text[text.index("Missing evidence"):].count("explicitly addresses: fast") == 1


@pytest.mark.parametrize(("modality", "quote", "label"), [
    ("none", "A controller is not required to communicate a breach to data subjects if the personal data was "
             "encrypted and the key was not compromised.", "none: exemption"),  # sample corpus
    ("none", "This Directive does not apply to public administration entities.", "none: exemption"),  # EU directive
    ("none", "These Rules ... apply to every firm that provides investment advice or portfolio management.",
     "none: scope"),
    ("none", '"Suitability report" means the written statement a firm gives a client.', "none"),  # a definition
    ("obligation", "A firm must retain transaction records for at least six years.", "obligation"),
])
def test_a_quote_that_imposes_nothing_says_what_it_does(modality: str, quote: str, label: str) -> None:
    from engine.report.terminal import modality_label

    req = {"requirement_id": "REQ-S001", "modality": modality, "exact_quote": quote, "document_title": "Act",
           "section_path": "4.2"}
    assert modality_label(req) == label
    record = {"question": "Q?", "requirements": [{**req, "verified": True}], "answer": {
        "status": "ANSWERED", "statements": [{"text": "x [REQ-S001].", "requirement_ids": ["REQ-S001"]}]}}
    assert f"({label})" in " ".join(line.text for line in answer_lines(record, width=200))


@pytest.mark.parametrize(("req", "shown"), [
    # a policy's unnumbered section: its heading, where the citation has nothing to say
    ({"section_path": "HR Management and Reporting > Employee Onboarding"}, "REQ-P001 Employee Onboarding, HR v1"),
    # a numbered one keeps its citation, not its heading
    ({"section_path": "Part 3 People > 3.1 Security training", "section_number": "3.1"},
     "REQ-P001 Section 3.1, HR v1"),
    ({"section_path": ""}, "REQ-P001 HR v1"),  # a document with no headings at all
], ids=["heading", "numbered", "no-section"])
def test_a_cited_quote_says_where_it_stands(req: dict[str, str], shown: str) -> None:
    quote = {"requirement_id": "REQ-P001", "modality": "obligation", "exact_quote": "Training is completed.",
             "document_title": "HR", "document_version": 1, "verified": True, **req}
    record = {"question": "Q?", "requirements": [quote], "answer": {
        "status": "ANSWERED", "statements": [{"text": "x [REQ-P001].", "requirement_ids": ["REQ-P001"]}]}}
    assert any(line.text.strip().startswith(shown) for line in answer_lines(record, width=200))
