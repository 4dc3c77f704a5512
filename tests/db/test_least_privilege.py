"""Least privilege on a PostgreSQL the engine did not start (tests/pg_server.py: TCP, TLS, SCRAM): an owner
role migrates and grants; a runtime role, with EVIDENCE_AUTO_MIGRATE off, runs the engine without any DDL
and may only read and append to the audit trail."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from engine.cli.main import app
from engine.db import migrations
from tests import pg_server
from tests.conftest import CORPUS

runner = CliRunner()
OWNER_PW, RUNTIME_PW = "0wner-pw-lp", "runt1me-pw-lp"
CHECKLIST = """\
name: One question
questions:
  - {id: REC-1, text: "How long must transaction records be kept?"}
"""
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pg_server.ExternalServer]:
    with pg_server.running(tmp_path_factory.mktemp("least-privilege-pg"),
                           roles={"engine_owner": OWNER_PW, "engine_runtime": RUNTIME_PW},
                           databases={"lp": "engine_owner"}, vector=("lp",)) as running:
        yield running


def _as(monkeypatch, server, home: Path, role: str, password: str, *, auto_migrate: bool = True) -> str:
    url = server.url(role, password, "lp")
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("EVIDENCE_HOME", str(home))
    monkeypatch.setenv("EVIDENCE_AUTO_MIGRATE", "1" if auto_migrate else "0")
    return url


def _cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout if result.exit_code == 0 else result.output


def test_owner_migrates_and_grants_runtime_role_works_without_ddl(server, tmp_path, monkeypatch) -> None:
    _as(monkeypatch, server, tmp_path / "owner", "engine_owner", OWNER_PW)
    assert _cli("db", "migrate")[0] == 0
    code, out = _cli("db", "grant", "engine_runtime", "--json")
    assert code == 0, out
    statements = json.loads(out)["statements"]
    assert 'GRANT SELECT, INSERT ON "public"."audits" TO "engine_runtime"' in statements
    assert 'GRANT SELECT ON "public"."schema_migrations" TO "engine_runtime"' in statements
    assert not [s for s in statements if "TRUNCATE" in s or "ALL PRIVILEGES" in s]

    # Before: every command ran CREATE TABLE IF NOT EXISTS schema_migrations on connect, refused to this role
    # (exit 1, "a bug in the engine"). Now a current schema takes no DDL even with migrations on.
    home = tmp_path / "runtime"
    _as(monkeypatch, server, home, "engine_runtime", RUNTIME_PW)
    code, out = _cli("documents")
    assert code == 0, out

    url = _as(monkeypatch, server, home, "engine_runtime", RUNTIME_PW, auto_migrate=False)
    code, out = _cli("ingest", str(CORPUS), "--json")
    assert code == 0 and json.loads(out)["chunks"] > 0, out
    code, out = _cli("ask", "How long must transaction records be kept?", "--json")
    assert code == 0 and json.loads(out)["evidence_result"]["status"] == "ANSWERED", out
    checklist = tmp_path / "one.yaml"
    checklist.write_text(CHECKLIST)
    code, out = _cli("audit", "run", str(checklist), "--json", "--fail-on", "never")
    assert code == 0 and json.loads(out)["all_ran"], out
    code, out = _cli("trail", "verify")
    assert code == 0, out
    code, out = _cli("db", "status", "--json")
    status = json.loads(out)
    assert status["role"] == "engine_runtime" and status["pending_migrations"] == []
    assert status["schema_version"] == max(n for n, _, _ in migrations())

    with psycopg.connect(url, autocommit=True) as conn:  # what the role may not do, refused by privileges
        for statement, refusal in [("UPDATE audits SET actor = 'x'", "permission denied for table audits"),
                                   ("DELETE FROM audit_requirements", "permission denied for table audit_requirements"),
                                   ("TRUNCATE trail_checkpoints", "permission denied for table trail_checkpoints"),
                                   ("TRUNCATE documents", "permission denied for table documents"),
                                   ("ALTER TABLE audits ADD COLUMN x int", "must be owner of table audits"),
                                   ("DROP TABLE chunks", "must be owner of table chunks"),
                                   ("CREATE TABLE extra (x int)", "permission denied for schema public"),
                                   ("INSERT INTO schema_migrations VALUES (999, 'x')",
                                    "permission denied for table schema_migrations")]:
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match=refusal):
                conn.execute(statement)


def test_runtime_role_refuses_a_schema_that_lacks_a_migration(server, tmp_path, monkeypatch) -> None:
    owner_url = _as(monkeypatch, server, tmp_path / "owner", "engine_owner", OWNER_PW)
    assert _cli("db", "migrate")[0] == 0 and _cli("db", "grant", "engine_runtime")[0] == 0
    last, name, _ = migrations()[-1]
    with psycopg.connect(owner_url, autocommit=True) as owner:  # as if this engine were newer than the schema
        owner.execute("DELETE FROM schema_migrations WHERE version = %s", (last,))
    try:
        _as(monkeypatch, server, tmp_path / "runtime", "engine_runtime", RUNTIME_PW, auto_migrate=False)
        code, out = _cli("documents")
        assert code == 4 and f"lacks migration(s) {name}" in out and "evidence db migrate" in out, out
        code, out = _cli("db", "status", "--json")
        assert code == 0 and json.loads(out)["pending_migrations"] == [name]
        _as(monkeypatch, server, tmp_path / "runtime", "engine_runtime", RUNTIME_PW, auto_migrate=True)
        code, out = _cli("documents")  # migrations on: it tries, is refused, and says who must do it
        assert code == 4 and "role 'engine_runtime' may not do it" in out and "EVIDENCE_AUTO_MIGRATE=0" in out, out
    finally:
        with psycopg.connect(owner_url, autocommit=True) as owner:
            owner.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (last, name))


def test_grant_to_an_unknown_role_or_to_oneself_is_refused(server, tmp_path, monkeypatch) -> None:
    _as(monkeypatch, server, tmp_path / "owner", "engine_owner", OWNER_PW)
    code, out = _cli("db", "grant", "nobody_here")
    assert code == 7 and "no role 'nobody_here'" in out
    code, out = _cli("db", "grant", "engine_owner")
    assert code == 2 and "the role running this command" in out
