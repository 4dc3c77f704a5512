"""Structure of legislation and standards: headings, recitals, numbered paragraphs and points, citations."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.ingest.chunking import chunk_document
from engine.ingest.citations import derived_citation, quote_citation
from engine.ingest.formats import ParsedDocument, parse
from engine.ingest.sections import SectionBuilder, eu_style, feed_lines
from engine.ingest.structure import Positions, control_heading, is_centred_title, parse_heading
from engine.text import REQUIREMENT_ID
from tests.helpers import DATA, parsed_file

LEGAL = DATA / "legal"
EU = LEGAL / "eu-client-data-regulation.txt"
CFR = LEGAL / "cfr-part-990-client-records.txt"
ISO = LEGAL / "iso-style-records-standard.txt"


def _blocks(path: Path) -> dict[str, object]:
    parsed = parse(path, path.read_bytes())
    return {b.metadata.get("citation", ""): b for b in parsed.blocks}


@pytest.mark.parametrize(("line", "expected"), [
    ("Article 33", ("article", "33", "")),
    ("CHAPTER IV", ("chapter", "IV", "")),
    ("Section 2", ("section", "2", "")),
    ("TITLE II Financial provisions", ("title", "II", "Financial provisions")),
    ("PART 990—CLIENT RECORDS", ("part", "990", "CLIENT RECORDS")),
    ("Subpart B—Retention of Records", ("subpart", "B", "Retention of Records")),
    ("§ 990.21 Retention of transaction records.", ("§", "990.21", "Retention of transaction records")),
    ("ANNEX I", ("annex", "I", "")),
    ("Schedule 1 Fees", ("schedule", "1", "Fees")),
    ("4.2 Retention periods", ("", "4.2", "Retention periods")),
    ("A.5.1 Retention of records", ("", "A.5.1", "Retention of records")),
    # a public licence's sections, titled in title case and closed by a full stop
    ("Section 3 -- License Conditions.", ("section", "3", "License Conditions")),
    ("Section 5 -- Disclaimer of Warranties and Limitation of Liability.",
     ("section", "5", "Disclaimer of Warranties and Limitation of Liability")),
    # a US statute's section as GPO numbers it
    ("Sec. 5 Duties", ("section", "5", "Duties")),
    # provisions an amendment inserted, numbered with letters
    ("Article 4a Notification", ("article", "4a", "Notification")),
    ("Regulation A20 Enforcement by civil proceedings", ("regulation", "A20", "Enforcement by civil proceedings")),
    ("Section 21ZA Duty to cooperate", ("section", "21ZA", "Duty to cooperate")),
    # a number closed by a full stop, and a US state code's section numbered title-chapter-section
    ("Sec. 5. Duties of employers", ("section", "5", "Duties of employers")),
    ("\u00a7 59.1-577. Personal data rights; consumers.", ("\u00a7", "59.1-577", "Personal data rights; consumers")),
    ("Section 5.1 Access control", ("section", "5.1", "Access control")),
    # a European supervisory authority's guidelines, numbered paragraphs under numbered guidelines
    ("Guideline 12 \u2013 Information security reviews, assessment and testing",
     ("guideline", "12", "Information security reviews, assessment and testing")),
], ids=["article", "chapter", "section", "title", "cfr-part", "subpart", "cfr-section", "annex", "schedule",
        "numbered", "annex-control", "licence-section", "licence-section-long", "statute-sec", "eu-inserted-article",
        "uk-inserted-regulation", "uk-inserted-section", "number-with-full-stop", "state-code-section",
        "decimal-number", "supervisory-guideline"])
def test_headings_of_legislation_and_standards(line: str, expected: tuple[str, str, str]) -> None:
    heading = parse_heading(line)
    assert heading is not None and (heading.kind, heading.number, heading.title) == expected


@pytest.mark.parametrize("line", [
    "1. Personal data shall be:",
    "Section 3 of the Act applies to every firm.",
    "THE EUROPEAN PARLIAMENT AND THE COUNCIL OF THE EUROPEAN UNION,",
    "Article 16 thereof, and the opinion of the Committee",
    "6 years is the minimum.",
    "Section 3. This section applies to every firm.",
    "Section 3(a)(1) applies to adapted material.",
    "Sec. 3 of the Act applies to every employer.",
    "6 October 2025",
    "17th May 2019",
    "Guideline 5 applies to every undertaking.",
], ids=["paragraph-with-lead-in", "sentence-naming-a-section", "caps-preamble-line", "reference-in-text",
        "number-in-sentence", "section-then-sentence", "section-reference-sentence", "sec-reference-sentence",
        "date", "ordinal-date", "guideline-reference-sentence"])
def test_sentences_are_not_headings(line: str) -> None:
    assert parse_heading(line) is None


def test_numbered_paragraph_inside_an_article_is_no_heading() -> None:
    assert parse_heading("2. Scope", in_provision=True) is None
    assert parse_heading("2. Scope") is not None  # outside an article it still is one


def test_eu_regulation_articles_paragraphs_points_and_recitals() -> None:
    blocks = _blocks(EU)
    assert {"Recital 1", "Recital 3", "Art. 1(1)", "Art. 2", "Art. 33(1)", "Art. 33(3)", "Art. 37(1)",
            "Annex I", "Preamble"} <= set(blocks)
    art = blocks["Art. 33(1)"]
    assert art.section_number == "33(1)"
    assert art.section_path == ("Chapter IV Controller and processor > Section 2 Security of client data > "
                                "Article 33 Notification of a data breach to the supervisory authority")
    assert art.section_heading == "Notification of a data breach to the supervisory authority"
    recital = blocks["Recital 3"]
    assert "Recital" in recital.section_path and recital.section_number == "Recital 3"
    assert [label for _, label in blocks["Art. 33(3)"].metadata["points"]] == ["(a)", "(b)", "(c)"]
    # no paragraph became a heading of a later article
    assert not any("shall" in b.section_path for b in blocks.values())


def test_eu_quote_citations_name_the_point() -> None:
    parsed = parse(EU, EU.read_bytes())
    at = parsed.text.index("(b) communicate the name")
    chunk = next(c for c in chunk_document("doc_eu", parsed) if c.char_start <= at < c.char_end)
    assert quote_citation(chunk.section_number, chunk.section_path, chunk.metadata, at) == "Art. 33(3)(b)"
    lead = parsed.text.index("The notification referred to in paragraph 1")
    assert quote_citation(chunk.section_number, chunk.section_path, chunk.metadata, lead) == "Art. 33(3)"


def test_cfr_sections_paragraphs_and_nested_points() -> None:
    parsed = parse(CFR, CFR.read_bytes())
    blocks = {b.metadata["citation"]: b for b in parsed.blocks}
    assert set(blocks) == {"§ 990.21(a)", "§ 990.21(b)", "§ 990.22(a)"}
    block = blocks["§ 990.21(a)"]
    assert block.section_path.endswith("Subpart B Retention of Records > § 990.21 Retention of transaction records")
    at = parsed.text.index("(ii) the time the order")
    assert quote_citation(block.section_number, block.section_path, block.metadata, at) == "§ 990.21(a)(2)(ii)"


def test_iso_standard_clauses_and_lettered_list() -> None:
    parsed = parse(ISO, ISO.read_bytes())
    blocks = {b.metadata.get("citation"): b for b in parsed.blocks}
    assert {"Section 1", "Section 4.1", "Section 4.2", "Section A.5.1"} <= set(blocks)
    block = blocks["Section 4.2"]  # the list stays with its lead-in sentence
    assert "The organization shall determine:" in parsed.text[block.start:block.end]
    at = parsed.text.index("b) the legal and contractual")
    assert quote_citation(block.section_number, block.section_path, block.metadata, at) == "Section 4.2(b)"
    assert blocks["Section A.5.1"].section_path.startswith("Annex A Reference control objectives (normative)")


def test_a_clause_whose_number_and_title_run_into_its_text_on_one_line_is_a_section(tmp_path: Path) -> None:
    """Bylaws as a word processor saves them, each clause one long paragraph: "Section 3.1. Powers. The business ..."
    is section 3.1, titled Powers, its text whole (it was part of the article above, cited by the article alone);
    a numbered paragraph that opens with a sentence stays a paragraph."""
    path = tmp_path / "bylaws.txt"
    path.write_text("ARTICLE III\nBoard of Directors\n\nSection 3.1. Powers. The business and affairs of the "
                    "corporation shall be managed by or under the direction of the Board of Directors.\n\n"
                    "Section 3.2. Number of Directors. The Board of Directors shall consist of no fewer than three "
                    "and no more than nine directors elected by the members.\n\n"
                    "4. The members shall meet once a year at a place and time set by the Board of Directors.\n")
    parsed = parse(path, path.read_bytes())
    blocks = {b.section_number: b for b in parsed.blocks}
    assert blocks["3.1"].section_path == "Article III Board of Directors > Section 3.1 Powers"
    assert parsed.text[blocks["3.1"].start:blocks["3.1"].end].startswith("Section 3.1. Powers. The business")
    assert blocks["3.2"].section_path.endswith("Section 3.2 Number of Directors")
    assert not any(b.section_path.endswith("The members shall meet once a year") for b in parsed.blocks)


def test_a_marked_heading_is_numbered_whatever_its_title(tmp_path: Path) -> None:
    """A standard's headings name its elements and attributes in lower case or in markup ("4.2 <manifest:manifest>",
    "4.16.1 manifest:algorithm-name"): a heading its format marks as one keeps its number (it was under none); a line
    of plain text so written stays text."""
    path = tmp_path / "packages.md"
    path.write_text("# Packages\n\n## 4.16 Manifest Attributes\n\n### 4.16.1 manifest:algorithm-name\n\nThe "
                    "attribute specifies the algorithm.\n\n### 2.4 - compliance artifacts\n\nArtifacts of a "
                    "program.\n")
    parsed = parse(path, path.read_bytes())
    numbers = {b.section_number: parsed.text[b.start:b.end] for b in parsed.blocks}
    assert numbers["4.16.1"] == "The attribute specifies the algorithm."
    assert numbers["2.4"] == "Artifacts of a program."
    assert parse_heading("4.16.1 manifest:algorithm-name") is None


def test_markdown_numbered_headings_keep_their_form(tmp_path: Path) -> None:
    path = tmp_path / "reg.md"
    path.write_text("# Reg\n\n## 4. Records\n\n### 4.2 Retention periods\n\nA firm must retain records.\n")
    block = parse(path, path.read_bytes()).blocks[0]
    assert (block.section_number, block.section_path, block.metadata["citation"]) == (
        "4.2", "4 Records > 4.2 Retention periods", "Section 4.2")


@pytest.mark.parametrize(("body", "first_chunk"), [
    # a policy's lead-in that stops at "by": one chunk with its first point, none ends at "by"
    ("The scanning of systems is performed by\n\n1. An agent installed on all servers.\n\n"
     "2. Quarterly external scans.", "The scanning of systems is performed by\n1. An agent installed on all servers."),
    # ... at "that", over lettered rules
    ("Company policy requires that\n\n(a) Laptops are encrypted.\n\n(b) Screens lock after ten minutes.",
     "Company policy requires that\n(a) Laptops are encrypted."),
    # counter-example: a paragraph that ended keeps its chunk, whatever follows it
    ("Scanning is done as follows.\n\n1. An agent installed on all servers.\n\n2. Quarterly external scans.",
     "Scanning is done as follows."),
], ids=["performed-by", "requires-that", "ended-paragraph"])
def test_a_lead_in_that_stops_where_no_sentence_ends_opens_its_first_points_chunk(
        tmp_path: Path, body: str, first_chunk: str) -> None:
    path = tmp_path / "policy.md"
    path.write_text(f"# Policy\n\n## Scanning\n\n{body}\n")
    chunks = [c.text for c in chunk_document("doc", parse(path, path.read_bytes()))]
    assert chunks[0] == first_chunk, chunks
    assert not any(c.rstrip().endswith((" by", " that")) for c in chunks)


@pytest.mark.parametrize(("labels", "expected"), [
    (["1.", "(a)", "(b)", "(c)"], ["(1)", "(1)(a)", "(1)(b)", "(1)(c)"]),
    (["(a)", "(h)", "(i)", "(j)"], ["(a)", "(h)", "(i)", "(j)"]),
    (["(a)", "(i)", "(ii)", "(b)", "(i)"], ["(a)", "(a)(i)", "(a)(ii)", "(b)", "(b)(i)"]),
    # labels run together as the CFR prints a paragraph with no text of its own: each level in turn
    (["(a)(1)", "(2)", "(i)", "(ii)", "(b)", "(c)(1)(i)", "(A)", "(2)"],
     ["(a)(1)", "(a)(2)", "(a)(2)(i)", "(a)(2)(ii)", "(b)", "(c)(1)(i)", "(c)(1)(i)(A)", "(c)(2)"]),
    # (i) after a numeral is the next letter (numerals restart only under a new parent); after "(h)(2) Examples
    # are:" a numeral; after (h)(7), an item that announces no list, the next letter (the FTC's § 314.4(i))
    (["(h)(1)", "(2) Examples are:", "(i)", "(xiii)", "(i)", "(j)"],
     ["(h)(1)", "(h)(2)", "(h)(2)(i)", "(h)(2)(xiii)", "(i)", "(j)"]),
    (["(h) Establish a plan that addresses:", "(1)", "(7) The revision of the plan.", "(i) Require a report on:",
      "(1)", "(2)", "(j)"], ["(h)", "(h)(1)", "(h)(7)", "(i)", "(i)(1)", "(i)(2)", "(j)"]),
    # a style begun again under an item that announces a list is a level of its own below it: New York's
    # "(b)(1)(i)(a)", the CFR's "(ii)(A)" where an earlier "(A)" list sat under a "(1)", and a level skipped
    (["(a)", "(1)", "(b)", "(1) either:", "(i) a certification that:", "(a)", "(b)", "(ii) an acknowledgment that:",
      "(a)", "(b)", "(c)", "(2)", "(c)"],
     ["(a)", "(a)(1)", "(b)", "(b)(1)", "(b)(1)(i)", "(b)(1)(i)(a)", "(b)(1)(i)(b)", "(b)(1)(ii)", "(b)(1)(ii)(a)",
      "(b)(1)(ii)(b)", "(b)(1)(ii)(c)", "(b)(2)", "(c)"]),
    (["(c)", "(1) Elements:", "(A)", "(B)", "(d)", "(1) Written notice.", "(i)", "(ii)", "(2)", "(i)", "(ii) shall:",
      "(A)", "(B)", "(3)"],
     ["(c)", "(c)(1)", "(c)(1)(A)", "(c)(1)(B)", "(d)", "(d)(1)", "(d)(1)(i)", "(d)(1)(ii)", "(d)(2)", "(d)(2)(i)",
      "(d)(2)(ii)", "(d)(2)(ii)(A)", "(d)(2)(ii)(B)", "(d)(3)"]),
    # without a lead-in the style begun again is the outer list's (a new list of the same kind)
    (["(a)", "(1)", "(2)", "(a)", "(b)"], ["(a)", "(a)(1)", "(a)(2)", "(a)", "(b)"]),
    # points later in the same paragraph count: "2." after them is the outer list's
    (["1. Report in one of these ways:", "1. Email;\n2. Phone;\n3. Chat.", "2. The receiver notifies."],
     ["(1)", "(1)(1)", "(2)"]),
    # what an amendment inserts keeps its neighbour's number with letters: EU consolidated "1a.", UK "(2A)", an
    # inserted point "(ba)"; numbering goes on after them
    (["1.", "1a. The measures shall at least:", "(a)", "(b)", "(ba)", "(c)", "1b.", "2."],
     ["(1)", "(1a)", "(1a)(a)", "(1a)(b)", "(1a)(ba)", "(1a)(c)", "(1b)", "(2)"]),
    (["(1)", "(2)", "(2A)", "(2B)", "(3)"], ["(1)", "(2)", "(2A)", "(2B)", "(3)"]),
], ids=["paragraph-then-points", "i-after-h-is-a-letter", "roman-under-letters", "cfr-labels-run-together",
        "i-after-numerals-with-a-lead-in-is-a-numeral", "i-after-an-item-announcing-nothing-is-a-letter",
        "new-york-letters-under-romans", "cfr-capitals-under-romans-and-a-skipped-level", "no-lead-in-no-new-level",
        "points-within-a-paragraph", "eu-inserted-paragraphs-and-points", "uk-inserted-paragraphs"])
def test_point_labels(labels: list[str], expected: list[str]) -> None:
    positions = Positions()
    seen = [positions.see(label if " " in label else f"{label} text") for label in labels]
    assert [s[1] for s in seen if s] == expected


def test_a_cfr_lead_in_over_paragraphs_run_together_splits_them(tmp_path: Path) -> None:
    """ "A covered entity must: (a)(1) ..." designates paragraphs, each cited on its own, where "shall: (a) ...;"
    opens points that stay with their lead-in."""
    path = tmp_path / "part.txt"
    path.write_text("\u00a7 164.310 Physical safeguards.\n\n"
                    "A covered entity must, in accordance with \u00a7 164.306:\n\n"
                    "(a)(1) Standard: Facility access controls. Implement policies.\n\n(2) Implementation "
                    "specifications:\n\n(i) Contingency operations. Establish procedures.\n\n(b) Standard: Workstation "
                    "use. Implement policies.\n")
    blocks = {b.metadata.get("citation"): b for b in parse(path, path.read_bytes()).blocks}
    assert set(blocks) == {"\u00a7 164.310", "\u00a7 164.310(a)(1)", "\u00a7 164.310(b)"}


def test_a_paragraph_whose_labels_run_together_is_a_paragraph_of_its_own(tmp_path: Path) -> None:
    """After "(5) ...;", a point "(6) ...;" goes on the same sentence; "(6)(i) ..." opens a paragraph, as printed."""
    path = tmp_path / "part.txt"
    path.write_text("\u00a7 314.4 Elements.\n\n(c) Implement safeguards, including by:\n\n(5) Implement multi-factor "
                    "authentication;\n\n(6)(i) Develop procedures for disposal;\n\n(ii) Review retention;\n\n"
                    "(7) Adopt change management;\n")
    text = parse(path, path.read_bytes()).text
    assert "authentication;\n\n(6)(i) Develop" in text and "retention;\n(7) Adopt" in text


@pytest.mark.parametrize(("number", "path", "expected"), [
    ("4.2", "4 Records > 4.2 Retention periods", "Section 4.2"),
    ("33(1)", "Chapter IV > Article 33 Notification", "Art. 33(1)"),
    ("Recital 85", "Recitals > Recital 85", "Recital 85"),
    ("", "", ""),
], ids=["numbered", "article", "recital", "none"])
def test_citation_of_chunks_stored_before_citations(number: str, path: str, expected: str) -> None:
    assert derived_citation(number, path) == expected


def test_recitals_and_preamble_are_recognised_as_non_binding() -> None:
    from agents.quotes import non_binding

    blocks = _blocks(EU)
    for name in ("Recital 3", "Preamble"):
        block = blocks[name]
        assert non_binding({"section_path": block.section_path, "section_heading": block.section_heading}) == "recital"
    article = blocks["Art. 33(1)"]
    assert non_binding({"section_path": article.section_path, "section_heading": article.section_heading}) is None


LICENCE = LEGAL / "licence-style-terms.txt"


def test_hard_wrapped_licence_clauses_keep_their_sentences_whole() -> None:
    """A plain-text licence (indented, wrapped near 72 columns, clause titles run into the text): each
    clause is a section of its own, and the line that opens a clause stays in its text."""
    from engine.ingest.sentences import split_sentences

    parsed = parse(LICENCE, LICENCE.read_bytes())
    assert parsed.title == "SAMPLE SOFTWARE LICENCE Version 1.0"  # the version line under it names which one
    blocks = {b.metadata.get("citation"): b for b in parsed.blocks}
    assert {"Section 1", "Section 2", "Section 3", "Section 4.1", "Section 5"} <= set(blocks)
    marks = blocks["Section 3"]
    assert marks.section_heading == "Trade Marks"
    text = parsed.text[marks.start:marks.end]
    assert text.startswith("3. Trade Marks. This Licence does not grant permission to use the trade\n")
    sentences = [text[s.start:s.end] for s in split_sentences(text)]
    assert sentences[-1].startswith("This Licence does not grant") and sentences[-1].endswith("Licensed Work.")
    assert "names or trade marks" in sentences[-1]  # one sentence across three wrapped lines
    # a clause whose number opens a sentence: no title, the whole sentence is its text
    rights = blocks["Section 4.1"]
    assert rights.section_heading == "" and rights.section_path.endswith("4 Termination > 4.1")
    body = parsed.text[rights.start:rights.end]
    assert [body[s.start:s.end].split("\n")[0] for s in split_sentences(body)][-2:] == [
        "The rights granted under this Licence end automatically", "The rights are reinstated"]
    # "5. Disclaimer of Warranty." is a title; "Sections 1 and 2 survive ..." is a sentence, not Section "s"
    assert blocks["Section 5"].section_heading == "Disclaimer of Warranty"
    assert not any(b.section_path.startswith("Section s") or "> Section s" in b.section_path for b in parsed.blocks)
    # the list items of clause 2 stay points of it
    assert [label for _, label in blocks["Section 2"].metadata["points"]] == ["(a)", "(b)"]


@pytest.mark.parametrize(("paragraph", "expected"), [
    ("                            Preamble", True),
    ("            How to Apply These Terms to Your New Programs", True),
    ("                       Version 3, 29 June 2007", False),  # a version line: figures and a comma
    ("Preamble", False),  # not set apart by indentation
    ("        The rights end.", False),
    ("        Rights", True),
    ("        must be kept", False),
    ("        Preamble\n        continued", False),
], ids=["preamble", "how-to-apply", "version-line", "flush-left", "sentence", "one-word", "lower-case", "two-lines"])
def test_centred_titles(paragraph: str, expected: bool) -> None:
    assert is_centred_title(paragraph) is expected


def test_a_licences_centred_preamble_is_a_non_binding_section(tmp_path: Path) -> None:
    """A plain-text licence heads its preamble with one indented word; the text under it explains the licence
    and is non-binding, the terms after the capitals heading bind."""
    from agents.quotes import non_binding

    path = tmp_path / "licence.txt"
    path.write_text("                    SAMPLE PUBLIC LICENSE\n\n                            Preamble\n\n"
                    "  You can apply it to your programs, too.\n\n                TERMS AND CONDITIONS\n\n"
                    "  0. Definitions.\n\n  You must keep intact all notices.\n")
    parsed = parse(path, path.read_bytes())
    by_text = {parsed.text[b.start:b.end].strip().split("\n")[0]: b for b in parsed.blocks}
    preamble = next(b for t, b in by_text.items() if t.startswith("Preamble") or "apply it" in t)
    assert preamble.section_path == "Preamble"
    where = {"section_path": preamble.section_path, "section_heading": preamble.section_heading}
    assert non_binding(where) == "recital"
    terms = next(b for b in parsed.blocks if "keep intact" in parsed.text[b.start:b.end])
    assert terms.section_path.startswith("TERMS AND CONDITIONS")
    assert non_binding({"section_path": terms.section_path, "section_heading": terms.section_heading}) is None


@pytest.mark.parametrize(("line", "expected"), [
    ("8. Termination.", ("", "8", "Termination")),
    ("3. Protecting Users' Legal Rights From Anti-Circumvention Law.", ("", "3", "Protecting Users' Legal Rights "
                                                                       "From Anti-Circumvention Law")),
    ("6. Trademarks. This License does not grant permission to use the trade",
     ("", "6", "Trademarks. This License does not grant permission to use the trade")),
], ids=["title-with-full-stop", "long-title", "run-in"])
def test_numbered_titles_of_licences(line: str, expected: tuple[str, str, str]) -> None:
    heading = parse_heading(line)
    assert heading is not None and (heading.kind, heading.number, heading.title) == expected


@pytest.mark.parametrize("line", ["1. Records must be kept.", "Sections 3.1 and 3.2 are conditions of the grant",
                                  "2. Personal data shall be processed lawfully."])
def test_sentences_after_a_number_are_no_titles(line: str) -> None:
    assert parse_heading(line) is None


@pytest.mark.parametrize(("line", "number", "title"), [
    ("AC-2 Account Management", "AC-2", "Account Management"),  # a security control catalogue
    ("AC-2(1) Automated System Account Management", "AC-2(1)", "Automated System Account Management"),
    ("ISM-1234: Multi-factor authentication", "ISM-1234", "Multi-factor authentication"),
    ("PR.AC-1 Identities and credentials are managed", "PR.AC-1", "Identities and credentials are managed"),
    ("V2.1.1 Password length", "V2.1.1", "Password length"),  # an application security standard
    ("CC6.1 Logical access security", "CC6.1", "Logical access security"),  # trust services criteria
    ("Check-Identity-01: Is user/group ownership of config files set to keystone?", "Check-Identity-01",
     "Is user/group ownership of config files set to keystone?"),  # OpenStack's security checklists
], ids=["control", "enhancement", "colon", "dotted-family", "letter-number", "criteria", "checklist"])
def test_control_headings_name_their_id(line: str, number: str, title: str) -> None:
    heading = control_heading(line)
    assert heading is not None and (heading.number, heading.title, heading.label) == (number, title, number)


@pytest.mark.parametrize("line", ["Account Management", "GDPR compliance", "Purpose and Scope", "2FA setup",
                                  "AC-2 is reviewed yearly", "Article 5 Principles", "Covid-19 response"],
                         ids=["words", "acronym", "policy-heading", "digit-first", "sentence", "article",
                              "name-with-number"])
def test_headings_without_a_control_id(line: str) -> None:
    assert control_heading(line) is None


def test_markdown_control_catalogue_cites_controls_by_id(tmp_path: Path) -> None:
    path = tmp_path / "catalogue.md"
    path.write_text("# Catalogue\n\n## AC-2 Account Management\n\na. Define the types of accounts allowed.\n\n"
                    "### AC-2(1) Automated System Account Management\n\nSupport the management of accounts.\n")
    parsed = parse(path, path.read_bytes())
    assert [(b.section_number, b.metadata.get("citation")) for b in parsed.blocks] == [
        ("AC-2", "AC-2"), ("AC-2(1)", "AC-2(1)")]


@pytest.mark.parametrize("title", ["GENERAL PROVISIONS", "General provisions"])
def test_a_chapter_numbers_title_on_the_next_line_is_its_title(tmp_path: Path, title: str) -> None:
    """An EU act's "CHAPTER I" with its title on the next line, in capitals or not, is one heading: the chapter
    keeps its number in the path ("Chapter I GENERAL PROVISIONS > Article 1 ..."), as "Article 1" keeps its own."""
    path = tmp_path / "act.txt"
    path.write_text(f"DIRECTIVE (EU) 2099/1 OF THE PARLIAMENT\n\nHAVE ADOPTED THIS DIRECTIVE:\n\nCHAPTER I\n{title}\n\n"
                    "Article 1\nSubject matter\n\n1. This Directive lays down measures for entities.\n\n"
                    "CHAPTER II\nSUPERVISION\n\nArticle 2\nSupervision\n\nMember States shall supervise entities.\n")
    paths = [b.section_path for b in parse(path, path.read_bytes()).blocks]
    assert f"Chapter I {title} > Article 1 Subject matter" in paths, paths
    assert "Chapter II SUPERVISION > Article 2 Supervision" in paths, paths


def test_a_chapter_title_wrapped_over_two_lines_in_capitals_is_one_title(tmp_path: Path) -> None:
    """A two-column page wraps a chapter's title ("CONSUMER INFORMATION FOR CONTRACTS OTHER THAN" / "DISTANCE OR
    OFF-PREMISES CONTRACTS"): its second line goes on with it, not a heading over the chapters after it; a heading
    in capitals after a finished title is a heading still."""
    path = tmp_path / "act.txt"
    path.write_text("DIRECTIVE 2099/1 OF THE PARLIAMENT\n\nHAVE ADOPTED THIS DIRECTIVE:\n\n"
                    "CHAPTER II\nMINIMUM REST PERIODS \u2014 OTHER ASPECTS OF THE\nORGANISATION OF WORKING TIME\n\n"
                    "Article 3\nDaily rest\n\nMember States shall take the measures necessary.\n\n"
                    "CHAPTER III\nCONSUMER INFORMATION AND RIGHT OF WITHDRAWAL\nFOR DISTANCE CONTRACTS\n\n"
                    "Article 6\nInformation requirements\n\nThe trader shall provide the information.\n\n"
                    "CHAPTER IV\nFINAL PROVISIONS\n\nDEFINITIONS\n\nArticle 7\nRepeal\n\nDirective 1 is repealed.\n")
    paths = [b.section_path for b in parse(path, path.read_bytes()).blocks]
    assert ("Chapter II MINIMUM REST PERIODS \u2014 OTHER ASPECTS OF THE ORGANISATION OF WORKING TIME > Article 3 "
            "Daily rest") in paths, paths
    assert ("Chapter III CONSUMER INFORMATION AND RIGHT OF WITHDRAWAL FOR DISTANCE CONTRACTS > Article 6 "
            "Information requirements") in paths, paths
    assert not any(p.startswith("Chapter IV FINAL PROVISIONS DEFINITIONS") for p in paths), paths


def test_an_amending_articles_quotation_ends_its_sentence_and_a_correlation_table_opens_no_article(
        tmp_path: Path) -> None:
    """"... stake holders on that information.\u2019" closes a sentence (the inserted article's), so "Article 34" on
    the next line is a heading; the rows of an annex's correlation table ("Article 14  Article 4") are no articles,
    and a provision asked about by its number is never found among them."""
    path = tmp_path / "act.txt"
    path.write_text("DIRECTIVE 2099/1 OF THE PARLIAMENT\n\nHAVE ADOPTED THIS DIRECTIVE:\n\n"
                    "Article 33\nAmendment to Directive 1999/44/EC\nThe following Article is inserted:\n"
                    "\u2018Article 8a\nReporting\nThe Commission shall consult on that information.\u2019\n"
                    "Article 34\nEntry into force\nThis Directive shall enter into force on the 20th day.\n\n"
                    "ANNEX II\nCorrelation table\n\nDirective 97/7/EC  This Directive\nArticle 14  Article 4\n"
                    "Article 5(2)  Article 3(3), point m\n\nANNEX III\nModel form\n\nTo: [the trader]\n")
    blocks = parse(path, path.read_bytes()).blocks
    assert "Article 34 Entry into force" in [b.section_path for b in blocks]
    assert not [b.section_path for b in blocks if "Correlation" in b.section_path and "Article" in b.section_path]
    assert [b.section_path for b in blocks][-1] == "Annex III Model form"


def test_a_rubric_over_an_acts_title_leaves_its_recitals_recitals() -> None:
    """The Official Journal sets "DIRECTIVES" in heading type over the act's title: the preamble goes on under it,
    each recital its own block, until the enacting terms' first chapter, which the rubric does not head."""
    text = ("DIRECTIVES\n\nDIRECTIVE 2099/1 OF THE PARLIAMENT\nWhereas:\n\n(1) Consumers should be informed.\n\n"
            "(2) Traders should be clear.\n\nHAVE ADOPTED THIS DIRECTIVE:\n\nCHAPTER I\nSCOPE\n\n"
            "Article 1\nSubject matter\n\nThis Directive applies to traders.\n")
    builder = SectionBuilder(eu_style=eu_style(text), sized={"DIRECTIVES": 1})
    feed_lines(builder, text)
    paths = [b.section_path for b in builder.build("pdf", None).blocks]
    assert paths[:3] == ["Preamble", "Recitals > Recital 1", "Recitals > Recital 2"], paths
    assert paths[-1] == "Chapter I SCOPE > Article 1 Subject matter", paths  # the rubric ends with the preamble


def test_several_top_level_headings_are_sections_not_a_title(tmp_path: Path) -> None:
    path = tmp_path / "access-policy.md"
    path.write_text("# Purpose and Scope\n\nThis policy covers all staff.\n\n# Policy\n\n"
                    "Access must be removed within five business days.\n")
    parsed = parse(path, path.read_bytes())
    assert parsed.title is None
    assert [b.section_path for b in parsed.blocks] == ["Purpose and Scope", "Policy"]
    single = tmp_path / "single.md"
    single.write_text("# Access Policy\n\n## Scope\n\nThis policy covers all staff.\n")
    assert parse(single, single.read_bytes()).title == "Access Policy"


@pytest.mark.parametrize(("text", "expected"), [
    # a policy in Markdown: an item's second line indented under its text, however short the chunk
    ("1. Depending on the nature of the breach, an investigation may be conducted by\n"
     "   Corvid Labs or the Customer or jointly to determine the cause of breach.",
     ["1.", "Depending on the nature of the breach, an investigation may be conducted by\n   Corvid Labs or the "
            "Customer or jointly to determine the cause of breach."]),
    # a control catalogue's lettered item and a regulation's point
    ("a. Disable accounts of individuals within\n   Seven days of their departure.",
     ["a. Disable accounts of individuals within\n   Seven days of their departure."]),
    ("(b) notify the Authority without delay where\n    Article 19 applies.",
     ["(b) notify the Authority without delay where\n    Article 19 applies."]),
    # counter-examples: a line that ends its sentence, the next item, a heading's indented line, table rows
    ("1. Keys must be rotated yearly.\n   Records of rotation are kept.",
     ["1.", "Keys must be rotated yearly.", "Records of rotation are kept."]),
    ("* Use a password manager\n* Enable MFA", ["* Use a password manager", "* Enable MFA"]),
    ("### Access Review\n   Quarterly", ["### Access Review", "Quarterly"]),
    ("| Data | Key |\n| AES-256 | 12 months |", ["| Data | Key |", "| AES-256 | 12 months |"]),
    ("Scope\n   Applies To All Staff", ["Scope", "Applies To All Staff"]),  # no item open
], ids=["policy-item", "catalogue-item", "regulation-point", "ended-sentence", "next-item", "heading",
        "table-rows", "not-an-item"])
def test_a_list_items_lines_indented_under_its_text_are_one_sentence(text: str, expected: list[str]) -> None:
    from engine.ingest.sentences import split_sentences

    assert [text[s.start:s.end] for s in split_sentences(text)] == expected


@pytest.mark.parametrize(("text", "expected"), [
    # a policy's nested list (items ending with ";"), a regulation's numbered points under "shall:", a
    # catalogue's under "must:": no item ends at the next one's label
    ("     1. New workforce members within their first month of employment;\n     2. Existing workforce members "
     "annually;",
     ["1.", "New workforce members within their first month of employment;", "2.", "Existing workforce members "
                                                                                    "annually;"]),
    ("The entity shall:\n1. Keep a register of incidents; and\n2. Report each incident to the Authority.",
     ["The entity shall:", "1.", "Keep a register of incidents; and", "2.", "Report each incident to the Authority."]),
    ("Security personnel must:\n  1. Review alerts daily,\n  2. Escalate confirmed incidents.",
     ["Security personnel must:", "1.", "Review alerts daily,", "2.", "Escalate confirmed incidents."]),
    # counter-examples: points in lower case stay one sentence with their lead-in; a sentence that ended already
    ("Access is reviewed by:\n1. the data owner;\n2. the security team.",
     ["Access is reviewed by:\n1. the data owner;\n2. the security team."]),
    ("1. Keys must be rotated yearly.\n2. Records of rotation are kept.",
     ["1.", "Keys must be rotated yearly.", "2.", "Records of rotation are kept."]),
], ids=["policy-nested", "regulation-points", "catalogue-points", "lower-case-points", "ended-sentence"])
def test_an_item_never_ends_at_the_next_items_label(text: str, expected: list[str]) -> None:
    from engine.ingest.sentences import split_sentences

    assert [text[s.start:s.end] for s in split_sentences(text)] == expected


def test_a_markdown_contracts_bold_clause_titles_are_its_sections(tmp_path: Path) -> None:
    """A contract in Markdown as published ("1. **Introduction**. This ...", "4.2 **Invoicing.** ..."): each
    clause is a section with its number and cites it; a bold subject with no stop after it ("1. **IT** is
    responsible ...") and a plain numbered item open no section."""
    path = tmp_path / "nda.md"
    path.write_text("# Standard Terms\n\n1. **Introduction**. This Agreement allows each party to disclose "
                    "information.\n\n2. **Term and Termination**. This Agreement lasts one year.\n\n2.1 **Notice.** "
                    "Either party may end it on 30 days' notice.\n\n## Roles\n\n1. **IT** is responsible for the "
                    "network.\n\n2. Depending on the breach, the team may investigate.\n")
    parsed = parse(path, path.read_bytes())
    found = [(b.section_path, b.metadata.get("citation")) for b in parsed.blocks]
    assert found[:3] == [("1 Introduction", "Section 1"), ("2 Term and Termination", "Section 2"),
                         ("2 Term and Termination > 2.1 Notice", "Section 2.1")], found
    assert {p for p, _ in found[3:]} == {"Roles"}, found
    assert "**" not in parsed.text and "1. Introduction. This Agreement" in parsed.text


def test_a_markdown_list_of_clauses_is_numbered_as_the_page_shows_it(tmp_path: Path) -> None:
    """CommonMark numbers an ordered list from its first item on whatever the later items write ("1." "1." "1."
    is shown 1, 2, 3, as GitHub's policies write their steps), so each clause is cited by the number a reader
    sees; an indented paragraph (an example under an item) keeps the list open, one at the margin ends it, and a
    dotted number is the clause's own."""
    path = tmp_path / "steps.md"
    path.write_text("# Process\n\n1. **Owner Investigates.** The owner checks the facts.\n   > Example: a search.\n\n"
                    "1. **Owner Sends A Notice.** The owner writes to us.\n\n1. **We Act.** We act on it.\n\n"
                    "After that, nothing else is done.\n\n1. **Appeal.** The user may appeal.\n\n"
                    "4.2 **Records.** Records are kept.\n")
    parsed = parse(path, path.read_bytes())
    found = [b.metadata.get("citation") for b in parsed.blocks]
    assert found == ["Section 1", "Section 2", "Section 3", "Section 1", "Section 4.2"], found
    assert "1. Owner Sends A Notice." in parsed.text  # the text as written: a quote stays verbatim


def test_markdown_sections_lettered_as_agreements_letter_them(tmp_path: Path) -> None:
    """An agreement that letters its sections ("## O. Defense of Claims; Release") and numbers them from 1 within
    each ("### 1. By GitHub") cites them as it does itself: "Section O", "Section O.1", a Roman numeral so too;
    a lettered line of body text ("A. Smith signed it.") is no heading, nor is a heading's number under a
    heading of words qualified."""
    path = tmp_path / "terms.md"
    path.write_text("# Terms\n\n## O. Defense of Claims; Release\n\nThe Parties will defend each other.\n\n"
                    "### 1. By GitHub\n\nGitHub will defend Customer.\n\n### 2. By Customer\n\n"
                    "Customer will defend GitHub.\n\n## P. Confidentiality\n\nA. Smith signed it.\n\n"
                    "## II. Scope\n\n### 1. Who\n\nIt covers staff.\n\n## Definitions\n\n### 1. Terms\n\n"
                    "Words mean what they say.\n")
    parsed = parse(path, path.read_bytes())
    found = [(b.section_path, b.metadata.get("citation")) for b in parsed.blocks]
    # the path shows a letter's full stop as the heading does ("A How Does ..." read as a sentence), a number's not
    assert found == [("O. Defense of Claims; Release", "Section O"),
                     ("O. Defense of Claims; Release > O.1 By GitHub", "Section O.1"),
                     ("O. Defense of Claims; Release > O.2 By Customer", "Section O.2"),
                     ("P. Confidentiality", "Section P"), ("II. Scope > II.1 Who", "Section II.1"),
                     ("Definitions > 1 Terms", "Section 1")], found


def test_a_comment_in_a_markdown_code_block_is_no_heading(tmp_path: Path) -> None:
    """A line of a fenced code block ("# install the tool" in a shell listing, between ``` or ~~~ fences) is code,
    not a heading: the section and the document's one title stay as they are, the fence whole."""
    path = tmp_path / "guide.md"
    path.write_text("# Guide\n\n## Setup\n\nRun this:\n\n```bash\n# install the tool\napt install x\n```\n\n"
                    "~~~~\n# Another\n~~~\n~~~~\n\nKeys must be rotated every 90 days.\n")
    parsed = parse(path, path.read_bytes())
    assert parsed.title == "Guide"
    assert {b.section_path for b in parsed.blocks} == {"Setup"}
    assert "```bash\n# install the tool\napt install x\n```" in parsed.text


def test_markdown_emphasis_reads_as_the_page_shows_it(tmp_path: Path) -> None:
    """Italic and bold markers are not the text (GitHub's terms: "GitHub _will not_ automatically disable forks", a
    policy's "*continuously*"); an underscore inside a word, a list item's bullet and an escaped star are."""
    path = tmp_path / "terms.md"
    path.write_text("# Terms\n\n## Forks\n\nGitHub _will not_ automatically disable forks. Auditing is performed "
                    "*continuously*, **always**.\n\n* Set `retention_days` and max_age_days to 30.\n\n"
                    "Mark optional fields with \\*.\n")
    text = parse(path, path.read_bytes()).text
    assert "GitHub will not automatically disable forks. Auditing is performed continuously, always." in text
    assert "max_age_days to 30" in text and "* Set" in text and "with *." in text


def _citation_at(parsed: ParsedDocument, text: str) -> str:
    """The citation of a quote that starts where `text` first occurs in the parsed document."""
    at = parsed.text.index(text)
    block = next(b for b in parsed.blocks if b.start <= at < b.end)
    return quote_citation(block.section_number, block.section_path, block.metadata, at)


# a standard's requirement table (ASVS-style ids, bold or not) under a control heading, and a policy's severity
# table whose rows have no ids, which keeps the section's citation; a management-system annex and a catalogue's
# enhancement as row ids, and a change log whose dates are no ids
_STANDARD_TABLES = ("# V2 Authentication\n\n## V2.1 Password Security\n\nPasswords are the first line.\n\n"
                    "| # | Description | L1 |\n| :---: | :--- | :---: |\n"
                    "| **2.1.1** | Verify that user set passwords are at least 12 characters in length. | ✓ |\n"
                    "| 2.1.2 | Verify that passwords of at least 64 characters are permitted. | ✓ |\n\n"
                    "## V2.2 Severity\n\n| Priority | SLA |\n| --- | --- |\n| P0 | 3 days |\n")
_ANNEX_TABLES = ("# Annex A Controls\n\n## Organizational controls\n\n"
                 "| Control | Title | Requirement |\n| --- | --- | --- |\n"
                 "| A.5.1 | Policies | Policies shall be defined and approved by management. |\n"
                 "| AC-2(1) | Accounts | Accounts shall be managed automatically. |\n\n"
                 "## Changes\n\n| Date | Change |\n| --- | --- |\n| 2023-01-15 | First issue. |\n")


@pytest.mark.parametrize(("document", "cited"), [
    (_STANDARD_TABLES, {"2.1.1 |": "2.1.1", "| 2.1.2": "2.1.2", "Passwords are the first line": "V2.1",
                        "| P0": "V2.2"}),
    (_ANNEX_TABLES, {"Policies shall": "A.5.1", "Accounts shall": "AC-2(1)", "First issue": ""}),
], ids=["standard", "annex"])
def test_a_table_rows_own_requirement_id_is_its_quotes_citation(tmp_path: Path, document: str,
                                                                 cited: dict[str, str]) -> None:
    path = tmp_path / "tables.md"
    path.write_text(document, encoding="utf-8")
    parsed = parse(path, path.read_bytes())
    assert {text: _citation_at(parsed, text) for text in cited} == cited


@pytest.mark.parametrize(("cell", "is_id"), [
    ("2.1.1", True), ("V5.2.3", True),                       # an application security standard
    ("A.5.1", True), ("CC6.1", True),                        # a management-system annex, trust criteria
    ("AC-2", True), ("AC-2(1)", True), ("ISM-0123", True),   # control catalogues
    ("A&A-01", True), ("IAM-08", True),                      # a cloud controls matrix
    ("P1", False), ("2024", False), ("2023-01-15", False), (".5", False), ("-5", False),  # a label, a year, a date
])
def test_a_requirement_id_in_a_first_cell(cell: str, is_id: bool) -> None:
    assert bool(re.fullmatch(REQUIREMENT_ID, cell)) is is_id


_ANCHORED_AGREEMENT = """# Cloud Service Agreement

1. <span class="header_2" id="1">Service</span>
    1. <span class="header_3" id="1.1">Access and Use.</span>  During the <span class="orderform_link">Subscription \
Period</span>, <span class="coverpage_link">Customer</span> may access and use the Cloud Service.
    2. <span class="header_3" id="1.2">Support.</span>  <span class="coverpage_link">Provider</span> will provide \
Technical Support as described in the Order Form.

2. <span class="header_2" id="2">Restrictions & Obligations</span>
    1. <span class="header_3" id="2.1">Restrictions on Customer.</span>
        a. Customer will not (and will not allow anyone else to) reverse engineer the Product.
        b. Use of the Product must comply with all Documentation.
    2. <span class="header_3" id="2.2">Suspension.</span>  If Customer breaches Section 2.1, Provider may suspend \
Customer's access to the Product.

3. <span class="header_2" id="3">Definitions</span>
    1. <span id="3.1">**"Affiliate"** means an entity that controls a party.</span>
"""


def test_markdown_clauses_anchored_in_a_nested_list_are_sections(tmp_path: Path) -> None:
    # an agreement published as one nested Markdown list whose clauses are HTML spans anchored by their numbers
    path = tmp_path / "agreement.md"
    path.write_text(_ANCHORED_AGREEMENT, encoding="utf-8")
    parsed = parse(path, path.read_bytes())
    blocks = {b.metadata.get("citation"): b for b in parsed.blocks}
    assert {"Section 1.1", "Section 1.2", "Section 2.1", "Section 2.2"} <= set(blocks)
    assert blocks["Section 2.2"].section_path == "2 Restrictions & Obligations > 2.2 Suspension"  # a sibling of 2.1
    assert blocks["Section 1.2"].section_path == "1 Service > 1.2 Support"
    assert "<span" not in parsed.text and "Provider will provide Technical Support" in parsed.text
    assert "a. Customer will not" in parsed.text[blocks["Section 2.1"].start:blocks["Section 2.1"].end]
    assert '3.1 "Affiliate" means an entity' in parsed.text  # an untitled clause keeps its number


def test_markdown_loses_its_tags_not_their_text(tmp_path: Path) -> None:
    path = tmp_path / "nda.md"
    path.write_text('# Standard Terms\n\n1. **Introduction**. This Mutual Non-Disclosure Agreement allows each party '
                    'to disclose information for the <span class="coverpage_link">Purpose</span>.\n\nSee '
                    '<a href="https://example.com">the cover page</a>.\n', encoding="utf-8")
    parsed = parse(path, path.read_bytes())
    assert "for the Purpose." in parsed.text and "<span" not in parsed.text
    assert "See the cover page." in parsed.text  # a link reads as its text, as a Markdown link does


@pytest.mark.parametrize(("text", "expected"), [
    # a licence clause whose first line, after its run-in heading, is shorter than the wrapping
    ("You may reproduce and distribute copies of the\n      Work or Derivative Works thereof in any medium.",
     ["You may reproduce and distribute copies of the\n      Work or Derivative Works thereof in any medium."]),
    # a policy in Markdown, its lines broken before a name; a regulation's line before a defined term
    ("Title XIII of ARRA is the Health Information Technology for\nEconomic and Clinical Health Act (HITECH).",
     ["Title XIII of ARRA is the Health Information Technology for\nEconomic and Clinical Health Act (HITECH)."]),
    ("The notice must be given to\nThe Authority within 72 hours.",
     ["The notice must be given to\nThe Authority within 72 hours."]),
    # counter-examples: a lead-in over its list, a line ending on a capital "A" (a schedule's name), a heading
    ("The scanning of system vulnerabilities is performed by\n1. Automated security agent.",
     ["The scanning of system vulnerabilities is performed by", "1.", "Automated security agent."]),
    ("See Schedule A\nFees are payable monthly.", ["See Schedule A", "Fees are payable monthly."]),
    ("Access Review\nReviews are quarterly.", ["Access Review", "Reviews are quarterly."]),
], ids=["licence-first-line", "policy-name", "regulation-term", "lead-in-over-list", "capital-a", "heading"])
def test_a_line_that_stops_on_an_article_or_preposition_ends_no_sentence(text: str, expected: list[str]) -> None:
    from engine.ingest.sentences import split_sentences

    assert [text[s.start:s.end] for s in split_sentences(text)] == expected


_GUIDE = ("# Guide\n\n## Introduction\n\n1. This guide sets out prudent practice.\n\n2. It supports the standards.\n\n"
          "## Governance\n\n3. A board should review climate risks regularly.\n\n4. The board may delegate tasks.\n\n"
          "## Risk management\n\n5. A prudent institution would identify exposures.\n\n6. It would report them.\n")
_POLICY = ("# Policy\n\n## Access\n\n1. Access is approved by the Security Officer.\n\n2. Access is reviewed.\n\n"
           "## Passwords\n\n1. Passwords must be 14 characters.\n\n2. Passwords are not shared.\n\n"
           "## Logging\n\n1. Logs are kept for a year.\n")


def test_paragraphs_numbered_through_the_document_are_cited_by_their_numbers(tmp_path: Path) -> None:
    # a supervisor's guide numbers its paragraphs on from one heading of words to the next ("What does paragraph 4
    # say?"); a policy's lists start again at 1 under each heading and stay unnumbered
    guide = parsed_file(tmp_path / "guide.md", _GUIDE)
    assert [(b.section_number, b.section_path, b.metadata.get("citation")) for b in guide.blocks][2:4] == [
        ("3", "Governance", "Paragraph 3"), ("4", "Governance", "Paragraph 4")]
    assert all("paragraph" not in b.metadata for b in guide.blocks)
    policy = parsed_file(tmp_path / "policy.md", _POLICY)
    assert [b.section_number for b in policy.blocks] == [""] * 5
    assert all("citation" not in b.metadata and "paragraph" not in b.metadata for b in policy.blocks)


@pytest.mark.parametrize(("name", "content", "opening", "path"), [
    # a Sphinx page whose title is its only heading (OpenStack's guide): its whole text
    ("cookies.rst", "Cookies\n~~~~~~~\n\nSession cookies should be set to HTTPONLY.\n", "Session cookies", "Cookies"),
    # a static site's page titled in its front matter, its introduction before the first heading
    ("equipment.md", "---\ntitle: Equipment\n---\n\nGSA issues every employee a laptop.\n\n## Returning it\n\n"
                     "Return the laptop on your last day.\n", "GSA issues", "Equipment"),
    # a policy whose first heading is its title, its lead before the sections
    ("access.md", "# Access Policy\n\nLast reviewed: 2026-01-15\n\nAccess is limited to staff.\n\n## Reviews\n\n"
                  "Access is reviewed quarterly.\n", "Last reviewed", "Access Policy"),
    # an AsciiDoc process document's version line under its title
    ("process.adoc", "= Specification Process\n\nVersion 1.1. Effective 10/01/2022\n\n== Scope\n\nIt applies.\n",
     "Version 1.1", "Specification Process"),
])
def test_a_titled_documents_opening_text_is_filed_under_its_title(tmp_path: Path, name: str, content: str,
                                                                  opening: str, path: str) -> None:
    """The text a titled document opens with before any heading is cited under the document's title, as a reader
    names it, not under no section ("(no section)" in the report); the sections after it are as before."""
    file = tmp_path / name
    file.write_text(content)
    parsed = parse(file, file.read_bytes())
    first = next(b for b in parsed.blocks if parsed.text[b.start:b.end].startswith(opening))
    assert (first.section_path, first.section_heading, first.section_number) == (path, path, "")
    assert all(b.section_path for b in parsed.blocks)
    assert [b.section_path for b in parsed.blocks][1:] in ([], ["Returning it"], ["Reviews"], ["Scope"])


def test_an_untitled_documents_opening_text_and_a_recital_keep_their_place(tmp_path: Path) -> None:
    """Counter-examples: a document that states no title (a by-law's "WHEREAS ...") keeps its opening under no
    section, for no title is there to name it ("(before any heading)" in a report); an act's recital keeps its own
    path and citation."""
    file = tmp_path / "by-law.txt"
    file.write_text("WHEREAS the City has legislative competence in respect of waste, and wishes to keep its streets "
                    "clean;\n\n1. Definitions\n\nIn this by-law, waste means refuse.\n")
    parsed = parse(file, file.read_bytes())
    assert parsed.title is None
    assert [b.section_path for b in parsed.blocks] == ["", "1 Definitions"]
    act = tmp_path / "act.txt"
    act.write_text("REGULATION (EU) 2099/1 OF THE EUROPEAN PARLIAMENT\n\nWhereas:\n\n(1) Data should be safe.\n\n"
                   "HAVE ADOPTED THIS REGULATION:\n\nArticle 1\nSubject matter\n\n1. This Regulation lays down "
                   "rules.\n")
    recital = next(b for b in parse(act, act.read_bytes()).blocks if b.metadata.get("citation") == "Recital 1")
    assert recital.section_path == "Recitals > Recital 1"
