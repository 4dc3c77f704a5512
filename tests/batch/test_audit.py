"""Audit checklists: definitions, batch runs (workers, exit statuses, kill -9 and resume), compare, OSCAL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import psutil
import psycopg
import pytest
from typer.testing import CliRunner

from engine import db as dbmod
from engine import embedded_db
from engine.batch import store as batch_store
from engine.batch.checklist import DefinitionError, load_definition
from engine.batch.results import check_expectations, outcome
from engine.batch.runner import run_batch, start_batch, work
from engine.cli.main import app
from engine.config import Settings
from engine.trail import store as audit_trail
from engine.trail.verify import verify_trail
from tests.conftest import ROOT

runner = CliRunner()
CHECKLIST = """\
name: Records and breaches
description: A small checklist for the tests.
scope:
  source_types: [statute, regulation, policy]
questions:
  - id: REC-1
    text: How long must transaction records be kept?
    control_id: au-11_smt
    expect:
      - document: Northbridge Financial Conduct Regulation 2024
        section: "4.2"
  - id: BRE-1
    text: When must a personal data breach be notified to the Commissioner?
    control_id: ir-6_smt.a
    expect:
      - document: data-protection-act-2023.md
  - id: GAP-1
    text: What is the minimum capital requirement for a crypto custody licence?
    control_id: ca-2_smt
