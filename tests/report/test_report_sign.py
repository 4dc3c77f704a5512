"""Report signatures without a database: an organisation's PKCS#12 signs instead of the engine's key; the
engine's own signature verifies with the trail key only, and a change to the signed file is named. A report
is certified and signed once (an insider's second signature over a changed revision fails); a --trust-cert
chain needs a document-signing leaf, CA issuers and validity now."""

from __future__ import annotations

import io
import json
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
from engine.trail import signing
from engine.trail.standalone_verify import verify_report


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


def test_a_report_is_certified_and_signed_once(tmp_path) -> None:
    signed, trail = _engine_signed(tmp_path)
    result = verify_report(signed, trail)
    assert result.signature["certified"] and result.signature["signatures"] == 1


def test_an_insider_signing_a_changed_report_again_fails(tmp_path, monkeypatch) -> None:
    """An incremental update adds a visible annotation and is signed again with the engine's own report key:
    every signature verifies, yet the report is no longer the one issued."""
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import fields, validation

    signed, trail = _engine_signed(tmp_path)
    ident = report_sign.identity(Settings(home=tmp_path, database_url=None))
    monkeypatch.setattr(validation, "read_certification_data", lambda reader: None)  # a tool ignoring DocMDP
    writer = IncrementalPdfFileWriter(io.BytesIO(signed))
    page = writer.root["/Pages"]["/Kids"][0].get_object()
    note = writer.add_object(generic.DictionaryObject({
        generic.pdf_name("/Type"): generic.pdf_name("/Annot"),
        generic.pdf_name("/Subtype"): generic.pdf_name("/FreeText"),
        generic.pdf_name("/Rect"): generic.ArrayObject([generic.NumberObject(v) for v in (50, 700, 400, 740)]),
        generic.pdf_name("/Contents"): generic.TextStringObject("APPROVED BY THE BOARD")}))
    page[generic.pdf_name("/Annots")] = generic.ArrayObject([note])
    writer.update_container(page)
    fields.append_signature_field(writer, fields.SigFieldSpec("Insider"))
    resigned = _sign_again(writer, ident)
    problems = _signature_problems(resigned, trail)
    assert any("carries 2 signatures" in p for p in problems), problems
    assert any("changed after it was signed" in p and "incremental update" in p for p in problems), problems


def _sign_again(writer: Any, ident: Any) -> bytes:
    from asn1crypto import keys as asn1_keys
    from asn1crypto import x509 as asn1_x509
    from cryptography.hazmat.primitives import serialization
    from pyhanko.sign import signers
    from pyhanko_certvalidator.registry import SimpleCertificateStore

    def der(cert: x509.Certificate) -> Any:
        return asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER))

    signer = signers.SimpleSigner(
        signing_cert=der(ident.cert), cert_registry=SimpleCertificateStore.from_certs([der(c) for c in ident.chain]),
        signing_key=asn1_keys.PrivateKeyInfo.load(ident.key.private_bytes(
            serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())))
    out = io.BytesIO()
    signers.PdfSigner(signers.PdfSignatureMetadata(field_name="Insider"), signer=signer).sign_pdf(
        writer, existing_fields_only=True, output=out)
    return out.getvalue()


def _certificate(name: str, key: Any, issuer: tuple[x509.Name, Any] | None, *, ca: bool = False,
                 usage: x509.KeyUsage | None = None, eku: list[x509.ObjectIdentifier] | None = None,
                 days: tuple[int, int] = (-1, 365)) -> x509.Certificate:
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Example Bank"),
                         x509.NameAttribute(NameOID.COMMON_NAME, name)])
    issuer_name, issuer_key = issuer or (subject, key)
    now = datetime.now(UTC)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer_name).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now + timedelta(days=days[0]))
               .not_valid_after(now + timedelta(days=days[1]))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if usage is not None:
        builder = builder.add_extension(usage, critical=True)
    if eku is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage(eku), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _usage(*, sign: bool = False, cert_sign: bool = False, encipher: bool = False) -> x509.KeyUsage:
    return x509.KeyUsage(digital_signature=sign, content_commitment=False, key_encipherment=encipher,
                         data_encipherment=False, key_agreement=False, key_cert_sign=cert_sign, crl_sign=cert_sign,
                         encipher_only=False, decipher_only=False)


def _signed_by(leaf_key: Any, leaf: x509.Certificate, chain: list[x509.Certificate]) -> bytes:
    return report_sign.sign_pdf(_pdf(), report_sign.Identity(leaf_key, leaf, chain, "test"), reason="test")


def _trust_problems(pdf: bytes, anchors: list[x509.Certificate]) -> list[str]:
    key = Ed25519PrivateKey.generate().public_key()
    return [p for p in verify_report(pdf, key, anchors).problems if "embedded audit record" not in p]


