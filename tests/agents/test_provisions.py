"""Provisions a question names and asks about whole (agents.provisions)."""

from __future__ import annotations

import pytest

from agents.compose import compose_rules
from agents.extract import Requirement
from agents.modality import Modality
from agents.provisions import asked_provisions, asks_all, named_provisions, provision_parts
from engine.terms import key_terms


@pytest.mark.parametrize(("question", "numbers"), [
    # an EU act's article, a paragraph of it, and the act named after it
    ("What does Article 11 require?", ["11"]),
    ("What does Article 11(6) of DORA require?", ["11(6)"]),
    # a US rule's section, a policy's section, a rulebook's rule
    ("What does § 164.312 say?", ["164.312"]),
    ("Summarise section 6.1", ["6.1"]),
    ("What are the requirements of Rule 3.2?", ["3.2"]),
    # a control catalogue's control, its enhancement, another catalogue's id
    ("What is required by AC-2?", ["AC-2"]),
    ("What does AC-2(1) say?", ["AC-2(1)"]),
    ("What does ISM-1784 require?", ["ISM-1784"]),
    ("What is required by \u00a7 64.2011(a)(3)?", ["64.2011(a)(3)"]),
    ("What does regulation 11 of the Widget Regulations 2031 require?", ["11"]),
    # numbered in Roman numerals, as bylaws' articles and acts' annexes are
    ("What does Article XI of the OSGeo bylaws require?", ["XI"]),
    ("What does Annex II say?", ["II"]),
    ("What is required by MSTG-STORAGE-14?", ["MSTG-STORAGE-14"]),
    ("What does A&A-01 say?", ["A&A-01"]),
    ("What does OSPS-AC-01.01 require?", ["OSPS-AC-01.01"]),
    ("What is control OSPS-SA-02 about?", ["OSPS-SA-02"]),  # a control named by its kind, its subject asked
    # a subdivision named by its kind, as Commonwealth statutes cite them; the schedule that holds a clause
    ("What does subsection 8(4) allow?", ["8(4)"]),
    ("What does subparagraph 7(3)(d)(i) require?", ["7(3)(d)(i)"]),
    ("What is in Schedule 1, clause 4.7.3?", ["4.7.3"]),
    ("What does \u00a7 59.1-583 provide?", ["59.1-583"]),  # a state code's title-chapter-section number
    # a US code's section cited by its title (New York's rules, the CFR, the US Code)
    ("What is required by 23 NYCRR 500.11?", ["500.11"]),
    ("What does 45 CFR § 164.308(a) require?", ["164.308(a)"]),
    ("What does 15 U.S.C. 6801 say?", ["6801"]),
    # counter-examples: the question asks something of the provision, or names none
    ("Under 45 CFR 164.308, how often must risk be assessed?", []),
    ("Under Article 11, how often must plans be tested?", []),
    ("How does Article 11 apply to small firms?", []),
    ("Does AC-2 require automated account management?", []),
    ("What must we do when a data breach is discovered?", []),
], ids=["article", "paragraph-and-act", "us-section", "policy-section", "rule", "control", "enhancement", "ism-id",
        "id-in-pieces", "id-with-ampersand", "id-with-sub-number", "control-about", "subsection",
        "subparagraph", "clause-in-schedule", "state-code-section", "every-subdivision",
        "not-the-texts-year", "roman-article", "roman-annex",
        "nycrr", "cfr-with-section-mark", "usc", "code-section-asked-a-time", "asks-a-time", "asks-scope",
        "asks-a-yes-no", "names-none"])
def test_a_question_asks_about_the_provisions_it_names_whole_only_when_it_asks_nothing_else(
        question: str, numbers: list[str]) -> None:
    names = frozenset(key_terms("Regulation (EU) 2022/2554 (DORA)"))
    assert asked_provisions(question, names) == numbers
    assert asks_all(question) is (bool(numbers) or question.startswith("What must we do"))


