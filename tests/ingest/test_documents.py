"""Ingest choices a user sees (source type, title on re-ingest), document sections and id prefixes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.cli.main import app
from engine.errors import InputError
from engine.ingest.files import infer_source_type
from engine.ingest.pipeline import ingest_paths
from engine.search import store
from tests.helpers import DATA, RETENTION_MD

runner = CliRunner()
LEGAL = DATA / "legal"
NEUTRAL = "4.2 Retention periods\n\nA firm must retain records for six years.\n"


@pytest.fixture()
def cli_env(conn, settings, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    monkeypatch.setenv("EVIDENCE_HOME", str(settings.home))
    monkeypatch.delenv("EVIDENCE_SOURCE_TYPE", raising=False)
    return settings


@pytest.mark.parametrize(("name", "title", "expected"), [
    ("data-protection-act-2023.md", "", "statute"),
    ("notes.md", "Harbor Point Records Retention Policy", "policy"),
    ("LICENSE", "Apache License", "contract"),
    ("eu-client-data-regulation.txt", "", "regulation"),
    ("client-assessment-rules.md", "", "regulation"),
    ("iso-style-records-standard.txt", "", "standard"),
], ids=["act", "policy-title", "licence", "regulation", "rules", "standard"])
def test_source_type_inferred_from_name_or_title(name: str, title: str, expected: str) -> None:
    found = infer_source_type(Path(name), title)
    assert found is not None and found[0] == expected


def test_nothing_to_infer_from_is_none() -> None:
    assert infer_source_type(Path("notes.txt"), "Retention periods") is None


@pytest.mark.parametrize(("fmt", "expected"), [("xml:ecfr", "regulation"), ("xml:uslm", "statute"),
                                               ("obliqa", "regulation"), ("xml:akn", None), ("md", None)])
def test_a_format_that_says_what_it_holds(fmt: str, expected: str | None) -> None:
    found = infer_source_type(Path("part-164.xml"), "PART 164\u2014SECURITY AND PRIVACY", fmt)
    assert (found[0] if found else None) == expected


def test_ingest_prints_how_the_type_was_inferred(cli_env, tmp_path: Path) -> None:
    path = tmp_path / "records-policy.txt"
    path.write_text(NEUTRAL)
    result = runner.invoke(app, ["ingest", str(path)])
    assert result.exit_code == 0, result.output
    assert "source type 'policy' inferred from the word 'policy' in the file name" in result.stderr
    assert "(1 chunks, policy)" in result.stderr


def test_ingest_refuses_a_file_whose_type_cannot_be_told(cli_env, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text(NEUTRAL)
    result = runner.invoke(app, ["ingest", str(path)])
    assert result.exit_code == 3
    assert "source type is not given" in result.stderr and "--source-type" in result.stderr
    assert runner.invoke(app, ["ingest", str(path), "--source-type", "guidance"]).exit_code == 0


def test_configured_source_type_is_used(cli_env, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("EVIDENCE_SOURCE_TYPE", "contract")
    path = tmp_path / "notes.txt"
    path.write_text(NEUTRAL)
    result = runner.invoke(app, ["ingest", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["files"][0]["source_type"] == "contract"


def test_reingest_keeps_stored_title_and_type_unless_given(conn, embedder, settings, tmp_path: Path) -> None:
    path = tmp_path / "reg.md"
    path.write_text(RETENTION_MD)
    ingest_paths(conn, embedder, settings, [path], source_type="statute", title="Retention Act (consolidated)")
    path.write_text(RETENTION_MD.replace("six years", "seven years"))
    v2 = ingest_paths(conn, embedder, settings, [path]).files[0]
    assert (v2.status, v2.title, v2.source_type) == ("new_version", "Retention Act (consolidated)", "statute")
    assert any("title kept" in note for note in v2.notes)
    path.write_text(RETENTION_MD.replace("six years", "eight years"))
    v3 = ingest_paths(conn, embedder, settings, [path], title="Retention Act 2026").files[0]
    assert v3.title == "Retention Act 2026"
    assert store.get_document(conn, v3.document_id).title == "Retention Act 2026"


def test_documents_lists_full_ids_and_sections(cli_env, tmp_path: Path) -> None:
    eu = LEGAL / "eu-client-data-regulation.txt"
    assert runner.invoke(app, ["ingest", str(eu)]).exit_code == 0
    listed = runner.invoke(app, ["documents"])
    doc_id = json.loads(runner.invoke(app, ["documents", "--json"]).stdout)[0]["id"]
    assert doc_id in listed.stdout  # never cut, whatever the width
    sections = runner.invoke(app, ["documents", "sections", doc_id[:10]])  # a unique start of the id
    assert sections.exit_code == 0, sections.output
    lines = sections.stdout.splitlines()
    assert any(line.startswith("Art. 33(1)") and "#33(1)" in line and "Article 33 Notification" in line
               for line in lines)
    assert any(line.startswith("Recital 3") for line in lines)
    data = json.loads(runner.invoke(app, ["documents", "sections", eu.name, "--json"]).stdout)
    assert "Annex I" in [s["citation"] for s in data["sections"]]


def test_documents_sections_of_an_unknown_document(cli_env) -> None:
    result = runner.invoke(app, ["documents", "sections", "no-such-document.md"])
    assert result.exit_code == 7 and "evidence documents" in result.stderr


def test_ambiguous_document_prefix_is_refused(conn, embedder, settings, tmp_path: Path) -> None:
    for i in range(12):  # twelve documents: two of them share the first character after 'doc_'
        path = tmp_path / f"reg{i}.md"
        path.write_text(RETENTION_MD.replace("six years", f"{i + 2} years"))
    ingest_paths(conn, embedder, settings, [tmp_path], source_type="regulation")
    ids = sorted(d.id for d in store.list_documents(conn))
    shared = next(a[:5] for a, b in zip(ids, ids[1:], strict=False) if a[:5] == b[:5])
    with pytest.raises(InputError, match="several documents"):
        store.find_documents(conn, shared)
    assert [d.id for d in store.find_documents(conn, ids[0][:20])] == [ids[0]]
