"""The CLI as an attacker or a careless user meets it: bad files, links, secrets in DATABASE_URL, an
unusable EVIDENCE_HOME, narrow terminals, unexpected failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.cli import main as cli
from engine.cli.common import err
from engine.cli.main import app
from tests.helpers import RETENTION_MD, write_pdf

runner = CliRunner()
SECRET = "S3cretPassw0rd"


@pytest.fixture()
def cli_env(conn, settings, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    monkeypatch.setenv("EVIDENCE_HOME", str(settings.home))
    return settings


def _lines(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


def test_malformed_docx_is_named_the_others_are_stored_exit_3(cli_env, tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text(RETENTION_MD)
    (tmp_path / "broken.docx").write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    result = runner.invoke(app, ["ingest", str(tmp_path)])
    assert result.exit_code == 3
    failed = _lines(result.stderr, "failed")
    assert len(failed) == 1 and str(tmp_path / "broken.docx") in failed[0]
    assert "Traceback" not in result.output
    assert "1 documents" in result.stdout and "1 failed" in result.stdout


def test_ingest_of_good_files_exits_0(cli_env, tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text(RETENTION_MD)
    assert runner.invoke(app, ["ingest", str(tmp_path)]).exit_code == 0


def test_progress_lines_show_files_chunks_rate_eta_and_json_is_quiet(cli_env, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(cli, "PROGRESS_EVERY_S", 0.0)
    for i in range(2):
        (tmp_path / f"reg{i}.md").write_text(RETENTION_MD.replace("six years", f"{i + 6} years"))
    shown = runner.invoke(app, ["ingest", str(tmp_path)])
    progress = _lines(shown.stderr, "progress:")
    assert shown.exit_code == 0 and progress
    assert all(word in progress[-1] for word in ("2/2 files", "chunks embedded", "chunks/s", "ETA"))
    (tmp_path / "reg2.md").write_text(RETENTION_MD.replace("six years", "ten years"))
    quiet = runner.invoke(app, ["ingest", str(tmp_path), "--json"])
    assert quiet.exit_code == 0 and "progress:" not in quiet.stderr
    assert json.loads(quiet.stdout)["documents"] == 1


def test_symlink_out_of_the_folder_is_refused_unless_followed(cli_env, tmp_path: Path) -> None:
    root, outside = tmp_path / "corpus", tmp_path / "elsewhere"
    root.mkdir()
    outside.mkdir()
    (root / "reg.md").write_text(RETENTION_MD)
    (outside / "secret.txt").write_text("The secret rule: a firm must never tell.")
    (root / "link.txt").symlink_to(outside / "secret.txt")
    refused = runner.invoke(app, ["ingest", str(root), "--source-type", "regulation"])
    assert refused.exit_code == 3
    line = _lines(refused.stderr, "link.txt")[0]
    assert "outside" in line and "--follow-symlinks" in line and str(outside / "secret.txt") in line
    followed = runner.invoke(app, ["ingest", str(root), "--follow-symlinks", "--json", "--source-type", "regulation"])
    assert followed.exit_code == 0
    assert {Path(f["path"]).name: f["status"] for f in json.loads(followed.stdout)["files"]}["link.txt"] == "added"


def test_pdf_warnings_and_odd_names_are_attributed_and_escaped(cli_env, tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "plain.pdf", "<p>A firm must keep records for six years.</p>").read_bytes()
    (tmp_path / "junk-header.pdf").write_bytes(b"junk" + pdf)
    (tmp_path / "bad\nname.txt").write_bytes(b"")
    result = runner.invoke(app, ["ingest", str(tmp_path), "--source-type", "regulation"])
    assert result.exit_code == 3
    for line in _lines(result.stderr, "pdf header"):
        assert line.startswith("warning ") and "junk-header.pdf" in line
    assert _lines(result.stderr, "pdf header")
    escaped = _lines(result.stderr, "bad\\nname.txt")
    assert len(escaped) == 1 and escaped[0].startswith("failed ") and "empty" in escaped[0]


def test_error_lines_are_not_wrapped_on_a_narrow_terminal(cli_env, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(err, "width", 40)
    missing = tmp_path / ("a-rather-long-folder-name-" * 3) / "no-such-report-file.pdf"
    result = runner.invoke(app, ["report", "verify", str(missing), "--offline"])
    assert result.exit_code != 0
    assert _lines(result.stderr, str(missing)), result.stderr


# --- secrets -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("url", [
    f"postgresql://auditor:{SECRET}@127.0.0.1:1/evidence",
    f"host=127.0.0.1 port=1 user=auditor password={SECRET}",
    f"postgresql://auditor:{SECRET}@127.0.0.1:not-a-port/evidence",
    f"host=127.0.0.1 password={SECRET} junk",
], ids=["url", "keywords", "bad-port", "malformed"])
def test_password_in_database_url_is_never_printed(monkeypatch, tmp_path: Path, url: str) -> None:
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("EVIDENCE_HOME", str(tmp_path))
    result = runner.invoke(app, ["documents"])
    assert result.exit_code in (2, 4)
    assert SECRET not in result.output and "error:" in result.stderr
    assert "***" in result.output or "not a valid PostgreSQL connection string" in result.stderr


def test_db_url_redacts_unless_asked(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DATABASE_URL", f"postgresql://auditor:{SECRET}@db.internal:5432/evidence")
    monkeypatch.setenv("EVIDENCE_HOME", str(tmp_path))
    hidden = runner.invoke(app, ["db", "url"])
    assert hidden.exit_code == 0 and SECRET not in hidden.stdout and "auditor:***@db.internal" in hidden.stdout
    shown = runner.invoke(app, ["db", "url", "--show-password"])
    assert SECRET in shown.stdout


def test_unexpected_failure_is_one_redacted_message_without_locals(cli_env, monkeypatch) -> None:
    from engine.search import store

    def boom(*args, **kwargs):
        raise TypeError(f"broken while talking to postgresql://auditor:{SECRET}@db/x")

    monkeypatch.setattr(store, "list_documents", boom)
    result = runner.invoke(app, ["documents"])
    assert result.exit_code == 1
    assert SECRET not in result.output and "unexpected TypeError" in result.stderr
    assert "database_url" not in result.output  # no local variables (settings) in the traceback


# --- an unusable EVIDENCE_HOME -------------------------------------------------------------------------

@pytest.fixture()
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "regular-file"
    path.write_text("not a directory")
    return path


@pytest.mark.parametrize(("home", "reason"), [
    ("{file}/evidence", "a part of the path is a file"),
    ("{file}", "not a directory"),
    ("/proc/evidence-engine-test", "cannot create it"),
    ("/proc/self", "cannot create files in it"),
], ids=["through-a-file", "is-a-file", "under-proc", "proc-dir"])
@pytest.mark.parametrize("command", [["db", "status"], ["db", "status", "--json"], ["documents"]],
                         ids=["status", "status-json", "documents"])
def test_unusable_home_is_a_clear_error(monkeypatch, a_file: Path, home: str, reason: str, command: list[str]) -> None:
    path = home.format(file=a_file)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("EVIDENCE_HOME", path)
    result = runner.invoke(app, command)
    assert result.exit_code == 2, result.output
    assert f"EVIDENCE_HOME={path} is not usable" in result.stderr and reason in result.stderr
    assert "Traceback" not in result.output and result.stdout == ""


def test_usable_home_status_succeeds(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("EVIDENCE_HOME", str(tmp_path / "fresh-home"))
    result = runner.invoke(app, ["db", "status", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["running"] is False