@pytest.mark.parametrize(("question", "numbers"), [
    # a US regulation's section by its act's initials or alone, as the FAR is cited; a standard's success criterion,
    # guideline or conformance requirement by its kind (W3C's accessibility guidelines)
    ("What does FAR 33.209 require?", ["33.209"]),
    ("What is required under 33.212?", ["33.212"]),
    ("What does DFARS 252.204-7012 say?", ["252.204-7012"]),
    ("What does Success Criterion 1.3.4 require?", ["1.3.4"]),
    ("What does SC 2.4.7 say?", ["2.4.7"]),
    ("What does Guideline 1.1 call for?", ["1.1"]),
    ("What does conformance requirement 5.2.4 say?", ["5.2.4"]),
    ("What does Check-Identity-01 require?", ["Check-Identity-01"]),  # a checklist's check (OpenStack's guide)
    # a section lettered as agreements letter theirs (GitHub's terms), or numbered in Roman numerals
    ("What does Section P of the FAR require?", ["P"]),
    ("What does Section E.2 say?", ["E.2"]),
    ("What does section II.1 say?", ["II.1"]),
    ("What does Section I say?", ["I"]),
    # counter-examples: a version, something asked of the provision, a name with a number
    ("How did Covid-19 change the rules?", []),
    ("What changed in WCAG 2.2?", []),
    ("What does version 10.15 say?", []),
    ("Under FAR 33.209, how soon must a fraud be reported?", []),
    ("What does SC 1.3.5 ask of our forms?", []),
    ("Which section I should read first?", []),  # the pronoun
    ("What does Section O.2 require of the customer?", []),
])
def test_a_code_section_or_a_criterion_is_named_as_its_publisher_numbers_it(question: str, numbers: list[str]) -> None:
    assert asked_provisions(question, frozenset(key_terms("Federal Acquisition Regulation (FAR) WCAG"))) == numbers


@pytest.mark.parametrize(("question", "numbers"), [
    # the text named by its kind ("specification", "bylaws", "policy") and by the names its title gives ("ODF" of
    # "Open Document Format ..."): a standard's clause, a policy's section, an act's article
    ("What does section 3.8 of the ODF packages specification require?", ["3.8"]),
    ("What does section 4.2 of the policy say?", ["4.2"]),
    ("What does Article 5 of the regulation require?", ["5"]),
    # a word the titles do not hold still asks something of the provision
    ("What does section 3.8 of the specification say about ZIP files?", []),
], ids=["acronym-and-kind", "policy", "regulation", "unknown-name"])
def test_a_provision_of_a_text_named_by_its_kind_or_its_titles_names_is_asked_whole(
        question: str, numbers: list[str]) -> None:
    from agents.naming import title_names

    title = "Open Document Format for Office Applications (OpenDocument) Version 1.4, Part 2: Packages"
    names = frozenset(key_terms(f"{title} {' '.join(title_names(title))}"))
    assert asked_provisions(question, names) == numbers


def test_a_named_provision_keeps_its_subdivision_and_a_control_its_enhancement() -> None:
    assert named_provisions("See Article 11(6) and AC-2 (1), then section 4.2") == [
        ("Article 11(6)", "11(6)"), ("section 4.2", "4.2"), ("AC-2 (1)", "AC-2(1)")]


def test_the_parts_that_ask_about_a_provision_whole_are_those_the_selection_chose_one_for() -> None:
    parts = [{"index": 0, "question": "How often must plans be tested?", "ranked": [{"chunk_id": "a"}]},
             {"index": 1, "question": "What does DORA's Article 11 require?",
              "ranked": [{"chunk_id": "b", "provision": False}, {"chunk_id": "c", "provision": True}]},
             {"index": 2, "question": "What must we do when a breach happens?", "ranked": []}]
    assert provision_parts(parts) == frozenset({1})
    assert provision_parts([]) is None and provision_parts(None) is None  # no selection: the words decide


def _obligation(rid: str, quote: str, start: int) -> Requirement:
    return Requirement(requirement_id=rid, source_type="regulation", document_id="dora", document_version=1,
                       document_title="Regulation (EU) 2022/2554 (DORA)", section_path="Article 11",
                       chunk_id="chk", char_start=start, char_end=start + len(quote), exact_quote=quote,
                       modality=Modality.OBLIGATION, extraction_confidence="high", confidence_reason="",
                       refers_elsewhere=False)


