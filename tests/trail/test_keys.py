"""Key custody (issue 32 item 6): `trail rotate-key` (the rotation checkpoint signed by the old and the new key,
the old key archived, verifiers accepting the history across it and refusing a retired key beyond it), separate
checkpoint and certificate keys (two for a new installation, one still working for an old one), and an external
signer command in place of the key file."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.cli.main import app
from engine.config import Settings
from engine.errors import ConfigError, ExitCode, IntegrityError
from engine.trail import keyring, rotation, signing
from engine.trail import store as audit_trail
from engine.trail import verify as trail_verify
from engine.trail.checkpoints import create_checkpoint
from engine.trail.proofs import inclusion_bundle
from engine.trail.signer import CommandSigner, Signer
from engine.trail.standalone_verify import (
    VerifyError,
    load_public_keys,
    split_note,
    verified_checkpoint,
    verify_bundle,
)
from engine.trail.verify import verify_trail
from tests.trail.conftest import rewrite

runner = CliRunner()


def _cli(settings: Settings, *args: str, **env: str):
    return runner.invoke(app, list(args), env={"DATABASE_URL": settings.database_url,
                                               "EVIDENCE_HOME": str(settings.home), **env})


def _proof(trail, audit) -> tuple[dict, bytes]:
    bundle = inclusion_bundle(trail.conn, trail.settings, audit.audit_id)
    return bundle, audit_trail.get(trail.conn, audit.audit_id)["canonical"].encode()


def test_rotation_signs_with_both_keys_archives_the_old_one_and_keeps_the_log_whole(trail) -> None:
    settings = trail.settings
    old_pem, old = settings.signing_key_file.read_bytes(), signing.load_public(settings.signing_key_file)
    before = create_checkpoint(trail.conn, settings)
    old_bundle, record = _proof(trail, trail.audits[0])
    done = rotation.rotate_checkpoint_key(trail.conn, settings)
    new = signing.load_public(settings.signing_key_file)
    assert signing.fingerprint(new) == done["new"] != done["retired"] == signing.fingerprint(old)
    # The rotation checkpoint: one note, the new key's signature line first, the old key's after it.
    assert len(split_note(done["note"])[1]) == 2
    assert verified_checkpoint(done["note"], new) == verified_checkpoint(done["note"], old)
    assert done["origin"] == before.origin and done["tree_size"] == 3
    assert Path(done["archived"]).read_bytes() == old_pem  # retired, not deleted
    assert [h["retired"] for h in keyring.history(settings)] == [done["retired"]]
    after = create_checkpoint(trail.conn, settings)  # the new key alone, under the same log name
    assert after.origin == before.origin and len(split_note(after.note)[1]) == 1
    verified_checkpoint(after.note, new)
    assert verify_trail(trail.conn, settings).ok
    # Verifiers given both keys accept proofs from either side of the rotation; the new key alone does not.
    keys = load_public_keys("".join(signing.public_pem(k) for k in keyring.public_keys(settings)).encode())
    assert len(keys) == 2
    verify_bundle(old_bundle, record, keys)
    verify_bundle(_proof(trail, trail.audits[0])[0], record, keys)
    with pytest.raises(VerifyError, match="not signed by the given public key"):
        verify_bundle(old_bundle, record, new)


def test_a_retired_key_signs_nothing_after_its_rotation(trail) -> None:
    old_key = signing.load_existing(trail.settings.signing_key_file)
    rotation.rotate_checkpoint_key(trail.conn, trail.settings)
    spans = keyring.spans(trail.settings)
    assert [(s.first, s.last) for s in spans] == [(0, 3), (3, None)]
    origin = split_note(audit_trail.latest_note_checkpoint(trail.conn)["note"])[0].split("\n")[0]
    root = "A" * 43 + "="
    stolen = signing.sign_note(old_key, origin, f"{origin}\n4\n{root}\n")
    with pytest.raises(VerifyError, match="by a retired key after its rotation"):
        trail_verify._verified_by_span(stolen, spans)
    trail_verify._verified_by_span(signing.sign_note(old_key, origin, f"{origin}\n2\n{root}\n"), spans)  # in span


def test_rotation_refuses_a_log_that_fails_its_checks(trail) -> None:
    pem = trail.settings.signing_key_file.read_bytes()
    rewrite(trail, 2)
    with pytest.raises(IntegrityError, match="refusing to sign"):
        rotation.rotate_checkpoint_key(trail.conn, trail.settings)
    assert trail.settings.signing_key_file.read_bytes() == pem and keyring.history(trail.settings) == []


def test_rotate_key_through_the_cli(trail) -> None:
    done = _cli(trail.settings, "trail", "rotate-key", "--json")
    assert done.exit_code == ExitCode.SUCCESS, done.output
    assert json.loads(done.stdout)["tree_size"] == 3
    every = _cli(trail.settings, "trail", "public-key", "--all")
    assert every.exit_code == 0 and every.stdout.count("BEGIN PUBLIC KEY") == 2
    assert _cli(trail.settings, "trail", "verify").exit_code == ExitCode.SUCCESS
    trail.settings.signing_key_file.unlink()
    gone = _cli(trail.settings, "trail", "rotate-key")
    assert gone.exit_code == ExitCode.CONFIG and "no checkpoint key" in gone.output and "restore it" in gone.output


def test_a_new_installation_has_two_keys(trail) -> None:
    """The first checkpoint of the fixture's trail made both: the certificate key issues report certificates."""
    from engine.report import sign as report_sign

    settings = trail.settings
    cert_keys = keyring.cert_public_keys(settings)
    assert cert_keys is not None and keyring.cert_key_file(settings).exists()
    assert signing.fingerprint(cert_keys[0]) != signing.fingerprint(keyring.current_public(settings))
    ident = report_sign.identity(settings)
    cert_keys[0].verify(ident.cert.signature, ident.cert.tbs_certificate_bytes)  # the leaf: by the certificate key
    assert "certificate key" in ident.chain[0].subject.rfc4514_string()
    checkpoint_key = keyring.current_public(settings)  # which the checkpoint key certifies, once
    checkpoint_key.verify(ident.chain[0].signature, ident.chain[0].tbs_certificate_bytes)
    with pytest.raises(Exception):  # noqa: B017 - the checkpoint key issues no report-signing certificate
        checkpoint_key.verify(ident.cert.signature, ident.cert.tbs_certificate_bytes)
    shown = _cli(settings, "trail", "public-key", "--certificates")
    assert shown.exit_code == 0 and load_public_keys(shown.stdout.encode())[0] == cert_keys[0]


