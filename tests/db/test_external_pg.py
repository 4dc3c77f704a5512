"""The engine on a PostgreSQL it did not start: TCP, TLS, SCRAM passwords, a role that is not a superuser.

The server (tests/pg_server.py) is set up as a managed PostgreSQL with pgvector would be: an
administrator created the extension and a login role owning the engine's database; the engine
connects with `DATABASE_URL` only, verifies the server's certificate and never gets superuser rights.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from engine.cli.main import app
from engine.db import migrations, pgvector_problem
from tests import pg_server
from tests.conftest import CORPUS

runner = CliRunner()
APP_PASSWORD = "s3cret-engine-pw"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pg_server.ExternalServer]:
    # What an administrator does once on a managed server: roles, databases, pgvector where the engine runs.
    with pg_server.running(tmp_path_factory.mktemp("external-pg"), roles={"engine_app": APP_PASSWORD},
                           databases={name: "engine_app" for name in ("engine", "bare", "old")},
                           vector=("engine",)) as running:
        _install_old_pgvector(running)
        yield running


def _install_old_pgvector(server: pg_server.ExternalServer) -> None:
    """Database `old` gets an extension named `vector` at version 0.5.0 (a stand-in, from its own directory)."""
    directory = server.root / "old-extensions" / "extension"
    directory.mkdir(parents=True)
    (directory / "vector.control").write_text("comment = 'stand-in for an old pgvector'\n"
                                              "default_version = '0.5.0'\nrelocatable = true\n")
    (directory / "vector--0.5.0.sql").write_text("CREATE FUNCTION old_vector_stub() RETURNS int "
                                                 "LANGUAGE sql AS 'SELECT 1';\n")
    for path in (directory.parent, directory, *directory.iterdir()):
        path.chmod(path.stat().st_mode | 0o055)
    with server.admin("old") as admin:
        admin.execute(f"SET extension_control_path = '{directory.parent}:$system'")
        admin.execute("CREATE EXTENSION vector VERSION '0.5.0'")


@pytest.fixture()
def env(server, tmp_path: Path, monkeypatch) -> pg_server.ExternalServer:
    monkeypatch.setenv("EVIDENCE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DATABASE_URL", server.url("engine_app", APP_PASSWORD, "engine"))
    return server


def _cli(*args: str) -> tuple[int, str]:
    """Exit status and stdout (with stderr appended when the command failed)."""
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout if result.exit_code == 0 else result.output


def test_connection_is_tls_scram_and_not_superuser(env) -> None:
    with psycopg.connect(env.url("engine_app", APP_PASSWORD, "engine")) as conn:
        tls = conn.pgconn.ssl_in_use
        superuser = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]
    with env.admin() as admin:
        stored = admin.execute("SELECT rolpassword FROM pg_authid WHERE rolname = 'engine_app'").fetchone()[0]
        hba = admin.execute("SELECT type, auth_method FROM pg_hba_file_rules").fetchall()
    assert tls is True
    assert superuser is False and stored.startswith("SCRAM-SHA-256$") and hba == [("host", "scram-sha-256")]


def test_migrate_runs_once_then_reports_up_to_date(env) -> None:
    code, first = _cli("db", "migrate")
    assert code == 0, first
    assert "applied: 001_core" in first and "pgvector 0.8" in first
    code, second = _cli("db", "migrate")
    assert code == 0 and "schema is up to date" in second, second


def test_engine_works_end_to_end_as_a_role_without_superuser(env) -> None:
    """Ingest, search, ask (rules backend, checkpointed run, recorded audit) and verify the trail."""
    code, out = _cli("ingest", str(CORPUS), "--json")
    assert code == 0, out
    assert json.loads(out)["chunks"] > 0
    code, out = _cli("search", "How long must transaction records be kept?", "-k", "3", "--json")
    assert code == 0 and "six years" in out, out
    code, out = _cli("ask", "How long must transaction records be kept?", "--json")
    assert code == 0, out
    answer = json.loads(out)
    assert answer["evidence_result"]["status"] == "ANSWERED" and answer["audit"]["seq"] == 1
    code, out = _cli("trail", "verify")
    assert code == 0, out
    code, out = _cli("db", "status", "--json")
    assert code == 0 and json.loads(out)["external"] is True


def test_wrong_password_is_refused_and_not_printed(env, monkeypatch) -> None:
    monkeypatch.setenv("DATABASE_URL", env.url("engine_app", "not-the-password", "engine"))
    code, out = _cli("documents")
    assert code == 4, out
    assert "password authentication failed" in out and "not-the-password" not in out


def test_connection_without_tls_is_refused(env, monkeypatch) -> None:
    monkeypatch.setenv("DATABASE_URL", env.url("engine_app", APP_PASSWORD, "engine", sslmode="disable"))
    code, out = _cli("documents")
    assert code == 4, out
    assert "no encryption" in out and APP_PASSWORD not in out


def test_certificate_signed_by_another_authority_is_refused(env, tmp_path: Path, monkeypatch) -> None:
    """verify-full really verifies: the same server is refused when the client trusts another certificate."""
    other, _ = pg_server._self_signed()
    (tmp_path / "other-ca.crt").write_bytes(other)
    url = env.url("engine_app", APP_PASSWORD, "engine").replace(str(env.ca_file), str(tmp_path / "other-ca.crt"))
    monkeypatch.setenv("DATABASE_URL", url)
    code, out = _cli("documents")
    assert code == 4 and "certificate verify failed" in out, out


def test_missing_pgvector_names_who_must_create_it(env, monkeypatch) -> None:
    monkeypatch.setenv("DATABASE_URL", env.url("engine_app", APP_PASSWORD, "bare"))
    code, out = _cli("db", "migrate")
    assert code == 4, out
    assert "not installed in database 'bare'" in out and "role 'engine_app' may not create it" in out
    assert "CREATE EXTENSION vector;" in out
    code, out = _cli("documents")  # any command says the same, before touching the schema
    assert code == 4 and "CREATE EXTENSION vector;" in out, out


def test_old_pgvector_is_refused_with_the_upgrade_to_run(env, monkeypatch) -> None:
    monkeypatch.setenv("DATABASE_URL", env.url("engine_app", APP_PASSWORD, "old"))
    code, out = _cli("db", "migrate")
    assert code == 4, out
    assert "pgvector 0.5.0 is installed" in out and "needs 0.8.0 or later" in out
    assert "ALTER EXTENSION vector UPDATE" in out


@pytest.mark.parametrize(("installed", "available", "problem"), [
    ("0.8.0", "0.8.0", None),
    ("0.8.6", "0.8.6", None),
    ("1.0.0", None, None),
    (None, "0.8.6", None),  # missing but available: the engine creates it when allowed
    (None, None, "the server has no pgvector extension"),
    ("0.7.4", "0.8.6", "ALTER EXTENSION vector UPDATE"),
    ("0.7.4", "0.7.4", "upgrade pgvector on the server"),
], ids=["min", "current", "future", "creatable", "absent", "old-updatable", "old-server"])
def test_pgvector_problem(installed: str | None, available: str | None, problem: str | None) -> None:
    found = pgvector_problem(installed, available)
    assert (found is None) if problem is None else (problem in (found or ""))


def test_prewarm_without_the_extension_names_who_must_create_it(env) -> None:
    code, out = _cli("db", "migrate")
    assert code == 0, out
    code, out = _cli("db", "prewarm")
    assert code == 4, out
    assert "CREATE EXTENSION pg_prewarm;" in out and "administrator" in out


def _status(monkeypatch, url: str) -> tuple[int, dict, str]:
    monkeypatch.setenv("DATABASE_URL", url)
    result = runner.invoke(app, ["db", "status", "--json"])
    return result.exit_code, json.loads(result.stdout), result.output


def test_db_status_reports_the_external_server(env, monkeypatch) -> None:
    """Before: `db status` ignored DATABASE_URL and described the embedded server (exit 0)."""
    assert _cli("db", "migrate")[0] == 0
    code, info, _ = _status(monkeypatch, env.url("engine_app", APP_PASSWORD, "engine"))
    assert code == 0 and info["external"] is True and info["reachable"] is True
    assert APP_PASSWORD not in json.dumps(info) and "engine_app:***@127.0.0.1" in info["url"]
    assert info["server_version"][0].isdigit() and info["tls"] is True and info["sslmode"] == "verify-full"
    assert (info["role"], info["superuser"], info["database"]) == ("engine_app", False, "engine")
    assert pgvector_problem(info["pgvector"], info["pgvector_available"]) is None and info["pgvector_problem"] is None
    assert info["schema_version"] == max(n for n, _, _ in migrations()) and info["pending_migrations"] == []
    assert "pgdata" not in info  # nothing about the embedded server


def test_db_status_names_pending_migrations_and_a_missing_pgvector(env, monkeypatch) -> None:
    code, info, _ = _status(monkeypatch, env.url("engine_app", APP_PASSWORD, "bare"))
    assert code == 0 and info["reachable"] is True and info["schema_version"] is None
    assert info["pending_migrations"] == [name for _, name, _ in migrations()]
    assert info["pgvector"] is None and info["pgvector_available"]  # there to create, by an administrator


def test_db_status_of_a_server_that_refuses_is_exit_4_without_the_password(env, monkeypatch) -> None:
    code, info, output = _status(monkeypatch, env.url("engine_app", "not-the-password", "engine"))
    assert code == 4 and info["reachable"] is False and "password authentication failed" in info["error"]
    assert "not-the-password" not in output and "embedded" not in output


def test_keyword_style_dsn_with_a_quoted_password_is_redacted_whole(env, monkeypatch) -> None:
    """`password='Sekrit Pw9'` was printed whole, `password=Sek,rit9Pw` as `***,rit9Pw`."""
    with env.admin() as admin:
        admin.execute("DROP ROLE IF EXISTS kw_app")
        admin.execute("CREATE ROLE kw_app LOGIN PASSWORD 'Sek,rit 9Pw'")
    dsn = (f"host=127.0.0.1 port={env.port} dbname=engine user=kw_app password='Sek,rit 9Pw' "
           f"sslmode=verify-full sslrootcert={env.ca_file}")
    code, info, output = _status(monkeypatch, dsn)
    assert code == 0 and info["reachable"] is True and info["role"] == "kw_app", output
    assert "Sek" not in output and "rit 9Pw" not in output and "password=*** sslmode=verify-full" in info["url"]
    assert info["pending_migrations"] is None and "may not read schema_migrations" in info["schema_error"]
    code, info, output = _status(monkeypatch, dsn.replace("'Sek,rit 9Pw'", "Sek,rit9Pw-wrong"))
    assert code == 4 and "Sek" not in output and "rit9Pw" not in output
