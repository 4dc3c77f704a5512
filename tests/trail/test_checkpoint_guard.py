"""Never sign inconsistently (issue 32 item 1, issue 34 items 1-2): before a checkpoint is signed, the previous
ones (local log beside the key, latest database row) must be signed by this host's key and extended by the live
log; a checkpoint signed inside a transaction that rolls back is a leftover, not tampering; no key is created
while the log has checkpoints."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from engine.cli.main import app
from engine.errors import ConfigError, ExitCode, IntegrityError
from engine.trail import local_log, signing
from engine.trail import store as audit_trail
from engine.trail.checkpoints import create_checkpoint
from engine.trail.verify import verify_trail
from tests.trail.conftest import answer, rewrite, superuser

runner = CliRunner()


def _cli(settings, *args: str):
    env = {"DATABASE_URL": settings.database_url, "EVIDENCE_HOME": str(settings.home)}
    return runner.invoke(app, list(args), env=env)


def _rows(trail) -> int:
    return len(audit_trail.checkpoints(trail.conn))


@pytest.mark.parametrize("seq", [1, 3], ids=["first-record", "last-record"])
def test_rewritten_record_and_deleted_checkpoints_refuse_to_sign(trail, seq: int) -> None:
    """A database-only attacker rewrites a record, recomputes the hashes and deletes the checkpoint rows: the
    local log beside the key still holds the root of size 3, so signing size 3 again is refused."""
    rewrite(trail, seq)
    superuser(trail.conn, "DELETE FROM trail_checkpoints")
    with pytest.raises(IntegrityError) as caught:
        create_checkpoint(trail.conn, trail.settings)
    message = str(caught.value)
    assert "refusing to sign" in message and "tree size 3" in message and "local log" in message
    assert "another root for the same tree size" in message and "records 1..3 were rewritten" in message
    assert _rows(trail) == 0  # nothing was signed
    cli = _cli(trail.settings, "trail", "checkpoint")
    assert cli.exit_code == ExitCode.INTEGRITY and "refusing to sign" in cli.output


def test_a_new_audit_on_a_rewritten_log_is_recorded_but_not_signed(trail, embedder) -> None:
    rewrite(trail, 2)
    superuser(trail.conn, "DELETE FROM trail_checkpoints")
    with pytest.raises(IntegrityError, match="does not extend it"):
        answer(trail.conn, trail.settings, embedder, "How often must user access rights be reviewed?")
    assert audit_trail.head(trail.conn)[0] == 4 and _rows(trail) == 0


def test_removed_records_refuse_to_sign(trail) -> None:
    superuser(trail.conn, "DELETE FROM trail_checkpoints")
    superuser(trail.conn, "DELETE FROM audits WHERE seq = 3")
    with pytest.raises(IntegrityError, match="the tree shrank"):
        create_checkpoint(trail.conn, trail.settings)


@pytest.mark.parametrize("note", ["", "evidence-engine/x\n3\nAAAA\n\n\u2014 evidence-engine/x AAAA\n"],
                         ids=["no-note", "forged-note"])
def test_unsigned_checkpoint_row_is_not_trusted(trail, note: str) -> None:
    """The writer role may INSERT: a row it made up is refused as the previous checkpoint, never extended."""
    latest = audit_trail.latest_note_checkpoint(trail.conn)
    audit_trail.insert_checkpoint(trail.conn, seq=5, head_hash=latest["head_hash"], signed_at=latest["signed_at"],
                                  key_fingerprint=latest["key_fingerprint"], payload=note, signature="00" * 64,
                                  format="c2sp-note", root_hash=latest["root_hash"], origin=latest["origin"],
                                  note=note)
    with pytest.raises(IntegrityError, match="does not verify with this host's key"):
        create_checkpoint(trail.conn, trail.settings)


def test_an_intact_log_signs_on(trail, embedder) -> None:
    before = _rows(trail)
    answer(trail.conn, trail.settings, embedder, "How often must user access rights be reviewed?")
    assert _rows(trail) == before + 1 and verify_trail(trail.conn, trail.settings).ok


def test_rolled_back_transaction_leaves_no_false_tamper_alarm(trail, embedder) -> None:
    """A batch records the audit and its checkpoint in one transaction; when the commit fails, the checkpoint
    already in the local log is a leftover of a transaction that rolled back, not a deleted checkpoint."""
    with pytest.raises(RuntimeError), trail.conn.transaction():
        appended = answer(trail.conn, trail.settings, embedder, "How often must user access rights be reviewed?")
        assert appended.seq == 4
        raise RuntimeError("the commit fails")
    leftover = local_log.entries(trail.settings)[-1]
    assert leftover["seq"] == 4 and leftover["xact"]
    report = verify_trail(trail.conn, trail.settings)
    assert report.ok, report.problems
    assert len(report.notices) == 1 and "rolled back" in report.notices[0] and "seq 4" in report.notices[0]
    cli = _cli(trail.settings, "trail", "verify")
    assert cli.exit_code == 0 and "uncommitted leftover" in cli.output
    # the next audit takes seq 4 with another record: signing it is no equivocation with the leftover
    again = answer(trail.conn, trail.settings, embedder, "When must a personal data breach be notified?")
    assert again.seq == 4 and verify_trail(trail.conn, trail.settings).ok


def test_committed_transaction_checkpoint_deleted_is_still_caught(trail, embedder) -> None:
    with trail.conn.transaction():
        answer(trail.conn, trail.settings, embedder, "How often must user access rights be reviewed?")
    assert local_log.entries(trail.settings)[-1]["xact"]
    superuser(trail.conn, "DELETE FROM trail_checkpoints WHERE seq = 4")
    report = verify_trail(trail.conn, trail.settings)
    assert not report.ok and "seq 4 is in the local log, not in the database" in report.problems[0].message


@pytest.mark.parametrize("lost", ["private-key", "keys-folder"])
def test_no_key_is_created_while_the_log_has_checkpoints(trail, embedder, lost: str) -> None:
    key_file = trail.settings.signing_key_file
    if lost == "private-key":
        key_file.unlink()
    else:
        shutil.rmtree(key_file.parent)
    with pytest.raises(ConfigError) as caught:
        answer(trail.conn, trail.settings, embedder, "How often must user access rights be reviewed?")
    assert str(key_file) in str(caught.value) and "EVIDENCE_TRAIL_KEY_FILE" in str(caught.value)
    assert "Restore" in str(caught.value) and not key_file.exists()
    for args in (("trail", "checkpoint"), ("trail", "public-key")):
        cli = _cli(trail.settings, *args)
        assert cli.exit_code == ExitCode.CONFIG and "is missing" in cli.output, args
    assert not key_file.exists()


def test_another_hosts_key_refuses_to_sign(trail) -> None:
    """A second worker host with its own key (EVIDENCE_TRAIL_KEY_FILE not shared) must not sign the shared log."""
    key_file = trail.settings.signing_key_file
    shutil.rmtree(key_file.parent)
    signing.load_or_create(key_file)  # that host's own key, made before it saw the log
    with pytest.raises(IntegrityError) as caught:
        create_checkpoint(trail.conn, trail.settings)
    assert "was signed by key" in str(caught.value) and "EVIDENCE_TRAIL_KEY_FILE" in str(caught.value)


def test_checkpoint_note_in_the_local_log_is_one_json_line(trail) -> None:
    line = local_log.log_path(trail.settings).read_text().splitlines()[-1]
    entry = json.loads(line)
    assert entry["seq"] == 3 and "xact" not in entry  # signed outside any transaction: after the commit


def test_ask_with_the_key_deleted_records_but_neither_signs_nor_makes_a_key(trail, tmp_path) -> None:
    """Issue 34 item 1: `ask --pdf` after the private key was deleted used to exit 0 with a new key."""
    key_file = trail.settings.signing_key_file
    key_file.unlink()
    result = _cli(trail.settings, "ask", "How long must transaction records be kept?", "--pdf",
                  str(tmp_path / "answer.pdf"))
    assert result.exit_code == ExitCode.CONFIG and str(key_file) in result.output.replace("\n", "")
    assert not key_file.exists() and not (tmp_path / "answer.pdf").exists()
    assert audit_trail.head(trail.conn)[0] == 4  # the audit is recorded; only the signature is withheld


def test_signing_reads_only_the_end_of_the_local_log(trail) -> None:
    every = local_log.entries(trail.settings)
    last = local_log.log_path(trail.settings).read_text().splitlines()[-1]
    tail = local_log.latest_entries(trail.settings, span=len(last) + 40)  # the line before is cut: dropped
    assert [e["signature"] for e in tail] == [every[-1]["signature"]] and tail[0]["line"] is None
    whole = local_log.latest_entries(trail.settings, span=1 << 20)
    assert [e["signature"] for e in whole] == [e["signature"] for e in every]


def test_a_line_still_being_written_by_another_signer_is_not_read(trail) -> None:
    """Signing runs outside the append lock: another process may be halfway through writing its line."""
    path = local_log.log_path(trail.settings)
    whole = local_log.entries(trail.settings)
    line = path.read_text().splitlines()[-1]
    with path.open("a") as handle:
        handle.write(line[:len(line) // 2])
    assert [e["signature"] for e in local_log.latest_entries(trail.settings)] == [e["signature"] for e in whole]
    assert [e["signature"] for e in local_log.entries(trail.settings)] == [e["signature"] for e in whole]
    create_checkpoint(trail.conn, trail.settings)


def test_a_leftover_from_before_transaction_marks_is_still_reported_with_a_hint(trail, embedder) -> None:
    """Without its transaction id (written by an older engine) a leftover cannot be told from a rewrite: it stays
    a failure, and the message says both readings."""
    with pytest.raises(RuntimeError), trail.conn.transaction():
        answer(trail.conn, trail.settings, embedder, "How often must user access rights be reviewed?")
        raise RuntimeError("the commit fails")
    answer(trail.conn, trail.settings, embedder, "When must a personal data breach be notified?")
    path = local_log.log_path(trail.settings)
    lines = path.read_text().splitlines()
    old = [json.loads(line) for line in lines]
    path.write_text("".join(json.dumps({k: v for k, v in e.items() if k != "xact"}) + "\n" for e in old))
    report = verify_trail(trail.conn, trail.settings)
    assert not report.ok and "a batch signed this before its commit failed" in report.problems[0].message
