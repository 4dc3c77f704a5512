"""OpenDocument text (.odt) as a reader sees it: outline numbers on headings, list labels, tables, notes, tracked
changes read as if accepted; a damaged package refused with what to do."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from engine.errors import IngestError
from engine.ingest.formats import detect_format, parse

_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
       'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
       'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
       'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
       'xmlns:dc="http://purl.org/dc/elements/1.1/"')

# the outline numbering and the lists' styles as LibreOffice writes them (styles.xml and content.xml's automatic ones)
_STYLES = (f'<office:document-styles {_NS}><office:styles><text:outline-style style:name="Outline">'
           '<text:outline-level-style text:level="1" style:num-format="1"/>'
           '<text:outline-level-style text:level="2" style:num-format="1" text:display-levels="2"/>'
           '</text:outline-style></office:styles></office:document-styles>')
_AUTOMATIC = ('<office:automatic-styles><text:list-style style:name="L1">'
              '<text:list-level-style-number text:level="1" style:num-suffix="." style:num-format="a"/>'
              '<text:list-level-style-bullet text:level="2" text:bullet-char="\u2022"/>'
              '</text:list-style></office:automatic-styles>')
_BODY = (
    # a deletion is kept in a region of its own, its place marked in the text; an insertion is in the text
    '<text:tracked-changes><text:changed-region text:id="ct1"><text:deletion><office:change-info>'
    '<dc:creator>A</dc:creator></office:change-info><text:p>annually</text:p></text:deletion></text:changed-region>'
    '</text:tracked-changes>'
    '<text:h text:outline-level="1">Purpose</text:h>'
    '<text:p>This policy sets how records are kept.<office:annotation><text:p>check with legal</text:p>'
    '</office:annotation></text:p>'
    '<text:h text:outline-level="1">Records</text:h>'
    '<text:h text:outline-level="2">Retention periods</text:h>'
    '<text:p>Managers must:</text:p>'
    '<text:list text:style-name="L1">'
    '<text:list-item><text:p>review access <text:change text:change-id="ct1"/>every<text:s/>quarter;</text:p>'
    '</text:list-item>'
    '<text:list-item><text:p>keep transaction records for six years<text:note text:id="ftn1" '
    'text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>Six years from the '
    'end of the relationship.</text:p></text:note-body></text:note>; and</text:p>'
    '<text:list><text:list-item><text:p>invoices included.</text:p></text:list-item></text:list></text:list-item>'
    '<text:list-item><text:p>record each review.</text:p></text:list-item></text:list>'
    '<table:table><table:table-row><table:table-cell><text:p>Record</text:p></table:table-cell><table:table-cell>'
    '<text:p>Period</text:p></table:table-cell></table:table-row><table:table-row><table:table-cell><text:p>Access '
    'logs</text:p></table:table-cell><table:table-cell><text:p>2 years</text:p></table:table-cell></table:table-row>'
    '</table:table>')


def _odt(path: Path, body: str = _BODY, *, title: str = "Records Policy") -> Path:
    with zipfile.ZipFile(path, "w") as package:
        package.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text")
        package.writestr("META-INF/manifest.xml", '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:'
                                                  'opendocument:xmlns:manifest:1.0"/>')
        package.writestr("content.xml", f'<office:document-content {_NS}>{_AUTOMATIC}<office:body><office:text>'
                                        f'{body}</office:text></office:body></office:document-content>')
        package.writestr("styles.xml", _STYLES)
        package.writestr("meta.xml", f'<office:document-meta {_NS}><office:meta><dc:title>{title}</dc:title>'
                                     '</office:meta></office:document-meta>')
    return path


def test_odt_reads_as_a_reader_sees_it(tmp_path: Path) -> None:
    path = _odt(tmp_path / "records.odt")
    parsed = parse(path, path.read_bytes())
    assert (parsed.format, parsed.title) == ("odt", "Records Policy")
    sections = {b.section_number: parsed.text[b.start:b.end] for b in parsed.blocks}
    # the outline style's numbers on the headings ("2.1"), the list style's labels on its items, the nested bullet
    block = next(b for b in parsed.blocks if b.section_number == "2.1")
    assert block.section_path == "2 Records > 2.1 Retention periods"
    assert sections["2.1"].startswith("Managers must:\n\na. review access every quarter;\n\nb. keep transaction "
                                      "records for six years (1); and\n\n\u2022 invoices included.\n\nc. record")
    assert "Record | Period\n\nAccess logs | 2 years" in sections["2.1"]
    assert sections["1"] == "This policy sets how records are kept."  # the comment is no text of the policy
    assert "annually" not in parsed.text  # deleted with changes tracked: read as if accepted, with a warning
    assert any("tracked changes (1 change(s))" in w for w in parsed.warnings)
    assert next(parsed.text[b.start:b.end] for b in parsed.blocks if b.section_path == "Notes") == \
        "(1) Six years from the end of the relationship."


def test_odt_is_recognised_without_its_extension(tmp_path: Path) -> None:
    path = _odt(tmp_path / "records.odt")
    assert detect_format(Path("records"), path.read_bytes()) == "odt"


@pytest.mark.parametrize(("content", "message"), [
    (b"PK\x03\x04 not a zip at all", "not a readable OpenDocument text"),
    (None, "no content.xml"),
], ids=["not-a-zip", "no-content"])
def test_a_damaged_odt_is_refused_saying_what_to_do(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "broken.odt"
    if content is None:
        with zipfile.ZipFile(path, "w") as package:
            package.writestr("mimetype", "application/vnd.oasis.opendocument.text")
    else:
        path.write_bytes(content)
    with pytest.raises(IngestError, match=f"{message}.*LibreOffice"):
        parse(path, path.read_bytes())


def test_a_list_that_continues_numbering_counts_on(tmp_path: Path) -> None:
    body = ('<text:h text:outline-level="1">Duties</text:h><text:list text:style-name="L1"><text:list-item><text:p>'
            'Log each incident.</text:p></text:list-item></text:list><text:p>Where the incident is serious:</text:p>'
            '<text:list text:style-name="L1" text:continue-numbering="true"><text:list-item><text:p>notify the '
            'regulator.</text:p></text:list-item></text:list><text:list text:style-name="L1"><text:list-item><text:p>'
            'A new list.</text:p></text:list-item></text:list>')
    path = _odt(tmp_path / "duties.odt", body)
    parsed = parse(path, path.read_bytes())
    assert parsed.text.endswith("1 Duties\n\na. Log each incident.\n\nWhere the incident is serious:\n\n"
                                "b. notify the regulator.\n\na. A new list.")
