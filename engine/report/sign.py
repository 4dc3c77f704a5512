"""PAdES signatures on report PDFs: who signs, and the signing itself (pyHanko, in `engine.report.signature`).

By default the engine signs with its own document key: an ECDSA P-256 key and a certificate made on
first use and issued by the trail's certificate key (Ed25519, `engine.trail.keyring`), whose own CA
certificate the checkpoint key issues (`_endorsed`), both shipped in the signature: so the checkpoint key an
auditor is given still vouches for whoever signed the PDF (leaf <- certificate key <- trail key), while
certificates are issued by a key of their own. An installation from before the split has its one key
issue the leaf directly, as before (`evidence trail rotate-key --certificates` splits them). ECDSA P-256
rather than Ed25519 for the PDF signature itself, because PDF readers verify it (Ed25519 in PDF,
ISO/TS 32002, is still rare).
An organisation's own key and certificate chain can sign instead: `EVIDENCE_REPORT_SIGNING_P12`
(PKCS#12) and `EVIDENCE_REPORT_SIGNING_P12_PASSWORD`; verifiers then trust its CA (`--trust-cert`).

The signature is PAdES B-B (ETSI.CAdES.detached, SHA-256, signing-certificate-v2 attribute), B-T when a
timestamp authority is configured (`EVIDENCE_TSA_URL`: the signature value's RFC 3161 timestamp token as
an unsigned attribute, `engine.report.timestamp` checks it), one
invisible signature field (zero-size, printable, an empty appearance stream), written as one
incremental update. The document
information and XMP metadata are left exactly as WeasyPrint wrote them: PDF/A-3b wants the two to
agree, and pyHanko would otherwise rewrite the producer in one of them only.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from engine.config import Settings
from engine.errors import ConfigError
from engine.trail import keyring, signing
from engine.trail.signer import Signer

CERT_YEARS = 30  # reports are kept for decades; verifiers check validity at the signing time


class Identity(NamedTuple):
    """The key that signs reports, its certificate, the rest of its chain, and where it came from."""

    key: Any
    cert: x509.Certificate
    chain: list[x509.Certificate]
    source: str
    tsa_url: str | None = None  # an RFC 3161 timestamp authority: the signature gets a timestamp (PAdES B-T)

    @property
    def fingerprint(self) -> str:
        return self.cert.fingerprint(hashes.SHA256()).hex()


def identity_file(settings: Settings) -> Any:
    return keyring.keys_dir(settings) / keyring.REPORT_IDENTITY_FILE


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Evidence Engine"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _issuer_cert(trail_key: Any, role: str, now: datetime) -> x509.Certificate:
    """A self-signed certificate of the trail's Ed25519 certificate key (or, on an installation from before the
    split, its checkpoint key): the issuer of the report-signing certificate."""
    fp = signing.fingerprint(trail_key.public_key())
    name = _name(f"Evidence Engine {'certificate' if role.startswith('certificate') else 'trail'} key {fp[:16]}")
    return _ca_builder(name, name, trail_key.public_key(), now).sign(trail_key, None)


def _ca_builder(subject: x509.Name, issuer: x509.Name, public_key: Any, now: datetime) -> x509.CertificateBuilder:
    """A CA certificate of one of the trail's keys, unsigned: it issues certificates and nothing else."""
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(days=365 * CERT_YEARS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True))


ED25519_ALGORITHM = bytes.fromhex("300506032b6570")  # AlgorithmIdentifier { id-Ed25519 }, DER


def _der(tag: int, body: bytes) -> bytes:
    size = len(body)
    width = (size.bit_length() + 7) // 8
    return bytes([tag]) + (bytes([size]) if size < 128 else bytes([0x80 | width]) + size.to_bytes(width, "big")) + body


def _endorsed(cert_key: Any, checkpoint: Signer, now: datetime) -> x509.Certificate:
    """The certificate key's CA certificate, issued by the checkpoint key through its `Signer` (a file or an
    external command: the TBS bytes are built with a throwaway key, on which they do not depend, then signed
    by the signer). So verifiers pinning only the checkpoint key reach it: leaf <- certificate key <- trail key."""
    fp, trail_fp = (signing.fingerprint(k) for k in (cert_key.public_key(), checkpoint.public_key()))
    draft = _ca_builder(_name(f"Evidence Engine certificate key {fp[:16]}"),
                        _name(f"Evidence Engine trail key {trail_fp[:16]}"), cert_key.public_key(), now
                        ).sign(Ed25519PrivateKey.generate(), None)
    tbs = draft.tbs_certificate_bytes
    signature = _der(0x03, b"\0" + checkpoint.sign(tbs))  # a BIT STRING with no unused bits
    return x509.load_der_x509_certificate(_der(0x30, tbs + ED25519_ALGORITHM + signature))


