"""`evidence db status` describes the configured server (DATABASE_URL first), and credentials in either DSN form
are redacted whole from every message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine import db as dbmod
from engine.cli.main import app
from engine.config import Settings
from engine.errors import StorageError, redact

runner = CliRunner()
REFUSED = "host=127.0.0.1 port=1 dbname=e user=u connect_timeout=2 "


@pytest.mark.parametrize(("text", "shown"), [
    ("host=db password='Sekrit Pw9' user=a", "host=db password=*** user=a"),
    ("host=db password=Sek,rit9Pw user=a", "host=db password=*** user=a"),
    ("host=db password='it\\'s, a pw' user=a", "host=db password=*** user=a"),
    ('password = "quo ted" x', "password = *** x"),
    ("postgresql://u@h/db?password=abc&sslmode=require", "postgresql://u@h/db?password=***&sslmode=require"),
    ("postgresql://u:Sek%2Crit@h/db", "postgresql://u:***@h/db"),
    ("api_key=sk-123;x and more", "api_key=*** and more"),
    ("password authentication failed for user u", "password authentication failed for user u"),
    ("no secret here: user=a host=b", "no secret here: user=a host=b"),
], ids=["quoted-space", "comma", "escaped-quote", "double-quoted", "url-query", "url", "key-semicolon",
        "auth-failed-message", "nothing"])
def test_redact_removes_a_whole_keyword_value(text: str, shown: str) -> None:
    assert redact(text) == shown


@pytest.mark.parametrize("password", ["'Sekrit Pw9'", "Sek,rit9Pw"], ids=["quoted", "comma"])
def test_db_status_of_an_unreachable_external_server(monkeypatch, tmp_path: Path, password: str) -> None:
    """Before: the embedded server's status, exit 0, whatever DATABASE_URL said."""
    monkeypatch.setenv("EVIDENCE_HOME", str(tmp_path))
    monkeypatch.setenv("DATABASE_URL", REFUSED + f"password={password}")
    result = runner.invoke(app, ["db", "status", "--json"])
    assert result.exit_code == 4
    info = json.loads(result.stdout)
    assert info["external"] is True and info["reachable"] is False and "refused" in info["error"]
    assert "Sek" not in result.output and "rit9Pw" not in result.output and "Pw9" not in result.output
    assert "pgdata" not in info and "embedded" not in result.output
    text = runner.invoke(app, ["db", "status"])
    assert text.exit_code == 4 and "reachable          False" in text.stdout and "does not answer" in text.stderr


def test_an_external_server_that_does_not_answer_is_not_sent_to_the_embedded_one(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, database_url=REFUSED + "password='Sekrit Pw9'")
    with pytest.raises(StorageError) as caught:
        dbmod.connect(settings)
    message = str(caught.value)
    assert "embedded" not in message and "DATABASE_URL" in message and "evidence db status" in message
    assert "Sekrit" not in message and "Pw9" not in message


def test_db_status_of_the_embedded_server_starts_nothing(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("EVIDENCE_HOME", str(tmp_path / "home"))
    result = runner.invoke(app, ["db", "status", "--json"])
    info = json.loads(result.stdout)
    assert result.exit_code == 0 and info["external"] is False and info["running"] is False
    assert "reachable" not in info and not (tmp_path / "home" / "pgdata").exists()


def test_db_status_of_the_running_embedded_server_has_its_schema(server_settings: Settings, monkeypatch) -> None:
    if server_settings.database_url:
        pytest.skip("the tests run against an external server")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("EVIDENCE_HOME", str(server_settings.home))
    with dbmod.connection(server_settings):
        pass  # migrated
    info = dbmod.server_status(server_settings)
    assert info["running"] is True and info["reachable"] is True and info["tls"] is False
    assert info["pending_migrations"] == [] and info["schema_version"] == max(n for n, _, _ in dbmod.migrations())
