"""Parsers and chunking: structure, offsets, sentences never split, bad input."""

from __future__ import annotations

import re
from pathlib import Path

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE

from engine.errors import IngestError
from engine.ingest.chunking import chunk_document
from engine.ingest.formats import heading_of, joined_on_the_line, marks_raised, parse, spaced_apart, unwrap_pdf
from engine.ingest.numbering import formatted
from engine.ingest.sentences import split_sentences
from engine.text import normalize_ws
from tests.helpers import RETENTION_MD, parsed_file, write_docx, write_obliqa, write_pdf


def _sections(parsed) -> dict[str, str]:
    return {b.section_number: parsed.text[b.start:b.end] for b in parsed.blocks}


def test_markdown_sections_and_offsets(tmp_path: Path) -> None:
    path = tmp_path / "reg.md"
    path.write_text(RETENTION_MD)
    parsed = parse(path, path.read_bytes())
    assert parsed.title == "Test Retention Regulation"
    sections = _sections(parsed)
    assert "six years" in sections["4.2"]
    block = next(b for b in parsed.blocks if b.section_number == "4.2")
    assert block.section_path == "4 Records > 4.2 Retention periods"
    for chunk in chunk_document("doc_x", parsed):
        assert parsed.text[chunk.char_start:chunk.char_end] == chunk.text


def test_pdf_keeps_sections(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "reg.pdf", "<h1>4.2 Retention periods</h1><p>A firm must retain transaction "
                     "records for at least six years from the date of the transaction.</p>")
    parsed = parse(path, path.read_bytes())
    assert parsed.format == "pdf"
    assert "six years" in _sections(parsed)["4.2"]


_RUNNING = ("<style>@page { size: A6; margin: 1.5cm; @top-center { content: 'L 333/' counter(page) ' Official Journal "
            "27.12.2031'; font-size: 6pt } @bottom-center { content: 'Page ' counter(page) ' of ' counter(pages); "
            "font-size: 6pt } } p { font-size: 8pt }</style>")


def test_pdf_running_heads_and_feet_are_dropped_and_the_text_kept(tmp_path: Path) -> None:
    # an act printed as the Official Journal prints it: a running head and a page number on every page; the same
    # line in every article, and a sentence that runs over a page break
    articles = "".join(f"<h2>Article {n}</h2><p>1. A provider shall keep a log of every incident for at least {n} "
                       "years and shall make the log available to the authority on request, together with a "
                       "description of the measures taken to address each incident.</p><p>2. The provider shall "
                       f"review the log at least once every {n} months.</p>" for n in range(1, 9))
    long = ("3. A provider shall report " + "every serious incident, near miss and threat, " * 40
            + "to the authority within 24 hours.")
    path = write_pdf(tmp_path / "act.pdf", f"<html><head>{_RUNNING}</head><body>{articles}<h2>Article 9</h2>"
                                           f"<p>{long}</p></body></html>")
    parsed = parse(path, path.read_bytes())
    assert "Official Journal" not in parsed.text and "Page 1 of" not in parsed.text
    sections = _sections(parsed)
    assert all(f"at least {n} years" in sections[f"{n}(1)"] and f"every {n} months." in sections[f"{n}(2)"]
               for n in range(1, 9))  # every paragraph kept, the figure on its sentence's line
    assert parsed.text.count("measures taken to address each incident.") == 8
    last = sections["9(3)"]
    assert [normalize_ws(last[s.start:s.end]) for s in split_sentences(last)][-1] == long[3:]  # one sentence


def test_pdf_footnote_marks_set_as_superscripts_are_marked_not_glued_to_the_word() -> None:
    # pieces as pypdf gives them (text, baseline, type size): EIOPA's guidelines raise a footnote's mark in 7-point type
    # after "No 1094/2010", which read "1094/20104"; a number in body type, a footnote's own mark at a line's start
    # and a page number are no such marks
    body = [("In accordance with Article 16 of Regulation (EU) No 1094/2010", 727.8, 11.0), ("", 727.8, 12.0),
            ("4", 731.7, 7.0), (" EIOPA issues these Guidelines within 30", 727.8, 11.0), (" days.\n", 727.8, 11.0)]
    foot = [("4", 101.9, 7.0), (" OJ L 331, 15.12.2010.\n", 101.9, 7.0), ("7", 49.9, 9.0)]
    page = marks_raised([body + foot])[0]
    assert "".join(t for t, _, _ in page) == ("In accordance with Article 16 of Regulation (EU) No 1094/2010(4) EIOPA "
                                              "issues these Guidelines within 30 days.\n4 OJ L 331, 15.12.2010.\n7")


def test_pdf_footnotes_go_under_notes_not_into_the_article_they_fall_in(tmp_path: Path) -> None:
    """An Official Journal's footnotes ("(3) Regulation (EU) 2030/3 ... (OJ L 103, ...).") in smaller type at the foot
    of a page, inside an article that runs on to the next page: they were read as its paragraphs (3), (4), (5), and
    an article's title after them was lost."""
    css = ("<style>@page { size: A5; margin: 2cm; } p { font-size: 10pt; } .fn { float: footnote; font-size: 7pt; }"
           "::footnote-call { content: ' (' counter(footnote) ')'; } ::footnote-marker { content: '(' counter(footnote)"
           " ') '; }</style>")
    things = ["incident", "complaint", "outage", "breach", "audit", "change"]
    articles = "".join(
        f"<p>Article {n}</p><p>{thing.capitalize()} records</p><p>1. A provider shall keep a record of every {thing} "
        f"for {n} years as Regulation (EU) 2030/{n} requires<span class='fn'>Regulation (EU) 2030/{n} of the European "
        f"Parliament and of the Council on {thing}s (OJ L {100 + n}, 2.3.2030, p. {n}).</span> and shall make it "
        f"available to the authority on request.</p><p>2. The provider shall review each {thing} record within {n + 2} "
        "months.</p>" for n, thing in enumerate(things, 1))
    path = write_pdf(tmp_path / "act.pdf", f"<html><head>{css}</head><body><p>HAVE ADOPTED THIS REGULATION:</p>"
                                           f"{articles}</body></html>")
    parsed = parse(path, path.read_bytes())
    sections = _sections(parsed)
    assert {f"{n}(1)" for n in range(1, 7)} | {f"{n}(2)" for n in range(1, 7)} <= set(sections)
    assert not any("OJ L" in text for number, text in sections.items() if number)
    assert all(f"review each {thing} record" in sections[f"{n}(2)"] for n, thing in enumerate(things, 1))
    notes = [parsed.text[b.start:b.end] for b in parsed.blocks if b.section_path == "Notes"]
    assert notes == [f"({n}) Regulation (EU) 2030/{n} of the European Parliament and of the Council on {thing}s "
                     f"(OJ L {100 + n}, 2.3.2030, p. {n})." for n, thing in enumerate(things, 1)]


def test_markdown_footnotes_go_under_notes_with_their_numbers(tmp_path: Path) -> None:
    parsed = parsed_file(tmp_path / "breach.md", "# Breach policy\n\n## 4. Notification\n\nThe DPO must notify the "
                         "regulator within 72 hours[^bd] of discovery.\n\n## 5. Records\n\nKeep a register.\n\n"
                         "[^bd]: Business days exclude\n    public holidays.\n")
    sections = _sections(parsed)
    assert sections["4"] == "The DPO must notify the regulator within 72 hours (1) of discovery."
    assert sections["5"] == "Keep a register."  # the definition is not the last section's text
    assert next(parsed.text[b.start:b.end] for b in parsed.blocks if b.section_path == "Notes") == \
        "(1) Business days exclude public holidays."


def test_markdown_backslash_escapes_read_as_the_marks_they_keep(tmp_path: Path) -> None:
    # as converters write them (pandoc, EUR-Lex to Markdown): the backslash only keeps a mark from being markup; a
    # quote of "Justice \\(MoJ\\)" is no quote a reader recognises. Code spans keep their backslashes and lose
    # their backticks, as a rendered page shows them.
    parsed = parsed_file(tmp_path / "access.md", "# Access \\(Overview\\)\n\n## 2\\. Lockout\n\nThe Ministry of "
                         "Justice \\(MoJ\\) locks an account after 10 \\(ten\\) failed attempts \\[see `C:\\(x\\)`\\]."
                         "[^n]\n\n[^n]: Per the \\*lockout\\* standard.\n")
    assert parsed.title == "Access (Overview)"
    assert "The Ministry of Justice (MoJ) locks an account after 10 (ten) failed attempts [see C:\\(x\\)]." in \
        parsed.text
    assert "Per the *lockout* standard." in parsed.text and "\\(" not in parsed.text.replace("C:\\(x\\)", "")


def test_markdown_entity_references_read_as_the_characters_they_name(tmp_path: Path) -> None:
    # as a page renders them (a static site generator's output: "the project&#39;s", "Building &amp; Releasing",
    # "NIST &sect;"): quoted as the entity, the sentence is no quote a reader finds; code spans keep theirs
    parsed = parsed_file(tmp_path / "baseline.md", "# Baseline\n\n### BR-01 Building &amp; Releasing\n\n"
                         "**Requirement:** The project&#39;s pipeline MUST sanitize &#34;untrusted&#34; input "
                         "(see NIST &sect; 5.1, `a &amp; b`); AT&T and R&D &notanentity stay.\n")
    block = next(b for b in parsed.blocks if b.section_number == "BR-01")
    assert block.section_path == "BR-01 Building & Releasing"
    assert parsed.text[block.start:block.end].endswith(
        "Requirement: The project's pipeline MUST sanitize \"untrusted\" input (see NIST \u00a7 5.1, a &amp; b); "
        "AT&T and R&D &notanentity stay.")