def test_an_installation_with_one_key_keeps_working_until_split(tmp_path) -> None:
    from engine.report import sign as report_sign
    from engine.trail.standalone_verify import verify_report
    from tests.report.test_report_sign import _pdf

    settings = Settings(home=tmp_path, database_url=None)
    trail_key, _ = signing.load_or_create(settings.signing_key_file)  # an installation from before the split
    assert keyring.cert_public_keys(settings) is None
    old_report = report_sign.sign_pdf(_pdf(), report_sign.identity(settings), reason="test")

    def problems(pdf: bytes, **kwargs) -> list[str]:
        found = verify_report(pdf, trail_key.public_key(), **kwargs).problems
        return [p for p in found if "embedded audit record" not in p]

    assert problems(old_report) == []  # one key vouches for both, as before
    done = rotation.rotate_cert_key(settings)
    assert done["retired_role"] == "checkpoint key" and Path(done["archived_identity"]).exists()
    cert_keys = keyring.cert_public_keys(settings)
    assert [signing.fingerprint(k) for k in cert_keys] == [done["new"], done["retired"]]
    new_report = report_sign.sign_pdf(_pdf(), report_sign.identity(settings), reason="test")
    assert problems(new_report, cert_keys=cert_keys) == [] and problems(old_report, cert_keys=cert_keys) == []
    assert problems(new_report) == []  # the checkpoint key still vouches, through the certificate key it certified
    other = signing.Ed25519PrivateKey.generate().public_key()
    (problem,) = problems(new_report, cert_keys=[other])  # a pinned certificate key must be the one
    assert "not issued by the trail key" in problem


