"""Extraction: modality (with the hard cases), verbatim quotes at their offsets, REQ-IDs."""

from __future__ import annotations

import pytest

from agents.extract import Modality, classify_modality, extract_from_chunks
from agents.quotes import is_verbatim
from engine.config import EvidenceSettings

CASES = {
    "must": ("A firm must retain transaction records for at least six years.", Modality.OBLIGATION),
    "shall": ("The controller shall notify the Commissioner without undue delay.", Modality.OBLIGATION),
    "required-to": ("A firm is required to keep a complaints register.", Modality.OBLIGATION),
    "duty-to": ("A Relevant Person has a duty to report suspicious transactions.", Modality.OBLIGATION),
    "mandatory": ("It is mandatory for a controller to restrict access to personal data.", Modality.OBLIGATION),
    "conditional-is-to": ("Where a breach occurs, the firm is to notify the Authority within three days.",
                          Modality.OBLIGATION),
    "conditional-shall": ("Where a breach is likely to result in a high risk, the controller shall inform the "
                          "data subjects.", Modality.OBLIGATION),
    "must-not": ("Employees must not delete any record subject to a legal hold.", Modality.PROHIBITION),
    "shall-not": ("The firm shall not destroy any record under investigation.", Modality.PROHIBITION),
    "may-not": ("A firm may not outsource its compliance function.", Modality.PROHIBITION),
    "prohibited": ("Shared user accounts are prohibited except where approved.", Modality.PROHIBITION),
    "prohibited-from": ("An employee is prohibited from dealing on inside information.", Modality.PROHIBITION),
    "may": ("A firm may rely on information provided by its clients.", Modality.PERMISSION),
    "permitted-to": ("A firm is permitted to keep records in electronic form.", Modality.PERMISSION),
    "should": ("A firm should review its policy at least once every year.", Modality.RECOMMENDATION),
    "expected-to": ("Firms are expected to document their risk assessment.", Modality.OBLIGATION),
    "regulator-expects": ("The Regulator expects an Authorised Person to maintain adequate records of its "
                          "outsourcing arrangements.", Modality.OBLIGATION),
    "imperative": ("It is imperative to adhere to the reporting timelines set by the Regulator.", Modality.OBLIGATION),
    "imperative-for": ("It is essential for a Fund Manager to identify conflicts of interest.", Modality.OBLIGATION),
    "subject-to-obligations": ("A Representative Office is subject to the record-keeping obligations in this "
                               "chapter.", Modality.OBLIGATION),
    "expected-considered": ("The FSRA expects such arrangements to be considered on a case-by-case basis.",
                            Modality.NONE),
    "encouraged": ("Firms are encouraged to publish their policy.", Modality.RECOMMENDATION),
    "not-required": ("A firm is not required to retain drafts of documents.", Modality.NONE),
    "nothing-requires": ("Nothing in this rule requires a firm to appoint a second officer.", Modality.NONE),
    "need-not": ("A firm need not notify the Authority of minor changes.", Modality.NONE),
    "definition-with-must": ('"Record" means any information that a firm must retain under this Regulation.',
                             Modality.NONE),
    "definition-unquoted": ("Client means any person to whom a firm must provide a service.", Modality.NONE),
    "description": ("This section describes the background to the record keeping rules.", Modality.NONE),
    "narrative": ("This Regulation comes into force on 1 March 2024.", Modality.NONE),
    "by-means-of": ("By means of its facilities, a Recognised Body should keep an audit trail of every order.",
                    Modality.RECOMMENDATION),  # "means of" defines nothing
    "shall-mean": ('"Derivative Works" shall mean any work that is based on the Work.', Modality.NONE),
    "should-as-if": ("SHOULD THE PROGRAM PROVE DEFECTIVE, YOU ASSUME THE COST OF ALL NECESSARY REPAIR.",
                     Modality.NONE),  # a condition, not advice
    "should-subject-first": ("The firm should review its policy once a year.", Modality.RECOMMENDATION),
    "regulator-would-permit": ("On an acquisition, the Regulator would permit the firm to rely on the CDD already "
                               "carried out.", Modality.PERMISSION),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_classify_modality(case: str) -> None:
    sentence, expected = CASES[case]
    assert classify_modality(sentence) is expected


CHUNK_TEXT = ("A firm must retain transaction records for at least six years from the date of the transaction.\n\n"
              "A firm is not required to retain drafts or working copies of documents once final.\n\n"
              "Such records must be kept in a durable medium as set out in section 4.1 of this Regulation.\n\n"
              "The firm must act.")


def _chunk(source_type: str = "regulation", text: str = CHUNK_TEXT, chunk_id: str = "chk_a") -> dict:
    return {"chunk_id": chunk_id, "text": text, "source_type": source_type, "document_id": "doc_1",
            "document_version": 1, "document_title": "Test Regulation", "section_path": "4 > 4.2"}


def test_extract_verbatim_quotes_with_ids_and_flags() -> None:
    reqs = extract_from_chunks([_chunk(), _chunk("policy", "Staff must report every incident to the security "
                                                           "team within one hour of discovery.", "chk_b")])
    assert [r.requirement_id for r in reqs] == ["REQ-S001", "REQ-S002", "REQ-S003", "REQ-P001"]
    for req, text in zip(reqs, [CHUNK_TEXT, CHUNK_TEXT, CHUNK_TEXT, None], strict=True):
        source = text or "Staff must report every incident to the security team within one hour of discovery."
        assert source[req.char_start:req.char_end] == req.exact_quote
    assert reqs[0].modality is Modality.OBLIGATION and reqs[0].extraction_confidence == "high"
    # an exemption imposes nothing but is offered beside the duties: the answer to "What should we do with drafts?"
    assert reqs[1].exact_quote.startswith("A firm is not required") and reqs[1].modality is Modality.NONE
    assert reqs[2].refers_elsewhere and reqs[2].extraction_confidence == "low"
    # "Such records ..." leans on the sentence that names the records: quoted from there, its modality its own
    assert reqs[2].exact_quote.startswith("A firm must retain transaction records") and reqs[2].exact_quote.endswith(
        "section 4.1 of this Regulation.") and reqs[2].modality is Modality.OBLIGATION
    assert all(r.exact_quote != "The firm must act." for r in reqs)  # under 10 words


# The excerpt's mechanics, at the 40-word limit the engine had until 0.6.5 (the default is now 120: a legal sentence
# is quoted whole, with its conditions)
FORTY = EvidenceSettings(max_quote_words=40)


def test_long_sentences_are_quoted_whole_with_their_conditions() -> None:
    # a licence's and a regulation's long sentences: whole, never from mid-sentence
    for long in ("If You initiate litigation against any entity by asserting a patent infringement claim (excluding "
                 "declaratory judgment actions, counter-claims, and cross-claims) alleging that a Contributor Version "
                 "directly or indirectly infringes any patent, then the rights granted to You by any and all "
                 "Contributors for the Covered Software under Section 2.1 of this License shall terminate.",
                 "Before giving investment advice to any retail or professional client in any market, a firm must "
                 "obtain the necessary information regarding the client's investment objectives, financial situation, "
                 "knowledge and experience in the investment field, risk tolerance, capacity for loss and any "
                 "sustainability preferences that the client may have expressed in writing."):
        assert extract_from_chunks([_chunk(text=long)])[0].exact_quote == long


def test_long_sentence_is_excerpted_contiguously() -> None:
    long = ("Before giving investment advice to any retail or professional client in any market, a firm must obtain "
            "the necessary information regarding the client's investment objectives, financial situation, knowledge "
            "and experience in the investment field, risk tolerance, capacity for loss and any sustainability "
            "preferences that the client may have expressed in writing.")
    req = extract_from_chunks([_chunk(text=long)], FORTY)[0]
    assert len(req.exact_quote.split()) == 40
    assert long[req.char_start:req.char_end] == req.exact_quote and "must obtain" in req.exact_quote
    assert req.extraction_confidence == "medium"


@pytest.mark.parametrize("sentence", [
    # a control catalogue: the closing condition is the answer's half
    "Patches, updates or other vendor mitigations for vulnerabilities in office productivity suites, web browsers "
    "and their extensions, email clients, PDF applications, and security products are applied within 48 hours of "
    "release when vulnerabilities are assessed as critical by vendors or when working exploits exist.",
    # a regulation and a policy of the same length
    "A regulated entity that outsources any part of the operation of its payment, clearing or settlement systems to a "
    "service provider located outside the jurisdiction must notify the Authority in writing before the arrangement "
    "takes effect, unless the Authority has waived that requirement.",
    "All workstations, laptops and mobile devices that store or process customer or employee data, including those "
    "owned by contractors, interns and temporary staff, must be encrypted with full-disk encryption before they are "
    "connected to the corporate network or to any cloud service for the first time.",
])
def test_a_sentence_a_few_words_over_the_limit_is_quoted_to_its_end(sentence: str) -> None:
    words = len(sentence.split())
    assert 40 < words <= 50
    req = extract_from_chunks([_chunk(text=sentence)], FORTY)[0]
    assert req.exact_quote == sentence, req.exact_quote


def test_a_time_beyond_a_long_sentences_excerpt_is_offered_in_an_excerpt_of_its_own() -> None:
    long = ("Moreover, your licence from a particular copyright holder is reinstated permanently if the copyright "
            "holder notifies you of the violation by some reasonable means, this is the first time you have received "
            "notice of violation of this Licence from that copyright holder, and you cure the violation prior to 30 "
            "days after your receipt of the notice.")
    first, second = extract_from_chunks([_chunk(text=long)], FORTY)
    assert first.exact_quote.startswith("Moreover, your licence") and "30" not in first.exact_quote
    assert "prior to 30 days after your receipt of the notice." in second.exact_quote
    for req in (first, second):
        assert long[req.char_start:req.char_end] == req.exact_quote and len(req.exact_quote.split()) <= 40
    assert [r.requirement_id for r in (first, second)] == ["REQ-S001", "REQ-S002"]


def test_excerpt_keeps_the_subject_and_a_time_stated_first() -> None:
    from agents.verify import states_time

    long = ("On an annual basis or more frequently if requested by the Regulator, the Senior Executive Officer of a "
            "Third Party Provider must provide the Regulator with an attestation that the Third Party Provider has "
            "complied with the requirements on the security and integrity of its Interfacing Systems, together "
            "with a report by an independent auditor.")
    req = extract_from_chunks([_chunk(text=long)], FORTY)[0]
    assert req.exact_quote.startswith("On an annual basis") and "must provide the Regulator" in req.exact_quote
    assert states_time(req.exact_quote) and len(req.exact_quote.split()) == 40


def test_an_excerpt_keeps_its_sentences_modality() -> None:
    # a permission by its last words; the excerpt is cut around "required", its first modal word, and leaves them out
    items = ", ".join(f"item {n} of the list of matters for the firm" for n in range(1, 9))
    long = f"The required procedures set out in Part 21 give: {items}, and the firm may make representations."
    req = extract_from_chunks([_chunk(text=long)], FORTY)[0]
    assert " may " not in req.exact_quote and long[req.char_start:req.char_end] == req.exact_quote
    assert req.modality is Modality.PERMISSION


def test_a_short_whole_sentence_is_a_complete_quote_a_short_fragment_is_not() -> None:
    from agents.quotes import long_enough

    text = "Sanctions apply in the ADGM. Relevant Persons must comply with Targeted Financial Sanctions. The end."
    reqs = extract_from_chunks([_chunk(text=text)])
    assert [r.exact_quote for r in reqs] == ["Relevant Persons must comply with Targeted Financial Sanctions."]
    limits = EvidenceSettings()
    start = text.index("Relevant")
    assert long_enough(text, start, text.index("Sanctions. The") + len("Sanctions."), limits)
    assert not long_enough(text, start + len("Relevant "), text.index(" The end"), limits)  # 6 words, a fragment
    assert not long_enough(text, text.index("The end"), len(text), limits)  # whole, but 2 words


def test_a_list_lead_in_is_quoted_with_its_items() -> None:
    text = ("Rules under subsection (1) may make provision\u2014\n(a)\tspecifying the time within which an auditor is "
            "to be appointed;\n(b)\trequiring the Regulator to be notified of an appointment.")
    req = extract_from_chunks([_chunk(text=text)])[0]  # the lead-in alone is 7 words: too short to quote
    assert req.exact_quote == text and req.modality is Modality.PERMISSION


def test_a_point_that_leads_into_points_indented_under_it_ends_at_its_next_sibling() -> None:
    """A policy's numbered statements as a Markdown list, one with points nested under it: its quote holds its own
    points, and the next statement at its level is a requirement of its own (it was run on into the same quote)."""
    text = ("-   POLACP042: System Administrators MUST, on a minimum quarterly basis, conduct an account audit to "
            "check:\n    -   Any escalation of privileges from non-administrator to administrator.\n"
            "    -   Any forwarding of email accounts.\n"
            "-   POLACP043: A user leaving MUST move their data to a shared folder if needed for retention.")
    quotes = [r.exact_quote for r in extract_from_chunks([_chunk("policy", text)])]
    assert quotes == [text[:text.index("\n-   POLACP043")], text[text.index("-   POLACP043"):]]
    # points set flat, as text flattened from a page sets them, run on as before: the list's own labels decide
    flat = "Staff must report in one of these ways:\n1. Email;\n2. Phone;\n3. Chat."
    assert [r.exact_quote for r in extract_from_chunks([_chunk("policy", flat)])] == [flat]


def test_excerpt_of_a_late_modal_opens_at_a_clause_boundary() -> None:
    preamble = ", ".join(f"where the firm carries on activity number {n} in the jurisdiction" for n in range(1, 6))
    long = (f"In the circumstances described in this section, {preamble}, the firm must notify the Regulator in "
            "writing of every change to its controllers and of every change to its close links without delay.")
    req = extract_from_chunks([_chunk(text=long)], FORTY)[0]
    before = long[:req.char_start].rstrip()
    assert before.endswith(",") and "must notify the Regulator" in req.exact_quote
    assert long[req.char_start:req.char_end] == req.exact_quote


@pytest.mark.parametrize(("text", "starts"), [
    ("The firm keeps a register of complaints received from clients. They must be reviewed by the compliance "
     "officer every quarter without exception.", "The firm keeps a register"),
    ("This Chapter sets out the requirements that apply to every firm and its senior management, and firms must "
     "read it in full.", "This Chapter"),
], ids=["pronoun-takes-the-sentence-before", "this-chapter-leans-on-nothing"])
def test_a_sentence_leaning_on_text_before_it_is_quoted_with_it(text: str, starts: str) -> None:
    reqs = extract_from_chunks([_chunk(text=text)])
    assert reqs and reqs[-1].exact_quote.startswith(starts) and text[reqs[-1].char_start:reqs[-1].char_end] == \
        reqs[-1].exact_quote


@pytest.mark.parametrize(("quote", "start_shift", "ok"), [
    ("A firm must retain transaction records for at least six years from the date of the transaction.", 0, True),
    ("A firm must retain transaction records for at least six years from the date of the transaction!", 0, False),
    ("A firm must retain transaction records for at least seven years from the date of the transaction.", 0, False),
    ("A firm shall keep everything forever.", 0, False),
    ("A firm must retain transaction records for at least six years from the date of the transaction.", 1, False),
], ids=["exact", "one-character-changed", "one-word-changed", "invented", "wrong-offsets"])
def test_verbatim_check(quote: str, start_shift: int, ok: bool) -> None:
    end = CHUNK_TEXT.index("transaction.") + len("transaction.")
    assert is_verbatim(CHUNK_TEXT, start_shift, end + start_shift, quote) is ok


def test_verbatim_allows_only_whitespace_normalization() -> None:
    text = "A firm must\nretain   records."
    assert is_verbatim(text, 0, len(text), "A firm must retain records.")
    assert not is_verbatim(text, 0, len(text), "a firm must retain records.")


@pytest.mark.parametrize(("section", "sentence", "kind"), [
    ("4 > 4.2 Retention", "A firm must retain records for six years.", None),
    ("9 > 9.2 Guidance", "A firm should consider the size of its business.", "guidance"),
    ("Recitals > (85)", "A personal data breach may result in physical damage.", "recital"),
    ("4 > 4.2", "Guidance: firms should keep records in one place.", "guidance"),
    ("4 > 4.2", "For example, a firm may keep records on paper.", "example"),
    ("4 > 4.2", "(85) Whereas a breach should be notified quickly.", "recital"),
    ("4 > 4.2 Notes", "Note: this rule applies from 2025.", "note"),
    ("AMENDMENTS NOT IN FORCE > \u2014 2026, c. 3, s. 390", "11 (1) An individual may file a complaint.",
     "not in force"),  # a consolidated Act's amendments still to come (Justice Canada's XML)
    ("Part 2 > Section 12 Coming into force", "This Act comes into force on 1 May 2031.", None),
    ("Access Control > OSPS-AC-03 > OSPS-AC-03.01", "Recommendation: Set branch protection on the primary branch.",
     "guidance"),  # a baseline's control: its requirement, then what it recommends
    ("Part 1 > Article 4", "Recommendation 5 obliges countries to criminalise terrorist financing.", None),
    ("4 > 4.2", "Notes to the accounts must be kept for six years.", None),  # a word that opens with "note"
], ids=["binding", "guidance-section", "recital-section", "guidance-text", "example-text", "recital-text", "note",
        "not-in-force", "coming-into-force", "recommendation-label", "recommendation-named", "word-opening-with-note"])
def test_non_binding_text_is_marked_from_structure(section: str, sentence: str, kind: str | None) -> None:
    from agents.quotes import non_binding

    assert non_binding({"section_path": section}, sentence) == kind


def test_non_binding_text_of_a_regulation_is_never_a_req_s() -> None:
    guidance = {**_chunk(text="A firm should review its records policy at least once every year in full."),
                "section_path": "4 > 4.3 Guidance"}
    reqs = extract_from_chunks([guidance, _chunk(chunk_id="chk_b")])
    assert reqs[0].requirement_id == "REQ-P001" and not reqs[0].binding
    assert "non-binding (guidance)" in reqs[0].confidence_reason
    assert reqs[1].requirement_id == "REQ-S001" and reqs[1].binding


@pytest.mark.parametrize(("source_type", "text", "question", "answer"), [
    # a policy: the rule in the present tense beside the users' duty
    ("policy", "Users are required to lock their screens when unattended. Information systems automatically lock "
               "users after 2 minutes or less of inactivity.",
     "How fast does a workstation have to lock itself?", "Information systems automatically lock users after 2"),
    # a control catalogue: the parameter stated as a fact of the control
    ("standard", "The organisation must maintain an inventory of assets. Reviews of the inventory take place at "
                 "least once per quarter.",
     "How often is the asset inventory reviewed?", "Reviews of the inventory take place at least once per quarter."),
    # a regulation: the fee stated as a fact beside the duty to pay it
    ("regulation", "An applicant shall pay the application fee on submission. The application fee is USD 5,000 for "
                   "a Category 1 licence.",
     "How much is the application fee for a Category 1 licence?", "The application fee is USD 5,000"),
], ids=["policy-minutes", "catalogue-frequency", "regulation-fee"])
def test_a_sentence_stating_the_time_or_amount_asked_is_a_candidate_beside_the_duties(
        source_type: str, text: str, question: str, answer: str) -> None:
    """A passage with duties offers its other sentences only when one states the time or amount a part asks
    for alone; to any other question they stay context."""
    asked = [r.exact_quote for r in extract_from_chunks([_chunk(source_type, text)], questions=[question])]
    assert any(q.startswith(answer) for q in asked), asked
    other = [r.exact_quote for r in extract_from_chunks([_chunk(source_type, text)],
                                                         questions=["Who is responsible for this?"])]
    assert not any(q.startswith(answer) for q in other), other
    assert len(other) == 1


def test_a_spreadsheet_rows_other_cells_describe_it_and_are_no_requirements() -> None:
    """A control matrix's row (engine.ingest.sheets): its text is the requirement; its "Header: value" lines (a
    testing procedure's name, a level's tick) are quoted only where one states the time or amount asked."""
    text = ("The app only depends on up-to-date connectivity and security libraries.\n\n"
            "Testing Procedure(s): Checking for Weaknesses in Third Party Libraries (MSTG-CODE-5)\n\nLevel 1: \u2713")
    row = {**_chunk("standard", text), "fields": ["Level 1", "Review frequency", "Testing Procedure(s)"]}
    asked = [r.exact_quote for r in extract_from_chunks([row], questions=["Must our libraries be kept current?"])]
    assert asked == ["The app only depends on up-to-date connectivity and security libraries."]
    # the same lines in a text that is no spreadsheet's row are read as any sentence
    asked = [r.exact_quote for r in extract_from_chunks([_chunk("standard", text)],
                                                         questions=["Must our libraries be kept current?"])]
    assert any(q.startswith("Testing Procedure(s)") for q in asked)
    # a cell that states the time asked is offered
    timed = {**row, "text": text + "\n\nReview frequency: at least annually and after each major release"}
    asked = [r.exact_quote for r in extract_from_chunks([timed], questions=["How often are the libraries reviewed?"])]
    assert "Review frequency: at least annually and after each major release" in asked
    assert not any(q.startswith("Testing") for q in asked)


def test_a_table_row_stating_a_time_is_not_offered_without_its_header() -> None:
    """Rows whose header row another chunk holds (a table too large for one) are not offered beside a duty."""
    text = "Records must be retained as this matrix sets out.\n\n| Internal | 7 years |\n| Public | 1 year |"
    asked = [r.exact_quote for r in extract_from_chunks([_chunk("policy", text)],
                                                         questions=["For how many years must we keep tax records?"])]
    assert asked == ["Records must be retained as this matrix sets out."]


VULN_TABLE = ("Findings are remediated within these timelines.\n\n"
              "| Sev Rating | Priority Level | SLA | Definition |\n| --- |:---:| ---:| --- |\n"
              "| P0 | Highest | 3 days | Vulnerabilities that cause a privilege escalation. |\n"
              "| P1 | High | 7 days | Vulnerabilities that affect the security of the platform. |")
DATA_TABLE = ("Every class of data must be handled as this matrix requires.\n\n"
              "| Data | Encrypt At Rest | Retention Period |\n|---|---|---|\n"
              "| Confidential | Required | 7 years for official documentation |\n"
              "| Public | N/R | Varies based on business need |")


def test_a_lead_in_over_a_table_is_not_run_on_over_its_rows() -> None:
    """A sentence that announces a table ("... depending on the type of data:") is quoted alone, and each row with
    its header: run on over the rows, the quote stated every type's period, and answered a question about a type
    the table does not hold (the policies-2 set's payroll records) from the others'."""
    text = ("Data subject to this policy will be retained for a set period of time, depending on the type of data:\n\n"
            "| Data Assets | Retention period |\n|---|---|\n| Client logs | 12 months |\n"
            "| Payment and billing information | 7 years |")
    quotes = [r.exact_quote for r in extract_from_chunks([_chunk("policy", text)],
                                                          questions=["How long do we keep client logs?"])]
    assert quotes[0] == text.split("\n")[0]
    assert "| Client logs | 12 months |" in quotes and "| Payment and billing information | 7 years |" in quotes


@pytest.mark.parametrize(("text", "rows"), [
    (VULN_TABLE, ["| P0", "| P1"]), (DATA_TABLE, ["| Confidential", "| Public"]),
], ids=["sla-table-no-duty", "matrix-after-a-duty"])
def test_a_table_rows_are_requirements_read_under_their_header(text: str, rows: list[str]) -> None:
    """Each body row is offered with its header row (whether or not the passage states a duty elsewhere); the
    header and separator rows are not quotes."""
    reqs = extract_from_chunks([_chunk("policy", text)], questions=["What applies to findings and data?"])
    table = [r for r in reqs if r.exact_quote.startswith("|")]
    assert [r.exact_quote[:len(p)] for r, p in zip(table, rows, strict=True)] == rows
    header = text[text.index("| ", text.index("\n\n")):text.index("\n", text.index("| ", text.index("\n\n")))]
    assert all(r.table_header == header for r in table)
    assert all(text[r.char_start:r.char_end] == r.exact_quote for r in table)
    assert "SLA: 3 days" in table[0].reading() or "Retention Period: 7 years" in table[0].reading()


@pytest.mark.parametrize(("header", "row", "duty"), [
    # a policy's vulnerability SLAs (the development corpora's policies)
    ("| Sev Rating | Priority Level | SLA | Definition |", "| P0 | Highest | 3 days | Privilege escalation. |", True),
    ("| Sev Rating | Priority Level | SLA | Definition |", "| P3 | Low | Best Effort | Singular users. |", False),
    # a records retention schedule, a continuity plan's recovery objectives, an access review cycle
    ("| Record type | Retention period |", "| Payroll records | 7 years |", True),
    ("| System | Tier | RTO | RPO |", "| Payments | 1 | 4 hours | 15 minutes |", True),
    ("| Access type | Review frequency |", "| Privileged accounts | Quarterly |", True),
    # counter-examples: a standard's levels, a revision history, a cover page, a period under no time column
    ("| # | Description | L1 | L2 | L3 | CWE |",
     "| 2.1.1 | User set passwords are 12 characters long. | ✓ | ✓ | ✓ | 521 |", False),
    ("| Version | Date | Author | Changes |",
     "| 1.2 | 2023-04-01 | J. Smith | Added a 3 days grace period note |", False),
    ("|| PARTY 1 | PARTY 2 |", "| Term | 2 years | 2 years |", False),
    ("| Data | Examples |", "| Logs | Kept for 90 days by the vendor |", False),
], ids=["sla", "best-effort", "retention", "rto", "review-cycle", "asvs-levels", "revision-history", "cover-page",
        "no-time-column"])
def test_a_period_under_a_time_column_is_the_rows_duty(header: str, row: str, duty: bool) -> None:
    """A table row whose words impose nothing ("P0 | Highest | 3 days") is an obligation when a cell states a
    period under a column its header names for a time limit or frequency (SLA, retention period, RTO, review
    frequency); a period elsewhere, a date, a level mark are not."""
    text = f"These apply as set out below.\n\n{header}\n|{'---|' * (header.count('|') - 1)}\n{row}"
    reqs = [r for r in extract_from_chunks([_chunk("policy", text)], questions=["What applies?"])
            if r.exact_quote.startswith("|")]
    assert [r.exact_quote for r in reqs] == [row]
    assert (reqs[0].modality is Modality.OBLIGATION) is duty


def test_an_amending_instruction_is_quoted_alone_never_with_the_text_it_inserts() -> None:
    # an EU act that amends others: the instruction is not a lead-in, the inserted text is another act's
    text = ("\u20181. A CCP shall establish, implement and maintain an adequate business continuity policy and "
            "disaster recovery plan aiming to ensure the timely recovery of operations.\u2019;\n\n(b) in paragraph 3, "
            "the first subparagraph is replaced by the following:\n\n\u20183. In order to ensure consistent "
            "application of this Article, ESMA shall develop draft regulatory technical standards.\u2019;")
    quotes = [r.exact_quote for r in extract_from_chunks([_chunk(text=text)])]
    assert "(b) in paragraph 3, the first subparagraph is replaced by the following:" in quotes or not any(
        q.startswith("(b)") for q in quotes)
    assert not any("replaced by the following" in q and "ESMA shall" in q for q in quotes)
    assert not any("timely recovery" in q and "replaced by" in q for q in quotes)
    # a list's lead-in still runs on over its points (a policy)
    listed = "Before production use, every change must be:\n- reviewed by a second engineer;\n- approved in writing."
    assert extract_from_chunks([_chunk(text=listed)])[0].exact_quote == listed


@pytest.mark.parametrize("text", [
    "Password Requirements\n- Passwords are at least 12 characters long.\n- Passwords are rotated every year.",  # title
    "Access reviews are done by the system owner\n- Reviews are recorded in the ticket system.",  # announces nothing
    "Any conditions added under section\n    7.  This requirement must be met by every licensee.",  # wrapped text
    "## Single Sign On\n1. Staff sign in through the identity provider.",  # a heading that ends on "On"
])
def test_a_line_without_a_colon_that_leads_into_nothing_is_not_run_on(text: str) -> None:
    quotes = [r.exact_quote for r in extract_from_chunks([_chunk(text=text)])]
    assert quotes and all("\n" not in q for q in quotes), quotes  # each line its own quote, none run on


def test_a_list_nested_in_a_quoted_list_is_not_run_on_twice() -> None:
    # a US rule's standard with its implementation specifications: the outer lead-in runs on over both levels; the
    # inner lead-in, already inside that quote, is not run on again over the same points
    text = ("(a) A covered entity must, in accordance with this section:\n(1)(i) Standard: Security management "
            "process. Implement policies and procedures to prevent, detect, contain, and correct security "
            "violations.\n(ii) Implementation specifications:\n(A) Risk analysis (Required). Conduct an accurate and "
            "thorough assessment of the potential risks and vulnerabilities.\n(B) Risk management (Required). "
            "Implement security measures sufficient to reduce risks and vulnerabilities to a reasonable level.")
    quotes = [r.exact_quote for r in extract_from_chunks([_chunk(text=text)])]
    assert quotes[0].startswith("(a) A covered entity must") and "(B) Risk management" in quotes[0]
    inner = [q for q in quotes if q.startswith("(ii) Implementation specifications")]
    assert inner and all("(B) Risk management" not in q for q in inner)  # its own sentence, not run on again


@pytest.mark.parametrize(("text", "last", "left_out"), [
    # a US rule: a point numbered as the outer level ("(b) Standard") ends the implementation specifications
    ("A covered entity must, in accordance with § 164.306:\n\n(2) Implementation specifications:\n\n(i) Unique "
     "user identification (Required). Assign a unique name for "
     "identifying and tracking user identity.\n\n(ii) Encryption and decryption (Addressable). Implement a mechanism "
     "to encrypt and decrypt electronic protected health information.\n\n(b) Standard: Audit controls. Implement "
     "mechanisms that record and examine activity in information systems.",
     "encrypt and decrypt electronic protected health information.", "(b) Standard"),
    # a policy: a paragraph after the points is not one of them
    ("Before leaving their desk, employees must:\n- lock the screen of their workstation;\n- put away papers "
     "holding customer data.\n\nThe IT team may grant exceptions for kiosks in public areas.",
     "put away papers holding customer data.", "The IT team"),
    # a licence: the same, its text wrapped and indented
    ("  You may convey a covered work in object code form, provided that you also convey the\nCorresponding "
     "Source in one of these ways:\n\n    a) Convey the object code in a physical product, accompanied by the "
     "Corresponding Source\n    on a durable physical medium.\n\n    b) Convey the object code by offering access "
     "from a designated place.\n\n  A separable portion of the object code need not be included in conveying the "
     "object code work.", "offering access from a designated place.", "A separable portion"),
    # a nested list, and the outer one taken up again after it, are one list
    ("The firm must:\n(1) keep a register of its clients;\n(2) record for each client:\n(A) its name;\n(B) its "
     "address;\n(3) review the register every year.", "(3) review the register every year.", None),
    # a line of wrapped text that opens with a number is no point: the sentence runs on
    ("You may convey a modified work, provided that you also meet all of these conditions:\n    a) The work must "
     "carry prominent notices stating that you modified it.\n\n    b) The work must carry prominent notices stating "
     "that it is\n    released under this License and any conditions added under section\n    7.  This "
     "requirement modifies the requirement in section 4.", "modifies the requirement in section 4.", None),
    # points with no punctuation of their own still end at the paragraph after them
    ("Employees must:\n\n- lock screens\n- report losses\n- wear badges\n\nThe IT team may grant exceptions for "
     "kiosks in public areas.", "- wear badges", "The IT team"),
    # a lead-in with no colon still runs on over its points: a policy's bullets, a procedure's steps, a contract's
    # lettered points
    ("Employees must do the following\n\n- lock their screens when they leave the desk\n- report lost devices to IT"
     "\n\nThe IT team may grant exceptions for kiosks in public areas.", "- report lost devices to IT", "The IT team"),
    ("When an employee leaves, the manager must do the following\n1. Revoke all system access within one day\n2. "
     "Collect the laptop and badge\n\nOther text follows here.", "2. Collect the laptop and badge", "Other text"),
    ("The licensee shall\n(a) keep records of all copies;\n(b) report annually to the licensor.",
     "(b) report annually to the licensor.", None),
    # ... and so does one that stops where no sentence ends (a preposition, "that", an article): a policy's scanning
    # tools, its rules, a regulation's conditions
    ("The scanning and identification of system vulnerabilities is performed by\n\n1. Automated security agent "
     "installed on all Linux servers.\n2. Quarterly external scans.\n\nFindings are tracked in tickets.",
     "2. Quarterly external scans.", "Findings"),
    ("Company policy requires that\n\n(a) All laptops are encrypted.\n(b) Screens lock after ten minutes.",
     "(b) Screens lock after ten minutes.", None),
    ("An operator is exempt where the incident is notified to\n(a) the competent authority; or\n(b) the CSIRT.",
     "(b) the CSIRT.", None),
    # a control catalogue's lettered items ("a.", "b.") end at the control's discussion, commentary the quote of the
    # binding statement never takes
    ("Control:\n\na. Inspect fire extinguishers [Assignment: organization-defined frequency];\nb. Record the "
     "results in the facility log; and\nc. Correct any deficiency within 30 days.\n\nDiscussion: Inspection "
     "frequency can depend on local fire codes. Organizations may contract third parties.",
     "c. Correct any deficiency within 30 days.", "Discussion"),
    # ... and a statement of one paragraph under its label ends where the next paragraph opens
    ("Control:\n\nStore flammable liquids in approved cabinets away from ignition sources.\n\nDiscussion: Storage "
     "quantities may be limited by local regulations.", "away from ignition sources.", "Discussion"),
], ids=["outer-level-point", "paragraph-after-points", "licence-paragraph", "nested-and-back", "wrapped-number",
        "unpunctuated-points", "no-colon-bullets", "no-colon-steps", "no-colon-points", "unfinished-by",
        "unfinished-that", "unfinished-to", "catalogue-lettered-items", "catalogue-paragraph"])
def test_a_list_lead_in_runs_on_over_its_own_points_only(text: str, last: str, left_out: str | None) -> None:
    quote = extract_from_chunks([_chunk(text=text)])[0].exact_quote
    assert quote.startswith(text.strip()[:12]), quote
    assert quote.endswith(last), quote
    assert left_out is None or left_out not in quote


def test_a_standards_requirement_rows_are_whole_quotes_with_the_modality_of_their_requirement_cell() -> None:
    """A security standard's table: each row's requirement cell holds two sentences and a link; the row is one
    quote, and "Verify that ...", read in its own cell, makes it an obligation as the same sentence would be."""
    text = ("| # | Description | L1 | CWE |\n| :---: | :--- | :---: | :---: |\n"
            "| 2.1.1 | Verify that user set passwords are at least 12 characters in length. Multiple spaces are "
            "combined first. ([C6](https://example.org/c6)) | \u2713 | 521 |\n"
            "| 2.1.2 | Verify that passwords of at least 64 characters are permitted. | \u2713 | 521 |")
    table = [r for r in extract_from_chunks([_chunk("standard", text)]) if r.exact_quote.startswith("|")]
    assert [r.exact_quote.split(" | ")[0] for r in table] == ["| 2.1.1", "| 2.1.2"]
    assert table[0].exact_quote.endswith("| \u2713 | 521 |")
    assert [r.modality for r in table] == [Modality.OBLIGATION, Modality.OBLIGATION]
    # a matrix row's cells state no duty of their own: its modality stays what the row's reading gives ...
    matrix = ("| Data | Labeling | Encrypt At Rest |\n|---|---|---|\n| Public | N/R | N/R |\n"
              "| Customer | Required | Required |")
    rows = [r for r in extract_from_chunks([_chunk("policy", matrix)]) if r.exact_quote.startswith("|")]
    assert [r.modality for r in rows] == [classify_modality(r.reading(), source_type="policy") for r in rows]
    # ... unless a cell states a period under a column that sets a time ("SLA: 3 days")
    rows = [r for r in extract_from_chunks([_chunk("policy", VULN_TABLE)]) if r.exact_quote.startswith("|")]
    assert [r.modality for r in rows] == [Modality.OBLIGATION, Modality.OBLIGATION]
    assert classify_modality(rows[0].reading(), source_type="policy") is Modality.NONE


def test_a_tables_separator_row_is_never_a_quote() -> None:
    """A passage of table rows whose header another chunk holds, or a line of dashes under a licence's heading:
    the separator holds no text and is never offered."""
    text = ("| :---: | :--- | :---: |\n| 2.1.5 | Verify users can change their password. | \u2713 |\n"
            "| 2.1.6 | Verify that password change requires the user's current and new password. | \u2713 |")
    quotes = [r.exact_quote for r in extract_from_chunks([_chunk("standard", text)])]
    assert quotes and not any(q.startswith("| :---:") for q in quotes)
    assert not extract_from_chunks([_chunk("contract", "--------------------------------")])


@pytest.mark.parametrize(("source_type", "text", "lead"), [
    # a contract's lead-in with no duty of its own over points that are duties
    ("contract", "Upon any expiration or termination:\n\n"
     "a. Customer will no longer have any right to use the Product.\n\n"
     "b. Upon Customer's request, Provider will delete Customer Content within 60 days.\n\n"
     "c. Each Recipient will return or destroy Discloser's Confidential Information in its possession.\n",
     "Upon any expiration or termination:"),
    # a policy's and a regulation's lead-in in the same shape
    ("policy", "When an employee leaves the company:\n- Revoke all access to company systems within one business day.\n"
     "- Recover every laptop, phone and token the company issued to the employee.\n",
     "When an employee leaves the company:"),
    ("regulation", "For the purposes of paragraph 1:\n\n(a) keep records of each incident;\n\n"
     "(b) report major incidents to the competent authority within 24 hours.\n", "For the purposes of paragraph 1:"),
], ids=["contract", "policy", "regulation"])
def test_a_lead_in_over_points_that_are_duties_is_offered_with_its_list(source_type: str, text: str,
                                                                      lead: str) -> None:
    reqs = extract_from_chunks([_chunk(source_type=source_type, text=text)])
    whole = [r for r in reqs if r.exact_quote.startswith(lead)]
    assert whole and whole[0].exact_quote.rstrip().endswith(text.rstrip().splitlines()[-1].strip())
    assert any(r.exact_quote.lstrip().startswith(("b.", "- Recover", "(b)")) for r in reqs)  # the points too
    assert whole[0].modality is Modality.OBLIGATION  # the points' force, where the lead-in states none


def test_a_lead_in_over_points_that_impose_nothing_is_not_offered_beside_a_duty() -> None:
    text = ("The Provider shall keep a register of sub-processors.\n\nThe register lists:\n- the name of each "
            "sub-processor;\n- its address.\n")
    assert not any(r.exact_quote.startswith("The register lists") for r in extract_from_chunks([_chunk(text=text)]))


@pytest.mark.parametrize(("before", "after", "lead"), [
    # an EU act: the lead-in and its first points end one chunk, the next opens with the list's next point
    ("2. For the purposes of the first subparagraph, the management body shall:\n(a) bear the ultimate "
     "responsibility for managing ICT risk;\n(b) put in place policies on data;",
     "(c) approve and periodically review the ICT internal audit plans;\n(d) allocate the budget.",
     "For the purposes of the first subparagraph, the management body shall:"),
    # a policy: the chunk before ends with the lead-in itself
    ("Offboarding\n\nWhen an employee leaves, the IT team must:", "- revoke all system access within one day;\n"
     "- recover every company device.", "When an employee leaves, the IT team must:"),
    # a US regulation: the chunk before ends the numbered list; a new lettered paragraph goes on no list
    ("(a) General requirements. Covered entities must do the following:\n(1) Ensure the confidentiality of all "
     "ePHI.\n(2) Protect against reasonably anticipated threats.",
     "(b) Flexibility of approach. Covered entities may use any security measures.", None),
    # ... nor one whose chunk before ended its list with a full stop in the lead-in's own sentence
    ("The firm must keep records:\n(a) of trades; and\n(b) of complaints.", "(c) Records are kept in English.",
     None),
    # ... nor after a sentence that introduces no list
    ("The firm must keep records of every trade.", "(1) The records are kept for six years.", None),
    # a US regulation's points of two sentences each, the lead-in on a point's own line: the second sentence of a
    # point goes on the point, it is no lead-in
    ("(ii) Implementation specifications. Implement:\n\n(A) Security reminders (Addressable). Periodic security "
     "updates.\n\n(B) Protection from malicious software (Addressable). Procedures for guarding against, detecting, "
     "and reporting malicious software.", "(C) Log-in monitoring (Addressable). Procedures for monitoring log-in "
     "attempts and reporting discrepancies.", "Implement:"),
    # ... but a sentence after the list on a line of its own closes it
    ("Implement:\n\n(A) Security reminders (Addressable). Periodic security updates.\n\nThe reminders are kept on "
     "file.", "(B) Protection from malicious software (Addressable).", None),
    # a policy's lead-in with no colon that stops where no sentence ends, its first point in the chunk before
    ("Company policy requires that\n(a) Access is granted by role.", "(b) Shared credentials are approved by IT.",
     "Company policy requires that"),
    # ... but a sentence that ends on a word a sentence may end with is no lead-in ("... is kept on file")
    ("The register is kept on file\n(a) Access is granted by role.", "(b) Shared credentials are approved by IT.",
     None),
], ids=["eu-act", "policy", "us-regulation-new-paragraph", "list-ended", "no-lead-in", "points-of-two-sentences",
        "closed-by-a-paragraph", "unfinished-lead-in", "ended-without-a-stop"])
def test_the_lead_in_of_a_list_the_chunk_before_leaves_open(before: str, after: str, lead: str | None) -> None:
    from agents.quotes import open_lead_in, opening_points, opens_with_point

    assert open_lead_in(before, after) == lead
    assert opens_with_point(after) is (opening_points(after) > 0)  # the cheap test agrees with the sentences


@pytest.mark.parametrize(("text", "lead", "modality"), [
    # an EU act: the management body's duties go on from the chunk before
    ("(c) the ICT internal audit plans;\n\n(d) the appropriate budget for digital operational resilience.",
     "For the purposes of the first subparagraph, the management body shall approve:", Modality.OBLIGATION),
    # a policy: what must be in every contract
    ("- the right to audit the vendor's security controls;\n- notice of any breach within 24 hours.",
     "Every vendor contract must include:", Modality.OBLIGATION),
    # ... but a definition binds no one, whatever its list's lead-in says (an EU act's Article 3)
    ("(3) \u2018legacy ICT system\u2019 means an ICT system that has reached the end of its lifecycle;",
     "For the purposes of this Regulation, the following definitions shall apply:", Modality.NONE),
], ids=["eu-act", "policy", "definitions"])
def test_points_that_go_on_a_list_from_the_chunk_before_are_read_with_its_lead_in(
        text: str, lead: str, modality: Modality) -> None:
    alone = extract_from_chunks([_chunk(text=text)])
    led = extract_from_chunks([_chunk(text=text)], lead_ins={"chk_a": lead})
    assert all(r.modality is Modality.NONE for r in alone)  # read alone, the points impose nothing
    assert led and all(r.modality is modality for r in led)
    assert [r.exact_quote for r in led] == [r.exact_quote for r in alone]  # the quotes stay the chunk's own text
    assert all(is_verbatim(text, r.char_start, r.char_end, r.exact_quote) for r in led)
    if modality is Modality.OBLIGATION:  # the reader is told which lead-in binds them
        assert lead.split()[0] in led[0].confidence_reason


@pytest.mark.parametrize("notice", [
    "[Withdrawn: Incorporated into FS-1.]",              # a Markdown catalogue's withdrawn enhancement
    "This control is withdrawn: incorporated into XA-2.",  # an OSCAL catalogue's, as ingest renders it
    "[Reserved]",                                         # a code's reserved section
    "Repealed.",                                          # a law's repealed article
], ids=["catalogue", "oscal", "reserved", "repealed"])
def test_a_provision_that_says_it_is_withdrawn_is_quoted_though_short(notice: str) -> None:
    # all such a provision says: "What does FS-1(2) require?" is answered by it, not refused
    reqs = extract_from_chunks([_chunk(source_type="policy", text=notice)])
    assert [r.exact_quote for r in reqs] == [notice]
    assert reqs[0].modality is Modality.NONE


@pytest.mark.parametrize("sentence", [
    "Withdrawn consent.",   # a heading's words, not a notice
    "Reserved rights.",
    "Deleted records.",
], ids=["consent", "rights", "records"])
def test_a_short_sentence_that_opens_with_such_a_word_is_still_too_short(sentence: str) -> None:
    assert extract_from_chunks([_chunk(source_type="policy", text=sentence)]) == []
