"""Report signatures without a database: an organisation's PKCS#12 signs instead of the engine's key; the
engine's own signature verifies with the trail key only, and a change to the signed file is named."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12
from cryptography.x509.oid import NameOID

from engine.config import Settings
from engine.errors import ConfigError
from engine.report import sign as report_sign
from engine.report.standalone_verify import verify_report
from engine.trail import signing


def _pdf() -> bytes:
    from weasyprint import HTML

    out = io.BytesIO()
    HTML(string="<p>A firm must retain records for six years.</p>").write_pdf(out, pdf_variant="pdf/a-3b")
    return out.getvalue()


def _org_p12(path: Path, password: bytes) -> x509.Certificate:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Example Bank"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "Example Bank compliance")])
    now = datetime.now(UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=365)).sign(key, hashes.SHA256()))
    path.write_bytes(pkcs12.serialize_key_and_certificates(b"org", key, cert, None, BestAvailableEncryption(password)))
    return cert


@pytest.mark.parametrize("trusted", [True, False], ids=["org-ca-trusted", "org-ca-not-trusted"])
def test_organisation_pkcs12_signs_and_verifies_against_its_certificate(tmp_path, trusted) -> None:
    cert = _org_p12(tmp_path / "org.p12", b"s3cret")
    settings = Settings(home=tmp_path, database_url=None, report_signing_p12=tmp_path / "org.p12",
                        report_signing_p12_password="s3cret")
    ident = report_sign.identity(settings)
    assert ident.cert == cert and "Example Bank" in ident.cert.subject.rfc4514_string()
    signed = report_sign.sign_pdf(_pdf(), ident, reason="test")
    trail_key, _ = signing.load_or_create(settings.signing_key_file)
    result = verify_report(signed, trail_key.public_key(), [cert] if trusted else [])
    signature_problems = [p for p in result.problems if "embedded audit record" not in p]
    assert result.signature["covers_whole_file"]
    if trusted:
        assert signature_problems == [] and result.signature["trust_path"][0].endswith("O=Example Bank")
    else:
        assert any("not issued by the trail key nor by a trusted certificate" in p for p in signature_problems)


def test_wrong_pkcs12_password_is_a_clear_configuration_error(tmp_path) -> None:
    _org_p12(tmp_path / "org.p12", b"s3cret")
    settings = Settings(home=tmp_path, database_url=None, report_signing_p12=tmp_path / "org.p12",
                        report_signing_p12_password="wrong")
    with pytest.raises(ConfigError, match="EVIDENCE_REPORT_SIGNING_P12_PASSWORD"):
        report_sign.identity(settings)


def test_engine_identity_never_makes_the_trail_key(tmp_path) -> None:
    """The trail key is made only where a checkpoint is signed (and only while the log has none)."""
    settings = Settings(home=tmp_path, database_url=None)
    with pytest.raises(ConfigError, match="trail signing key .* is missing"):
        report_sign.identity(settings)
    assert not settings.signing_key_file.exists()


def test_engine_identity_is_made_once_and_issued_by_the_trail_key(tmp_path) -> None:
    settings = Settings(home=tmp_path, database_url=None)
    signing.load_or_create(settings.signing_key_file)  # as the first checkpoint does
    first, again = report_sign.identity(settings), report_sign.identity(settings)
    assert first.fingerprint == again.fingerprint
    trail = signing.load_public(settings.signing_key_file)
    trail.verify(first.cert.signature, first.cert.tbs_certificate_bytes)  # raises when not issued by it
    signing.public_key_path(settings.signing_key_file).unlink()
    settings.signing_key_file.unlink()  # a new trail key: the old certificate no longer chains to it
    signing.load_or_create(settings.signing_key_file)
    with pytest.raises(ConfigError, match="not issued by the current trail key"):
        report_sign.identity(settings)


def _engine_signed(home: Path) -> tuple[bytes, Any]:
    settings = Settings(home=home, database_url=None)
    signing.load_or_create(settings.signing_key_file)  # as the first checkpoint does
    signed = report_sign.sign_pdf(_pdf(), report_sign.identity(settings), reason="test")
    return signed, signing.load_public(settings.signing_key_file)


def _signature_problems(pdf: bytes, key: Any) -> list[str]:
    return [p for p in verify_report(pdf, key).problems if "embedded audit record" not in p]  # a bare test PDF


def test_an_engine_signed_report_verifies_with_the_trail_key(tmp_path) -> None:
    signed, trail = _engine_signed(tmp_path)
    result = verify_report(signed, trail)
    assert _signature_problems(signed, trail) == [] and result.signature["covers_whole_file"]
    assert result.signature["trust_path"][-1] == "the trail key"


def test_another_trail_key_does_not_vouch_for_the_signer(tmp_path) -> None:
    signed, _ = _engine_signed(tmp_path)
    (problem,) = _signature_problems(signed, Ed25519PrivateKey.generate().public_key())
    assert "is not issued by the trail key nor by a trusted certificate" in problem


@pytest.mark.parametrize(("change", "says"), [
    ("appended", "7 byte(s) appended after the signed range"),
    ("flipped", "do not hash to the digest in the signature: the PDF was changed inside the signed range"),
], ids=["bytes-appended", "byte-flipped-inside-the-signed-range"])
def test_a_changed_signed_report_fails_and_says_how(tmp_path, change: str, says: str) -> None:
    signed, trail = _engine_signed(tmp_path)
    if change == "appended":
        changed = signed + b"\n%junk\n"
    else:
        flipped = bytearray(signed)
        flipped[200] ^= 0x01  # inside the first signed byte range (the rendered document)
        changed = bytes(flipped)
    assert any(says in p for p in _signature_problems(changed, trail)), _signature_problems(changed, trail)
