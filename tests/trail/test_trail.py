"""The audit trail: records, append-only enforcement, tamper detection, queries (sample corpus)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import psycopg
import pytest
from typer.testing import CliRunner

import engine
from agents.deps import Deps
from agents.research import run_research
from engine.cli.main import app
from engine.trail import store as audit_trail
from engine.trail.canonical import canonical_json, sha256_hex
from engine.trail.queries import diff_records
from engine.trail.record import build_amendment, record_research
from engine.trail.verify import verify_trail
from tests.trail.conftest import QUESTIONS, answer, rewrite, superuser

runner = CliRunner()


def test_record_holds_the_lineage_and_verifies(trail) -> None:
    assert [a.seq for a in trail.audits] == [1, 2, 3]
    row = audit_trail.get(trail.conn, trail.audits[0].audit_id)
    rec = row["record"]
    assert sha256_hex(row["canonical"]) == row["hash"] == trail.audits[0].hash
    assert json.loads(row["canonical"]) == {"seq": 1, "prev_hash": "0" * 64, "record": rec}
    assert rec["actor"] == "auditor" and rec["recorded_at"].endswith("Z") and len(rec["settings_hash"]) == 64
    assert rec["answer"]["status"] == "ANSWERED" and rec["research"]["steps"]
    assert {d["title"] for d in rec["corpus"]} >= {"Northbridge Financial Conduct Regulation 2024"}
    assert rec["models"]["embedding"]["sha256"] and rec["engine"] == {"name": "evidence-engine",
                                                                      "version": engine.__version__}
    # what made the verdicts: the version, the settings (hashed) and the models' hashes with the thresholds in effect
    relevance = rec["models"]["relevance"]
    assert len(relevance["sha256"]) == 64 and set(relevance["thresholds"]) >= {"gate", "select_floor", "select_gap"}
    assert rec["settings"]["evidence"]["quote_gap"] == trail.settings.evidence.quote_gap
    cited = [r for r in rec["requirements"] if r["cited"]]
    assert cited and all(r["verified"] for r in cited)
    assert audit_trail.get(trail.conn, trail.audits[1].audit_id)["prev_hash"] == trail.audits[0].hash
    report = verify_trail(trail.conn, trail.settings)
    assert report.ok, report.problems
    # a checkpoint after each of the three appends, and the explicit one after the third
    assert (report.audits_checked, report.checkpoints_checked, report.signatures_checked) == (3, 4, True)
    assert report.quotes_checked == sum(len(audit_trail.get(trail.conn, a.audit_id)["record"]["requirements"])
                                        for a in trail.audits)


def test_canonical_form_is_stable() -> None:
    record = {"b": [1, 2.5, None, True], "a": {"z": "é \"q\"", "y": 0.1 + 0.2, "x": -0.0},
              "t": datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC), "n": 1e20}
    text = canonical_json(record)
    assert text == ('{"a":{"x":0.0,"y":0.3,"z":"é \\"q\\""},"b":[1,2.5,null,true],'
                    '"n":100000000000000000000.0,"t":"2026-01-02T03:04:05.000006Z"}')
    assert sha256_hex(text) == "a70de45338d7e1e47e5ca7419305ee40bcaca20d628834178b1237fcd88bb4bc"
    assert canonical_json(json.loads(text)) == text


@pytest.mark.parametrize("value", [float("nan"), datetime(2026, 1, 1), {1: "x"}, object()],
                         ids=["nan", "naive-time", "int-key", "object"])
def test_canonical_form_refuses_what_it_cannot_pin_down(value) -> None:
    from engine.errors import IntegrityError

    with pytest.raises(IntegrityError):
        canonical_json({"v": value})


@pytest.mark.parametrize("table", audit_trail.TRAIL_TABLES)
@pytest.mark.parametrize("statement", ["UPDATE {t} SET {c} = {c}", "DELETE FROM {t}", "TRUNCATE {t} CASCADE"],
                         ids=["update", "delete", "truncate"])
def test_engine_role_cannot_change_the_trail(trail, table: str, statement: str) -> None:
    column = {"audits": "question", "audit_requirements": "exact_quote", "audit_documents": "title",
              "trail_checkpoints": "signature", "audit_embeddings": "question", "trail_nodes": "hash"}[table]
    if table == "audit_embeddings":
        trail.conn.execute("INSERT INTO audit_embeddings SELECT audit_id, question, answer FROM audit_embeddings "
                           "WHERE false")  # the table exists and accepts inserts
    for role in ("SET LOCAL ROLE evidence_trail_writer", "SELECT 1"):  # the writer role, then the owner
        with pytest.raises(psycopg.Error), trail.conn.transaction():
            trail.conn.execute(role)
            trail.conn.execute(statement.format(t=table, c=column))


TAMPER = {
    "canonical-byte": ("UPDATE audits SET canonical = overlay(canonical placing 'X' from 200 for 1) WHERE seq = 2", 2),
    "jsonb-copy": ("UPDATE audits SET record = jsonb_set(record, '{question}', '\"changed\"') WHERE seq = 2", 2),
    "header-column": ("UPDATE audits SET actor = 'someone else' WHERE seq = 1", 1),
    "requirement-quote": ("UPDATE audit_requirements r SET exact_quote = exact_quote || 'x' FROM audits a "
                          "WHERE a.audit_id = r.audit_id AND a.seq = 3 AND r.requirement_id = "
                          "(SELECT min(requirement_id) FROM audit_requirements WHERE audit_id = a.audit_id)", 3),
    "document-snapshot": ("UPDATE audit_documents SET content_sha256 = repeat('a', 64) WHERE audit_id = "
                          "(SELECT audit_id FROM audits WHERE seq = 2) AND document_id = (SELECT min(document_id) "
                          "FROM audit_documents d JOIN audits a USING (audit_id) WHERE a.seq = 2)", 2),
    "delete-row": ("DELETE FROM audits WHERE seq = 2", 2),
    "swap-rows": ("UPDATE audits SET seq = 1000 WHERE seq = 2; UPDATE audits SET seq = 2 WHERE seq = 3; "
                  "UPDATE audits SET seq = 3 WHERE seq = 1000", 2),
    "truncate-tail": ("DELETE FROM audits WHERE seq >= 3", 3),
    "checkpoint-signature": ("UPDATE trail_checkpoints SET signature = repeat('0', 128)", 1),
    "checkpoint-note": ("UPDATE trail_checkpoints SET note = replace(note, E'\\n3\\n', E'\\n2\\n') WHERE seq = 3", 3),
    "document-text": ("UPDATE documents SET text = replace(text, 'six years', 'two years')", 1),
}


@pytest.mark.parametrize("case", list(TAMPER), ids=list(TAMPER))
def test_tampering_is_reported_with_the_first_bad_seq(trail, case: str) -> None:
    sql, first_bad = TAMPER[case]
    if case in ("delete-row", "truncate-tail"):  # their requirement/document rows go too
        cut = "seq = 2" if case == "delete-row" else "seq >= 3"
        for table in ("audit_requirements", "audit_documents", "audit_embeddings"):
            superuser(trail.conn, f"DELETE FROM {table} WHERE audit_id IN (SELECT audit_id FROM audits WHERE {cut})")
    superuser(trail.conn, sql)
    for _ in range(2):  # every time, not once
        report = verify_trail(trail.conn, trail.settings)
        assert not report.ok and report.first_bad_seq == first_bad, report.problems


def test_forged_chain_with_recomputed_hashes_is_caught_by_the_checkpoint(trail) -> None:
    """An administrator rewrites record 2 and recomputes every later hash: only the signed checkpoint knows."""
    rewrite(trail, 2, "Records may be destroyed at any time.")
    superuser(trail.conn, "DELETE FROM trail_nodes; SELECT trail_fill_nodes()")  # the stored tree recomputed too
    report = verify_trail(trail.conn, trail.settings)
    assert not report.ok and {p.check for p in report.problems} == {"checkpoint"}, report.problems
    # the checkpoint signed at size 1 still matches, the one at size 2 no longer: record 2 was rewritten
    assert report.first_bad_seq == 2 and "rewritten between seq 2 and 2" in report.problems[0].message


def test_deleted_checkpoint_is_noticed_from_the_local_log(trail) -> None:
    superuser(trail.conn, "DELETE FROM trail_checkpoints")
    report = verify_trail(trail.conn, trail.settings)
    assert not report.ok and "local log" in report.problems[0].message


def test_amendment_is_a_new_record_pointing_to_the_old(trail) -> None:
    target = audit_trail.get(trail.conn, trail.audits[0].audit_id)
    note = build_amendment(target["record"], kind="correction", reason="policy superseded", text="See v2.",
                           actor="reviewer")
    appended = audit_trail.append(trail.conn, note)
    assert appended.seq == 4 and appended.prev_hash == trail.audits[2].hash
    assert audit_trail.get(trail.conn, trail.audits[0].audit_id)["canonical"] == target["canonical"]
    assert [a["audit_id"] for a in audit_trail.amendments(trail.conn, trail.audits[0].audit_id)] == [appended.audit_id]
    assert verify_trail(trail.conn, trail.settings).ok


def test_a_run_is_recorded_once(trail_conn, trail_settings, embedder) -> None:
    deps = Deps.build(trail_conn, trail_settings, embedder=embedder, backend="rules")
    result = run_research(QUESTIONS[0], deps).model_dump(mode="json")
    first = record_research(trail_conn, trail_settings, embedder, result)
    again = record_research(trail_conn, trail_settings, embedder, result)
    assert first.created and not again.created and again.audit_id == first.audit_id
    assert audit_trail.head(trail_conn)[0] == 1


def test_asking_again_finds_the_earlier_audit_and_answers_the_same(trail, embedder) -> None:
    deps = Deps.build(trail.conn, trail.settings, embedder=embedder, backend="rules")
    result = run_research(QUESTIONS[0], deps)
    assert result.memory_hit and result.memory_hit["audit_id"] == trail.audits[0].audit_id
    assert result.memory_hit["similarity"] >= trail.settings.memory_threshold
    first = audit_trail.get(trail.conn, trail.audits[0].audit_id)["record"]["answer"]
    assert result.evidence_result["final_answer"] == first["final_answer"]
    assert result.evidence_result["statements"] == first["statements"]
    miss = run_research("Who may approve exceptions to the password policy?", deps)
    assert miss.memory_hit is None


def test_diff_of_the_same_question_before_and_after_a_change(trail) -> None:
    a = audit_trail.get(trail.conn, trail.audits[0].audit_id)["record"]
    b = json.loads(json.dumps(a))
    b["audit_id"] = "AUD-b"
    removed = b["requirements"].pop(0)
    b["requirements"][0]["verified"] = not b["requirements"][0]["verified"]
    b["requirements"][0]["rejection_reason"] = None if b["requirements"][0]["verified"] else "requires_inference"
    b["answer"]["final_answer"] += "\nextra"
    d = diff_records(a, b)
    assert d["same_question"] and d["answer_changed"] and d["answer_diff"][-1] == "+extra"
    assert [r["exact_quote"] for r in d["requirements_removed"]] == [removed["exact_quote"]]
    assert len(d["verdicts_changed"]) == 1 and not d["requirements_added"]


BROKER_RULES = """# Broker Record Rules