def test_markdown_links_read_as_their_text(tmp_path: Path) -> None:
    # as a rendered page shows them: a quote of "Follow the [NCSC guidance](https://...) when ..." is no quote a
    # reader finds on the page, and the address is noise to the search; a reference's definition shows nothing
    parsed = parsed_file(tmp_path / "passwords.md", "# Passwords\n\n## Service [accounts](#service)\n\nFollow the "
                         "[NCSC guidance](https://www.ncsc.gov.uk/guidance/passwords_(2018) \"NCSC\") when you "
                         "administer systems ([C6][owasp]); ask <mailto:security@example.org>. ![Lock](lock.png)\n\n"
                         "[owasp]: https://owasp.org/controls\n\nSee \\[OJ C 227\\].\n\nContact the [IT Service\n"
                         "Desk](mailto:it@example.org) or [see\n\nthis](x).\n")
    sections = {b.section_path: parsed.text[b.start:b.end] for b in parsed.blocks}
    # a link's text wrapped over a line's end, as a page is wrapped at 80 columns, is one link; not over a blank line
    assert sections["Service accounts"] == (
        "Follow the NCSC guidance when you administer systems (C6); ask mailto:security@example.org. Lock\n\n"
        "See [OJ C 227].\n\nContact the IT Service\nDesk or [see\n\nthis](x).")


def test_markdown_html_tables_are_read_as_tables(tmp_path: Path) -> None:
    """An HTML table in Markdown (as GitHub renders one) is a Markdown table of its cells' text, its header the
    first row where that row is bold or <th>; no tag is read as the document's text."""
    parsed = parsed_file(tmp_path / "retention.md", "# Retention policy\n\n## 3. Periods\n\nData is kept as "
                         "follows:\n\n<table>\n  <tr>\n   <td><strong>Data</strong></td>\n   <td><strong>Retention "
                         "period</strong></td>\n  </tr>\n  <tr>\n   <td>Client logs &amp; audit trails</td>\n   <td>\n"
                         "   90 days after\n   collection\n   </td>\n  </tr>\n</table>\n\n## 4. Severity\n\n<TABLE><tr>"
                         "<td>Critical</td><td>Outage for &gt;50% of users | all regions</td></tr></TABLE>\n")
    sections = _sections(parsed)
    assert sections["3"] == ("Data is kept as follows:\n\n| Data | Retention period |\n|---|---|\n"
                             "| Client logs & audit trails | 90 days after collection |")
    assert sections["4"] == "|  |  |\n|---|---|\n| Critical | Outage for >50% of users \\| all regions |"
    assert "<" not in parsed.text.replace(">50%", "")


def test_markdown_front_matter_is_no_text_and_its_html_reads_as_rendered(tmp_path: Path) -> None:
    """A page as Jekyll serves it (GSA's Section508.gov, OpenSSF's baseline): its front matter is metadata whose title
    names the page; an HTML heading set in the Markdown is a heading, an HTML list's items are items, inline tags
    are only their text, a script or a button is not read; code keeps its tags. A leading rule with prose under it
    is no front matter."""
    parsed = parsed_file(tmp_path / "request.md", "---\nlayout: page\ntitle: 'Request Accessibility Information'"
                         "\naudience:\n- Buyers\n---\n\nIntro text for buyers.\n\n<ul style=\"x\">\n  <li>\n"
                         "    <a href=\"#0\">Required items</a>\n  </li>\n</ul>\n\n<h2 id=\"0\">\n  <strong><em>"
                         "Required </em></strong><strong>for Standard ICT Items</strong>\n</h2>\n\nA written ACR "
                         "based on the Template (<sup>&trade;</sup>) must be complete.<br>It is checked.\n\n"
                         "<script>\nlet top = 1;\n</script>\n<button onclick=\"toTop()\">to top</button>\n\n"
                         "Use `<b>` for bold.\n")
    assert parsed.title == "Request Accessibility Information"
    assert "layout" not in parsed.text and "let top" not in parsed.text and "to top" not in parsed.text
    sections = {b.section_path: parsed.text[b.start:b.end] for b in parsed.blocks}
    assert sections["Required for Standard ICT Items"] == ("A written ACR based on the Template (\u2122) must "
                                                                    "be complete.\nIt is checked.\n\nUse <b> for bold.")
    assert "* Required items" in parsed.text
    ruled = parsed_file(tmp_path / "notes.md", "---\nThis page has no settings, only prose.\n---\n\n# Notes\n")
    assert "only prose" in ruled.text


def test_markdown_emphasis_wrapped_over_a_line_reads_as_its_text(tmp_path: Path) -> None:
    """Bold or italic text that runs over a line's end within its paragraph, as a page wrapped at 80 columns has it,
    reads as the page shows it (a quote had kept "**equal to or less than the government\nmaximum ...**"); markers
    with a blank line between them are no pair."""
    parsed = parsed_file(tmp_path / "travel.md", "# Travel\n\n## Lodging\n\nPick a hotel with a nightly rate **equal "
                         "to or less than the government\nmaximum** for the area. It is _identical to\nproduction_.\n\n"
                         "A lone ** marker\n\nand ** another.\n")
    assert {b.section_path: parsed.text[b.start:b.end] for b in parsed.blocks}["Lodging"] == (
        "Pick a hotel with a nightly rate equal to or less than the government\nmaximum for the area. It is identical "
        "to\nproduction.\n\nA lone ** marker\n\nand ** another.")


def test_a_static_site_pages_template_tags_read_as_the_page_shows_them(tmp_path: Path) -> None:
    """A page of a site that Eleventy, Jekyll or Hugo builds (GSA's TTS handbook, GitHub's site policy): its Liquid
    tags and Hugo shortcodes are filled in before the Markdown is rendered. A tag in a link's address goes with the
    address, a tag of the text shows its quoted argument or the name of the value it gives, and an include, a
    picture, a block's tags and a comment show nothing; raw text is kept. A page without front matter is Markdown
    as it is written, braces and all."""
    parsed = parsed_file(tmp_path / "security-incidents.md", "---\ntitle: Security incidents\n---\n\n## Reporting\n\n"
                         "{% include \"low-system.html\"\n  step=2 %}\nReport it in {% slack_channel \"incident\" %} "
                         "within 1 hour, or use [Self\nService]({% page \"/tools/#self-service\" %}) and [the form]("
                         "{{< relref \"form.md\" >}}).\n\n{% alert %}\nDo not turn off your computer.\n{% endalert %}"
                         "\n\n{% image \"assets/lock.png\" \"A padlock\" %}\n{% comment %}draft: 4 hours?"
                         "{% endcomment %}Contact {% data variables.contact.contact_support %}. {{ page.owner }}\n\n"
                         "{% raw %}Write {{ name }} in a template.{% endraw %}\n")
    assert {b.section_path: parsed.text[b.start:b.end] for b in parsed.blocks}["Reporting"] == (
        "Report it in incident within 1 hour, or use Self\nService and the form.\n\nDo not turn off your computer."
        "\n\nContact contact support.\n\nWrite {{ name }} in a template.")
    plain = parsed_file(tmp_path / "helm.md", "# Values\n\nSet {{ .Values.image }} and {% raw %} as you need.\n")
    assert "{{ .Values.image }} and {% raw %}" in plain.text


def test_docx_headings(tmp_path: Path) -> None:
    path = write_docx(tmp_path / "std.docx")
    parsed = parse(path, path.read_bytes())
    assert parsed.title == "Access Control Standard"
    assert "every quarter" in _sections(parsed)["3.1"]