def test_compose_answers_a_provision_the_selection_chose_whole_though_the_question_names_its_act_in_other_words(
        ) -> None:
    # "DORA" is no word of asking: the question alone reads as an ordinary one, at most four quotes, best first;
    # the selection, which reads the titles, chose Article 11 whole: every duty, in the article's order, counted
    question = "What does DORA's Article 11 require?"
    quotes = [_obligation(f"REQ-S00{i + 1}", f"Financial entities shall keep plan number {i + 1} current.", 100 * i)
              for i in range(6)]
    scores = {q.requirement_id: 0.1 * i for i, q in enumerate(quotes)}  # the last best by score
    ordinary = compose_rules(quotes, parts=[question], scores=scores)
    whole = compose_rules(quotes, parts=[question], scores=scores, provisions=frozenset({0}))
    cited = [i for s in whole.statements for i in s.requirement_ids]
    assert list(dict.fromkeys(cited)) == [q.requirement_id for q in quotes]
    assert len({i for s in ordinary.statements for i in s.requirement_ids}) < len(quotes)
    assert asks_all(question) is False and asks_all(question, provision=True) is True


_CATALOGUE = """# Facility Safety Control Catalogue

## FS-1 Visitor Management

Control:

a. Register every visitor at reception before the visitor enters a controlled area;
b. Issue each registered visitor a temporary badge that expires at the end of the day of issue.

### FS-1(1) Escorted Access

Escort visitors at all times while they are inside a controlled area.

### FS-1(2) Withdrawn

[Withdrawn: Incorporated into FS-1.]

## FS-2 Fire Safety Inspections

Control:

a. Inspect fire extinguishers, alarms and sprinkler heads [Assignment: organization-defined frequency];
b. Record the results of each inspection in the facility log.
"""


def _ingested(conn, settings, embedder, path, text: str, source_type: str):
    """`text` saved at `path` and ingested as `source_type`; the rules backend's dependencies over it."""
    from agents.deps import Deps
    from engine.ingest.pipeline import ingest_paths

    path.write_text(text)
    assert not ingest_paths(conn, embedder, settings, [path], source_type=source_type).failed
    return Deps.build(conn, settings, embedder=embedder, backend="rules")


_RULE_TEXT = """# Widget Breach Rule

## § 64.2011 Notification of security breaches.

(a) Commission notification. A carrier shall notify the Commission of a breach within seven business days. (1) The
notice shall include the carrier's address. (2) The notice shall include a description of the breach. (3) A carrier
shall not notify customers before the Commission where law enforcement so asks.

(b) Customer notification. A carrier shall notify affected customers without unreasonable delay.
"""


def test_a_point_set_in_its_paragraphs_text_is_answered_with_that_paragraph(conn, settings, embedder,
                                                                           tmp_path) -> None:
    """"What is required by § 64.2011(a)(3)?" names a point the Federal Register prints inside paragraph (a)'s text:
    no block is numbered 64.2011(a)(3), so the paragraph that holds it answers (every subdivision was lost but the
    last, "64.2011(3)", and the question was searched as any other)."""
    from agents.research import run_research

    deps = _ingested(conn, settings, embedder, tmp_path / "widget-rule.md", _RULE_TEXT, "regulation")
    result = run_research("What is required by \u00a7 64.2011(a)(3)?", deps).evidence_result
    assert result is not None and result["status"] == "ANSWERED"
    assert any("shall not notify customers before the Commission" in r["exact_quote"]
               for r in result["verified_requirements"])
    # the paragraph that holds the point, not paragraph (b)
    assert not any("without unreasonable delay" in r["exact_quote"] for r in result["verified_requirements"])


_GUIDELINES = """# Widget Supervisory Guidelines

## Guideline 12 \u2013 Testing

37. Undertakings should test their widget controls regularly.

38. Undertakings should perform tests of security measures at least once a year.

## Guideline 13 \u2013 Training

39. Undertakings should train their staff in widget safety.

## Annex I \u2013 Impact assessment

1. The impact of these guidelines was assessed with the industry.
"""