## 4. Records

### 4.2 Order tickets

A broker must retain order tickets for at least seven years from the date of the order.
A broker must not alter an order ticket after the order has been executed.
"""


def _cli(settings, *args: str):
    env = {"DATABASE_URL": settings.database_url, "EVIDENCE_HOME": str(settings.home)}
    return runner.invoke(app, list(args), env=env)


def test_cli_list_show_search_verify(trail) -> None:
    listed = json.loads(_cli(trail.settings, "trail", "list", "--json", "--actor", "auditor").stdout)
    assert [r["audit_id"] for r in listed] == [a.audit_id for a in trail.audits]
    assert json.loads(_cli(trail.settings, "trail", "list", "--json", "--actor", "nobody").stdout) == []
    by_doc = json.loads(_cli(trail.settings, "trail", "list", "--json", "--document",
                             "Northbridge Data Protection Act 2023").stdout)
    assert trail.audits[1].audit_id in [r["audit_id"] for r in by_doc]
    assert trail.audits[0].audit_id not in [r["audit_id"] for r in by_doc]
    shown = _cli(trail.settings, "trail", "show", trail.audits[1].audit_id, "--json")
    stored = audit_trail.get(trail.conn, trail.audits[1].audit_id)["canonical"]
    assert shown.exit_code == 0 and shown.stdout.rstrip("\n") == stored
    found = json.loads(_cli(trail.settings, "trail", "search", "breach notification deadline", "--json").stdout)
    assert found[0]["audit_id"] == trail.audits[1].audit_id
    ok = _cli(trail.settings, "trail", "verify")
    assert ok.exit_code == 0 and "OK" in ok.stdout
    superuser(trail.conn, "UPDATE audits SET question = 'x' WHERE seq = 2")
    bad = _cli(trail.settings, "trail", "verify", "--json")
    assert bad.exit_code == 6 and json.loads(bad.stdout)["first_bad_seq"] == 2
    missing = _cli(trail.settings, "trail", "show", "AUD-nope")
    assert missing.exit_code == 7 and "no audit" in missing.output


def test_impact_lists_stale_audits_after_a_changed_document(trail_conn, trail_settings, embedder, tmp_path) -> None:
    from engine.ingest.pipeline import ingest_paths

    path = tmp_path / "retention.md"
    path.write_text(BROKER_RULES)
    ingest_paths(trail_conn, embedder, trail_settings, [path], source_type="regulation")
    first = answer(trail_conn, trail_settings, embedder, "How long must a broker retain order tickets?")
    assert any(r["source_key"] == str(path.resolve()) and r["cited"]
               for r in audit_trail.get(trail_conn, first.audit_id)["record"]["requirements"])
    before = _cli(trail_settings, "trail", "impact", f"{path}#4.2", "--json")
    assert before.exit_code == 0, before.output
    assert json.loads(before.stdout)["stale_audits"] == [] and json.loads(before.stdout)["audits"]
    path.write_text(BROKER_RULES.replace("at least seven years", "at least ten years"))
    ingest_paths(trail_conn, embedder, trail_settings, [path], source_type="regulation")
    after = json.loads(_cli(trail_settings, "trail", "impact", "retention.md#4.2", "--json").stdout)
    assert after["stale_audits"] == [first.audit_id]
    assert any("seven years" in q["exact_quote"] for q in after["quotes_gone"])
    assert verify_trail(trail_conn, trail_settings).ok  # the old version's text is still there


def _forge_from(trail, seq: int) -> None:
    """An administrator rewrites record `seq`, recomputes every later hash and the stored tree, and removes every
    checkpoint the engine kept (database rows and the local log): only what was published elsewhere remembers."""
    rewrite(trail, seq)
    superuser(trail.conn, "DELETE FROM trail_checkpoints; DELETE FROM trail_nodes; SELECT trail_fill_nodes()")
    (trail.settings.home / "keys" / "checkpoints.jsonl").unlink()


def test_log_rewritten_after_a_checkpoint_was_published(trail, tmp_path) -> None:
    witness = tmp_path / "witness"
    published = _cli(trail.settings, "trail", "checkpoint", "--out", str(witness))
    assert published.exit_code == 0, published.output
    note = (witness / "trail-checkpoints.txt").read_text()
    assert note.split("\n")[1] == "3" and "\n\n\u2014 evidence-engine/" in note
    assert _cli(trail.settings, "trail", "verify", "--published", str(witness)).exit_code == 0
    _forge_from(trail, 2)
    alone = verify_trail(trail.conn, trail.settings)
    assert alone.ok  # nothing the engine itself kept can tell any more...
    bad = _cli(trail.settings, "trail", "verify", "--published", str(witness), "--json")
    outcome = json.loads(bad.stdout)
    assert bad.exit_code == 6 and outcome["first_bad_seq"] == 1  # ...the published note can
    assert "trail-checkpoints.txt:1" in outcome["problems"][0]["message"]
    assert "differs from the checkpoint signed at seq 3" in outcome["problems"][0]["message"]
    inconsistent = _cli(trail.settings, "trail", "consistency", str(witness / "trail-checkpoints.txt"), "3")
    assert inconsistent.exit_code == 6 and "INCONSISTENT" in inconsistent.output


@pytest.mark.slow
def test_report_made_before_a_rewrite_fails_against_the_live_log(trail, tmp_path) -> None:
    from engine.report import render as report

    path = report.write_pdf(trail.conn, trail.audits[0].audit_id, tmp_path / "r.pdf", settings=trail.settings)
    assert _cli(trail.settings, "report", "verify", str(path)).exit_code == 0
    _forge_from(trail, 1)
    offline = _cli(trail.settings, "report", "verify", str(path), "--offline")
    assert offline.exit_code == 0  # the report itself is intact and proves its record...
    live = _cli(trail.settings, "report", "verify", str(path), "--json")
    problems = " ".join(json.loads(live.stdout)["problems"])
    assert live.exit_code == 6 and "rewritten after the report was signed" in problems  # ...the live log moved


def test_prove_consistency_and_public_key_commands(trail, tmp_path) -> None:
    from engine.trail.standalone_verify import load_public_key, verify_bundle

    key = _cli(trail.settings, "trail", "public-key")
    assert key.exit_code == 0 and key.stdout.startswith("-----BEGIN PUBLIC KEY-----")
    vkey = _cli(trail.settings, "trail", "public-key", "--vkey").stdout.strip()
    assert load_public_key(vkey).public_bytes_raw() == load_public_key(key.stdout).public_bytes_raw()
    proved = _cli(trail.settings, "trail", "prove", trail.audits[1].audit_id)
    assert proved.exit_code == 0, proved.output
    bundle = json.loads(proved.stdout)
    assert (bundle["leaf_index"], bundle["tree_size"]) == (1, 3)
    record = audit_trail.get(trail.conn, trail.audits[1].audit_id)["canonical"].encode()
    assert verify_bundle(bundle, record, load_public_key(key.stdout))["seq"] == 2
    unknown = _cli(trail.settings, "trail", "prove", "AUD-19990101-0000000000")
    assert unknown.exit_code == 7 and "no audit" in unknown.output
    good = _cli(trail.settings, "trail", "consistency", "1", "3", "--json")
    assert good.exit_code == 0 and json.loads(good.stdout)["consistent"]
    backwards = _cli(trail.settings, "trail", "consistency", "3", "1")
    assert backwards.exit_code != 0 and "must not be larger" in backwards.output


def test_checkpoint_signed_by_another_key_fails_verify(trail, tmp_path) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from engine.trail import signing
    from engine.trail.standalone_verify import split_note

    row = audit_trail.latest_note_checkpoint(trail.conn)
    body, _ = split_note(row["note"])
    witness = tmp_path / "w"
    witness.mkdir()
    (witness / "trail-checkpoints.txt").write_text(signing.sign_note(Ed25519PrivateKey.generate(),
                                                                     row["origin"], body))
    result = _cli(trail.settings, "trail", "verify", "--published", str(witness), "--json")
    assert result.exit_code == 6
    assert "not signed by the given public key" in json.loads(result.stdout)["problems"][0]["message"]
