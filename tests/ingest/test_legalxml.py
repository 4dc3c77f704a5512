"""Legislation as its publishers' XML (engine.ingest.legalxml): eCFR, the Federal Register, Akoma Ntoso, USLM, CLML;
other XML refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import IngestError
from engine.ingest.chunking import chunk_document
from engine.ingest.formats import detect_format
from tests.helpers import parsed_file

# 45 CFR 164.310 in the shape ecfr.gov serves a part: DIV5 part, DIV6 subpart, DIV8 sections, a flat run of P with
# the paragraph labels in the text, italic run-in headings, an amendment citation, the part's authority and source
_ECFR = """<?xml version="1.0" encoding="UTF-8"?>
<DIV5 N="164" TYPE="PART" hierarchy_metadata="{&quot;citation&quot;:&quot;45 CFR Part 164&quot;}">
<HEAD>PART 164&#x2014;SECURITY AND PRIVACY</HEAD>
<AUTH><HED>Authority:</HED><PSPACE>42 U.S.C. 1320d-1320d-9.</PSPACE></AUTH>
<SOURCE><HED>Source:</HED><PSPACE>65 FR 82802, Dec. 28, 2000.</PSPACE></SOURCE>
<DIV6 N="C" TYPE="SUBPART"><HEAD>Subpart C&#x2014;Security Standards</HEAD>
<DIV8 N="164.310" TYPE="SECTION"><HEAD>&#xA7; 164.310 Physical safeguards.</HEAD>
<P>A covered entity must, in accordance with &#xA7; 164.306:</P>
<P>(a)(1) <I>Standard: Facility access controls.</I> Implement policies and procedures to limit physical access.</P>
<P>(2) <I>Implementation specifications:</I></P>
<P>(i) <I>Contingency operations</I> (Addressable). Establish procedures that allow facility access.</P>
<P>(b) <I>Standard: Workstation use.</I> Implement policies and procedures that specify the proper functions.</P>
<GPOTABLE COLS="2"><BOXHD><CHED H="1">Record</CHED><CHED H="1">Period</CHED></BOXHD>
<ROW><ENT I="01">Access logs</ENT><ENT>6 years</ENT></ROW></GPOTABLE>
<CITA TYPE="N">[68 FR 8376, Feb. 20, 2003, as amended at 78 FR 5694, Jan. 25, 2013]</CITA>
</DIV8></DIV6></DIV5>
"""

# the same act as EUR-Lex's HTML test document (tests/ingest/test_formats.py), in Akoma Ntoso
_AKN = """<?xml version="1.0" encoding="UTF-8"?>
<akomaNtoso xmlns="http://docs.oasis-open.org/legaldocml/ns/akn/3.0"><act name="regulation">
<meta><identification source="#ep"><FRBRWork><FRBRname value="Widget Regulation"/></FRBRWork></identification></meta>
<preface><longTitle><p><docType>REGULATION (EU) 2031/77</docType> on the safety of widgets</p></longTitle></preface>
<preamble><citations><citation><p>Having regard to the Treaty,<authorialNote marker="1">
<p>OJ C 155, 30.4.2031, p. 38.</p></authorialNote></p></citation></citations>
<recitals><intro><p>Whereas:</p></intro><recital><num>(1)</num><p>Widgets can cause harm.</p></recital></recitals>
<formula name="enactingFormula"><p>HAVE ADOPTED THIS REGULATION:</p></formula></preamble>
<body><chapter><num>CHAPTER I</num><heading>General provisions</heading>
<article eId="art_3"><num>Article 3</num><heading>Designation of a safety officer</heading>
<paragraph><num>1.</num><list><intro><p>A manufacturer shall designate a safety officer in any case where:</p></intro>
<point><num>(a)</num><content><p>it places more than 10 000 widgets on the market; or</p></content></point>
<point><num>(b)</num><content><p>its widgets are intended for <i>children</i>.</p></content></point></list></paragraph>
<paragraph><num>2.</num><content><p>The officer shall report to the <ref href="#b">board</ref> .</p></content>
</paragraph>
</article>
<article><num>4</num><heading>Records</heading><paragraph><content><table><tr><th>Record</th><th>Period</th></tr>
<tr><td>Test reports</td><td>ten years</td></tr></table></content></paragraph></article></chapter></body>
<attachments><attachment><doc name="annex"><preface><p><docNumber>ANNEX I</docNumber></p>
<p><docTitle>Essential requirements</docTitle></p></preface><mainBody><paragraph><num>1.</num><content>
<p>Widgets shall have rounded edges.</p></content></paragraph></mainBody></doc></attachment></attachments>
</act></akomaNtoso>
"""

_USLM = """<?xml version="1.0" encoding="UTF-8"?>
<uscDoc xmlns="http://xml.house.gov/schemas/uslm/1.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
<meta><dc:title>Title 15</dc:title></meta><main><title><num value="15">Title 15&#x2014;</num>
<heading>COMMERCE AND TRADE</heading><chapter><num>CHAPTER 94&#x2014;</num><heading>PRIVACY</heading>
<section><num value="6801">&#xA7; 6801.</num><heading>Protection of nonpublic personal information</heading>
<subsection><num>(b)</num><heading>Financial institutions safeguards</heading>
<chapeau>Each agency shall establish appropriate standards&#x2014;</chapeau>
<paragraph><num>(1)</num><content>to insure the security of customer records;</content></paragraph>
<paragraph><num>(2)</num><content>to protect against any anticipated threats.</content></paragraph></subsection>
<sourceCredit>(Pub. L. 106&#x2013;102, title V, &#xA7;501, Nov. 12, 1999.)</sourceCredit>
<notes><note><heading>Effective Date</heading><p>Section effective Nov. 12, 2000.</p></note></notes>
</section></chapter></title></main></uscDoc>
"""

_CLML = """<?xml version="1.0" encoding="UTF-8"?>
<Legislation xmlns="http://www.legislation.gov.uk/namespaces/legislation"
 xmlns:ukm="http://www.legislation.gov.uk/namespaces/metadata"><ukm:Metadata/>
<Primary><PrimaryPrelims><Title>Widget Safety Act 2031</Title></PrimaryPrelims>
<Body><Part><Number>PART 1</Number><Title>Safety</Title>
<P1group><Title>Duty to register</Title><P1><Pnumber>1</Pnumber>
<P2><Pnumber>1</Pnumber><P2para><Text>A manufacturer must register each widget.</Text></P2para></P2>
<P2><Pnumber>2</Pnumber><P2para><Text>The registration must state&#x2014;</Text>
<P3><Pnumber>a</Pnumber><P3para><Text>the serial number, and</Text></P3para></P3>
<P3><Pnumber>b</Pnumber><P3para><Text>the date of manufacture.</Text></P3para></P3></P2para></P2></P1></P1group>
<P1group><Title>Offences</Title><P1><Pnumber>2</Pnumber><P1para><Text>A person who fails to register a widget
commits an offence.<CommentaryRef Ref="c1"/></Text></P1para></P1></P1group></Part></Body></Primary>
<Commentaries><Commentary id="c1"><Para><Text>S. 2 in force at 1.1.2032.</Text></Para></Commentary></Commentaries>
</Legislation>
"""


# the same act in Formex 4, as EUR-Lex serves an act's XML: TI.ART/STI.ART, PARAG/NO.PARAG/ALINEA, LIST/ITEM/NP,
# CONSID recitals, a NOTE, quotation marks as elements, a page mark between items
_FORMEX = """<?xml version="1.0" encoding="UTF-8"?>
<ACT><BIB.INSTANCE><DOCUMENT.REF><COLL>L</COLL></DOCUMENT.REF></BIB.INSTANCE>
<TITLE><TI><P>REGULATION (EU) 2031/77</P><P>on the safety of widgets</P></TI></TITLE>
<PREAMBLE><GR.VISA><VISA>Having regard to the Treaty,<NOTE NOTE.ID="E0001"><P>OJ C 155, 30.4.2031.</P></NOTE></VISA>
</GR.VISA><GR.CONSID><GR.CONSID.INIT>Whereas:</GR.CONSID.INIT><CONSID><NP><NO.P>(1)</NO.P><TXT>Widgets can cause
harm.</TXT></NP></CONSID></GR.CONSID><PREAMBLE.FINAL>HAVE ADOPTED THIS REGULATION:</PREAMBLE.FINAL></PREAMBLE>
<ENACTING.TERMS><DIVISION><TITLE><TI><P>CHAPTER I</P></TI><STI><P>General provisions</P></STI></TITLE>
<ARTICLE IDENTIFIER="003"><TI.ART>Article 3</TI.ART><STI.ART>Designation of a safety officer</STI.ART>
<PARAG IDENTIFIER="003.001"><NO.PARAG>1.</NO.PARAG><ALINEA><P>A manufacturer shall designate a safety officer in any
case where:</P><LIST TYPE="alpha"><ITEM><NP><NO.P>(a)</NO.P><TXT>it places more than 10 000 widgets on the market;
or</TXT></NP></ITEM><?PAGE NO="3"?><ITEM><NP><NO.P>(b)</NO.P><TXT>its widgets are intended for <HT TYPE="ITALIC">
children</HT>.</TXT></NP></ITEM></LIST></ALINEA></PARAG>
<PARAG IDENTIFIER="003.002"><NO.PARAG>2.</NO.PARAG><ALINEA>The officer shall follow the <QUOT.START CODE="2018"/>
safety<QUOT.END CODE="2019"/> rules.</ALINEA></PARAG></ARTICLE></DIVISION></ENACTING.TERMS>
<FINAL><P>This Regulation shall be binding in its entirety.</P></FINAL></ACT>
"""


def _parsed(tmp_path: Path, name: str, text: str):
    return parsed_file(tmp_path / name, text)


def _sections(parsed) -> dict[str, str]:
    return {b.section_number or b.section_path: parsed.text[b.start:b.end] for b in parsed.blocks}


def test_ecfr_part_reads_as_its_plain_text_does(tmp_path: Path) -> None:
    parsed = _parsed(tmp_path, "part-164.xml", _ECFR)
    assert (parsed.format, parsed.metadata["xml"]) == ("xml", "ecfr")
    assert parsed.title == "PART 164\u2014SECURITY AND PRIVACY"
    sections = _sections(parsed)
    assert sections["164.310(a)(1)"].startswith("(a)(1) Standard: Facility access controls. Implement policies")
    assert "(i) Contingency operations (Addressable). Establish procedures" in sections["164.310(a)(1)"]
    assert next(b for b in parsed.blocks if b.section_number == "164.310(b)").metadata["citation"] == "§ 164.310(b)"
    assert next(b for b in parsed.blocks if b.section_number == "164.310(b)").section_path == (
        "Part 164 SECURITY AND PRIVACY > Subpart C Security Standards > § 164.310 Physical safeguards")
    # a table with its column headers; the amendment citation, authority and source notes are no regulation text
    assert "| Record | Period |\n|---|---|\n| Access logs | 6 years |" in sections["164.310(b)"]
    assert "FR" not in parsed.text and "Authority" not in parsed.text
    for chunk in chunk_document("doc_x", parsed):
        assert parsed.text[chunk.char_start:chunk.char_end] == chunk.text


def test_ecfr_sections_match_the_same_rule_as_text(tmp_path: Path) -> None:
    xml = _parsed(tmp_path, "a.xml", _ECFR)
    text = _parsed(tmp_path, "a.txt", "PART 164\u2014SECURITY AND PRIVACY\n\nSubpart C\u2014Security Standards\n\n"
                   "\u00a7 164.310 Physical safeguards.\n\n"
                   "A covered entity must, in accordance with \u00a7 164.306:\n\n"
                   "(a)(1) Standard: Facility access controls. Implement policies and procedures to limit physical "
                   "access.\n\n(2) Implementation specifications:\n\n(i) Contingency operations (Addressable). "
                   "Establish procedures that allow facility access.\n")
    assert [(b.section_number, b.section_path) for b in xml.blocks][:2] == \
        [(b.section_number, b.section_path) for b in text.blocks][:2]
    assert _sections(xml)["164.310(a)(1)"] == _sections(text)["164.310(a)(1)"]


def test_akoma_ntoso_act_reads_as_the_eurlex_page_does(tmp_path: Path) -> None:
    parsed = _parsed(tmp_path, "widgets.xml", _AKN)
    assert parsed.metadata["xml"] == "akn" and parsed.title == "REGULATION (EU) 2031/77 on the safety of widgets"
    sections = _sections(parsed)
    assert ("1. A manufacturer shall designate a safety officer in any case where:\n(a) it places more than 10 000 "
            "widgets on the market; or\n(b) its widgets are intended for children." == sections["3(1)"])
    assert sections["3(2)"] == "2. The officer shall report to the board."
    assert next(b for b in parsed.blocks if b.section_number == "3(1)").section_path == \
        "Chapter I General provisions > Article 3 Designation of a safety officer"
    assert sections["Recital 1"] == "(1) Widgets can cause harm."  # a recital, non-binding context
    # an article numbered "4" is Article 4; its table keeps its header row; the annex is a section of its own
    assert "| Test reports | ten years |" in sections["4"]
    assert sections["I(1)"] == "1. Widgets shall have rounded edges."
    # the authorial note under Notes, its mark where it stood
    assert sections["Notes"] == "(1) OJ C 155, 30.4.2031, p. 38."
    assert "Having regard to the Treaty, (1)" in parsed.text and "Widget Regulation" not in parsed.text


_AKN2 = """<akomaNtoso xmlns="http://www.akomantoso.org/2.0"><act contains="singleVersion">
<meta><identification source="#slaw"><FRBRWork><FRBRalias value="Waste By-law"/></FRBRWork></identification></meta>
<body><section id="section-1"><num>1.</num><heading>Definitions</heading><paragraph id="section-1.paragraph-1">
<content><p>"<term refersTo="#term-dump" id="trm1">dump</term>" means to dispose of <term id="trm2">waste</term>
unlawfully;</p></content></paragraph></section>
<section id="section-4"><num>4.</num><heading>Obligations of waste generators</heading>
<subsection id="section-4.1"><num>(1)</num><content><blockList id="section-4.1.list1">
<listIntroduction>A <term id="trm3">waste generator</term> must&#8212;</listIntroduction>
<item id="section-4.1.list1.k"><num>(k)</num><blockList id="section-4.1.list1.k.list1">
<listIntroduction>ensure that the <term id="trm4">waste</term> not collected by the <term id="trm5">City</term> is
recycled or disposed of</listIntroduction>
<item id="section-4.1.list1.k.list1.i"><num>(i)</num><p>within a reasonable time, and</p></item>
</blockList></item></blockList></content></subsection></section></body></act>
<components><component id="component-schedule2"><doc name="schedule2"><meta><identification source="#slaw">
<FRBRWork><FRBRalias value="Schedule 2"/></FRBRWork></identification></meta><mainBody>
<article id="schedule2"><heading>Admission of Guilt Fines</heading><table id="schedule2.table0">
<tr><th><p>Section</p></th><th><p>Offence</p></th><th><p>Fine</p></th></tr>
<tr><td rowspan="2"><p>Section 12(b)</p></td><td><p>Spillage under 1m3</p></td><td><p>R500</p></td></tr>
<tr><td><p>Spillage over 1m3 to 3m3</p></td><td><p>R1000</p></td></tr>
</table></article></mainBody></doc></component></components></akomaNtoso>
"""


def test_akoma_ntoso_2_by_law_as_laws_africa_served_it(tmp_path: Path) -> None:
    """A by-law in Akoma Ntoso 2.0 (Laws.Africa's archive): a defined term in its quotation marks reads as written
    ('"dump" means', not '" dump " means'), a list's lead-in with terms in it is one text (it was its terms alone:
    "(k) waste" / "City"), the schedules set after the act as components are read under the names their metadata
    gives them, a unit numbered bare ("<num>4.</num>") is cited with its kind, and a cell spanning rows stands in
    each row it spans."""
    parsed = _parsed(tmp_path, "by-law.xml", _AKN2)
    assert parsed.metadata["xml"] == "akn"
    # a section numbered "4." is cited as Section 4, its path says so too
    assert {b.section_path for b in parsed.blocks if b.section_number.startswith("4")} == {
        "Section 4 Obligations of waste generators"}
    assert '"dump" means to dispose of waste unlawfully;' in parsed.text
    assert ("(k) ensure that the waste not collected by the City is recycled or disposed of\n\n"
            "(i) within a reasonable time, and") in parsed.text
    schedule = next(b for b in parsed.blocks if b.section_path.startswith("Schedule 2"))
    assert schedule.section_path == "Schedule 2 > Admission of Guilt Fines"
    assert "| Section 12(b) | Spillage under 1m3 | R500 |\n| Section 12(b) | Spillage over 1m3 to 3m3 | R1000 |" in \
        parsed.text[schedule.start:schedule.end]


def test_formex_act_reads_as_the_eurlex_page_does(tmp_path: Path) -> None:
    parsed = _parsed(tmp_path, "32031R0077.xml", _FORMEX)
    assert parsed.metadata["xml"] == "formex" and parsed.title == "REGULATION (EU) 2031/77 on the safety of widgets"
    sections = _sections(parsed)
    assert sections["3(1)"] == ("1. A manufacturer shall designate a safety officer in any case where:\n"
                                "(a) it places more than 10 000 widgets on the market; or\n"
                                "(b) its widgets are intended for children.")
    # the closing formula after the last article, as the act's plain text has it
    assert sections["3(2)"] == ("2. The officer shall follow the \u2018safety\u2019 rules.\n\n"
                                "This Regulation shall be binding in its entirety.")
    assert sections["Recital 1"] == "(1) Widgets can cause harm."
    assert sections["Notes"] == "(1) OJ C 155, 30.4.2031."
    assert next(b for b in parsed.blocks if b.section_number == "3(1)").section_path == \
        "Chapter I General provisions > Article 3 Designation of a safety officer"


def test_uslm_sections_run_their_headings_in_and_leave_notes_out(tmp_path: Path) -> None:
    parsed = _parsed(tmp_path, "usc15.xml", _USLM)
    assert (parsed.metadata["xml"], parsed.title) == ("uslm", "Title 15")
    block = next(b for b in parsed.blocks if b.section_number == "6801(b)")
    assert block.section_path == ("Title 15 COMMERCE AND TRADE > Chapter 94 PRIVACY > "
                                  "§ 6801 Protection of nonpublic personal information")
    assert parsed.text[block.start:block.end] == (
        "(b) Financial institutions safeguards.\u2014Each agency shall establish appropriate standards\u2014\n"
        "(1) to insure the security of customer records;\n(2) to protect against any anticipated threats.")
    assert "Pub. L." not in parsed.text and "effective" not in parsed.text


# GPO's USLM 2 (govinfo's statute compilations, public laws, bills): its own namespace, "Sec. 5." numbers, headings
# in small capitals, footnotes set where their reference stands
_USLM2 = """<?xml version="1.0" encoding="UTF-8"?>
<statuteCompilation xmlns="http://schemas.gpo.gov/xml/uslm" xmlns:dc="http://purl.org/dc/elements/1.1/">
<meta><dc:title>WIDGET SAFETY ACT OF 2031</dc:title></meta><main>
<section identifier="/us/sComp/91/596/s5"><heading>duties </heading><num value="5">Sec. 5. </num>
<subsection><num value="a">(a) </num><chapeau>Each employer&#x2014;</chapeau>
<paragraph><num value="1">(1) </num><content>shall furnish a place of employment free from recognized hazards; and
</content></paragraph><paragraph><num value="2">(2) </num><content>shall report to the Secretary of Health, Education,
and Welfare,<ref class="footnoteRef" idref="F1">1</ref> each injury.<footnote id="F1"><sup>1</sup><p>References to the
Secretary of Health, Education, and Welfare are deemed to refer to the Secretary of Health and Human Services.</p>
</footnote></content></paragraph></subsection></section></main></statuteCompilation>
"""


def test_uslm2_as_gpo_publishes_it_cites_sections_and_gathers_footnotes(tmp_path: Path) -> None:
    parsed = _parsed(tmp_path, "widget-act.xml", _USLM2)  # it was refused: "XML of a kind not read here"
    assert (parsed.metadata["xml"], parsed.title) == ("uslm", "WIDGET SAFETY ACT OF 2031")
    block = next(b for b in parsed.blocks if b.section_number == "5(a)")
    assert block.section_path == "Section 5 Duties"  # "Sec. 5." and a heading set in small capitals
    assert parsed.text[block.start:block.end] == (
        "(a) Each employer\u2014\n(1) shall furnish a place of employment free from recognized hazards; and\n"
        "(2) shall report to the Secretary of Health, Education, and Welfare, (1) each injury.")
    notes = next(b for b in parsed.blocks if b.section_path == "Notes")
    assert parsed.text[notes.start:notes.end].startswith("(1) References to the Secretary of Health")


def test_clml_sections_numbered_as_legislation_gov_uk_prints_them(tmp_path: Path) -> None:
    parsed = _parsed(tmp_path, "widget-act.xml", _CLML)
    assert (parsed.metadata["xml"], parsed.title) == ("clml", "Widget Safety Act 2031")
    sections = _sections(parsed)
    assert sections["1(1)"] == "(1) A manufacturer must register each widget."
    assert sections["1(2)"] == ("(2) The registration must state\u2014\n(a) the serial number, and\n"
                                "(b) the date of manufacture.")
    # an Act's sections cited as sections, as a reader cites them ("section 2"), not by a bare number
    section = next(b for b in parsed.blocks if b.section_number == "2")
    assert (section.section_path, section.metadata["citation"]) == ("Part 1 Safety > Section 2 Offences", "Section 2")
    assert "in force" not in parsed.text  # the commentary is the editor's, not the act's


def test_clml_regulations_are_cited_as_regulations_and_a_schedule_by_its_paragraphs(tmp_path: Path) -> None:
    si = (_CLML.replace("<Primary><PrimaryPrelims><Title>Widget Safety Act 2031</Title></PrimaryPrelims>",
                        "<Secondary><SecondaryPrelims><Title>The Widget Safety Regulations 2031</Title>"
                        "</SecondaryPrelims>")
          .replace("</Body></Primary>", "</Body><Schedules><Schedule><Number>SCHEDULE 1</Number><TitleBlock><Title>"
                   "Fees</Title></TitleBlock><ScheduleBody><P1><Pnumber>1</Pnumber><P1para><Text>The fee is ten "
                   "pounds.</Text></P1para></P1></ScheduleBody></Schedule></Schedules></Secondary>"))
    parsed = _parsed(tmp_path, "widget-regulations.xml", si)
    block = next(b for b in parsed.blocks if b.section_number == "1(2)")
    assert (block.section_path, block.metadata["citation"]) == (
        "Part 1 Safety > Regulation 1 Duty to register", "Regulation 1(2)")
    assert any(b.section_path == "Schedule 1 Fees" and "ten pounds" in parsed.text[b.start:b.end]
               for b in parsed.blocks)


# a final rule as the Federal Register prints it in GPO's XML: the preamble's captions and discussion, a list of
# subjects, then the amendatory instructions and the regulatory text inside the supplementary information
_FEDREG = """<NEWPART><PTITLE><PARTNO>Part III</PARTNO><TITLE>Widget Records; Final Rule</TITLE></PTITLE>
<RULES><RULE><PREAMB><PRTPAGE P="10"/><AGENCY TYPE="S">WIDGET SAFETY COMMISSION</AGENCY><CFR>99 CFR Part 5</CFR>
<SUBJECT>Widget Records</SUBJECT>
<ACT><HD SOURCE="HED">ACTION:</HD><P>Final rule.</P></ACT>
<EFFDATE><HD SOURCE="HED">DATES:</HD><P>This rule is effective March 13, 2031.</P></EFFDATE></PREAMB>
<SUPLINF><HD SOURCE="HED">SUPPLEMENTARY INFORMATION:</HD>
<HD SOURCE="HD1">I. Discussion</HD><HD SOURCE="HD3">1. Retention Period</HD>
<P>1. Commenters asked for a shorter period; the Commission <E T="03">keeps</E> five years.</P>
<LSTSUB><HD SOURCE="HED">List of Subjects in 99 CFR Part 5</HD><P>Widgets, Recordkeeping.</P></LSTSUB>
<SIG><NAME>A. Secretary,</NAME></SIG>
<PART><HD SOURCE="HED">PART 5\u2014WIDGET RECORDS</HD></PART>
<REGTEXT TITLE="99" PART="5"><AMDPAR>1. Amend \u00a7 5.10 by revising paragraph (a) to read as follows:</AMDPAR>
<SECTION><SECTNO>\u00a7 5.10 </SECTNO><SUBJECT>Retention of widget records.</SUBJECT>
<P>(a) <E T="03">Period.</E> A manufacturer shall retain each widget record for five years.</P><STARS/>
<P>(c) A manufacturer shall produce a record within 10 days of a request.</P></SECTION></REGTEXT>
</SUPLINF><FRDOC>[FR Doc. 2031-1 Filed 1-1-31]</FRDOC></RULE></RULES></NEWPART>
"""


def test_a_federal_register_rule_is_its_regulatory_text_under_its_preamble(tmp_path: Path) -> None:
    parsed = _parsed(tmp_path, "widget-rule.xml", _FEDREG)
    assert (parsed.metadata["xml"], parsed.title) == ("fedreg", "Widget Records; Final Rule")
    sections = _sections(parsed)
    # the regulatory text as the eCFR prints it, cited by section and paragraph
    assert sections["5.10(a)"] == "(a) Period. A manufacturer shall retain each widget record for five years."
    assert sections["5.10(c)"] == "(c) A manufacturer shall produce a record within 10 days of a request."
    block = next(b for b in parsed.blocks if b.section_number == "5.10(a)")
    assert block.section_path == "Part 5 WIDGET RECORDS > \u00a7 5.10 Retention of widget records"
    # the preamble and the amendatory instructions are under Preamble (non-binding to the evidence stage)
    paths = {parsed.text[b.start:b.end]: b.section_path for b in parsed.blocks}
    assert paths["This rule is effective March 13, 2031."] == "Preamble > DATES"
    assert paths["1. Amend \u00a7 5.10 by revising paragraph (a) to read as follows:"] == \
        "Preamble > Amendatory instructions"
    assert any(p.startswith("Preamble > SUPPLEMENTARY INFORMATION > I. Discussion") and "keeps five years" in t
               for t, p in paths.items())
    assert "FR Doc." not in parsed.text and "A. Secretary" not in parsed.text


def test_clml_provisions_inserted_by_amendment_are_cited_by_their_own_numbers(tmp_path: Path) -> None:
    # legislation.gov.uk numbers what an amendment inserts with its neighbour's number and letters: a paragraph
    # "(1A)" after "(1)", a regulation "A2" before regulation 2
    amended = (_CLML.replace("<P2><Pnumber>2</Pnumber>", "<P2><Pnumber>1A</Pnumber><P2para><Text>A dealer must "
                             "keep the registration number.</Text></P2para></P2><P2><Pnumber>2</Pnumber>")
               .replace("<P1group><Title>Offences</Title>", "<P1group><Title>Inspection</Title><P1><Pnumber>A2"
                        "</Pnumber><P2><Pnumber>1</Pnumber><P2para><Text>An inspector may enter premises."
                        "</Text></P2para></P2></P1></P1group><P1group><Title>Offences</Title>"))
    parsed = _parsed(tmp_path, "widget-act.xml", amended)
    sections = _sections(parsed)
    assert sections["1(1)"] == "(1) A manufacturer must register each widget."  # (1A) went on in it, cited 1(1)
    assert sections["1(1A)"] == "(1A) A dealer must keep the registration number."
    assert sections["1(2)"].startswith("(2) The registration must state")
    block = next(b for b in parsed.blocks if b.section_number == "A2(1)")  # under no section before
    assert (block.section_path, block.metadata["citation"]) == ("Part 1 Safety > Section A2 Inspection",
                                                                "Section A2(1)")


# an Act as Justice Canada publishes it (laws-lois-xml): marginal notes beside sections and subsections, historical
# notes, a footnote star on a label, definitions, a schedule whose clause numbers are bold text, and an amendment
# not yet in force
_LIMS = """<?xml version="1.0" encoding="UTF-8"?>
<Statute xmlns:lims="http://justice.gc.ca/lims" xml:lang="en"><Identification>
<LongTitle>An Act to protect widget owners</LongTitle><ShortTitle>Widget Protection Act</ShortTitle></Identification>
<Introduction><Enacts><Provision><Text>His Majesty enacts as follows:</Text></Provision></Enacts></Introduction>
<Body><Heading level="1"><Label>PART 1</Label><TitleText>Widgets</TitleText></Heading>
<Heading level="2"><TitleText>Interpretation</TitleText></Heading>
<Section><MarginalNote>Definitions</MarginalNote><Label>2</Label><Text>The following definitions apply.</Text>
<Definition><Text><DefinedTermEn>widget</DefinedTermEn> means a small device. (<DefinedTermFr>gadget</DefinedTermFr>)
</Text></Definition></Section>
<Heading level="2"><Label>DIVISION 1.1</Label><TitleText>Breaches</TitleText></Heading>
<Section><MarginalNote>Report to Commissioner</MarginalNote><Label>10.1</Label>
<Subsection><Label>(1)</Label><Text>An organization shall report any breach to the Commissioner.</Text></Subsection>
<Subsection><MarginalNote>Time to report</MarginalNote><Label><FootnoteRef idref="f1">*</FootnoteRef>(2)</Label>
<Text>The report shall be made within 30 days and shall set out</Text>
<Paragraph><Label>(a)</Label><Text>the date of the breach; and</Text></Paragraph>
<Paragraph><Label>(b)</Label><Text>the widgets affected.</Text></Paragraph></Subsection>
<HistoricalNote><HistoricalNoteSubItem>2015, c. 32, s. 10</HistoricalNoteSubItem></HistoricalNote>
<Footnote id="f1"><Label>*</Label><Text>[Note: Subsection 10.1(2) in force June 1, 2031.]</Text></Footnote></Section>
</Body>
<Schedule><ScheduleFormHeading><Label>SCHEDULE 1</Label><OriginatingRef>(Section 5)</OriginatingRef>
<TitleText>Principles</TitleText></ScheduleFormHeading><DocumentInternal>
<GroupHeading><TitleText>4.7 Principle 7 — Safeguards</TitleText></GroupHeading>
<Provision><Text>Widgets shall be protected by safeguards.</Text></Provision>
<Provision><Text><Emphasis style="bold">4.7.3</Emphasis></Text>
<Provision><Text>The methods of protection should include locked cabinets.</Text></Provision></Provision>
</DocumentInternal></Schedule>
<Schedule id="NifProvs"><ScheduleFormHeading type="amending"><TitleText>AMENDMENTS NOT IN FORCE</TitleText>
</ScheduleFormHeading><BillPiece><RelatedOrNotInForce><Heading level="5"><TitleText>— 2032, c. 3, s. 9</TitleText>
</Heading><Section type="amending"><Label>9</Label><Text>Subsection 10.1(1) of the Act is replaced by the following:
</Text><AmendedText><Section><Label>10.1</Label><Subsection><Label>(1)</Label><Text>An organization shall report
every breach.</Text></Subsection></Section></AmendedText></Section></RelatedOrNotInForce></BillPiece></Schedule>
</Statute>
"""


def test_a_canadian_act_as_justice_canada_publishes_it_is_cited_by_its_sections(tmp_path: Path) -> None:
    parsed = _parsed(tmp_path, "widget-act.xml", _LIMS)
    assert (parsed.metadata["xml"], parsed.title) == ("lims", "Widget Protection Act")
    sections = _sections(parsed)
    assert sections["10.1(1)"] == "(1) An organization shall report any breach to the Commissioner."
    assert " ".join(sections["10.1(2)"].split()) == ("(2) The report shall be made within 30 days and shall set out "
                                                     "(a) the date of the breach; and (b) the widgets affected.")
    block = next(b for b in parsed.blocks if b.section_number == "10.1(1)")
    assert (block.section_path, block.metadata["citation"]) == (
        "Part 1 Widgets > DIVISION 1.1 Breaches > Section 10.1 Report to Commissioner", "Section 10.1(1)")
    assert "widget means a small device. (gadget)" in sections["2"]
    # a subsection's marginal note, the historical note and the footnote are finding aids, not the Act
    for aid in ("Time to report", "2015, c. 32", "in force June", "*"):
        assert aid not in parsed.text
    # the schedule's clause under its principle, cited by its number; the amendment under its own heading
    clause = next(b for b in parsed.blocks if "locked cabinets" in parsed.text[b.start:b.end])
    assert clause.section_path == "Schedule 1 Principles > 4.7 Principle 7 — Safeguards > 4.7.3"
    assert clause.section_number == "4.7.3"
    amended = next(b for b in parsed.blocks if "every breach" in parsed.text[b.start:b.end])
    assert amended.section_path.startswith("AMENDMENTS NOT IN FORCE")
    for chunk in chunk_document("doc_x", parsed):
        assert parsed.text[chunk.char_start:chunk.char_end] == chunk.text


# FAR 33.106 and 32.904(f) in the shape GSA exports them as DITA (class attributes as the DTD sets them, a list item's
# label in an autonumber phrase, an empty cross-reference, an editor's processing instruction, a table whose head row
# is styled, not marked), and a topic written without its DTD's class attributes
_DITA = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE dita PUBLIC "-//OASIS//DTD DITA Composite//EN" "ditabase.dtd">
<dita>
 <concept id="FAR_33_106" class="- topic/topic concept/concept ">
  <title class="- topic/title "><ph props="autonumber" class="- topic/ph ">33.106</ph> Solicitation provision.</title>
  <prolog class="- topic/prolog "><author>GSA</author></prolog>
  <conbody class="- topic/body concept/conbody ">
   <ol class="- topic/ol ">
    <li class="- topic/li "><p class="- topic/p "><ph props="autonumber" class="- topic/ph ">(a)</ph>
      The contracting officer shall insert the provision at <xref href="52.233-2.dita#FAR_52_233_2"
      class="- topic/xref "/>, Service of Protest, in <?FM MARKER [Why] Amend by adding text?>solicitations.</p></li>
    <li class="- topic/li "><p class="- topic/p "><ph props="autonumber" class="- topic/ph ">(b)</ph></p>
     <ol class="- topic/ol "><li class="- topic/li "><p class="- topic/p ">(1) Payment is due in
      30 days.</p></li></ol></li>
   </ol>
   <note type="important" class="- topic/note ">Interest is paid from the due date.</note>
   <table class="- topic/table "><tgroup cols="2" class="- topic/tgroup "><tbody class="- topic/tbody ">
    <row class="- topic/row "><entry outputclass="CellHeading_Ctr" class="- topic/entry ">Items</entry>
     <entry outputclass="CellHeading_Ctr" class="- topic/entry ">Due</entry></row>
    <row class="- topic/row "><entry class="- topic/entry "><p class="- topic/p ">(1) <i>Meat</i>.</p></entry>
     <entry class="- topic/entry ">7th day after delivery.</entry></row>
   </tbody></tgroup></table>
  </conbody>
 </concept>
</dita>
"""
_DITA_BARE = """<?xml version="1.0"?>
<concept id="retention"><title>Retention</title><conbody><p>Records must be kept for six years.</p>
<dl><dlentry><dt>Record</dt><dd><p>Any document that evidences a transaction.</p></dd></dlentry></dl></conbody>
</concept>
"""


def test_dita_topics_read_as_their_sections(tmp_path: Path) -> None:
    parsed = _parsed(tmp_path, "33.106.dita", _DITA)
    assert (parsed.format, parsed.metadata["xml"]) == ("xml", "dita")
    assert parsed.title == "33.106 Solicitation provision."
    assert {b.section_number for b in parsed.blocks} == {"33.106(a)", "33.106(b)"}  # cited to the paragraph
    text = "\n\n".join(_sections(parsed).values())
    assert "(a) The contracting officer shall insert the provision at 52.233-2, Service of Protest, in " \
           "solicitations." in text
    assert "(b) (1) Payment is due in 30 days." in text  # the label alone opens its list's first item
    assert "Important: Interest is paid from the due date." in text
    assert "| Items | Due |\n|---|---|\n| (1) Meat. | 7th day after delivery. |" in text
    assert "GSA" not in parsed.text and "Amend" not in parsed.text
    bare = _parsed(tmp_path, "retention.dita", _DITA_BARE)
    assert bare.title == "Retention" and bare.metadata["xml"] == "dita"
    assert "Record: Any document that evidences a transaction." in bare.text
    assert detect_format(Path("33.106.dita"), _DITA.encode()) == "xml"


@pytest.mark.parametrize(("text", "message"), [
    ('<?xml version="1.0"?><invoice><total>5</total></invoice>', "root element is <invoice>.*eCFR, Federal Register"),
    ('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY e SYSTEM "file:///etc/passwd">]><DIV8><HEAD>x</HEAD><P>&e;</P></DIV8>',
     "declares entities"),
    ('<?xml version="1.0"?><DIV8 N="1.1"><HEAD>x</HEAD><P>cut', "invalid XML.*whole"),
    ('<?xml version="1.0"?><assessment-results xmlns="http://csrc.nist.gov/ns/oscal/1.0"/>', "not an OSCAL catalog"),
], ids=["other-xml", "entities", "truncated", "oscal-results"])
def test_other_xml_is_refused_saying_what_is_read(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(IngestError, match=message):
        _parsed(tmp_path, "doc.xml", text)


def test_an_xml_file_without_extension_is_recognised() -> None:
    assert detect_format(Path("part-164"), _ECFR.encode()) == "xml"


def test_markdown_act_with_article_headings_keeps_its_recitals(tmp_path: Path) -> None:
    parsed = _parsed(tmp_path, "act.md", "# Regulation 1/2031\n\nWhereas:\n\n(1) Widgets can cause harm.\n\n"
                     "HAVE ADOPTED THIS REGULATION:\n\n## Article 1 Scope\n\nThis Regulation applies to widgets.\n")
    assert _sections(parsed)["Recital 1"] == "(1) Widgets can cause harm."