"""


def _clone(server_settings: Settings, template: str, home: Path) -> Settings:
    base = server_settings.database_url or embedded_db.start(server_settings)
    name = f"audit_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    home.mkdir(parents=True, exist_ok=True)
    return server_settings.model_copy(update={"database_url": base.replace("/postgres?", f"/{name}?", 1),
                                              "home": home})


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def batch_run(server_settings, trail_template, embedder, tmp_path_factory) -> tuple[Settings, str, Path]:
    """The checklist above, run once in-process in its own database: (settings, batch id, definition)."""
    home = tmp_path_factory.mktemp("batch-home")
    settings = _clone(server_settings, trail_template, home)
    path = _write(home / "checklist.yaml", CHECKLIST)
    definition, sha = load_definition(path)
    with dbmod.connection(settings) as conn:
        batch_id = start_batch(conn, settings, definition, path=path, sha256=sha, actor="auditor")
    run_batch(settings, batch_id, embedder=embedder)
    return settings, batch_id, path


BAD_DEFINITIONS = {
    "not-yaml": ("name: x\nquestions:\n\t- id: Q1\n", ":3: not valid YAML"),
    "not-a-mapping": ("- just\n- a list\n", ":1: an audit definition is a mapping"),
    "no-questions": ("name: x\nquestions: []\n", ":2: questions: List should have at least 1 item"),
    "unknown-field": ("name: x\nquestions:\n  - id: Q1\n    text: a question here\n    weight: 3\n",
                      ":5: questions[0].weight: Extra inputs are not permitted"),
    "missing-text": ("name: x\nquestions:\n  - id: Q1\n    control_id: ac-1\n",
                     ":3: questions[0].text: Field required"),
    "duplicate-id": ("name: x\nquestions:\n  - {id: Q1, text: first question}\n  - {id: Q1, text: second question}\n",
                     "question id 'Q1' is used twice"),
    "bad-source-type": ("name: x\nscope:\n  source_types: [memo]\nquestions:\n  - {id: Q1, text: a question}\n",
                        ":3: scope.source_types: Value error, unknown source type(s) ['memo']"),
    "bad-parameter": ("name: x\nparameters:\n  home: /tmp\nquestions:\n  - {id: Q1, text: a question}\n",
                      ":2: parameters: Value error, cannot override ['home']"),
    "bad-parameter-value": ("name: x\nparameters:\n  dense_weight: 3\nquestions:\n  - {id: Q1, text: a question}\n",
                            "dense_weight: Input should be less than or equal to 1"),
    "bad-expectation": ("name: x\nquestions:\n  - id: Q1\n    text: a question\n    expect:\n      - section: '4.2'\n",
                        ":6: questions[0].expect[0].document: Field required"),
}


@pytest.mark.parametrize("case", list(BAD_DEFINITIONS), ids=list(BAD_DEFINITIONS))
def test_invalid_definitions_name_file_line_and_field(tmp_path, case: str) -> None:
    text, expected = BAD_DEFINITIONS[case]
    path = _write(tmp_path / "bad.yaml", text)
    with pytest.raises(DefinitionError) as caught:
        load_definition(path)
    assert str(path) in str(caught.value) and expected in str(caught.value), str(caught.value)


def test_shipped_sample_definition_is_valid() -> None:
    definition, sha = load_definition(ROOT / "audits" / "sample.yaml")
    assert 5 <= len(definition.questions) <= 10 and len(sha) == 64
    assert any(q.id.startswith("GAP") for q in definition.questions)  # one the corpus cannot answer


def test_missing_definition_file_is_a_clear_error(tmp_path) -> None:
    result = runner.invoke(app, ["audit", "run", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2 and "cannot read the audit definition" in result.output


def test_batch_answers_every_question_once_and_checks_expectations(batch_run) -> None:
    settings, batch_id, _ = batch_run
    with dbmod.connection(settings) as conn:
        result = outcome(conn, batch_id)
        rows = audit_trail.list_audits(conn, batch=batch_id)
        assert verify_trail(conn, settings).ok
    assert result.all_ran and [q.question_id for q in result.questions] == ["REC-1", "BRE-1", "GAP-1"]
    assert [r["seq"] for r in rows] == [1, 2, 3] and {r["batch_id"] for r in rows} == {batch_id}
    by_id = {q.question_id: q for q in result.questions}
    assert by_id["REC-1"].status == "ANSWERED" and all(e["met"] for e in by_id["REC-1"].expectations)
    assert by_id["BRE-1"].expectations[0]["met"]
    assert by_id["GAP-1"].status == "NO_AUTHORITATIVE_EVIDENCE"
    assert result.no_evidence == ["GAP-1"] and result.exit_code == 10


def test_expectations_are_met_only_by_cited_requirements_of_that_section() -> None:
    from engine.batch.checklist import Expectation

    record = {"requirements": [
        {"requirement_id": "REQ-S001", "cited": True, "document_title": "Act", "document_id": "doc_1",
         "source_key": "/x/act.md", "section_number": "4.2.1"},
        {"requirement_id": "REQ-S002", "cited": False, "document_title": "Rules", "document_id": "doc_2",
         "source_key": "/x/rules.md", "section_number": "3"}]}
    got = check_expectations(record, [Expectation(document="act", section="4.2"), Expectation(document="act.md"),
                                      Expectation(document="Act", section="4.3"), Expectation(document="Rules")])
    assert [e["met"] for e in got] == [True, True, False, False]


@pytest.mark.parametrize(("fail_on", "code"), [(None, 10), ("never", 0), ("expect", 0), ("no-evidence", 10)],
                         ids=["default-any", "never", "expect-only", "no-evidence"])
def test_exit_status_gates_on_outcomes(batch_run, fail_on, code) -> None:
    settings, batch_id, _ = batch_run
    args = ["audit", "status", batch_id, "--json"]
    env = {"DATABASE_URL": settings.database_url, "EVIDENCE_HOME": str(settings.home)}
    shown = json.loads(runner.invoke(app, args, env=env).stdout)
    with dbmod.connection(settings) as conn:
        assert outcome(conn, batch_id, fail_on=fail_on).exit_code == code
    assert shown["exit_code"] == 10 and shown["fail_on"] == "any"


def test_resume_of_a_finished_batch_answers_nothing_again(batch_run, embedder) -> None:
    settings, batch_id, _ = batch_run
    with dbmod.connection(settings) as conn:
        before = audit_trail.head(conn)
        run_batch(settings, batch_id, embedder=embedder)
        assert audit_trail.head(conn) == before


@pytest.mark.slow
def test_compare_two_runs_of_the_same_checklist(batch_run, embedder) -> None:
    settings, first, path = batch_run
    definition, sha = load_definition(path)
    with dbmod.connection(settings) as conn:
        second = start_batch(conn, settings, definition, path=path, sha256=sha, actor="auditor")
    run_batch(settings, second, embedder=embedder)
    env = {"DATABASE_URL": settings.database_url, "EVIDENCE_HOME": str(settings.home)}
    result = runner.invoke(app, ["audit", "compare", first, second, "--json"], env=env)
    assert result.exit_code == 0, result.output
    diff = json.loads(result.stdout)
    assert set(diff["questions"]) == {"REC-1", "BRE-1", "GAP-1"} and not diff["only_in_a"]
    for d in diff["questions"].values():
        assert d["same_question"] and not d["corpus_changes"] and d["status"][0] == d["status"][1]
    listed = json.loads(runner.invoke(app, ["trail", "list", "--batch", second, "--json"], env=env).stdout)
    assert len(listed) == 3 and {r["batch_id"] for r in listed} == {second}


def test_oscal_export_loads_in_trestle_and_carries_evidence_hashes(batch_run, tmp_path) -> None:
    from trestle.oscal.assessment_results import AssessmentResults

    settings, batch_id, _ = batch_run
    target = tmp_path / "ar.json"
    env = {"DATABASE_URL": settings.database_url, "EVIDENCE_HOME": str(settings.home)}
    result = runner.invoke(app, ["audit", "export", batch_id, "--oscal", str(target)], env=env)
    assert result.exit_code == 0, result.output
    document = json.loads(target.read_text())
    model = AssessmentResults.model_validate(document["assessment-results"])
    res = model.results[0]
    assert len(res.observations) == 3 and len(res.findings) == 3
    states = {f.target.target_id: f.target.status.state.value for f in res.findings}
    assert states["ca-2_smt"] == "not-satisfied"
    with dbmod.connection(settings) as conn:
        records = [audit_trail.get(conn, i["audit_id"])["record"] for i in batch_store.items(conn, batch_id)]
    shas = {d["document_id"]: d["content_sha256"] for r in records for d in r["corpus"]}
    resources = {str(r.uuid): r for r in model.back_matter.resources}
    verified = [req for r in records for req in r["requirements"] if req["verified"]]
    evidence = [e for o in res.observations for e in (o.relevant_evidence or [])]
    assert len(evidence) == len(verified) > 0
    for entry in evidence:
        resource = resources[entry.href.lstrip("#")]
        doc_id = resource.rlinks[0].href.rsplit(":", 1)[-1]
        assert resource.rlinks[0].hashes[0].value == shas[doc_id]
        assert resource.citation.text in {" ".join(q["exact_quote"].split()) for q in verified}
    again = runner.invoke(app, ["audit", "export", batch_id, "--oscal", str(tmp_path / "again.json")], env=env)
    assert again.exit_code == 0 and (tmp_path / "again.json").read_text() == target.read_text()


def _values(node: object, key: str) -> list[str]:
    """Every value of `key` anywhere in a JSON document."""
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == key] + [x for v in node.values() for x in _values(v, key)]
    return [x for v in node for x in _values(v, key)] if isinstance(node, list) else []


def dangling(document: dict) -> list[str]:
    """References of an OSCAL document that name nothing in it: `#uuid` hrefs, related observations, actors,
    used components, and finding targets whose control is not among the reviewed controls."""
    uuids = set(_values(document, "uuid"))
    refs = [h[1:] for h in _values(document, "href") if h.startswith("#")]
    refs += [r for key in ("observation-uuid", "actor-uuid", "component-uuid") for r in _values(document, key)]
    found = [f"uuid {r}" for r in refs if r not in uuids]
    reviewed = set(_values(document, "control-id"))
    found += [f"control {t}" for t in _values(document, "target-id") if t.split("_smt")[0] not in reviewed]
    return found


def test_oscal_export_passes_trestle_validation_and_every_reference_resolves(batch_run, tmp_path) -> None:
    from trestle.core import validator_factory  # noqa: F401 - first: all_validator and it import each other
    from trestle.core.all_validator import AllValidator
    from trestle.oscal.assessment_results import AssessmentResults

    from engine.batch.oscal import export_batch

    settings, batch_id, _ = batch_run
    with dbmod.connection(settings) as conn:
        document = export_batch(conn, batch_id)
    path = tmp_path / "assessment-results.json"
    path.write_text(json.dumps(document))
    model = AssessmentResults.oscal_read(path)  # the file as trestle reads one: the whole document, strictly
    validator = AllValidator()
    assert validator.model_is_valid(model, True, None), validator.error_msg()  # unique uuids, roles, links
    uuids = _values(document, "uuid")
    assert len(uuids) == len(set(uuids)) and dangling(document) == []
    broken = json.loads(json.dumps(document))
    observation = broken["assessment-results"]["results"][0]["observations"][0]
    observation["relevant-evidence"] = [{"href": "#4f1c0d52-0000-5000-8000-000000000000", "description": "gone"}]
    broken["assessment-results"]["results"][0]["findings"][0]["target"]["target-id"] = "zz-9_smt"
    assert dangling(broken) == ["uuid 4f1c0d52-0000-5000-8000-000000000000", "control zz-9_smt"]
    twice = json.loads(json.dumps(document))
    observations = twice["assessment-results"]["results"][0]["observations"]
    observations[1]["uuid"] = observations[0]["uuid"]
    path.write_text(json.dumps(twice))
    assert not validator.model_is_valid(AssessmentResults.oscal_read(path), True, None)  # the validator can fail


def _evidence(settings: Settings, *args: str, fault: str | None = None) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": settings.database_url, "EVIDENCE_HOME": str(settings.home),
           "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("EVIDENCE_FAULT_INJECTION", None)
    if fault:
        env["EVIDENCE_FAULT_INJECTION"] = fault
    return subprocess.Popen([sys.executable, "-m", "engine.cli.main", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


class _FirstRecorded(Exception):
    """Stops an in-process worker right after it recorded its first question."""


def _record_one(settings: Settings, batch_id: str, embedder) -> None:
    def emit(event: tuple) -> None:
        if event[0] == "done":
            raise _FirstRecorded(event[1])

    with pytest.raises(_FirstRecorded):
        work(batch_id, settings, embedder, emit)


def _stopped_worker(proc: subprocess.Popen, deadline_s: float = 240) -> None:
    """Wait (bounded) until one of the coordinator's workers has stopped itself (a `stop@` fault)."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()[-1500:]
        if any(c.status() == psutil.STATUS_STOPPED for c in psutil.Process(proc.pid).children(recursive=True)):
            return
        time.sleep(0.05)
    raise AssertionError("no worker reached the fault point in time")


