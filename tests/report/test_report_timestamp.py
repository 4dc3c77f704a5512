"""PAdES B-T against a local timestamp authority (pyHanko's DummyTimeStamper behind a local HTTP server, no
network): a configured authority's RFC 3161 token is in the signature, `report verify` checks it, reports the
level, and judges the signer's chain at the timestamp's time."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from asn1crypto import keys as asn1_keys
from asn1crypto import tsp
from asn1crypto import x509 as asn1_x509
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from pyhanko.sign.timestamps import DummyTimeStamper

from engine.config import Settings
from engine.errors import ConfigError
from engine.report import sign as report_sign
from engine.report import timestamp as signature_timestamp
from engine.report.verify import verify_pdf
from engine.trail import signing
from engine.trail.standalone_verify import parse_cms, signed_ranges, trust_path, verify_report


def _pdf() -> bytes:
    from weasyprint import HTML

    out = io.BytesIO()
    HTML(string="<p>A firm must retain records for six years.</p>").write_pdf(out, pdf_variant="pdf/a-3b")
    return out.getvalue()


def _cert(name: str, key: Any, issuer: tuple[x509.Name, Any] | None, *, ca: bool = False,
          eku: list | None = None, days: tuple[int, int] = (-1, 365)) -> x509.Certificate:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.now(UTC)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer[0] if issuer else subject)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now + timedelta(days=days[0])).not_valid_after(now + timedelta(days=days[1]))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if eku:
        builder = builder.add_extension(x509.ExtendedKeyUsage(eku), critical=True)
    return builder.sign(issuer[1] if issuer else key, hashes.SHA256())


def _asn1(cert: x509.Certificate) -> Any:
    return asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER))


class Tsa:
    """A local RFC 3161 authority: a CA, a timestamping certificate it issued, and a pyHanko dummy stamper."""

    def __init__(self, at: datetime | None = None) -> None:
        ca_key, tsa_key = (rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2))
        self.ca = _cert("Local TSA root", ca_key, None, ca=True)
        self.cert = _cert("Local TSA", tsa_key, (self.ca.subject, ca_key), eku=[ExtendedKeyUsageOID.TIME_STAMPING],
                          days=(-30, 365))
        der = tsa_key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        self.stamper = DummyTimeStamper(tsa_cert=_asn1(self.cert), tsa_key=asn1_keys.PrivateKeyInfo.load(der),
                                        certs_to_embed=[_asn1(self.ca)], fixed_dt=at)


@pytest.fixture()
def tsa_url() -> Iterator[tuple[str, Tsa]]:
    """A timestamp authority served over HTTP on localhost, as EVIDENCE_TSA_URL would name one."""
    tsa = Tsa()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            request = tsp.TimeStampReq.load(self.rfile.read(int(self.headers["Content-Length"])))
            body = tsa.stamper.request_tsa_response(request).dump()
            self.send_response(200)
            self.send_header("Content-Type", "application/timestamp-reply")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return None

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", tsa
    finally:
        server.shutdown()


def _engine(home: Path, **extra: Any) -> tuple[Settings, Any]:
    settings = Settings(home=home, database_url=None, **extra)
    signing.load_or_create(settings.signing_key_file)  # as the first checkpoint does
    return settings, signing.load_public(settings.signing_key_file)


def _signature_problems(pdf: bytes, key: Any, **kwargs: Any) -> list[str]:
    return [p for p in verify_report(pdf, key, **kwargs).problems if "embedded audit record" not in p]


def test_a_configured_authority_timestamps_the_signature_b_t(tmp_path, tsa_url) -> None:
    url, tsa = tsa_url
    settings, trail = _engine(tmp_path, tsa_url=url)
    before = datetime.now(UTC) - timedelta(seconds=5)
    signed = report_sign.sign_pdf(_pdf(), report_sign.identity(settings), reason="test")
    stamp = signature_timestamp.check(signed, [tsa.ca])
    assert stamp.level == "B-T" and stamp.trusted and stamp.problems == [] and stamp.authority == "CN=Local TSA"
    assert before <= stamp.trusted_time <= datetime.now(UTC) + timedelta(seconds=5)
    assert _signature_problems(signed, trail, trusted_time=stamp.trusted_time) == []
    path = tmp_path / "report.pdf"
    path.write_bytes(signed)
    result = verify_pdf(path, public_key=trail, tsa_trust=[tsa.ca])
    assert result.level == "B-T" and result.timestamp is not None and result.timestamp.trusted


def test_without_an_authority_the_level_is_b_b(tmp_path) -> None:
    settings, _ = _engine(tmp_path)
    signed = report_sign.sign_pdf(_pdf(), report_sign.identity(settings), reason="test")
    stamp = signature_timestamp.check(signed, [])
    assert (stamp.level, stamp.time, stamp.problems) == ("B-B", None, [])


def test_a_timestamp_from_an_untrusted_authority_is_b_b_with_a_note(tmp_path, tsa_url) -> None:
    url, _ = tsa_url
    settings, _ = _engine(tmp_path, tsa_url=url)
    signed = report_sign.sign_pdf(_pdf(), report_sign.identity(settings), reason="test")
    stamp = signature_timestamp.check(signed, [Tsa().ca])  # another authority's root
    assert stamp.level == "B-B" and not stamp.trusted and stamp.problems == [] and stamp.trusted_time is None
    assert "does not trust" in stamp.notes[0] and "--trust-tsa" in stamp.notes[0]


def test_a_timestamp_of_another_signature_does_not_verify(tmp_path) -> None:
    settings, _ = _engine(tmp_path)
    tsa = Tsa()
    signed = report_sign.sign_pdf(_pdf(), report_sign.identity(settings), reason="test", timestamper=tsa.stamper)
    der = signed_ranges(signed)[0].der
    from asn1crypto import cms as asn1_cms

    info = asn1_cms.ContentInfo.load(der)["content"]["signer_infos"][0]
    token = signature_timestamp._token(info)
    assert signature_timestamp._verified(token, info["signature"].native, None, [tsa.ca]).level == "B-T"
    with pytest.raises(Exception, match="message imprint is not the hash of this signature"):
        signature_timestamp._verified(token, b"another signature", None, [tsa.ca])


def test_the_signer_certificate_must_be_valid_at_the_timestamped_time(tmp_path) -> None:
    """A timestamp from before the signer's certificate was valid: the chain is judged at the timestamp's time."""
    settings, trail = _engine(tmp_path)
    tsa = Tsa(at=datetime.now(UTC) - timedelta(days=10))  # the report-signing certificate is minutes old
    signed = report_sign.sign_pdf(_pdf(), report_sign.identity(settings), reason="test", timestamper=tsa.stamper)
    stamp = signature_timestamp.check(signed, [tsa.ca])
    assert stamp.level == "B-T" and any("after its timestamp" in p for p in stamp.problems)
    problems = _signature_problems(signed, trail, trusted_time=stamp.trusted_time)
    assert any("was not valid at the signing time" in p for p in problems)


def test_a_trusted_time_lets_a_signature_outlive_its_certificate() -> None:
    """B-B: an expired certificate fails (no trusted time). B-T: valid at the timestamp's time is what counts."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    expired = _cert("Example Bank compliance", key, None, days=(-400, -30))
    from tests.report.test_report_sign import _signed_by

    cms = parse_cms(signed_ranges(_signed_by(key, expired, []))[0].der)
    stamped = datetime.now(UTC) - timedelta(days=60)
    cms.signing_time = stamped
    with pytest.raises(Exception, match="is not valid now"):
        trust_path(cms, signing.Ed25519PrivateKey.generate().public_key(), [expired])
    assert trust_path(cms, signing.Ed25519PrivateKey.generate().public_key(), [expired], stamped) == [
        "CN=Example Bank compliance"]


def test_an_unreachable_authority_signs_nothing(tmp_path) -> None:
    settings, _ = _engine(tmp_path, tsa_url="http://127.0.0.1:9/")
    with pytest.raises(ConfigError, match="gave no timestamp"):
        report_sign.sign_pdf(_pdf(), report_sign.identity(settings), reason="test")
