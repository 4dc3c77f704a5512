"""OSCAL catalogs as documents: a control per section, cited by its id, with parameters, items,
guidance as non-binding discussion, and withdrawn controls marked; other JSON shapes refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from engine.errors import IngestError
from engine.ingest.formats import parse
from engine.ingest.oscal import _withdrawal
from tests.conftest import ROOT

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
    path = tmp_path / name
    path.write_text(text)
    return parse(path, path.read_bytes())


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
    ("catalog.xml", '<?xml version="1.0"?><catalog xmlns="http://csrc.nist.gov/ns/oscal/1.0"/>', "convert it to JSON"),
], ids=["unresolved-profile", "other-object", "empty-list", "xml"])
def test_other_shapes_are_refused_by_name(tmp_path: Path, name: str, text: str, message: str) -> None:
    with pytest.raises(IngestError, match=message):
        _parsed(tmp_path, name, text)


def test_a_control_withdrawn_to_two_places_says_both_in_one_clause() -> None:
    control = {"links": [{"href": "#xa-2", "rel": "incorporated-into"}, {"href": "#xb-1", "rel": "moved-to"},
                         {"href": "#ref-1", "rel": "reference"}]}
    assert _withdrawal(control, {"xa-2": "XA-2", "xb-1": "XB-1"}) == \
        "This control is withdrawn: incorporated into XA-2 and moved to XB-1."
    assert _withdrawal({}, {}) == "This control is withdrawn."