def test_a_paragraph_numbered_on_across_guidelines_is_found_by_its_number(conn, settings, embedder,
                                                                           tmp_path) -> None:
    """"What does paragraph 38 require?" of guidelines whose paragraphs run on from one guideline to the next
    (cited 12(38) under Guideline 12): no block is numbered 38, and one is numbered 12(38). The search alone found
    it here too, but not as the text asked about (relevance 0.87, not 1.0)."""
    from agents.research import run_research

    deps = _ingested(conn, settings, embedder, tmp_path / "widget-guidelines.md", _GUIDELINES, "guidance")
    result = run_research("What does paragraph 38 require?", deps).evidence_result
    assert result is not None and result["status"] == "ANSWERED"
    assert [(r["exact_quote"], r["relevance"]) for r in result["verified_requirements"]] == [
        ("Undertakings should perform tests of security measures at least once a year.", 1.0)]  # the text asked about


def test_a_withdrawn_control_is_answered_by_its_notice_and_only_when_asked_about_itself(
        conn, settings, embedder, tmp_path) -> None:
    """'What does FS-1(2) require?' was refused (its notice too short to quote); 'What does FS-1 require?' cites its
    enhancements' duties, not the withdrawn one's notice."""
    from agents.research import run_research

    deps = _ingested(conn, settings, embedder, tmp_path / "facility-catalogue.md", _CATALOGUE, "standard")
    withdrawn = run_research("What does FS-1(2) require?", deps).evidence_result
    assert withdrawn is not None and withdrawn["status"] == "ANSWERED"
    assert [r["exact_quote"] for r in withdrawn["verified_requirements"]] == ["[Withdrawn: Incorporated into FS-1.]"]
    whole = run_research("What does FS-1 require?", deps).evidence_result
    assert whole is not None and whole["status"] == "ANSWERED"
    quotes = [r["exact_quote"] for r in whole["verified_requirements"]]
    assert any(q.startswith("Escort visitors") for q in quotes) and not any("Withdrawn" in q for q in quotes)
    assert whole["parts"][0]["direct_answer"].startswith("Register every visitor")  # the label "Control:" left out


_ACT = """# Widget Safety Act

## Article 12 Record-keeping

1. Widget systems shall technically allow for the automatic recording of events over their lifetime.

2. Logs shall be kept for a period of at least six months.

## Article 13 Transparency

1. Widget systems shall be accompanied by instructions for use.
"""


def test_a_provision_named_with_its_own_title_is_asked_about_whole(conn, settings, embedder, tmp_path) -> None:
    """"What does Article 12 say about record-keeping?" names Article 12 by its title too ("Record-keeping") and asks
    nothing else of it: its text is the answer, whatever the ranking reads in "say about" (the AI Act's Formex
    corpus: refused). A word its title lacks still asks something of it, searched as any other question."""
    from agents.research import run_research
    from agents.select import provision_titles

    deps = _ingested(conn, settings, embedder, tmp_path / "widget-act.md", _ACT, "regulation")
    assert {"record", "keep"} <= provision_titles(conn, "What does Article 12 say about record-keeping?")
    result = run_research("What does Article 12 say about record-keeping?", deps).evidence_result
    assert result is not None and result["status"] == "ANSWERED"
    assert [(r["exact_quote"][:30], r["relevance"]) for r in result["verified_requirements"]] == [
        ("Widget systems shall technical", 1.0), ("Logs shall be kept for a perio", 1.0)]
    assert provision_titles(conn, "What does Article 14 say?") == frozenset()  # no such article


@pytest.mark.parametrize(("question", "numbers"), [
    # a standard's clause number alone (OpenChain's specification, ASVS-style numbering)
    ("What does 3.4.2 of the 1.1 security assurance specification say?", ["3.4.2"]),
    ("What is required by 3.1.4?", ["3.1.4"]),
    # not a clause: two levels are as often a version, and a question that asks something of the number
    ("What does 2.1 say?", []),
    ("Is version 1.2.3 of the library covered?", []),
    ("What does section 3.2.1 say?", ["3.2.1"]),
    # a "clause" and the year its text is named by ask for the clause whole; a year asked about is no name
    ("What does clause 3.1.4 of the 2021 Security Assurance Reference Guide require?", ["3.1.4"]),
    ("What does clause 3.1.4 require for contractors?", []),
])
def test_a_clause_number_alone_names_a_provision(question: str, numbers: list[str]) -> None:
    names = frozenset(key_terms("OpenChain Security Assurance Specification 1.1 (2022) Reference Guide"))
    assert asked_provisions(question, names) == numbers