def _new_identity(settings: Settings) -> bytes:
    """PEM of a new P-256 key and its certificate chain (leaf issued by the certificate key, then its own)."""
    trail_key, role = keyring.cert_issuer(settings)  # never made here: the first checkpoint makes the keys
    now = datetime.now(UTC)
    checkpoint = keyring.checkpoint_signer(settings) if role == "certificate key" else None
    if role == "certificate key" and checkpoint is None:
        raise ConfigError(f"the trail signing key {settings.signing_key_file} is missing, and it vouches for the "
                          "certificate key; restore it from your backup")
    issuer = _endorsed(trail_key, checkpoint, now) if checkpoint is not None else _issuer_cert(trail_key, role, now)
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder().subject_name(_name("Evidence Engine report signing"))
            .issuer_name(issuer.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=365 * CERT_YEARS))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=True, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .sign(trail_key, None))
    pem = signing.private_pem(key, settings.trail_passphrase)
    return pem + b"".join(c.public_bytes(serialization.Encoding.PEM) for c in (leaf, issuer))


def _engine_identity(settings: Settings) -> Identity:
    path = identity_file(settings)
    if not path.exists():
        signing.publish_file(path, _new_identity(settings), mode=0o600)  # one file: key and chain never mismatch
    data = path.read_bytes()
    key = signing.load_private_pem(data, settings.trail_passphrase, path)
    try:
        certs = x509.load_pem_x509_certificates(data)
    except ValueError as exc:
        raise ConfigError(f"{path} does not hold a PEM key and certificates ({exc}); delete it to make a new one") \
            from exc
    issuers = keyring.cert_public_keys(settings)
    issuer_file = settings.signing_key_file if issuers is None else keyring.cert_key_file(settings)
    trail_public = issuers[0] if issuers else signing.load_public(settings.signing_key_file, settings.trail_passphrase)
    try:
        trail_public.verify(certs[0].signature, certs[0].tbs_certificate_bytes)  # type: ignore[union-attr]
    except Exception as exc:
        raise ConfigError(f"the report-signing certificate in {path} was not issued by the current trail key "
                          f"{issuer_file}; delete {path} to issue a new one") from exc
    return Identity(key, certs[0], certs[1:], str(path), settings.tsa_url)


def _p12_identity(settings: Settings) -> Identity:
    path = settings.report_signing_p12
    password = settings.report_signing_p12_password
    try:
        key, cert, extra = pkcs12.load_key_and_certificates(
            path.read_bytes(), password.encode() if password else None)  # type: ignore[union-attr]
    except (OSError, ValueError) as exc:
        raise ConfigError(f"EVIDENCE_REPORT_SIGNING_P12={path}: cannot read the PKCS#12 ({exc}); check the file and "
                          "EVIDENCE_REPORT_SIGNING_P12_PASSWORD") from exc
    if key is None or cert is None:
        raise ConfigError(f"{path} holds no private key with its certificate; export the signing key with its "
                          "certificate chain")
    return Identity(key, cert, list(extra), str(path), settings.tsa_url)


def identity(settings: Settings) -> Identity:
    """Who signs reports: the organisation's PKCS#12 when configured, else the engine's own (made on first use)."""
    return _p12_identity(settings) if settings.report_signing_p12 else _engine_identity(settings)


def sign_pdf(pdf: bytes, ident: Identity, *, reason: str, timestamper: Any = None) -> bytes:
    """`pdf` with a PAdES certification signature (no changes permitted) over the whole file, appended as an
    incremental update: B-T with an RFC 3161 signature timestamp from `timestamper` (a pyHanko TimeStamper), else
    from the identity's timestamp authority (`tsa_url`), else B-B."""
    from engine.report import signature  # pyHanko: loaded when a report is signed, not by every importer

    return signature.sign(pdf, key=ident.key, cert=ident.cert, chain=ident.chain, tsa_url=ident.tsa_url,
                          reason=reason, timestamper=timestamper)