def test_trusted_chains_need_a_signing_leaf_and_ca_issuers(tmp_path) -> None:
    from cryptography.x509.oid import ExtendedKeyUsageOID

    ca_key, leaf_key, tls_key, sub_key = (rsa.generate_private_key(public_exponent=65537, key_size=2048)
                                          for _ in range(4))
    ca = _certificate("Example Bank CA", ca_key, None, ca=True, usage=_usage(cert_sign=True))
    issuer = (ca.subject, ca_key)
    signer = _certificate("Example Bank compliance", leaf_key, issuer, usage=_usage(sign=True),
                          eku=[x509.ObjectIdentifier("1.3.6.1.5.5.7.3.36")])
    assert _trust_problems(_signed_by(leaf_key, signer, [ca]), [ca]) == []
    # A TLS server certificate of the same CA: not for signing documents.
    tls = _certificate("www.example.org", tls_key, issuer, usage=_usage(encipher=True),
                       eku=[ExtendedKeyUsageOID.SERVER_AUTH])
    (problem,) = _trust_problems(_signed_by(tls_key, tls, [ca]), [ca])
    assert "is not for signatures" in problem
    tls_signing = _certificate("www.example.org", tls_key, issuer, usage=_usage(sign=True),
                               eku=[ExtendedKeyUsageOID.SERVER_AUTH])
    (problem,) = _trust_problems(_signed_by(tls_key, tls_signing, [ca]), [ca])
    assert "is not for signing documents (extended key usage serverAuth" in problem
    # The non-CA signing leaf issues a certificate of its own: refused, it cannot vouch.
    sub = _certificate("made by the leaf", sub_key, (signer.subject, leaf_key), usage=_usage(sign=True))
    (problem,) = _trust_problems(_signed_by(sub_key, sub, [signer, ca]), [ca])
    assert "Example Bank compliance" in problem and "is not a CA" in problem


def test_an_expired_certificate_cannot_claim_an_earlier_signing_time(tmp_path) -> None:
    from engine.trail.standalone_verify import parse_cms, signed_ranges, trust_path

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    expired = _certificate("Example Bank compliance", key, None, usage=_usage(sign=True), days=(-400, -30))
    cms = parse_cms(signed_ranges(_signed_by(key, expired, []))[0].der)
    cms.signing_time = datetime.now(UTC) - timedelta(days=60)  # what the holder of the expired key claims
    with pytest.raises(Exception, match="is not valid now"):
        trust_path(cms, Ed25519PrivateKey.generate().public_key(), [expired])


def test_keys_encrypted_with_a_passphrase_from_a_file(tmp_path) -> None:
    passphrase = tmp_path / "passphrase"
    passphrase.write_text("correct horse battery staple\n")
    settings = Settings(home=tmp_path, database_url=None, trail_key_passphrase_file=passphrase)
    key, created = signing.load_or_create(settings.signing_key_file, settings.trail_passphrase)
    assert created and b"ENCRYPTED PRIVATE KEY" in settings.signing_key_file.read_bytes()
    ident = report_sign.identity(settings)  # the report-signing key is made encrypted too
    assert b"ENCRYPTED PRIVATE KEY" in report_sign.identity_file(settings).read_bytes()
    signed = report_sign.sign_pdf(_pdf(), ident, reason="test")
    assert _signature_problems(signed, key.public_key()) == []
    bare = Settings(home=tmp_path, database_url=None)
    with pytest.raises(ConfigError, match="is encrypted: give its passphrase with EVIDENCE_TRAIL_KEY_PASSPHRASE_FILE"):
        signing.load_existing(bare.signing_key_file, bare.trail_passphrase)
    with pytest.raises(ConfigError, match="is encrypted"):
        report_sign.identity(bare)
    wrong = Settings(home=tmp_path, database_url=None, trail_key_passphrase="not it")
    with pytest.raises(ConfigError, match="the passphrase does not decrypt"):
        signing.load_existing(wrong.signing_key_file, wrong.trail_passphrase)
    empty = tmp_path / "empty"
    empty.write_text("")
    with pytest.raises(ConfigError, match="is empty"):
        _ = Settings(home=tmp_path, database_url=None, trail_key_passphrase_file=empty).trail_passphrase


def test_a_passphrase_leaves_results_and_records_alone(tmp_path) -> None:
    from engine.trail.record import public_settings

    plain = Settings(home=tmp_path, database_url=None)
    secret = Settings(home=tmp_path, database_url=None, trail_key_passphrase="hunter2 hunter2")
    assert plain.fingerprint() == secret.fingerprint()
    assert "hunter2" not in json.dumps(public_settings(secret))
