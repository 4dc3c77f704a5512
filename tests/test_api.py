"""engine.api: the library the CLI, batch runs and the web view call."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import api
from engine.errors import InputError, NotFoundError


@pytest.mark.slow
def test_ask_records_an_audit_that_resume_verify_and_report_agree_on(trail_settings, tmp_path: Path) -> None:
    events: dict[str, list[str]] = {"run": [], "node": [], "phase": []}
    hooks = api.Hooks(run_started=events["run"].append, node=events["node"].append, phase=events["phase"].append)

    audit = api.ask("How long must transaction records be kept?", hooks=hooks, pdf=tmp_path / "a.pdf",
                    settings=trail_settings)

    assert audit.status == "ANSWERED" and audit.entry.created and not audit.refused
    assert audit.direct_answer and "REQ-S" in audit.direct_answer
    assert events["run"] == [audit.research.run_id]
    assert {"guard", "retrieve", "extract", "verify", "compose", "review"} <= set(events["node"])
    assert events["phase"] == ["recording the audit", "writing the report"]
    assert audit.report == tmp_path / "a.pdf" and audit.report.read_bytes().startswith(b"%PDF")
    cited = [r for r in audit.record["requirements"] if r["cited"]]
    assert cited and all(r["exact_quote"] in audit.record["evidence_chunks"][r["chunk_id"]]["text"] for r in cited)
    assert audit.as_json()["audit"]["audit_id"] == audit.audit_id

    again = api.resume(audit.research.run_id, settings=trail_settings)
    assert again.audit_id == audit.audit_id and not again.entry.created

    assert api.audit(audit.audit_id[:16], settings=trail_settings)["audit_id"] == audit.audit_id
    assert [a["audit_id"] for a in api.audits(settings=trail_settings)] == [audit.audit_id]
    assert api.verify_trail(settings=trail_settings).ok
    assert audit.audit_id.encode() in api.report(audit.audit_id, "html", settings=trail_settings)
    written = api.write_reports(audit.audit_id, md=tmp_path / "a.md", settings=trail_settings)
    assert written == [tmp_path / "a.md"] and cited[0]["requirement_id"] in written[0].read_text()


def test_search_and_documents(corpus_settings) -> None:
    hits = api.search("breach notification", k=3, settings=corpus_settings)
    assert len(hits) == 3 and hits[0].score >= hits[-1].score
    docs = api.documents(settings=corpus_settings)
    doc, sections = api.document_sections(docs[0].id[:12], settings=corpus_settings)
    assert doc.id == docs[0].id and sections


def test_bad_requests_get_typed_errors(corpus_settings) -> None:
    with pytest.raises(InputError, match="backend"):
        api.ask("How long must records be kept?", backend="gpt", settings=corpus_settings)
    with pytest.raises(InputError, match="report format"):
        api.report("AUD-x", "docx", settings=corpus_settings)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="source type"):
        api.ingest([], source_type="novel", settings=corpus_settings)
    with pytest.raises(NotFoundError, match="no document"):
        api.document_sections("no-such-document", settings=corpus_settings)
    with pytest.raises(NotFoundError):
        api.audit("AUD-19990101-0000000000", settings=corpus_settings)
