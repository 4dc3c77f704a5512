"""The PAdES signature itself (pyHanko): imported by `engine.report.sign.sign_pdf` when a report is signed, so
that what imports the signing identity does not load pyHanko. See `engine.report.sign` for what is signed how.
"""

from __future__ import annotations

import io
from typing import Any

from asn1crypto import keys as asn1_keys
from asn1crypto import x509 as asn1_x509
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from pyhanko.pdf_utils import generic
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.sign import signers, timestamps
from pyhanko.sign.fields import MDPPerm, SigFieldSpec, SigSeedSubFilter, append_signature_field
from pyhanko_certvalidator.registry import SimpleCertificateStore

from engine.errors import ConfigError

FIELD_NAME = "EvidenceEngine"


class _KeepMetadata(IncrementalPdfFileWriter):
    def _update_meta(self) -> None:  # Info and XMP stay as rendered (PDF/A: they must agree)
        return None


def _der(cert: x509.Certificate) -> Any:
    return asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER))


def sign(pdf: bytes, *, key: Any, cert: x509.Certificate, chain: list[x509.Certificate], tsa_url: str | None,
         reason: str, timestamper: Any = None) -> bytes:
    """`pdf` signed by `key` (with `cert` and the rest of its `chain`): see `engine.report.sign.sign_pdf`."""
    signer = signers.SimpleSigner(
        signing_cert=_der(cert),
        signing_key=asn1_keys.PrivateKeyInfo.load(key.private_bytes(
            serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())),
        cert_registry=SimpleCertificateStore.from_certs([_der(c) for c in chain]))
    # A certification signature permitting no changes (DocMDP P=1): a reader flags any later revision, and
    # the verifiers refuse a second signature over one (the report is bound whole, whoever signs again).
    meta = signers.PdfSignatureMetadata(field_name=FIELD_NAME, subfilter=SigSeedSubFilter.PADES,
                                        md_algorithm="sha256", reason=reason, certify=True,
                                        docmdp_permissions=MDPPerm.NO_CHANGES)
    writer = _KeepMetadata(io.BytesIO(pdf))
    _invisible_field(writer)
    out = io.BytesIO()
    if timestamper is None and tsa_url:
        timestamper = timestamps.HTTPTimeStamper(tsa_url, timeout=30)
    try:
        signers.PdfSigner(meta, signer=signer, timestamper=timestamper).sign_pdf(
            writer, existing_fields_only=True, output=out)
    except timestamps.TimestampRequestError as exc:
        raise ConfigError(f"the timestamp authority EVIDENCE_TSA_URL={tsa_url} gave no timestamp ({exc}); "
                          "nothing was signed: check the URL, or unset it to sign without a timestamp (B-B)") from exc
    return out.getvalue()


def _invisible_field(writer: Any) -> None:
    """The signature field: a zero-size widget on page 1, printable, with an empty appearance stream.

    pyHanko leaves /AP out of a zero-size widget; PDF/A asks every widget for one, so it gets an empty
    form XObject (nothing drawn: the signature shows in the reader's signature panel)."""
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