def test_a_question_that_asks_what_a_section_asks_for_asks_for_it_whole() -> None:
    names = frozenset(key_terms("OpenChain AI System Bill of Materials (AI SBOM) Compliance Management Guide"))
    assert asked_provisions("What does section 3.6 of the AI SBOM compliance management guide ask for?", names) == [
        "3.6"]
    assert asked_provisions("What does the regulator expect under section 3.6?", names) == []


_PROTOCOL = """# {name} Protocol

## 1 Introduction

This document specifies the {name} protocol.

## 3 The Response Header

3.1 A {name} server MUST include the {name}-Authenticate header in every error response.
"""


def test_a_provision_of_the_named_text_is_found_where_many_texts_have_one_so_numbered(
        conn, settings, embedder, tmp_path) -> None:
    """"What does section 3 of the Gadget Protocol require?" in a library where many texts have a section 3: the
    named text's section is found whatever the others' (an RFC's section 3 was lost once 36 corpora were read into
    one library, the first chunks numbered 3 all another text's)."""
    from agents.research import run_research
    from engine.search import store

    for name in ("Widget", "Gadget"):
        _ingested(conn, settings, embedder, tmp_path / f"{name.lower()}.md", _PROTOCOL.format(name=name), "standard")
    first, last = sorted({c.document_id: c.document_title for c in store.chunks_by_section(conn, "3")}.items())
    assert [c.document_id for c in store.chunks_by_section(conn, "3", limit=1)] == [first[0]]  # the other comes first
    assert [c.document_id for c in store.chunks_by_section(conn, "3", document_ids=[last[0]], limit=1)] == [last[0]]
    name = last[1].split()[0]
    tight = settings.model_copy(update={"evidence": settings.evidence.model_copy(update={"broad_section_max": 1})})
    from agents.deps import Deps

    deps = Deps.build(conn, tight, embedder=embedder, backend="rules")
    result = run_research(f"What does section 3 of the {name} Protocol require?", deps).evidence_result
    assert result is not None and result["status"] == "ANSWERED"
    assert [r["exact_quote"] for r in result["verified_requirements"]] == [
        f"3.1 A {name} server MUST include the {name}-Authenticate header in every error response."]


_REGULATIONS = """# Widget Regulations 2030

## 10 Security duties of operators

(1) An operator must take appropriate measures to manage the risks posed to its network.

(2) An operator must notify the authority of any incident.

## Schedule 2 Thresholds

### 10 The digital subsector

(1) This paragraph describes the threshold requirements which apply to the digital subsector.
"""


@pytest.mark.parametrize(("question", "schedule"), [
    # a provision of the body by its kind (the NIS Regulations' "regulation 10", an act's "section 10")
    ("What does regulation 10 of the Widget Regulations require?", False),
    ("What does section 10 of the Widget Regulations require?", False),
    # counter-example: "paragraph" is how a schedule numbers its own too, and both stay
    ("What does paragraph 10 of the Widget Regulations require?", True),
])
def test_a_provision_named_by_its_kind_is_the_bodys_not_a_schedules_paragraph(
        conn, settings, embedder, tmp_path, question: str, schedule: bool) -> None:
    """"What does regulation 10 ... require?" is answered by regulation 10, not also by the paragraph 10 of a
    schedule, which numbers its paragraphs afresh (the NIS Regulations' Schedule 2 paragraph 10 had been cited)."""
    from agents.provisions import asked_provisions
    from agents.research import run_research

    deps = _ingested(conn, settings, embedder, tmp_path / "widget-regulations.md", _REGULATIONS, "regulation")
    result = run_research(question, deps).evidence_result
    assert result is not None
    quotes = [r["exact_quote"] for r in result["verified_requirements"]]
    assert asked_provisions(question) == ["10"]
    assert any(q.startswith("(1) An operator must") for q in quotes)
    assert any("threshold" in q for q in quotes) is schedule