@pytest.mark.slow
def test_batch_with_two_workers_then_kill_mid_batch_and_resume(server_settings, trail_template, embedder,
                                                                tmp_path) -> None:
    """One question recorded; then two workers, one stopped inside its audit's append transaction (holding the
    append lock, so the other cannot record either), and the coordinator with its workers killed: exactly the
    one audit survives, and a resume records the other two once each."""
    settings = _clone(server_settings, trail_template, tmp_path / "home")
    path = _write(tmp_path / "checklist.yaml", CHECKLIST)
    definition, sha = load_definition(path)
    with dbmod.connection(settings) as conn:
        batch_id = start_batch(conn, settings, definition, path=path, sha256=sha, actor="auditor")
    _record_one(settings, batch_id, embedder)
    proc = _evidence(settings, "audit", "resume", batch_id, "--workers", "2", "--json", fault="stop@audit:during")
    try:
        _stopped_worker(proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the coordinator and its workers, mid-batch
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()[-1500:]
    with dbmod.connection(settings) as conn:
        assert audit_trail.head(conn)[0] == 1  # the append in flight died with its transaction
    resumed = _evidence(settings, "audit", "resume", batch_id, "--workers", "2", "--json")
    stdout, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 10, stderr[-1500:]  # all ran; GAP-1 has no evidence
    assert json.loads(stdout)["all_ran"]
    with dbmod.connection(settings) as conn:
        rows = audit_trail.chain(conn)
        per_question = Counter(r["record"]["batch"]["question_id"] for r in rows)
        assert per_question == {"REC-1": 1, "BRE-1": 1, "GAP-1": 1}
        assert [r["seq"] for r in rows] == [1, 2, 3]
        assert verify_trail(conn, settings).ok
