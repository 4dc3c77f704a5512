"""OSCAL catalogs as documents: a control per section, cited by its id, with parameters, items,
guidance as non-binding discussion, and withdrawn controls marked; other JSON shapes refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from agents.quotes import non_binding
from engine.errors import IngestError
from engine.ingest.formats import parse
from engine.ingest.oscal import _withdrawal
from tests.conftest import ROOT
from tests.helpers import parsed_file

CATALOG = {"catalog": {
    "uuid": "00000000-0000-4000-8000-000000000000",
    "metadata": {"title": "Example Catalog", "last-modified": "2026-01-01T00:00:00Z", "version": "1",
                 "oscal-version": "1.1.2"},
    "groups": [{"id": "xa", "class": "family", "title": "Access Control", "controls": [
        {"id": "xa-2", "title": "Account Management", "props": [{"name": "label", "value": "XA-2"}],
         "params": [{"id": "xa-2_prm_1", "label": "organization-defined time period"},
                    {"id": "xa-2_prm_2", "select": {"how-many": "one-or-more", "choice": ["daily", "weekly"]}}],
         "parts": [
             {"id": "xa-2_smt", "name": "statement", "parts": [
                 {"id": "xa-2_smt.a", "name": "item", "props": [{"name": "label", "value": "a."}],
                  "prose": "Disable accounts within {{ insert: param, xa-2_prm_1 }} when the accounts have expired;"},
                 {"id": "xa-2_smt.b", "name": "item", "props": [{"name": "label", "value": "b."}],
                  "prose": "Review accounts {{ insert: param, xa-2_prm_2 }} for compliance."}]},
             {"id": "xa-2_gdn", "name": "guidance",
              "prose": "Examples of account types include individual, shared and guest accounts."}],
         "controls": [{"id": "xa-2.1", "title": "Automated Account Management",
                       "props": [{"name": "label", "value": "XA-2(1)"}],
                       "parts": [{"id": "xa-2.1_smt", "name": "statement",
                                  "prose": "Support the management of system accounts using automated mechanisms."}]},
                      {"id": "xa-2.2", "title": "Removal of Temporary Accounts",
                       "props": [{"name": "label", "value": "XA-2(2)"}, {"name": "status", "value": "withdrawn"}],
                       "links": [{"href": "#xa-2", "rel": "incorporated-into"},
                                 {"href": "#xa-2.1", "rel": "incorporated-into"},
                                 {"href": "#ref-1", "rel": "reference"}]}]},
    ]}],
}}


def _parsed(tmp_path: Path, name: str, text: str):
    return parsed_file(tmp_path / name, text)


@pytest.mark.parametrize("name", ["catalog.json", "catalog.yaml"], ids=["json", "yaml"])
def test_a_catalog_is_a_section_per_control(tmp_path: Path, name: str) -> None:
    text = json.dumps(CATALOG) if name.endswith("json") else yaml.safe_dump(CATALOG)
    parsed = _parsed(tmp_path, name, text)
    assert parsed.format == "oscal" and parsed.title == "Example Catalog"
    cited = {b.metadata.get("citation"): parsed.text[b.start:b.end] for b in parsed.blocks}
    assert "a. Disable accounts within [Assignment: organization-defined time period] when" in cited["XA-2"]
    assert "b. Review accounts [Selection (one or more): daily; weekly] for compliance." in cited["XA-2"]
    assert "Discussion: Examples of account types include" in cited["XA-2"]
    assert cited["XA-2(1)"].startswith("Support the management of system accounts")
    # withdrawn, and where its text went as its links say, by the controls' labels (a reference link is no such place)
    assert "This control is withdrawn: incorporated into XA-2, XA-2(1)." in cited["XA-2(2)"]
    assert "XA-2(2) Removal of Temporary Accounts (withdrawn)" in parsed.text


# CATALOG in OSCAL's XML form: markup prose, parameters inserted by reference, a list in the guidance
CATALOG_XML = """<?xml version="1.0" encoding="UTF-8"?>
<catalog xmlns="http://csrc.nist.gov/ns/oscal/1.0" uuid="00000000-0000-4000-8000-000000000000">
<metadata><title>Example Catalog</title><last-modified>2026-01-01T00:00:00Z</last-modified><version>1</version>
<oscal-version>1.1.2</oscal-version></metadata>
<group id="xa" class="family"><title>Access Control</title>
<control id="xa-2"><title>Account Management</title>
<param id="xa-2_prm_1"><label>organization-defined time period</label></param>
<param id="xa-2_prm_2"><select how-many="one-or-more"><choice>daily</choice><choice>weekly</choice></select></param>
<prop name="label" value="XA-2"/>
<part id="xa-2_smt" name="statement">
<part id="xa-2_smt.a" name="item"><prop name="label" value="a."/><p>Disable accounts within
 <insert type="param" id-ref="xa-2_prm_1"/> when the accounts have expired;</p></part>
