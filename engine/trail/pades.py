"""A PAdES signature read offline: DER and CMS SignedData (just what a PAdES signature needs), the signer's
certificate chain up to the trail key or a trusted certificate, and the PDF's signature byte ranges and
embedded files.

Part of the standalone verifier (`engine.trail.standalone_build` writes it out as one file): standard library
plus `cryptography`.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

from engine.trail.notes import Keys, VerifyError, key_list

# ---- DER and CMS SignedData (just what a PAdES signature needs) ----------------------------------------------

OIDS = {
    "2.16.840.1.101.3.4.2.1": "sha256", "2.16.840.1.101.3.4.2.2": "sha384", "2.16.840.1.101.3.4.2.3": "sha512",
    "1.2.840.113549.1.1.1": "rsa", "1.2.840.113549.1.1.11": "rsa-sha256", "1.2.840.113549.1.1.12": "rsa-sha384",
    "1.2.840.113549.1.1.13": "rsa-sha512", "1.2.840.113549.1.1.10": "rsa-pss",
    "1.2.840.10045.2.1": "ecdsa", "1.2.840.10045.4.3.2": "ecdsa-sha256", "1.2.840.10045.4.3.3": "ecdsa-sha384",
    "1.2.840.10045.4.3.4": "ecdsa-sha512", "1.3.101.112": "ed25519",
    "1.2.840.113549.1.7.2": "signedData", "1.2.840.113549.1.9.4": "messageDigest",
    "1.2.840.113549.1.9.5": "signingTime", "1.2.840.113549.1.9.16.2.47": "signingCertificateV2",
}
DIGESTS: dict[str, type[hashes.SHA256 | hashes.SHA384 | hashes.SHA512]] = {
    "sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512}


@dataclass(frozen=True)
class Tlv:
    tag: int
    data: bytes
    raw: bytes

    def children(self) -> list[Tlv]:
        return list(_read_all(self.data))


def _read(buf: bytes, pos: int) -> tuple[Tlv, int]:
    if pos + 2 > len(buf):
        raise VerifyError("bad DER in the signature: truncated")
    tag, length, start = buf[pos], buf[pos + 1], pos + 2
    if tag & 0x1F == 0x1F:
        raise VerifyError("bad DER in the signature: high tag numbers are not used by CMS")
    if length & 0x80:
        n = length & 0x7F
        if n == 0 or n > 4:
            raise VerifyError("bad DER in the signature: indefinite or huge length")
        length, start = int.from_bytes(buf[start:start + n], "big"), start + n
    end = start + length
    if end > len(buf):
        raise VerifyError("bad DER in the signature: a length runs past the end")
    return Tlv(tag, buf[start:end], buf[pos:end]), end


def _read_all(buf: bytes) -> Iterator[Tlv]:
    pos = 0
    while pos < len(buf):
        item, pos = _read(buf, pos)
        yield item


def _oid(tlv: Tlv) -> str:
    if tlv.tag != 0x06 or not tlv.data:
        raise VerifyError("bad DER in the signature: expected an object identifier")
    first, parts, value = tlv.data[0], [], 0
    parts += [str(min(first // 40, 2)), str(first - 40 * min(first // 40, 2))]
    for byte in tlv.data[1:]:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            parts.append(str(value))
            value = 0
    return ".".join(parts)


def _alg(tlv: Tlv) -> str:
    oid = _oid(tlv.children()[0])
    return OIDS.get(oid, oid)


@dataclass
class CmsSignature:
    signer: x509.Certificate
    certificates: list[x509.Certificate]
    digest: str
    signed_attrs: bytes  # re-tagged as SET OF, the bytes that are signed
    message_digest: bytes
    signature_alg: str
    signature: bytes
    signing_time: datetime | None
    signing_certificate_hash: bytes | None


def _attributes(tlv: Tlv) -> dict[str, Tlv]:
    out = {}
    for attr in tlv.children():
        oid_tlv, values = attr.children()[:2]
        out[OIDS.get(_oid(oid_tlv), _oid(oid_tlv))] = values.children()[0]
    return out


def _time(tlv: Tlv) -> datetime:
    text = tlv.data.decode("ascii")
    fmt = "%y%m%d%H%M%SZ" if tlv.tag == 0x17 else "%Y%m%d%H%M%SZ"
    return datetime.strptime(text, fmt).replace(tzinfo=UTC)


def parse_cms(der: bytes) -> CmsSignature:
    """The one signer of a CMS SignedData (detached), with its signed attributes. Raises VerifyError."""
    try:
        info, _ = _read(der, 0)
        oid, content = info.children()[:2]
        if OIDS.get(_oid(oid)) != "signedData":
            raise VerifyError("the signature is not CMS SignedData")
        items = content.children()[0].children()
        certs_tlv = next((t for t in items if t.tag == 0xA0), None)
        certificates = [x509.load_der_x509_certificate(c.raw) for c in (certs_tlv.children() if certs_tlv else [])]
        signer_infos = items[-1].children()
        if len(signer_infos) != 1:
            raise VerifyError(f"the signature has {len(signer_infos)} signers; a report has exactly one")
        si = signer_infos[0].children()
        sid, digest_alg = si[1], _alg(si[2])
        attrs_tlv = si[3]
        if attrs_tlv.tag != 0xA0:
            raise VerifyError("the signature has no signed attributes (PAdES requires them)")
        sig_alg, signature = _alg(si[4]), si[5].data
    except (IndexError, ValueError) as exc:
        raise VerifyError(f"the signature is not a CMS SignedData this verifier can read ({exc})") from exc
    signer = _find_signer(sid, certificates)
    attrs = _attributes(attrs_tlv)
    if "messageDigest" not in attrs:
        raise VerifyError("the signature's signed attributes hold no message digest")
    cert_hash = None
    if "signingCertificateV2" in attrs:
        first = attrs["signingCertificateV2"].children()[0].children()[0].children()
        cert_hash = next(t.data for t in first if t.tag == 0x04)
    return CmsSignature(signer=signer, certificates=certificates, digest=digest_alg,
                        signed_attrs=b"\x31" + attrs_tlv.raw[1:], message_digest=attrs["messageDigest"].data,
                        signature_alg=sig_alg, signature=signature,
                        signing_time=_time(attrs["signingTime"]) if "signingTime" in attrs else None,
                        signing_certificate_hash=cert_hash)


def _find_signer(sid: Tlv, certificates: list[x509.Certificate]) -> x509.Certificate:
    if sid.tag == 0x30:  # IssuerAndSerialNumber
        issuer, serial = sid.children()[:2]
        number = int.from_bytes(serial.data, "big", signed=True)
        for cert in certificates:
            if cert.serial_number == number and cert.issuer.public_bytes() == issuer.raw:
                return cert
    elif sid.tag == 0x80:  # SubjectKeyIdentifier
        for cert in certificates:
            try:
                ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
            except x509.ExtensionNotFound:
                continue
            if ski == sid.data:
                return cert
    raise VerifyError("the signer's certificate is not in the signature")


def _check_signature(public: Any, cms: CmsSignature) -> None:
    data, sig = cms.signed_attrs, cms.signature
    digest = DIGESTS.get(cms.digest)
    if digest is None:
        raise VerifyError(f"unsupported digest algorithm {cms.digest}")
    try:
        if isinstance(public, rsa.RSAPublicKey) and cms.signature_alg == "rsa-pss":
            public.verify(sig, data, padding.PSS(padding.MGF1(digest()), digest().digest_size), digest())
        elif isinstance(public, rsa.RSAPublicKey):
            public.verify(sig, data, padding.PKCS1v15(), digest())
        elif isinstance(public, ec.EllipticCurvePublicKey):
            public.verify(sig, data, ec.ECDSA(digest()))
        elif isinstance(public, ed25519.Ed25519PublicKey):
            public.verify(sig, data)
        else:
            raise VerifyError(f"unsupported signer key type {type(public).__name__}")
    except InvalidSignature as exc:
        raise VerifyError("the PDF signature does not verify with the signer's certificate") from exc


def _issued_by_key(cert: x509.Certificate, keys: Keys) -> bool:
    for key in key_list(keys):
        try:
            key.verify(cert.signature, cert.tbs_certificate_bytes)
            return True
        except (InvalidSignature, TypeError):
            continue
    return False


def _issued_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    if cert.issuer != issuer.subject:
        return False
    try:
        cert.verify_directly_issued_by(issuer)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _valid_at(cert: x509.Certificate, when: datetime) -> bool:
    return cert.not_valid_before_utc <= when <= cert.not_valid_after_utc


# Extended key usages fit for signing a document: document signing (RFC 9336), e-mail protection (S/MIME
# signing certificates), Adobe's authentic documents and Microsoft's document signing, or any.
SIGNING_EKUS = {"1.3.6.1.5.5.7.3.36": "documentSigning", "1.3.6.1.5.5.7.3.4": "emailProtection",
                "1.2.840.113583.1.1.5": "Adobe authentic documents", "1.3.6.1.4.1.311.10.3.12": "MS document signing",
                "2.5.29.37.0": "anyExtendedKeyUsage"}


def _extension(cert: x509.Certificate, kind: type) -> Any:
    try:
        return cert.extensions.get_extension_for_class(kind).value
    except x509.ExtensionNotFound:
        return None


def signer_usage_problem(cert: x509.Certificate) -> str | None:
    """Why `cert` may not sign a document (its key usage or extended key usage says otherwise), or None.
    An absent extension restricts nothing (RFC 5280)."""
    name = cert.subject.rfc4514_string()
    usage = _extension(cert, x509.KeyUsage)
    if usage is not None and not (usage.digital_signature or usage.content_commitment):
        return f"certificate {name} is not for signatures (key usage has neither digitalSignature nor nonRepudiation)"
    extended = _extension(cert, x509.ExtendedKeyUsage)
    if extended is not None and not {u.dotted_string for u in extended} & set(SIGNING_EKUS):
        names = ", ".join(getattr(u, "_name", u.dotted_string) for u in extended)
        return (f"certificate {name} is not for signing documents (extended key usage {names}; expected one of "
                f"{', '.join(SIGNING_EKUS.values())})")
    return None


def issuer_problem(cert: x509.Certificate) -> str | None:
    """Why `cert` may not issue certificates (not a CA, or its key usage lacks keyCertSign), or None."""
    constraints = _extension(cert, x509.BasicConstraints)
    if constraints is None or not constraints.ca:
        return f"certificate {cert.subject.rfc4514_string()} is not a CA and cannot vouch for another certificate"
    usage = _extension(cert, x509.KeyUsage)
    if usage is not None and not usage.key_cert_sign:
        return f"certificate {cert.subject.rfc4514_string()} may not sign certificates (key usage lacks keyCertSign)"
    return None


def trust_path(cms: CmsSignature, key: Keys, anchors: list[x509.Certificate],
               now: datetime | None = None) -> list[str]:
    """The signer's chain up to the trail key or a trusted certificate, as subject names. Raises VerifyError.

    Each link's signature is checked; the signer's key usage must allow signing documents and every
    issuer must be a CA. Validity: at the signing time the signature claims; for a chain that ends at a
    --trust-cert certificate also now, since a PAdES B-B signature carries no trusted time (an expired
    certificate's holder could claim any earlier time). With a trusted timestamp (B-T), `now` is its time.
    No revocation: offline.
    """
    now = now or datetime.now(UTC)
    when = cms.signing_time or now
    cert, path, chain = cms.signer, [], []
    if (problem := signer_usage_problem(cert)) is not None:
        raise VerifyError(problem)
    for _ in range(8):
        path.append(cert.subject.rfc4514_string())
        chain.append(cert)
        if not _valid_at(cert, when):
            raise VerifyError(f"certificate {cert.subject.rfc4514_string()} was not valid at the signing time "
                              f"{when:%Y-%m-%d %H:%M:%S} UTC")
        if _issued_by_key(cert, key):
            return [*path, "the trail key"]
        anchor = next((a for a in anchors if a == cert or _issued_by(cert, a)), None)
        if anchor is not None:
            for c in chain if anchor == cert else [*chain, anchor]:
                if not _valid_at(c, now):
                    raise VerifyError(f"certificate {c.subject.rfc4514_string()} is not valid now (valid "
                                      f"{c.not_valid_before_utc:%Y-%m-%d} to {c.not_valid_after_utc:%Y-%m-%d}); "
                                      "without a trusted timestamp the signing time the signature claims cannot "
                                      "be relied on")
            if anchor != cert and (problem := issuer_problem(anchor)) is not None:
                raise VerifyError(problem)
            return path if anchor == cert else [*path, anchor.subject.rfc4514_string()]
        issuer = next((c for c in cms.certificates if c != cert and _issued_by(cert, c)), None)
        if issuer is None:
            break
        if (problem := issuer_problem(issuer)) is not None:
            raise VerifyError(problem)
        cert = issuer
    raise VerifyError(f"the signer certificate {cms.signer.subject.rfc4514_string()} is not issued by the trail "
                      "key nor by a trusted certificate (--trust-cert): whoever signed this PDF is not the engine")


# ---- PDF: the signature's byte range and the embedded files inside it ----------------------------------------

BYTE_RANGE = re.compile(rb"/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]")
DOC_MDP = re.compile(rb"/Perms\s*<<\s*/DocMDP\b")  # a certification signature (ISO 32000-1, 12.8.2.2)
EMBEDDED = re.compile(rb"/Type\s*/EmbeddedFile\b")
OBJ_HEADER = re.compile(rb"(\d+)\s+(\d+)\s+obj\b")


@dataclass
class SignedRange:
    start: int
    gap_start: int
    gap_end: int
    end: int
    der: bytes


def signed_ranges(pdf: bytes) -> list[SignedRange]:
    """Every signature byte range in the file whose gap is exactly a hex string <…> of a DER value."""
    found = []
    for match in BYTE_RANGE.finditer(pdf):
        a, b, c, d = (int(x) for x in match.groups())
        if a != 0 or not b < c <= len(pdf) or c + d > len(pdf):
            continue
        gap = pdf[b:c]
        if not re.fullmatch(rb"<[0-9A-Fa-f]*>", gap) or (len(gap) - 2) % 2:
            continue
        blob = bytes.fromhex(gap[1:-1].decode("ascii"))
        tlv, used = _read(blob, 0) if blob else (None, 0)
        if tlv is None or blob[used:].strip(b"\x00"):
            continue  # anything but zero padding after the DER value is not a signature we made
        found.append(SignedRange(a, b, c, c + d, tlv.raw))
    return found


def describe_tail(tail: bytes) -> str:
    """What bytes after the signed range hold, in words: incremental updates and the objects they change."""
    updates = tail.count(b"%%EOF")
    objects = []
    for match in OBJ_HEADER.finditer(tail):
        head = tail[match.end():match.end() + 300].split(b"endobj", 1)[0]
        kind = re.search(rb"/Type\s*/(\w+)", head)
        objects.append(f"{match.group(1).decode()} {match.group(2).decode()}"
                       + (f" ({kind.group(1).decode()})" if kind else ""))
    if updates or objects:
        shown = ", ".join(objects[:12]) + (" …" if len(objects) > 12 else "")
        return (f"{len(tail)} byte(s) after the signed range: {updates} incremental update(s)"
                + (f" writing object(s) {shown}" if objects else ""))
    return f"{len(tail)} byte(s) appended after the signed range (not a PDF update)"


def embedded_files(pdf: bytes) -> list[bytes]:
    """The contents of every embedded file stream (/Type /EmbeddedFile) in `pdf`, decoded when Flate."""
    out = []
    for match in EMBEDDED.finditer(pdf):
        begin = pdf.rfind(b"obj", 0, match.start())
        stream = re.compile(rb"stream\r?\n").search(pdf, match.end())
        if begin < 0 or stream is None:
            continue
        head = pdf[begin:stream.start()]
        length = re.search(rb"/Length\s+(\d+)(?!\s+\d+\s+R)", head)
        if length is None:
            continue
        data = pdf[stream.end():stream.end() + int(length.group(1))]
        filters = re.search(rb"/Filter\s*(\[[^\]]*\]|/\w+)", head)
        names = re.findall(rb"/(\w+)", filters.group(1)) if filters else []
        try:
            for name in names:
                if name != b"FlateDecode":
                    raise ValueError(f"filter {name.decode()}")
                data = zlib.decompress(data)
        except (ValueError, zlib.error):
            continue
        out.append(data)
    return out


def _dictionary_time(after_gap: bytes) -> datetime | None:
    """The /M date of the signature dictionary (the bytes after its /Contents), as UTC."""
    head = after_gap.split(b"endobj", 1)[0]
    match = re.search(rb"/M\s*\(D(?::|\\072)(\d{14})", head)
    return datetime.strptime(match.group(1).decode(), "%Y%m%d%H%M%S").replace(tzinfo=UTC) if match else None