def test_docx_table_stays_in_its_section(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading("4.1 Retention periods", level=2)
    document.add_paragraph("Records must be kept for the periods in this table.")
    table = document.add_table(rows=2, cols=2)
    for (row, col), text in {(0, 0): "Record", (0, 1): "Period", (1, 0): "Invoices", (1, 1): "six years"}.items():
        table.cell(row, col).text = text
    document.add_heading("4.2 Disposal", level=2)
    document.add_paragraph("Paper records must be shredded.")
    document.save(tmp_path / "policy.docx")
    parsed = parse(tmp_path / "policy.docx", (tmp_path / "policy.docx").read_bytes())
    # the table under the heading it stands under (it was filed under the document's last one, "4.2 Disposal")
    assert "Invoices | six years" in _sections(parsed)["4.1"]
    assert _sections(parsed)["4.2"] == "Paper records must be shredded."


def _word_list(document, levels: list[tuple[str, str]]) -> int:
    """A list defined in the document's numbering part, its levels (numFmt, lvlText), as Word writes one."""
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls, qn

    root = document.part.numbering_part.element
    abstract = 90 + len(root.findall(qn("w:abstractNum")))
    levels_xml = "".join(f'<w:lvl w:ilvl="{i}"><w:start w:val="1"/><w:numFmt w:val="{fmt}"/>'
                         f'<w:lvlText w:val="{text}"/></w:lvl>' for i, (fmt, text) in enumerate(levels))
    root.insert(0, parse_xml(f'<w:abstractNum {nsdecls("w")} w:abstractNumId="{abstract}">{levels_xml}'
                             '</w:abstractNum>'))
    root.append(parse_xml(f'<w:num {nsdecls("w")} w:numId="{900 + abstract}"><w:abstractNumId w:val="{abstract}"/>'
                          '</w:num>'))
    return 900 + abstract


def _numbered(paragraph, list_id: int, level: int = 0):
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls

    paragraph._p.get_or_add_pPr().append(parse_xml(
        f'<w:numPr {nsdecls("w")}><w:ilvl w:val="{level}"/><w:numId w:val="{list_id}"/></w:numPr>'))
    return paragraph


def test_docx_numbers_word_draws_are_in_the_text(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    heads = _word_list(document, [("decimal", "%1"), ("decimal", "%1.%2")])
    points = _word_list(document, [("lowerLetter", "(%1)"), ("lowerRoman", "(%2)")])
    _numbered(document.add_heading("Records", level=1), heads)
    _numbered(document.add_heading("Retention periods", level=2), heads, 1)
    document.add_paragraph("A firm must:")
    for text in ("keep transaction records for six years;", "keep complaint records for three years; and",
                 "destroy them securely."):
        _numbered(document.add_paragraph(text), points)
    _numbered(document.add_heading("Disposal", level=2), heads, 1)
    document.add_paragraph("Paper records must be shredded.")
    document.add_paragraph("Log the disposal", style="List Number")  # the template's own numbered list
    _numbered(document.add_heading("Access", level=1), heads)
    _numbered(document.add_heading("Reviews", level=2), heads, 1)
    document.add_paragraph("Access must be reviewed every quarter.")
    document.save(tmp_path / "policy.docx")
    parsed = parse(tmp_path / "policy.docx", (tmp_path / "policy.docx").read_bytes())
    sections = _sections(parsed)
    # sections cited by the numbers Word shows (the headings' text holds none), points with their labels under
    # their lead-in, a level restarting the one under it (2.1 after 1.2)
    assert sections["1.1"] == ("A firm must:\n(a) keep transaction records for six years;\n(b) keep complaint "
                               "records for three years; and\n(c) destroy them securely.")
    assert sections["1.2(1)"] == "1. Log the disposal"  # a list's item, however short, is no heading
    assert sections["2.1"] == "Access must be reviewed every quarter."
    assert next(b for b in parsed.blocks if b.section_number == "2.1").section_path == "2 Access > 2.1 Reviews"


def test_docx_bullets_are_points_of_their_lead_in(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    bullets = _word_list(document, [("bullet", "\uf0b7")])  # a Symbol font's private character, as Word writes one
    document.add_heading("3.1.5 Standard Practice Implementation", level=2)
    document.add_paragraph("The Program defines and implements the following procedures:")
    for text in ("Method for detecting Known Vulnerabilities in Supplied Software;", "Governance"):
        _numbered(document.add_paragraph(text), bullets)
    document.save(tmp_path / "spec.docx")
    parsed = parse(tmp_path / "spec.docx", (tmp_path / "spec.docx").read_bytes())
    # each bullet as a browser shows it, a point of the lead-in (a verbless point was a sentence of its own, never
    # quoted with the lead-in), and never a heading however short ("Governance")
    assert _sections(parsed)["3.1.5"] == ("The Program defines and implements the following procedures:\n\n"
                                          "\u2022 Method for detecting Known Vulnerabilities in Supplied Software;"
                                          "\n\n\u2022 Governance")


def test_docx_damaged_numbering_is_read_as_far_as_it_goes(tmp_path: Path) -> None:
    import docx
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls

    document = docx.Document()
    root = document.part.numbering_part.element
    root.insert(0, parse_xml(f'<w:abstractNum {nsdecls("w")} w:abstractNumId="77"><w:lvl w:ilvl="x"><w:start '
                             'w:val="?"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl></w:abstractNum>'))
    root.append(parse_xml(f'<w:num {nsdecls("w")} w:numId="977"><w:abstractNumId w:val="77"/></w:num>'))
    _numbered(document.add_paragraph("Keep records."), 977, 12)  # a level Word does not have
    _numbered(document.add_paragraph("Destroy them."), 977)
    document.save(tmp_path / "d.docx")
    parsed = parse(tmp_path / "d.docx", (tmp_path / "d.docx").read_bytes())
    assert parsed.text == "Keep records.\n\n1. Destroy them."


def test_docx_tracked_changes_read_as_accepted_with_a_warning(tmp_path: Path) -> None:
    """Words inserted with Track Changes on are the policy's words (python-docx's text drops them); deleted and
    hidden ones are not; paragraphs inside content controls (a template's fields) are read, in their place."""
    import docx
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls

    w = nsdecls("w")
    document = docx.Document()
    document.add_heading("4. Access reviews", level=1)
    paragraph = document.add_paragraph("Access must be reviewed ")
    paragraph._p.append(parse_xml(f'<w:ins {w} w:id="1" w:author="A"><w:r><w:t>every quarter</w:t></w:r></w:ins>'))
    paragraph._p.append(parse_xml(f'<w:del {w} w:id="2" w:author="A"><w:r><w:delText>annually</w:delText></w:r>'
                                  '</w:del>'))
    paragraph._p.append(parse_xml(f'<w:r {w}><w:rPr><w:vanish/></w:rPr><w:t>(draft note)</w:t></w:r>'))
    paragraph.add_run(" by the system owner.")
    document.element.body.insert(len(document.element.body) - 1, parse_xml(
        f'<w:sdt {w}><w:sdtPr/><w:sdtContent><w:p><w:r><w:t>Evidence of each review must be kept for two years.'
        '</w:t></w:r></w:p></w:sdtContent></w:sdt>'))
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "Owner"
    table.cell(0, 1).paragraphs[0]._p.append(parse_xml(
        f'<w:ins {w} w:id="3" w:author="A"><w:r><w:t>CISO</w:t></w:r></w:ins>'))
    document.save(tmp_path / "policy.docx")
    parsed = parse(tmp_path / "policy.docx", (tmp_path / "policy.docx").read_bytes())
    assert _sections(parsed)["4"] == ("Access must be reviewed every quarter by the system owner.\n\n"
                                      "Evidence of each review must be kept for two years.\n\nOwner | CISO")
    assert any("tracked changes (2 insertion(s), 1 deletion(s)): read as if every change were accepted" in w
               for w in parsed.warnings)


def _with_footnotes(path: Path, footnotes: str) -> Path:
    """The DOCX at `path` with a footnotes part (python-docx writes none)."""
    import zipfile

    target = path.with_name("notes-" + path.name)
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(target, "w") as out:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "[Content_Types].xml":
                data = data.replace(b"</Types>", b'<Override PartName="/word/footnotes.xml" ContentType="application/'
                                    b'vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/></Types>')
            if item.filename == "word/_rels/document.xml.rels":
                data = data.replace(b"</Relationships>", b'<Relationship Id="rId99" Type="http://schemas.openxmlformats'
                                    b'.org/officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/>'
                                    b'</Relationships>')
            out.writestr(item, data)
        out.writestr("word/footnotes.xml", footnotes)
    return target


def test_docx_footnotes_under_notes_their_marks_in_the_text(tmp_path: Path) -> None:
    import docx
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls

    document = docx.Document()
    document.add_heading("4. Breaches", level=1)
    paragraph = document.add_paragraph("Notify the Commissioner within 72 hours")
    paragraph._p.append(parse_xml(f'<w:r {nsdecls("w")}><w:footnoteReference w:id="2"/></w:r>'))
    paragraph.add_run(" of discovery.")
    document.save(tmp_path / "p.docx")
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    path = _with_footnotes(tmp_path / "p.docx", f'<w:footnotes {w}><w:footnote w:type="separator" w:id="-1"><w:p>'
                           '<w:r><w:separator/></w:r></w:p></w:footnote><w:footnote w:id="2"><w:p><w:r><w:footnoteRef/>'
                           '</w:r><w:r><w:t xml:space="preserve"> Business days exclude public holidays.</w:t></w:r>'
                           '</w:p></w:footnote></w:footnotes>')
    parsed = parse(path, path.read_bytes())
    assert _sections(parsed)["4"] == "Notify the Commissioner within 72 hours (1) of discovery."
    assert next(parsed.text[b.start:b.end] for b in parsed.blocks if b.section_path == "Notes") == \
        "(1) Business days exclude public holidays."
    # a footnotes part that is not XML costs the notes, with a warning, not the document
    broken = _with_footnotes(tmp_path / "p.docx", "<w:footnotes")
    parsed = parse(broken, broken.read_bytes())
    assert "72 hours" in parsed.text and any("footnotes could not be read" in m for m in parsed.warnings)


def test_docx_without_tracked_changes_warns_of_none(tmp_path: Path) -> None:
    path = write_docx(tmp_path / "standard.docx")
    assert not parse(path, path.read_bytes()).warnings


@pytest.mark.parametrize(("n", "fmt", "shown"), [
    (4, "decimal", "4"), (3, "lowerLetter", "c"), (28, "lowerLetter", "bb"), (14, "upperRoman", "XIV"),
    (9, "lowerRoman", "ix"), (7, "decimalZero", "07"),
])
def test_word_number_formats(n: int, fmt: str, shown: str) -> None:
    assert formatted(n, fmt) == shown


def test_html_sections_and_script_dropped(tmp_path: Path) -> None:
    path = tmp_path / "g.html"
    path.write_text("<html><head><title>Guide</title><script>alert(1)</script></head><body>"
                    "<h2>5. Breaches</h2><p>The controller shall notify the Commissioner within 72 hours.</p>"
                    "</body></html>")
    parsed = parse(path, path.read_bytes())
    assert "alert" not in parsed.text
    assert "72 hours" in _sections(parsed)["5"]


_POINT_ROW = ('<table width="100%" border="0"><col width="4%"/><col width="96%"/><tbody><tr><td valign="top">'
              '<p class="oj-normal">{}</p></td><td valign="top"><p class="oj-normal">{}</p></td></tr></tbody></table>')
# an act as EUR-Lex publishes it in HTML: articles in classed paragraphs, each point and recital a table row
_EURLEX = (
    '<html><head><title>Regulation (EU) 2031/77</title></head><body><p class="oj-doc-ti">REGULATION (EU) 2031/77</p>'
    '<p class="oj-normal">Whereas:</p>' + _POINT_ROW.format("(1)", "Widgets can cause harm.")
    + '<p class="oj-normal">HAVE ADOPTED THIS REGULATION:</p>'
    '<p class="oj-ti-art">Article 3</p><p class="oj-sti-art">Designation of a safety officer</p>'
    '<div id="003.001"><p class="oj-normal">1.\u00a0\u00a0\u00a0A manufacturer shall designate a safety officer in '
    'any case where:</p>' + _POINT_ROW.format("(a)", "it places more than 10 000 widgets on the market; or")
    + _POINT_ROW.format("(b)", "its widgets are intended for children.") + '</div>'
    '<div id="003.002"><p class="oj-normal">2.\u00a0\u00a0\u00a0The officer shall report to the board.</p></div>'
    '<hr class="oj-note"/><p class="oj-note">(<a href="#n1">1</a>)\u00a0\u00a0OJ C 155, 30.4.2031, p. 38.</p>'
    '</body></html>')


def test_html_note_and_example_boxes_stay_in_their_section_labelled(tmp_path: Path) -> None:
    """A W3C specification's "Note" box inside a success criterion (the ARIA role "note", its marker a role="heading"
    div) and its "Example" aside, and a MkDocs admonition, belong to the section they stand in, opened by their
    marker ("Note: ..."), so that they read as a note or an example; the sections after them are not filed under
    the footnotes' heading."""
    page = ('<html><body><h1>Guidelines</h1><section><h4>Success Criterion 1.3.3 Sensory Characteristics</h4>'
            '<p>Instructions do not rely solely on sensory characteristics.</p>'
            '<div class="note" role="note"><div role="heading" class="note-title marker" aria-level="5"><span>Note'
            '</span></div><p class="">For requirements related to color, refer to Guideline 1.4.</p></div></section>'
            '<section><h4>5.2.3 Complete processes</h4><p>All web pages in the process conform.</p>'
            '<aside class="example"><div class="marker">Example</div><p>An online store has a series of pages.</p>'
            '</aside></section><section><h4>Success Criterion 1.3.4 Orientation</h4>'
            '<div class="admonition note"><p class="admonition-title">Note</p><p>Essential cases are rare.</p></div>'
            '<p>Content does not restrict its view.</p></section></body></html>')
    parsed = parsed_file(tmp_path / "wcag.html", page)
    sections = {b.section_path: parsed.text[b.start:b.end] for b in parsed.blocks}
    assert sections["Guidelines > Success Criterion 1.3.3 Sensory Characteristics"].endswith(
        "\n\nNote: For requirements related to color, refer to Guideline 1.4.")
    assert sections["Guidelines > 5.2.3 Complete processes"].endswith("Example: An online store has a series of pages.")
    assert sections["Guidelines > Success Criterion 1.3.4 Orientation"] == ("Note: Essential cases are rare.\n\n"
                                                                           "Content does not restrict its view.")
    assert not any("Notes" in path for path in sections)


def test_html_rows_of_links_are_navigation_not_text(tmp_path: Path) -> None:
    """A row of links and separators only (W3C's "Understanding ... | How to Meet ..." under each criterion, a site's
    menu, a breadcrumb) and a <nav> (a specification's table of contents) are the page's navigation; a sentence
    with a link in it, or a single link, is text."""
    page = ('<html><body><nav><ul><li><a href="/">Download</a></li><li><a href="/gh">GitHub</a></li></ul></nav>'
            '<nav id="toc"><h2>Table of Contents</h2><ol><li><a href="#p1">1. Perceivable</a></li></ol></nav>'
            '<div class="menu"><a href="/a">Code of Virginia</a> | <a href="/b">Charters</a></div><h1>Guidelines</h1>'
            '<h4>Success Criterion 1.4.3 Contrast (Minimum)</h4><div class="doclinks">'
            '<a href="u.html">Understanding Contrast (Minimum)</a> <span class="screenreader">|</span> <br>'
            '<a href="q.html">How to Meet Contrast (Minimum)</a></div><p>Text has a contrast ratio of at least 4.5:1.'
            '</p><p>See <a href="#a">Guideline 1.4</a> and <a href="#b">Guideline 1.3</a> for more.</p>'
            '<p><a href="#c">Conformance</a></p></body></html>')
    parsed = parsed_file(tmp_path / "wcag.html", page)
    assert "Understanding" not in parsed.text and "How to Meet" not in parsed.text and "GitHub" not in parsed.text
    assert "Table of Contents" not in parsed.text and "Perceivable" not in parsed.text and "Charters" not in parsed.text
    assert "See Guideline 1.4 and Guideline 1.3 for more." in parsed.text and "Conformance" in parsed.text


def test_html_definition_terms_open_their_descriptions(tmp_path: Path) -> None:
    """A definition list's term and its description are one item (a WCAG criterion's named exceptions, a glossary's
    entries), so a quote of the exception names it; a term without a description stays a line of its own."""
    page = ('<html><body><h4>Success Criterion 1.4.3 Contrast (Minimum)</h4><p>Text has a contrast ratio of at '
            'least 4.5:1, except for the following:</p><dl><dt>Large Text</dt><dd><p>Large-scale text has a contrast '
            'ratio of at least 3:1;</p></dd><dt>Logotypes:</dt><dd>Text that is part of a logo has no contrast '
            'requirement.</dd><dt>Unexplained</dt></dl></body></html>')
    parsed = parsed_file(tmp_path / "wcag.html", page)
    assert "Large Text: Large-scale text has a contrast ratio of at least 3:1;" in parsed.text
    assert "Logotypes: Text that is part of a logo has no contrast requirement." in parsed.text
    assert parsed.text.rstrip().endswith("Unexplained")


def test_html_act_with_bold_section_numbers_and_marginal_notes(tmp_path: Path) -> None:
    """An act as Ontario's e-Laws set it, in paragraphs classed by role (no heading tags for its provisions): a
    section's number in bold opens its first paragraph, its marginal note the short paragraph above; a Part's line
    heads the sections under it; an amendment's citation classed "footnote" among the text is read where it stands,
    and the sections after it are no notes."""
    section = '<p class="headnote">{note}</p><p class="section"><a name="x"></a><b>{n} </b>{text}</p>'
    page = ('<html><body><h1>Health Information Act</h1><p class="partnum">PART I<br>INTERPRETATION</p>'
            + section.format(note="Purposes", n=1, text="The purposes of this Act are set out here.")
            + '<p class="footnote">2016, c. 6, s. 1.</p>'
            + section.format(note="Security", n=12, text="(1) A custodian shall protect personal health information.")
            + '<p class="headnote">Notice to individual</p><p class="subsection">(2) The custodian shall notify the '
              'individual at the first reasonable opportunity.</p>'
            + section.format(note="Retention", n="12.1", text="Records shall be kept for 30 days.")
            + '</body></html>')
    parsed = parsed_file(tmp_path / "phipa.html", page)
    paths = {b.section_path: parsed.text[b.start:b.end] for b in parsed.blocks}
    under = "Health Information Act > Part I INTERPRETATION > "
    assert paths[under + "Section 1 Purposes"].startswith("The purposes of this Act are set out here.")
    assert "Notice to individual\n\n(2) The custodian shall notify" in parsed.text
    assert [b.metadata.get("citation") for b in parsed.blocks if b.section_path == under + "Section 12 Security"] == [
        "Section 12(1)", "Section 12(2)"]
    assert paths[under + "Section 12.1 Retention"] == "Records shall be kept for 30 days."
    assert not any(path.endswith("Notes") or "Notes >" in path for path in paths)


def test_html_act_as_eurlex_publishes_it(tmp_path: Path) -> None:
    path = tmp_path / "act.html"
    path.write_text(_EURLEX, encoding="utf-8")
    parsed = parse(path, path.read_bytes())
    sections = _sections(parsed)
    # the article's paragraphs cited as in the plain-text act, each point on its lead-in's block, on one line with
    # its label (it was one block under no section, "(a)" and its text apart)
    assert ("any case where:\n(a) it places more than 10 000 widgets on the market; or\n(b) its widgets"
            in sections["3(1)"])
    assert "report to the board" in sections["3(2)"]
    assert next(b for b in parsed.blocks if b.section_number == "3(1)").section_path == \
        "Article 3 Designation of a safety officer"
    assert sections["Recital 1"] == "(1) Widgets can cause harm."
    # its footnotes under a heading of their own, not a paragraph (1) of the last article
    assert "OJ C 155" not in sections["3(2)"] and "(1)" not in {b.section_number for b in parsed.blocks}
    assert any(b.section_path == "Notes" and "OJ C 155" in parsed.text[b.start:b.end] for b in parsed.blocks)


# A consolidated text as EUR-Lex serves it: text set straight in divs, each paragraph's number in a span beside it,
# points in grid columns, the consolidation's marks between paragraphs and around a replaced heading
_CONSOLIDATED = (
    '<html><body><div class="eli-subdivision" id="art_4"><p class="title-article-norm">Article 4</p>'
    '<div class="eli-title"><p class="stitle-article-norm"><span><a title="32009L0136"><span>\u25baM2</span></a>'
    '</span> Security of processing<span> \u25c4 </span></p></div>'
    '<div class="norm"><span class="no-parag">1.\u00a0\u00a0</span><div class="norm inline-element">The provider '
    'must take appropriate measures.</div></div>'
    '<p class="modref"><a title="32009L0136: INSERTED">\u25bcM2</a></p>'
    '<div class="norm"><span class="no-parag">1a.\u00a0\u00a0</span><div class="norm inline-element">'
    '<p class="norm inline-element">The measures shall at least:</p>'
    '<div class="grid-container grid-list"><div class="list grid-list-column-1"><span>\u2014 </span></div>'
    '<div class="grid-list-column-2"><div class="list">ensure that personal data can be accessed only by '
    'authorised personnel,</div></div></div></div></div>'
    '<p class="modref">\u25bcB</p><p class="norm">\u2014\u2014\u2014\u2014\u2014</p>'
    '<div class="norm"><span class="no-parag">2.\u00a0\u00a0</span><div class="norm inline-element">The provider '
    'must inform the subscribers of a particular risk.</div></div></div></body></html>')


def test_html_text_set_straight_in_divs_is_read_and_consolidation_marks_are_not(tmp_path: Path) -> None:
    parsed = parsed_file(tmp_path / "eprivacy.html", _CONSOLIDATED)
    sections = _sections(parsed)
    # every paragraph read, with its number (they were all dropped: no <p> around them), under its article's heading
    # (an inserted paragraph "1a." is a paragraph of its own, cited 4(1a), its point with its dash; it went on from
    # the paragraph before, cited 4(1))
    assert sections["4(1)"] == "1. The provider must take appropriate measures."
    assert sections["4(1a)"] == ("1a. The measures shall at least:"
                                 "\n\n\u2014 ensure that personal data can be accessed only by authorised personnel,")
    assert sections["4(2)"] == "2. The provider must inform the subscribers of a particular risk."
    assert next(b for b in parsed.blocks if b.section_number == "4(1)").section_path == \
        "Article 4 Security of processing"
    # the marks of the consolidation and its line for deleted text are no words of the law
    assert not any(mark in parsed.text for mark in ("\u25bc", "\u25ba", "\u25c4", "\u2014\u2014\u2014"))


def test_html_text_beside_blocks_in_a_section_is_a_paragraph(tmp_path: Path) -> None:
    parsed = parsed_file(tmp_path / "policy.html", "<html><body><section><h2>5. Keys</h2>Keys must be rotated "
                         "<b>every year</b>.<p>Old keys are destroyed.</p>Backups are <!-- draft --> encrypted."
                         "</section><div>Contact: security@example.com</div></body></html>")
    assert _sections(parsed)["5"] == ("Keys must be rotated every year.\n\nOld keys are destroyed.\n\n"
                                      "Backups are encrypted.\n\nContact: security@example.com")
    assert "draft" not in parsed.text  # a comment is no text of the page


def test_html_page_titled_by_a_file_name_takes_its_legislation_title(tmp_path: Path) -> None:
    page = ('<html><head><title>L_2022152EN.01000101.xml</title></head><body><div class="eli-main-title">'
            '<p class="oj-doc-ti">REGULATION (EU) 2022/868 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL</p>'
            '<p class="oj-doc-ti">on European data governance (Data Governance Act)</p>'
            '<p class="oj-doc-ti">(Text with EEA relevance)</p></div><p>Article 1</p></body></html>')
    assert parsed_file(tmp_path / "dga.html", page).title == (
        "REGULATION (EU) 2022/868 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL on European data governance (Data "
        "Governance Act)")
    # a file's name and no title block: the first heading names the page; a title of words stands as it is
    assert parsed_file(tmp_path / "p.html", "<html><head><title>policy-v2.htm</title></head><body><h1>Access "
                       "Policy</h1><p>Access is reviewed.</p></body></html>").title == "Access Policy"
    assert parsed_file(tmp_path / "q.html", "<html><head><title>Access Policy v2.1</title></head><body><h1>Scope"
                       "</h1><p>All staff.</p></body></html>").title == "Access Policy v2.1"


def test_html_deleted_text_is_not_read_with_a_warning(tmp_path: Path) -> None:
    parsed = parsed_file(tmp_path / "policy.html", "<html><body><h2>4. Reviews</h2><p>Access must be reviewed "
                         "<del>annually</del> <ins>every quarter</ins> by the owner.</p></body></html>")
    assert _sections(parsed)["4"] == "Access must be reviewed every quarter by the owner."
    assert any("1 passage(s) marked deleted (<del>) not read" in w for w in parsed.warnings)


def test_html_inline_markup_sets_no_space_before_punctuation(tmp_path: Path) -> None:
    path = tmp_path / "p.html"
    path.write_text('<html><body><h2>4. Records</h2><p>Keep the <a href="#d">data</a>, and the <i>log</i>. See the '
                    'Committee (<span class="oj-super">1</span>) and [<b>Annex</b>].</p></body></html>')
    parsed = parse(path, path.read_bytes())
    assert _sections(parsed)["4"] == "Keep the data, and the log. See the Committee (1) and [Annex]."


def test_html_list_items_carry_the_marker_a_browser_shows(tmp_path: Path) -> None:
    path = tmp_path / "policy.html"
    path.write_text("<html><body><h2>3. Access reviews</h2><p>Managers must:</p><ol type='a'><li>review access every "
                    "quarter;</li><li value='4'>remove access within 24 hours; and</li><li>record each review.</li>"
                    "</ol><ol start='2' type='i'><li>Second.</li></ol><h2>4. Passwords</h2><ul><li>Do not reuse "
                    "passwords.</li></ul></body></html>")
    parsed = parse(path, path.read_bytes())
    sections = _sections(parsed)
    # a policy's lettered duties under their lead-in, labelled as shown ("d." for value 4); bullets as shown
    assert sections["3"] == ("Managers must:\n\na. review access every quarter;\n\nd. remove access within 24 hours; "
                             "and\n\ne. record each review.\n\nii. Second.")
    assert sections["4"] == "\u2022 Do not reuse passwords."


def test_html_state_code_pages_are_cited_by_their_sections(tmp_path: Path) -> None:
    # California's code pages open a section with its number alone in an <h6> inside a paragraph that the page never
    # closes ("<p><h6>1798.105.</h6> <p>Title</p>..."): a browser closes the paragraph where the heading begins, so
    # the heading comes before its text. Virginia's set a section's heading as a bold line, not a heading tag.
    sections = _sections(parsed_file(
        tmp_path / "ccpa.html", "<html><body><h2>TITLE 1.81.5</h2><div><p><h6><a href='#'>1798.105.</a></h6> <p>"
        "Consumers' Right to Delete</p><p/><p>(a) A consumer shall have the right to request deletion.</p><p>(b) A "
        "business shall disclose that right.</p></p></div><div><p><h6><a href='#'>1798.106.</a></h6> <p>(a) A business "
        "shall correct inaccurate information.</p></p></div></body></html>"))
    assert sections["1798.105(a)"] == "(a) A consumer shall have the right to request deletion."
    assert sections["1798.105(b)"] == "(b) A business shall disclose that right."
    assert sections["1798.106(a)"] == "(a) A business shall correct inaccurate information."
    parsed = parsed_file(
        tmp_path / "vcdpa.html", "<html><body><h2>Chapter 53. Consumer Data Protection Act.</h2><b>\u00a7 59.1-577. "
        "Personal data rights; consumers.</b><section><p>A. A consumer may invoke the rights at any time.</p></section>"
        "<p><b>Bold emphasis</b></p><b>\u00a7 59.1-578. Data controller responsibilities.</b><section><p>A. A "
        "controller shall limit collection.</p></section></body></html>")
    blocks = {b.section_number: b for b in parsed.blocks}
    assert blocks["59.1-577"].section_path.endswith("\u00a7 59.1-577 Personal data rights; consumers")
    assert "A. A consumer may invoke the rights at any time." in parsed.text[blocks["59.1-577"].start:
                                                                             blocks["59.1-577"].end]
    assert "A. A controller shall limit collection." in parsed.text[blocks["59.1-578"].start:blocks["59.1-578"].end]


def test_html_reads_what_the_page_shows_and_an_xhtml_page_without_warning(tmp_path: Path) -> None:
    # a state code's page: an XML declaration (XHTML), a hidden sign-in form, a heading hidden by the site's class
    parsed = parsed_file(
        tmp_path / "code.html", '<?xml version="1.0" encoding="UTF-8"?><html><body><span class="hidden"><h2>Code Text'
        '</h2></span><div hidden>Username: Password:</div><h2>Title 1.81.5 Consumer Privacy</h2><p style="margin:0; '
        'display: none">CIV Civil Code</p><p>A business shall disclose its practices.</p></body></html>')
    assert parsed.warnings == []
    assert parsed.text == "Title 1.81.5 Consumer Privacy\n\nA business shall disclose its practices."


def test_html_table_rows_that_are_no_points_stay_cells(tmp_path: Path) -> None:
    path = tmp_path / "t.html"
    path.write_text("<html><body><h2>4. Retention</h2><table><tr><th>Record</th><th>Period</th></tr>"
                    "<tr><td>Invoices</td><td>six years</td></tr><tr><td>(a)</td><td></td></tr></table></body></html>")
    parsed = parse(path, path.read_bytes())
    assert "Invoices\n\nsix years" in _sections(parsed)["4"]  # a data table's cells, as before


def test_obliqa_passages_keep_ids(tmp_path: Path) -> None:
    path = write_obliqa(tmp_path / "7.json")
    parsed = parse(path, path.read_bytes(), "obliqa")
    block = next(b for b in parsed.blocks if b.section_number == "1.1.1")
    assert block.metadata == {"ID": "uid-7-2", "DocumentID": 7, "PassageID": "1.1.1"}
    assert block.section_path == "1 GENERAL > 1.1 Record keeping > 1.1.1"


def test_long_passage_becomes_several_chunks_with_same_ids(tmp_path: Path) -> None:
    sentence = "The firm must keep a record of every complaint it receives from a client. "
    path = write_obliqa(tmp_path / "8.json", 8, [("2.1", sentence * 40)])
    parsed = parse(path, path.read_bytes(), "obliqa")
    chunks = chunk_document("doc_y", parsed, max_words=60)
    assert len(chunks) > 1
    assert {c.metadata["ID"] for c in chunks} == {"uid-8-0"}
    sentences = {(s.start, s.end) for s in split_sentences(parsed.text)}
    for chunk in chunks:  # every chunk starts and ends on sentence boundaries
        assert any(s[0] == chunk.char_start for s in sentences)
        assert any(s[1] == chunk.char_end for s in sentences)


@pytest.mark.parametrize("pointer", [
    "Such incident response plan shall address the following areas: its goals and its processes.",  # US regulation
    "These measures shall be proportionate to the risks posed to the network and information systems.",  # EU act
    "They must be kept in a locked cabinet for the whole period of the engagement with the client.",  # a policy
])
def test_a_sentence_that_points_back_never_opens_a_chunk(tmp_path: Path, pointer: str) -> None:
    lead = "Establish a written incident response plan designed to respond to and recover from any security event."
    filler = "The firm must keep a record of every complaint it receives from a client. "
    path = write_obliqa(tmp_path / "9.json", 9, [("3.1", filler * 4 + lead + " " + pointer)])
    parsed = parse(path, path.read_bytes(), "obliqa")
    chunks = chunk_document("doc_p", parsed, max_words=75)
    assert len(chunks) == 2
    assert chunks[1].text.startswith(lead) and chunks[1].text.endswith(pointer)  # the sentence it points at moves
    assert all(not c.text.startswith(pointer[:4]) for c in chunks)
    # ... while a sentence that points at nothing before it opens one where the words fall (a rule, a contract
    # speaking of itself, an expletive "It")
    for i, plain in enumerate(("A regulated entity shall maintain a documented incident response plan for every "
                               "system it runs.", "This MNDA (including the Cover Page) constitutes the entire "
                               "agreement of the parties.", "It is expected that the plan is tested at least once "
                               "in every calendar year by the firm.")):
        path = write_obliqa(tmp_path / f"1{i}.json", 10 + i, [("3.1", filler * 4 + lead + " " + plain)])
        parsed = parse(path, path.read_bytes(), "obliqa")
        assert chunk_document("doc_q", parsed, max_words=75)[1].text == plain


@pytest.mark.parametrize(("text", "expected"), [
    ("Mr. Smith said no. The firm must act.", ["Mr. Smith said no.", "The firm must act."]),
    ("A firm shall:\n(a) keep records; and\n(b) report.", ["A firm shall:\n(a) keep records; and\n(b) report."]),
    ("See e.g. section 4.2. Records must be kept.", ["See e.g. section 4.2.", "Records must be kept."]),
    # an initialism goes on: a contract's currency, a US rule's department, an ADGM rule's country
    ("All Fees are in U.S. Dollars and are exclusive of taxes. Fees are non-refundable.",
     ["All Fees are in U.S. Dollars and are exclusive of taxes.", "Fees are non-refundable."]),
    ("Notify the U.S. Department of Health. Keep a copy.", ["Notify the U.S. Department of Health.", "Keep a copy."]),
    ("Firms in the U.A.E. Financial sector must comply.", ["Firms in the U.A.E. Financial sector must comply."]),
    ("INTRODUCTION\nThis Part applies.", ["INTRODUCTION", "This Part applies."]),
    ("The Person appointed under paragraph 33. values each property. Next.",
     ["The Person appointed under paragraph 33. values each property.", "Next."]),
    ("Rules may make provision\u2014\n(a) specifying the time;\n(b) requiring notice.",
     ["Rules may make provision\u2014\n(a) specifying the time;\n(b) requiring notice."]),
    ("   2. Grant. Each Contributor grants You a perpetual licence to reproduce\n"
     "      and distribute the Work, subject to the conditions of this\n"
     "      License. Those rights end if You fail to comply with the terms of\n"
     "      this License.",
     ["2.", "Grant.", "Each Contributor grants You a perpetual licence to reproduce\n      and distribute the Work, "
      "subject to the conditions of this\n      License.", "Those rights end if You fail to comply with the terms "
      "of\n      this License."]),
    ("The licensee shall keep every notice that the Work carries when it is\n"
     "distributed, including the notices listed in the following clause\n"
     "(a) the copyright notice of the Work in its original wording and form\n"
     "(b) the NOTICE file",
     ["The licensee shall keep every notice that the Work carries when it is\ndistributed, including the notices "
      "listed in the following clause", "(a) the copyright notice of the Work in its original wording and form",
      "(b) the NOTICE file"]),
    ("Retention period\nSix years after the end of the relationship\nReview\nEvery year",
     ["Retention period", "Six years after the end of the relationship", "Review", "Every year"]),
], ids=["abbreviation", "list-continues", "eg-and-number", "initialism-currency", "initialism-department",
        "initialism-country", "heading-line", "lower-case-follows", "em-dash-list", "hard-wrapped",
        "wrapped-then-items", "short-lines-are-not-wrapped"])
def test_sentence_split(text: str, expected: list[str]) -> None:
    assert [text[s.start:s.end] for s in split_sentences(text)] == expected


@pytest.mark.parametrize(("line", "expected"), [
    ("4.2 Retention periods", ("4.2", "Retention periods", 7)),
    ("Part 3 - Conduct", ("3", "Conduct", 1)),
    ("A firm must keep records.", None),
    ("6 years is the minimum.", None),
], ids=["numbered", "part", "sentence", "number-in-sentence"])
def test_heading_detection(line: str, expected) -> None:
    assert heading_of(line) == expected


def _encrypted_pdf(path: Path) -> Path:
    from pypdf import PdfReader, PdfWriter

    plain = write_pdf(path.with_name("plain.pdf"), "<p>Secret text.</p>")
    writer = PdfWriter()
    for page in PdfReader(plain).pages:
        writer.add_page(page)
    writer.encrypt("pw")
    with path.open("wb") as handle:
        writer.write(handle)
    return path


BAD_INPUTS = {
    "empty": ("empty.txt", lambda p: p.write_bytes(b""), "empty"),
    "whitespace-only": ("blank.md", lambda p: p.write_text("  \n\n "), "empty"),
    "corrupt-pdf": ("bad.pdf", lambda p: p.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 20), "PDF"),
    "encrypted-pdf": ("locked.pdf", _encrypted_pdf, "encrypted"),
    "binary-junk": ("junk.txt", lambda p: p.write_bytes(bytes(range(256)) * 50), "binary"),
    "unknown-extension": ("data.xyz", lambda p: p.write_text("hello"), "unknown format"),
    "invalid-obliqa-json": ("broken.json", lambda p: p.write_text("[{\"ID\": 1"), "invalid JSON"),
    "obliqa-wrong-shape": ("shape.json", lambda p: p.write_text("[{\"ID\": \"x\"}]"), "not an ObliQA passage"),
    "corrupt-docx": ("bad.docx", lambda p: p.write_bytes(b"PK\x03\x04 not really a zip"), "DOCX"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS), ids=list(BAD_INPUTS))
def test_bad_input_has_clear_reason(tmp_path: Path, case: str) -> None:
    name, make, reason = BAD_INPUTS[case]
    path = tmp_path / name
    make(path)
    with pytest.raises(IngestError) as info:
        parse(path, path.read_bytes())
    assert reason.lower() in str(info.value).lower()
    assert str(path) in str(info.value)


def _table(rows: int) -> str:
    lines = ["| Severity | Priority | SLA | Definition |", "| --- |:---:| ---:| --- |"]
    lines += [f"| P{i} | Level {i} | {i + 2} days | Vulnerabilities of class {i} that affect the platform and its "
              f"users in ways described in the standard. |" for i in range(rows)]
    return "\n".join(lines)


@pytest.mark.parametrize(("rows", "whole"), [(6, True), (40, False)], ids=["fits", "too-large"])
def test_a_pipe_table_stays_in_one_chunk_with_its_header_when_it_fits(tmp_path: Path, rows: int, whole: bool) -> None:
    """A table up to three chunks' size is one chunk (its rows keep the header that names their cells); a larger
    one is packed row by row, as before."""
    path = tmp_path / "vuln.md"
    path.write_text("# Vulnerability Policy\n\n## SLAs\n\nThe following timelines have been put in place to drive "
                    "resolution of every finding.\n\n" + _table(rows) + "\n\nN/R means not required.\n")
    parsed = parse(path, path.read_bytes())
    chunks = chunk_document("doc_t", parsed, max_words=60)
    holding = [c for c in chunks if "| P" in c.text]
    if whole:
        assert len(holding) == 1 and holding[0].text.startswith("| Severity")
        assert holding[0].text.rstrip().endswith(f"| P{rows - 1} | Level {rows - 1} | {rows + 1} days | "
                                                 "Vulnerabilities of class 5 that affect the platform and its users "
                                                 "in ways described in the standard. |")
    else:
        assert len(holding) > 3 and not holding[-1].text.startswith("| Severity")
    for chunk in chunks:
        assert parsed.text[chunk.char_start:chunk.char_end] == chunk.text


@pytest.mark.parametrize("rows", [4, 40], ids=["fits", "too-large"])
def test_a_table_row_of_several_sentences_is_never_cut(tmp_path: Path, rows: int) -> None:
    """A security standard's requirement rows hold two sentences in a cell ("Verify that ... . If ..., ..."): the
    row is one piece, so every chunk starts at a row's first cell and holds each row it touches whole."""
    lines = ["| # | Description | L1 | CWE |", "| :---: | :--- | :---: | :---: |"]
    lines += [f"| 2.1.{i} | Verify that rule {i} is checked at every login. If the check fails, the application must "
              f"refuse the login and record the attempt. | \u2713 | {500 + i} |" for i in range(rows)]
    path = tmp_path / "asvs.md"
    path.write_text("# V2 Authentication\n\n## V2.1 Password Security\n\n" + "\n".join(lines) + "\n")
    parsed = parse(path, path.read_bytes())
    chunks = [c for c in chunk_document("doc_t", parsed, max_words=60) if "2.1." in c.text]
    assert chunks
    for chunk in chunks:
        assert chunk.text.startswith("| "), chunk.text[:40]
        assert all(line.startswith("| ") and line.endswith("|") for line in chunk.text.strip().split("\n"))
    assert sum(c.text.count("| 2.1.") for c in chunks) == rows


def test_a_paragraph_number_on_its_own_line_stays_with_its_paragraph(tmp_path: Path) -> None:
    """An EU act numbers each paragraph on a line of its own ("4." then a long paragraph): no chunk is the number
    alone or ends with the next paragraph's number; a word alone on a line ("Form.") is no number."""
    long = ("Member States shall ensure that the entities notify the authority of each incident " +
            " ".join(["and of every measure taken in response to it, without undue delay,"] * 5) + " as it occurs.")
    path = tmp_path / "act.txt"
    path.write_text("Article 23\n\nReporting obligations\n\n1.\n\n" + long + "\n\n2.\n\n" + long + "\n\n(a)\n\n"
                    + long + "\n")
    parsed = parse(path, path.read_bytes())
    chunks = chunk_document("doc_t", parsed, max_words=60)
    for chunk in chunks:
        assert len(chunk.text.split()) > 2, chunk.text
        assert not re.search(r"\n\s*(?:\d+\.|\(a\))\s*$", chunk.text), chunk.text[-40:]
    for label in ("1.", "2.", "(a)"):
        assert any(f"{label}\n\nMember States" in c.text for c in chunks), label


_BOXED = """5. Termination
--------------

5.1. The rights granted under this License will terminate automatically.

************************************************************************
*                                                                      *
*  6. Disclaimer of Warranty                                           *
*  -------------------------                                           *
*                                                                      *
*  Covered Software is provided under this License on an "as is"       *
*  basis, without warranty of any kind. The entire risk as to the      *
*  quality of the Covered Software is with You. Should any Covered     *
*  Software prove defective in any respect, You (not any Contributor)  *
*  assume the cost of any necessary servicing, repair, or correction.  *
*                                                                      *
************************************************************************

7. Litigation
-------------

Any litigation relating to this License may be brought only in the courts of a jurisdiction.
"""


def test_a_notice_boxed_in_asterisks_reads_as_the_text_around_it(tmp_path: Path) -> None:
    # a licence's disclaimer as printed (the MPL 2.0 sets sections 6 and 7 so): one bulleted line per printed line
    # and a quote such as "*  Should any Covered Software prove defective in any respect, You     *"
    path = tmp_path / "licence.txt"
    path.write_text(_BOXED)
    parsed = parse(path, path.read_bytes())
    sections = _sections(parsed)
    assert set(sections) >= {"5", "6", "7"}
    assert "*" not in sections["6"] and "Should any Covered Software prove defective" in " ".join(sections["6"].split())
    sentences = [sections["6"][s.start:s.end] for s in split_sentences(sections["6"])]
    assert any(s.startswith("Should any Covered") and s.rstrip().endswith("correction.") for s in sentences)
    # not a box: an edge alone, or lines that an edge does not close, stay as written
    for text in ("****************\nNot framed text.\n", "****************\n*  framed  *\nno closing edge\n"):
        path.write_text(text)
        assert parse(path, path.read_bytes()).text.count("*") == text.count("*")


# A paginated plain-text standard as the RFC Editor prints one: a table of contents with dot leaders, pages ending
# in a footer and a form feed, each later page opening with a running header, a sentence cut by a page break, an
# example whose status line is in capitals, and a page that ends on the example before a page opening on a heading.
_PAGED = ("Network Working Group                                          A. Author\n"
          "Request for Comments: 9999                                    March 2026\n\n"
          "Table of Contents\n\n"
          "   1. Introduction ....................................................2\n"
          "   2. Token Lifetime . . . . . . . . . . . . . . . . . . . . . . . . .  3\n"
          "   Appendix A. Use of application/x-www-form-urlencoded Media Type ...4\n\n"
          "1.  Introduction\n\n   This document specifies tokens.\n\n\n\n"
          "Author                       Standards Track                    [Page 1]\n\f\n"
          "RFC 9999                     Example Tokens                   March 2026\n\n"
          "2.  Token Lifetime\n\n   The server MUST NOT accept a token\n\n\n"
          "Author                       Standards Track                    [Page 2]\n\f\n"
          "RFC 9999                     Example Tokens                   March 2026\n\n"
          "   more than ten minutes after it was issued.\n\n   An example response:\n\n"
          "     HTTP/1.1 200 OK\n     Content-Type: application/json\n\n"
          "Author                       Standards Track                    [Page 3]\n\f\n"
          "RFC 9999                     Example Tokens                   March 2026\n\n"
          "3.  Security Considerations\n\n   Tokens SHOULD be short-lived.\n\n"
          "Author                       Standards Track                    [Page 4]\n\f\n"
          "RFC 9999                     Example Tokens                   March 2026\n\n"
          "4.  References\n\n   None.\n")


def test_a_paginated_text_reads_without_its_page_furniture_and_contents(tmp_path: Path) -> None:
    path = tmp_path / "rfc9999.txt"
    path.write_text(_PAGED)
    parsed = parse(path, path.read_bytes())
    assert "[Page" not in parsed.text and "Example Tokens" not in parsed.text and "\f" not in parsed.text
    assert "...." not in parsed.text and ". . ." not in parsed.text  # the contents name headings and are none
    sections = _sections(parsed)
    assert set(sections) == {"", "1", "2", "3", "4"}
    # the sentence the page break cut reads whole, in its section; the example's status line is no heading
    assert "The server MUST NOT accept a token more than ten minutes after it was issued." in normalize_ws(
        sections["2"])
    assert "HTTP/1.1 200 OK" in sections["2"]
    assert {b.section_path for b in parsed.blocks if b.section_number == "3"} == {"3 Security Considerations"}
    # text with fewer than two page breaks is read as written
    path.write_text("1.  Scope\n\n   Text [Page 1]\n\fMore text.\n")
    assert "[Page 1]" in parse(path, path.read_bytes()).text


# Two runs of letters one space apart, as pypdf sets them where a PDF kerns a word's letters apart (APRA's CPG 229
# and CPG 110, a report's file name), and two words that stay two (a technical manual, a policy, a regulation).
_KERNED = [("Sco pe 1 refers to all direct emissions", "Scope 1 refers to all direct emissions"),
           ("In f ulfilling their obligations", "In fulfilling their obligations"),
           ("Climate-related Finan cial Disclosures", "Climate-related Financial Disclosures"),
           ("APRA i s seeking to ensure", "APRA is seeking to ensure"),
           ("a specific outcome that a n institution wants", "a specific outcome that an institution wants"),
           ("senior management w ith input from the board", "senior management with input from the board"),
           # a word's last letter before a bracket, no point's label; a dictionary's "nd" no word of its own
           ("the ability (as appropriat e) to meet", "the ability (as appropriate) to meet"),
           ("with policies a nd activities to address", "with policies and activities to address")]
_TWO_WORDS = ["direct and in direct emissions", "a rate of 5 per cent", "Corvid Labs employees must",
              "generate a C array that is", "replaces GNOME’s and ROX’s ext/regex fields",
              "as discussed below; and d) APRA", "under point (a) e) the trader shall",
              "the value for der .", "warming of 3˚C or more", "Customer and Users must protect"]


@pytest.mark.parametrize(("wrapped", "text"), [
    # a word hyphenated at a line's end: one word where English has it, else its halves kept apart by the hyphen
    # (EIOPA's "re-performed", the Consumer Rights Directive's "off-premises", APRA's "board-approved", "ICT-related")
    ("Each institu-\ntion must act.", "Each institution must act."),
    ("risk assessment should be re-\nperformed.", "risk assessment should be re-performed."),
    ("distance or off-\npremises contracts", "distance or off-premises contracts"),
    ("a board-\napproved plan", "a board-approved plan"),
    ("its ICT-\nrelated incidents", "its ICT-related incidents"),
])
def test_a_word_hyphenated_at_a_pdf_lines_end_is_read_as_written(wrapped: str, text: str) -> None:
    assert unwrap_pdf(wrapped) == text


@pytest.mark.parametrize(("kerned", "text"), _KERNED)
def test_spaces_inside_a_pdf_word_are_taken_out(kerned: str, text: str) -> None:
    assert spaced_apart(kerned) == text


@pytest.mark.parametrize("text", _TWO_WORDS)
def test_two_words_stay_two(text: str) -> None:
    assert spaced_apart(text) == text


def test_a_line_break_pypdf_sets_inside_a_line_is_taken_out() -> None:
    # (text, x, baseline, type size) as pypdf gives CPG 229's paragraph 5: it breaks the line after "ris", where the
    # next piece goes on along the same baseline to the right
    pieces = [("5. The financial risks of climate change, including transition climate\n", 72.0, 699.9, 11.0),
              ("ris\n", 93.2, 685.7, 11.0),
              ("ks, and liability risks are referred to as climate\n", 105.8, 685.7, 11.0),
              ("7. T\n", 72.0, 576.8, 11.0), ("ransition climate risks include\n", 99.2, 576.8, 11.0),
              ("policy and\n", 93.2, 562.5, 11.0), ("regulatory settings\n", 150.0, 562.5, 11.0),
              ("warming of 3˚C\n", 93.2, 548.4, 11.0), ("or more\n", 180.0, 548.4, 11.0),
              ("investment preferences.\n", 93.2, 534.2, 11.0)]
    assert "".join(t for t, _, _ in joined_on_the_line(pieces)) == (
        "5. The financial risks of climate change, including transition climate\n"
        "risks, and liability risks are referred to as climate\n7. Transition climate risks include\n"
        "policy and regulatory settings\nwarming of 3˚C or more\ninvestment preferences.\n")


def test_pdf_headings_set_in_larger_type_are_sections(tmp_path: Path) -> None:
    # a supervisor's guide heads its numbered paragraphs with words alone, told apart only by their type: a heading
    # in 22 points, one under it in 15, a two-line heading, a figure's caption that is none
    body = "<p>{n}. A prudent institution would {what} at least annually and report the results to its board.</p>"
    html = ("<style>p { font-size: 11pt } .h1 { font-size: 22pt } .h2 { font-size: 15pt } "
            ".cap { font-size: 14pt }</style>"
            "<p class='h1'>Governance</p>" + body.format(n=1, what="review its climate risk appetite")
            + "<p class='h1'>Risk management</p><p class='h2'>Risk identification</p>"
            + body.format(n=2, what="identify economic sectors exposed to climate risks")
            + "<p class='cap'>Figure 2. Climate change financial risks</p>"
            + body.format(n=3, what="test its scenario analysis")
            + "<p class='h2'>Pandemic planning governance,<br>structure and timing</p>"
            + body.format(n=4, what="test its pandemic plan")
            + "<p class='h1'>Part B – Internal Capital Adequacy<br>Assessment Process</p>"
            + body.format(n=5, what="review its capital targets"))
    path = write_pdf(tmp_path / "guide.pdf", html)
    parsed = parse(path, path.read_bytes())
    path_of = {text: b.section_path for b in parsed.blocks for text in [parsed.text[b.start:b.end]]}
    assert next(p for t, p in path_of.items() if "review its climate" in t) == "Governance"
    assert next(p for t, p in path_of.items() if "identify economic" in t) == "Risk management > Risk identification"
    assert next(p for t, p in path_of.items() if "scenario analysis" in t) == "Risk management > Risk identification"
    assert next(p for t, p in path_of.items() if "pandemic plan" in t) == (
        "Risk management > Pandemic planning governance, structure and timing")
    # a heading of two lines, the second in capitals too, is one heading, not two (nor "Part B" replaced)
    assert next(p for t, p in path_of.items() if "capital targets" in t) == (
        "Part B Internal Capital Adequacy Assessment Process")


def test_a_standards_labelled_provisions_are_sections_cited_by_their_labels(tmp_path: Path) -> None:
    # an ETSI-style standard: a clause heading in larger type after a line that ends in lower case (it was read into
    # "WPS Wi-Fi Protected Setup 4 Implementation of the standard"), provisions labelled in their text, each with its
    # notes; a table row that lists the labels states nothing and opens none
    html = ("<style>p { font-size: 10pt } .h { font-size: 16pt } .h2 { font-size: 14pt }</style>"
            "<p class='h'>3 Abbreviations</p><p>WAN Wide Area Network</p><p>WPS Wi-Fi Protected Setup</p>"
            "<p class='h'>4 Implementation of the standard</p><p>The implementation is informed by risk assessment.</p>"
            "<p class='h'>5 Cyber security provisions</p><p class='h2'>5.1 No universal default passwords</p>"
            "<p>Provision 5.1-1 Where passwords are used, all device passwords shall be unique per device.</p>"
            "<p>NOTE 1: Pairing codes are not passwords.</p>"
            "<p>Provision 5.1-2 Pre-installed passwords shall be generated with a mechanism that reduces the risk "
            "of attacks.</p><p class='h'>Annex B (informative): Conformance</p><p>Provision 5.1-1 M C (1)</p>")
    path = write_pdf(tmp_path / "standard.pdf", html)
    parsed = parse(path, path.read_bytes())
    found = {parsed.text[b.start:b.end].split("\n")[0][:29]: (b.section_path, b.metadata.get("citation"))
             for b in parsed.blocks}
    assert found["The implementation is informe"][0] == "4 Implementation of the standard"
    assert found["Provision 5.1-1 Where passwor"] == (
        "5 Cyber security provisions > 5.1 No universal default passwords > Provision 5.1-1", "Provision 5.1-1")
    assert found["Provision 5.1-2 Pre-installed"][1] == "Provision 5.1-2"
    assert "NOTE 1: Pairing codes are not passwords." in next(
        parsed.text[b.start:b.end] for b in parsed.blocks if b.section_number == "5.1-1")
    assert found["Provision 5.1-1 M C (1)"][0].startswith("Annex B")


def test_a_docx_table_of_contents_names_headings_and_is_none(tmp_path: Path) -> None:
    # Word's contents entries ("toc 1", "toc 2" styles: "3.10 Governance<tab>13") were read as numbered headings, so
    # the guide's first sections sat under "Table of Contents > 2 Terms and Definitions 7"
    document = docx.Document()
    for name in ("toc 1", "toc 2"):
        document.styles.add_style(name, WD_STYLE_TYPE.PARAGRAPH)
    document.add_heading("Table of Contents", level=2)
    document.add_paragraph("2 Terms and Definitions\t7", style="toc 1")
    document.add_paragraph("3.10 Governance\t13", style="toc 2")
    document.add_heading("3.10 Governance", level=2)
    document.add_paragraph("The organisation shall assign responsibility for the AI SBOM programme.")
    path = tmp_path / "guide.docx"
    document.save(path)
    parsed = parse(path, path.read_bytes())
    paths = {b.section_path for b in parsed.blocks}
    assert paths == {"Table of Contents", "3.10 Governance"}
    assert "shall assign responsibility" in _sections(parsed)["3.10"]