<part id="xa-2_smt.b" name="item"><prop name="label" value="b."/><p>Review accounts
 <insert type="param" id-ref="xa-2_prm_2"/> for compliance.</p></part></part>
<part id="xa-2_gdn" name="guidance"><p>Examples of account types include <em>individual</em>, shared and guest
 accounts.</p></part>
<control id="xa-2.1"><title>Automated Account Management</title><prop name="label" value="XA-2(1)"/>
<part id="xa-2.1_smt" name="statement"><p>Support the management of system accounts using automated
 mechanisms.</p></part></control>
<control id="xa-2.2"><title>Removal of Temporary Accounts</title><prop name="label" value="XA-2(2)"/>
<prop name="status" value="withdrawn"/><link href="#xa-2" rel="incorporated-into"/>
<link href="#xa-2.1" rel="incorporated-into"/><link href="#ref-1" rel="reference"/></control>
</control></group></catalog>
"""


def test_a_catalog_in_xml_reads_as_its_json_form(tmp_path: Path) -> None:
    xml, as_json = _parsed(tmp_path, "catalog.xml", CATALOG_XML), _parsed(tmp_path, "c.json", json.dumps(CATALOG))
    assert xml.text == as_json.text and xml.title == "Example Catalog" and xml.format == "oscal"
    assert [(b.section_path, b.metadata) for b in xml.blocks] == [(b.section_path, b.metadata) for b in as_json.blocks]


def test_the_shipped_catalog_fixture_cites_every_control(tmp_path: Path) -> None:
    path = ROOT / "bench" / "corpora" / "controls" / "oscal" / "ism-subset_catalog.json"
    parsed = parse(path, path.read_bytes())
    controls = [c["id"] for c in _walk(json.loads(path.read_text())["catalog"])]
    assert {b.metadata.get("citation") for b in parsed.blocks} >= {c.upper() for c in controls}


def _walk(node: dict):
    for control in node.get("controls") or []:
        yield control
        yield from _walk(control)
    for group in node.get("groups") or []:
        yield from _walk(group)


@pytest.mark.parametrize(("name", "text", "message"), [
    ("profile.json", json.dumps({"profile": {"imports": []}}), "not resolved"),
    ("other.json", json.dumps({"components": []}), "not an OSCAL catalog"),
    ("list.json", "[]", "OSCAL catalog"),
    ("profile.xml", '<?xml version="1.0"?><profile xmlns="http://csrc.nist.gov/ns/oscal/1.0"/>', "not resolved"),
], ids=["unresolved-profile", "other-object", "empty-list", "xml-profile"])
def test_other_shapes_are_refused_by_name(tmp_path: Path, name: str, text: str, message: str) -> None:
    with pytest.raises(IngestError, match=message):
        _parsed(tmp_path, name, text)


def test_a_control_withdrawn_to_two_places_says_both_in_one_clause() -> None:
    control = {"links": [{"href": "#xa-2", "rel": "incorporated-into"}, {"href": "#xb-1", "rel": "moved-to"},
                         {"href": "#ref-1", "rel": "reference"}]}
    assert _withdrawal(control, {"xa-2": "XA-2", "xb-1": "XB-1"}) == \
        "This control is withdrawn: incorporated into XA-2 and moved to XB-1."
    assert _withdrawal({}, {}) == "This control is withdrawn."


def test_markdown_prose_reads_as_its_text(tmp_path: Path) -> None:
    """OSCAL's JSON prose is Markdown: an escaped mark is the mark, and a heading inside a group's overview is a line
    of it, not a section that takes the overview's text away from it; the overview stands under a heading that
    says it is commentary, beside the group's controls."""
    catalog = {"catalog": {"uuid": "0", "metadata": {"title": "C"}, "groups": [{"id": "g", "title": "Guidelines",
                                                                             "parts": [
        {"name": "overview", "prose": "# Further information\n\nSee CISA\u2019s Cybersecurity \\& Infrastructure page, "
                                      "\u2018current as at \\[date\\]\u2019."}], "controls": [
        {"id": "c-1", "title": "Reviews", "parts": [{"name": "statement", "prose": "Review the plan yearly."}]}]}]}}
    parsed = _parsed(tmp_path, "c.json", json.dumps(catalog))
    assert "Cybersecurity & Infrastructure page, \u2018current as at [date]\u2019." in parsed.text
    assert {b.section_path for b in parsed.blocks} == {"Guidelines > Overview (commentary)", "Guidelines > C-1 Reviews"}


