"""One ask-and-record service (engine.batch.ask): `api.ask`, a batch worker and `trail rerun` answer through it
and build the same search filters for the same documents."""

from __future__ import annotations

from typing import Any

import pytest

from engine import api
from engine import db as dbmod
from engine.batch import ask
from engine.batch.checklist import load_definition
from engine.batch.rerun import rerun_one
from engine.batch.runner import run_batch, start_batch
from engine.search.retrieval import Filters
from engine.trail import store as audit_trail

QUESTION = "How long must transaction records be kept?"
DOCUMENT = "financial-conduct-regulation-2024.md"
CHECKLIST = f"""\
name: One question
scope:
  documents: [{DOCUMENT}]
questions:
  - id: REC-1
    text: {QUESTION}
"""


def test_the_scope_builders_agree_on_the_same_documents(trail_conn) -> None:
    named = ask.named_scope(trail_conn, [DOCUMENT])
    doc_id = named.filters.document_ids[0] if named.filters else ""
    assert named.filters == Filters(document_ids=(doc_id,), current_only=True)
    assert named.recorded and named.recorded["documents"][0]["document_id"] == doc_id
    assert ask.current_scope(trail_conn, named.recorded) == named
    pinned = ask.pinned_scope({"source_types": [], "document_ids": [doc_id], "current_only": True})
    assert pinned.filters == named.filters
    assert ask.pinned_scope(None) == ask.Scope() == ask.current_scope(trail_conn, None)


@pytest.mark.slow
def test_api_batch_and_rerun_answer_through_the_one_service(trail_settings, embedder, tmp_path, monkeypatch) -> None:
    seen: list[tuple[str, Filters | None, Any]] = []
    build, record = ask.Deps.build, ask.record_research

    def spy_build(conn: Any, settings: Any, **kw: Any) -> Any:
        seen.append(("deps", kw.get("scope"), None))
        return build(conn, settings, **kw)

    def spy_record(*args: Any, **kw: Any) -> Any:
        appended = record(*args, **kw)
        seen.append(("record", None, appended.audit_id))
        return appended

    monkeypatch.setattr(ask.Deps, "build", spy_build)
    monkeypatch.setattr(ask, "record_research", spy_record)

    asked = api.ask(QUESTION, documents=[DOCUMENT], settings=trail_settings)
    path = tmp_path / "one.yaml"
    path.write_text(CHECKLIST)
    definition, sha = load_definition(path)
    with dbmod.connection(trail_settings) as conn:
        batch_id = start_batch(conn, trail_settings, definition, path=path, sha256=sha, actor="auditor")
    run_batch(trail_settings, batch_id, embedder=embedder)
    with dbmod.connection(trail_settings) as conn:
        batch_audit = audit_trail.list_audits(conn, batch=batch_id)[0]["audit_id"]
        rerun = rerun_one(conn, trail_settings, asked.audit_id, embedder=embedder, actor="auditor")
        rerun_scope = audit_trail.get(conn, rerun.new_audit_id)["record"]["scope"]

    assert [kind for kind, _, _ in seen] == ["deps", "record"] * 3
    filters = [f for kind, f, _ in seen if kind == "deps"]
    assert filters[0] is not None and filters[0] == filters[1] == filters[2]
    assert [a for kind, _, a in seen if kind == "record"] == [asked.audit_id, batch_audit, rerun.new_audit_id]
    assert rerun_scope == asked.record["scope"] and rerun_scope["documents"][0]["source_key"]