def _signer_script(tmp_path: Path, key_file: Path) -> str:
    """A stand-in for an HSM's signing tool: the message on stdin, the Ed25519 signature (hex) on stdout."""
    script = tmp_path / "hsm-sign.py"
    script.write_text(
        "import sys\n"
        "from cryptography.hazmat.primitives.serialization import load_pem_private_key\n"
        "if len(sys.argv) > 2: sys.exit(int(sys.argv[2]))\n"
        "key = load_pem_private_key(open(sys.argv[1], 'rb').read(), None)\n"
        "sys.stdout.write(key.sign(sys.stdin.buffer.read()).hex())\n")
    return f"{sys.executable} {script} {key_file}"


def test_an_external_signer_command_signs_checkpoints(trail, tmp_path) -> None:
    """The trail key moves into the 'HSM' (a script): the engine signs through the command, with no key file."""
    settings = trail.settings
    hsm = tmp_path / "hsm"
    hsm.mkdir()
    held = hsm / "key.pem"
    shutil.move(settings.signing_key_file, held)
    public = hsm / "key.pub.pem"
    public.write_text(signing.public_pem(signing.load_public(settings.signing_key_file)))
    signing.public_key_path(settings.signing_key_file).unlink()
    external = settings.model_copy(update={"trail_signer_command": _signer_script(tmp_path, held),
                                           "trail_signer_public_key": public})
    signer = keyring.checkpoint_signer(external)
    assert isinstance(signer, CommandSigner) and isinstance(signer, Signer)
    checkpoint = create_checkpoint(trail.conn, external)
    verified_checkpoint(checkpoint.note, signer.public_key())
    assert not settings.signing_key_file.exists() and verify_trail(trail.conn, external).ok
    cli = _cli(settings, "trail", "checkpoint", EVIDENCE_TRAIL_SIGNER_COMMAND=external.trail_signer_command,
               EVIDENCE_TRAIL_SIGNER_PUBLIC_KEY=str(public))
    assert cli.exit_code == ExitCode.SUCCESS, cli.output
    with pytest.raises(ConfigError, match="rotate it in the HSM"):
        rotation.rotate_checkpoint_key(trail.conn, external)
    from engine.report import sign as report_sign

    report_sign.identity_file(external).unlink(missing_ok=True)
    endorsed = report_sign.identity(external).chain[0]  # the certificate key, certified through the command
    signer.public_key().verify(endorsed.signature, endorsed.tbs_certificate_bytes)


@pytest.mark.parametrize("problem, says", [
    ("other-key", "does not verify with EVIDENCE_TRAIL_SIGNER_PUBLIC_KEY"),
    ("fails", "failed with exit status 3"),
    ("no-public-key", "without EVIDENCE_TRAIL_SIGNER_PUBLIC_KEY"),
], ids=["another-key", "command-fails", "no-public-key"])
def test_a_misconfigured_external_signer_signs_nothing(trail, tmp_path, problem: str, says: str) -> None:
    settings = trail.settings
    other = tmp_path / "other.pem"
    signing.load_or_create(other)
    command = _signer_script(tmp_path, other if problem == "other-key" else settings.signing_key_file)
    public = tmp_path / "trail.pub.pem"
    public.write_text(signing.public_pem(signing.load_public(settings.signing_key_file)))
    external = settings.model_copy(update={
        "trail_signer_command": command + (" 3" if problem == "fails" else ""),
        "trail_signer_public_key": None if problem == "no-public-key" else public})
    rows = len(audit_trail.checkpoints(trail.conn))
    with pytest.raises(ConfigError, match=says):
        create_checkpoint(trail.conn, external)
    assert len(audit_trail.checkpoints(trail.conn)) == rows