def test_a_groups_overview_is_commentary_and_a_title_restating_the_id_is_left_out(tmp_path: Path) -> None:
    """The ISM's resolved catalogues: each topic group's overview is non-binding commentary on its controls (as a
    control's discussion is: binding text answers first), read apart from the controls' statements; each control is
    titled "Control: ism-1820", which its heading's label already says."""
    catalog = {"catalog": {"uuid": "0", "metadata": {"title": "ISM"}, "groups": [{"title": "Cable colours", "parts": [
        {"name": "overview", "prose": "To avoid confusion, a consistent cable colour is used."}], "controls": [
        {"id": "ism-1820", "title": "Control: ism-1820", "parts": [
            {"name": "statement", "prose": "Cables for individual systems use a consistent colour."}]}]}]}}
    parsed = _parsed(tmp_path, "c.json", json.dumps(catalog))
    paths = {b.section_path: parsed.text[b.start:b.end].strip() for b in parsed.blocks}
    assert paths == {"Cable colours > Overview (commentary)": "To avoid confusion, a consistent cable colour is used.",
                     "Cable colours > ISM-1820": "Cables for individual systems use a consistent colour."}
    overview = next(b for b in parsed.blocks if b.section_path.endswith("(commentary)"))
    assert non_binding({"section_path": overview.section_path, "section_heading": overview.section_heading}) == (
        "discussion")


def test_a_choice_that_inserts_a_parameter_shows_that_parameter(tmp_path: Path) -> None:
    control = {"id": "xb-1", "title": "Policy", "params": [
        {"id": "xb-1_prm_1", "label": "organization-defined personnel or roles"},
        {"id": "xb-1_prm_2", "select": {"how-many": "one-or-more", "choice": ["organization-level",
                                                                              "{{ insert: param, xb-1_prm_1 }}"]}}],
        "parts": [{"name": "statement", "prose": "Disseminate the policy to {{ insert: param, xb-1_prm_2 }}."}]}
    catalog = {"catalog": {"uuid": "0", "metadata": {"title": "C"}, "controls": [control]}}
    parsed = _parsed(tmp_path, "c.json", json.dumps(catalog))
    assert ("Disseminate the policy to [Selection (one or more): organization-level; [Assignment: organization-defined "
            "personnel or roles]].") in parsed.text
