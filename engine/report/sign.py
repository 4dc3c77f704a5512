"""PAdES signatures on report PDFs (pyHanko): who signs, and the signing itself.

By default the engine signs with its own document key: an ECDSA P-256 key and a certificate made on
first use and issued by the trail's Ed25519 key (a self-signed certificate of that key is its issuer,
shipped in the signature). So the one public key an auditor is given (`evidence trail public-key`)
vouches for the checkpoints and for whoever signed the PDF. ECDSA P-256 rather than Ed25519 for the
PDF signature itself, because PDF readers verify it (Ed25519 in PDF, ISO/TS 32002, is still rare).
An organisation's own key and certificate chain can sign instead: `EVIDENCE_REPORT_SIGNING_P12`
(PKCS#12) and `EVIDENCE_REPORT_SIGNING_P12_PASSWORD`; verifiers then trust its CA (`--trust-cert`).

The signature is PAdES B-B (ETSI.CAdES.detached, SHA-256, signing-certificate-v2 attribute), one
invisible signature field (zero-size, printable, an empty appearance stream), written as one
incremental update. The document
information and XMP metadata are left exactly as WeasyPrint wrote them: PDF/A-3b wants the two to
agree, and pyHanko would otherwise rewrite the producer in one of them only.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from engine.config import Settings
from engine.errors import ConfigError
from engine.trail import signing

FIELD_NAME = "EvidenceEngine"
CERT_YEARS = 30  # reports are kept for decades; verifiers check validity at the signing time


class Identity(NamedTuple):
    """The key that signs reports, its certificate, the rest of its chain, and where it came from."""

    key: Any
    cert: x509.Certificate
    chain: list[x509.Certificate]
    source: str

    @property
    def fingerprint(self) -> str:
        return self.cert.fingerprint(hashes.SHA256()).hex()


def identity_file(settings: Settings) -> Any:
    return settings.signing_key_file.parent / "report-signing.pem"


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Evidence Engine"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _trail_key_cert(trail_key: Any, now: datetime) -> x509.Certificate:
    """A self-signed certificate of the trail's Ed25519 key: the issuer of the report-signing certificate."""
    fp = signing.fingerprint(trail_key.public_key())
    name = _name(f"Evidence Engine trail key {fp[:16]}")
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(trail_key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(days=365 * CERT_YEARS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .sign(trail_key, None))


def _new_identity(settings: Settings) -> bytes:
    """PEM of a new P-256 key and its certificate chain (leaf issued by the trail key, then the trail key's)."""
    trail_key = signing.load_existing(settings.signing_key_file,  # never made here: a checkpoint signs first
                                      settings.trail_passphrase)
    if trail_key is None:
        raise ConfigError(f"the trail signing key {settings.signing_key_file} is missing; restore it from your "
                          "backup, or set EVIDENCE_TRAIL_KEY_FILE to the key this deployment shares")
    now = datetime.now(UTC)
    issuer = _trail_key_cert(trail_key, now)
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
    trail_public = signing.load_public(settings.signing_key_file, settings.trail_passphrase)
    try:
        trail_public.verify(certs[0].signature, certs[0].tbs_certificate_bytes)  # type: ignore[union-attr]
    except Exception as exc:
        raise ConfigError(f"the report-signing certificate in {path} was not issued by the current trail key "
                          f"{settings.signing_key_file}; delete {path} to issue a new one") from exc
    return Identity(key, certs[0], certs[1:], str(path))


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
    return Identity(key, cert, list(extra), str(path))


def identity(settings: Settings) -> Identity:
    """Who signs reports: the organisation's PKCS#12 when configured, else the engine's own (made on first use)."""
    return _p12_identity(settings) if settings.report_signing_p12 else _engine_identity(settings)


def sign_pdf(pdf: bytes, ident: Identity, *, reason: str) -> bytes:
    """`pdf` with a PAdES B-B certification signature (no changes permitted) over the whole file, appended as an
    incremental update."""
    from asn1crypto import keys as asn1_keys
    from asn1crypto import x509 as asn1_x509
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import signers
    from pyhanko.sign.fields import MDPPerm, SigSeedSubFilter
    from pyhanko_certvalidator.registry import SimpleCertificateStore

    class _KeepMetadata(IncrementalPdfFileWriter):
        def _update_meta(self) -> None:  # Info and XMP stay as rendered (PDF/A: they must agree)
            return None

    def der(cert: x509.Certificate) -> Any:
        return asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER))

    signer = signers.SimpleSigner(
        signing_cert=der(ident.cert),
        signing_key=asn1_keys.PrivateKeyInfo.load(ident.key.private_bytes(
            serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())),
        cert_registry=SimpleCertificateStore.from_certs([der(c) for c in ident.chain]))
    # A certification signature permitting no changes (DocMDP P=1): a reader flags any later revision, and
    # the verifiers refuse a second signature over one (the report is bound whole, whoever signs again).
    meta = signers.PdfSignatureMetadata(field_name=FIELD_NAME, subfilter=SigSeedSubFilter.PADES,
                                        md_algorithm="sha256", reason=reason, certify=True,
                                        docmdp_permissions=MDPPerm.NO_CHANGES)
    writer = _KeepMetadata(io.BytesIO(pdf))
    _invisible_field(writer)
    out = io.BytesIO()
    signers.PdfSigner(meta, signer=signer).sign_pdf(writer, existing_fields_only=True, output=out)
    return out.getvalue()


def _invisible_field(writer: Any) -> None:
    """The signature field: a zero-size widget on page 1, printable, with an empty appearance stream.

    pyHanko leaves /AP out of a zero-size widget; PDF/A asks every widget for one, so it gets an empty
    form XObject (nothing drawn: the signature shows in the reader's signature panel)."""
    from pyhanko.pdf_utils import generic
    from pyhanko.sign.fields import SigFieldSpec, append_signature_field

    append_signature_field(writer, SigFieldSpec(FIELD_NAME))
    for ref in writer.root["/AcroForm"]["/Fields"]:
        field = ref.get_object()
        if field.get("/T") == FIELD_NAME:
            blank = generic.StreamObject({generic.pdf_name("/Type"): generic.pdf_name("/XObject"),
                                          generic.pdf_name("/Subtype"): generic.pdf_name("/Form"),
                                          generic.pdf_name("/BBox"): generic.ArrayObject(
                                              [generic.NumberObject(0)] * 4)}, stream_data=b"")
            field[generic.pdf_name("/AP")] = generic.DictionaryObject(
                {generic.pdf_name("/N"): writer.add_object(blank)})
            writer.update_container(field)
