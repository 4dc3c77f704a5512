"""PAdES B-T: the RFC 3161 signature timestamp a report signature carries, checked.

When a timestamp authority is configured (`EVIDENCE_TSA_URL`), the report's CMS signature carries, as the
unsigned attribute id-aa-signatureTimeStampToken, a timestamp token: a CMS SignedData by the authority over a
TSTInfo whose message imprint is the hash of the signature value. `check` verifies that token:

* the imprint is the hash of this signature's value (the token was made for this signature);
* the authority's signature over the TSTInfo verifies (message digest, then the signature over the signed
  attributes, with the certificate the token names);
* the authority's certificate is for timestamping (extended key usage timeStamping) and valid at the time
  it states, and it is, or is issued by, a certificate the verifier trusts for timestamps (`--trust-tsa`,
  `EVIDENCE_TSA_TRUST_CERT`).

A verified, trusted timestamp makes the level B-T and its time the trusted signing time: the signer's
certificate chain must be valid then (`engine.trail.standalone_verify.trust_path`), which is what lets a
report outlive its signer certificate. A token that does not verify fails the report; a verified one from
an authority the verifier does not trust is reported, and the signature is judged as B-B.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

from asn1crypto import cms as asn1_cms
from asn1crypto import core, tsp
from cryptography import x509
from pydantic import BaseModel, ConfigDict, Field

from engine.trail import pades as sv

TIMESTAMPING_EKU = "1.3.6.1.5.5.7.3.8"
CLOCK_SLACK = timedelta(minutes=5)  # the claimed signing time may be this far after the timestamp's


class Timestamp(BaseModel):
    """What the signature's timestamp says, and whether it is trusted."""

    model_config = ConfigDict(extra="forbid")

    level: str = Field(description="PAdES level shown by the signature: B-B (no trusted time) or B-T")
    time: str | None = Field(default=None, description="The timestamp's time (genTime), ISO 8601 UTC")
    authority: str | None = Field(default=None, description="Subject of the timestamp authority's certificate")
    trusted: bool = Field(default=False, description="The authority is, or is issued by, a trusted certificate")
    problems: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def trusted_time(self) -> datetime | None:
        return datetime.fromisoformat(self.time) if self.trusted and self.time else None


def _token(signer_info: Any) -> Any:
    attrs = signer_info["unsigned_attrs"]
    if isinstance(attrs, core.Void):
        return None
    return next((a["values"][0] for a in attrs if a["type"].native == "signature_time_stamp_token"), None)


def check(pdf: bytes, trusted: list[x509.Certificate]) -> Timestamp:
    """The level and timestamp of the report's (first) signature. Never raises on a bad token: says why."""
    ranges = sv.signed_ranges(pdf)
    if not ranges:
        return Timestamp(level="B-B")  # no signature: the signature check says so
    rng = min(ranges, key=lambda r: r.end)
    try:
        signer_info = asn1_cms.ContentInfo.load(rng.der)["content"]["signer_infos"][0]
        token = _token(signer_info)
        if token is None:
            return Timestamp(level="B-B")
        claimed = sv.parse_cms(rng.der).signing_time or sv._dictionary_time(pdf[rng.gap_end:rng.gap_end + 2000])
        return _verified(token, signer_info["signature"].native, claimed, trusted)
    except (ValueError, KeyError, TypeError, IndexError, sv.VerifyError) as exc:
        return Timestamp(level="B-B", problems=[f"the signature timestamp does not verify: {exc}"])


def _verified(token: Any, signature: bytes, claimed: datetime | None, trusted: list[x509.Certificate]) -> Timestamp:
    """Check one timestamp token over `signature` (see the module docstring). Raises VerifyError."""
    content = token["content"]["encap_content_info"]["content"]
    raw = bytes(content.contents) if not isinstance(content, bytes) else content
    info = tsp.TSTInfo.load(raw)
    cms = sv.parse_cms(token.dump())
    if hashlib.new(cms.digest, raw).digest() != cms.message_digest:
        raise sv.VerifyError("its message digest is not the hash of its TSTInfo (the token was altered)")
    sv._check_signature(cms.signer.public_key(), cms)
    imprint = info["message_imprint"]
    algorithm = imprint["hash_algorithm"]["algorithm"].native
    if hashlib.new(algorithm, signature).digest() != imprint["hashed_message"].native:
        raise sv.VerifyError("its message imprint is not the hash of this signature's value: a timestamp of "
                             "another signature")
    when: datetime = info["gen_time"].native
    authority = cms.signer.subject.rfc4514_string()
    usage = sv._extension(cms.signer, x509.ExtendedKeyUsage)
    if usage is None or TIMESTAMPING_EKU not in {u.dotted_string for u in usage}:
        raise sv.VerifyError(f"the authority's certificate {authority} is not for timestamping (no extended key "
                             "usage timeStamping)")
    if not cms.signer.not_valid_before_utc <= when <= cms.signer.not_valid_after_utc:
        raise sv.VerifyError(f"the authority's certificate {authority} was not valid at the time it states, {when}")
    out = Timestamp(level="B-B", time=when.isoformat(), authority=authority)
    if claimed is not None and claimed > when + CLOCK_SLACK:
        out.problems.append(f"the signature claims a signing time {claimed} after its timestamp {when}")
    if _chains_to(cms.signer, cms.certificates, trusted):
        out.level, out.trusted = "B-T", True
    else:
        out.notes.append(f"the signature carries a timestamp by {authority} at {when:%Y-%m-%d %H:%M:%S} UTC, "
                         "from an authority this verifier does not trust: judged as B-B (give --trust-tsa with "
                         "the authority's certificate or its CA, or set EVIDENCE_TSA_TRUST_CERT)")
    return out


def _chains_to(cert: x509.Certificate, pool: list[x509.Certificate], trusted: list[x509.Certificate]) -> bool:
    """Whether `cert` is a trusted certificate or leads to one through issuers (in `pool`) that are CAs."""
    for _ in range(6):
        if any(cert == t or (sv._issued_by(cert, t) and sv.issuer_problem(t) is None) for t in trusted):
            return True
        issuer = next((c for c in pool if c != cert and sv._issued_by(cert, c)), None)
        if issuer is None or sv.issuer_problem(issuer) is not None:
            return False
        cert = issuer
    return False
