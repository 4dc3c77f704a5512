"""The trail's Ed25519 key alone (engine/trail/signing.py), without a database: signatures fail for another
key or a changed payload, the key file is made once (private 0600, public beside it) and a damaged one is
refused with what to do, and signed notes refuse text they could not carry."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from engine.errors import ConfigError
from engine.trail import signing
from engine.trail.standalone_verify import VerifyError, verify_note

PAYLOAD = '{"seq":1,"hash":"ab12"}'


def test_a_signature_verifies_with_its_key_only() -> None:
    key, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    signature = signing.sign(key, PAYLOAD)
    assert signing.verify(key.public_key(), PAYLOAD, signature)
    assert not signing.verify(other.public_key(), PAYLOAD, signature)


@pytest.mark.parametrize(("payload", "signature"), [
    (PAYLOAD.replace("1", "2"), None), (PAYLOAD, "00" * 64), (PAYLOAD, "not hex"), (PAYLOAD, "ab"),
], ids=["changed-payload", "zero-signature", "not-hex", "truncated"])
def test_a_changed_payload_or_a_bad_signature_does_not_verify(payload: str, signature: str | None) -> None:
    key = Ed25519PrivateKey.generate()
    assert not signing.verify(key.public_key(), payload, signature or signing.sign(key, PAYLOAD))


def test_the_key_file_is_made_once_private_with_its_public_half_beside_it(tmp_path: Path) -> None:
    key_file = tmp_path / "keys" / "trail.pem"
    key, created = signing.load_or_create(key_file)
    again, created_again = signing.load_or_create(key_file)
    assert created and not created_again
    assert signing.fingerprint(again.public_key()) == signing.fingerprint(key.public_key())
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    public = signing.load_public(key_file)
    assert public is not None and signing.fingerprint(public) == signing.fingerprint(key.public_key())
    assert signing.load_public(tmp_path / "none.pem") is None


def test_publish_file_never_replaces_a_file(tmp_path: Path) -> None:
    target = tmp_path / "key.pem"
    assert signing.publish_file(target, b"first")
    assert not signing.publish_file(target, b"second")
    assert target.read_bytes() == b"first" and [p.name for p in tmp_path.iterdir()] == ["key.pem"]


def _rsa_pem() -> bytes:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


@pytest.mark.parametrize(("private", "public", "message"), [
    (b"garbage", None, "is not a PEM private key.*restore it from your backup"),
    (_rsa_pem(), None, "holds a .*RSAPrivateKey; the trail signs with Ed25519"),
    (None, "zz", "does not hold a hex Ed25519 public key"),
], ids=["damaged-private-key", "rsa-private-key", "damaged-public-key"])
def test_a_damaged_key_file_is_a_configuration_error(tmp_path: Path, private: bytes | None, public: str | None,
                                                     message: str) -> None:
    key_file = tmp_path / "trail.pem"
    if private is not None:
        key_file.write_bytes(private)
    if public is not None:
        signing.load_or_create(key_file)
        signing.public_key_path(key_file).write_text(public)
    with pytest.raises(ConfigError, match=message):
        signing.load_public(key_file) if public is not None else signing.load_or_create(key_file)


def test_a_signed_note_verifies_and_a_changed_one_does_not() -> None:
    key = Ed25519PrivateKey.generate()
    note = signing.sign_note(key, "example.org/trail", "example.org/trail\n3\nAAAA\n")
    assert verify_note(note, key.public_key()) == ("example.org/trail\n3\nAAAA\n", "example.org/trail")
    with pytest.raises(VerifyError, match="does not verify"):
        verify_note(note.replace("\n3\n", "\n4\n"), key.public_key())


@pytest.mark.parametrize(("name", "text"), [
    ("example.org/trail", "no final newline"), ("example.org/trail", "a\n\nblank line\n"),
    ("two words", "text\n"), ("a+b", "text\n"), ("", "text\n"),
], ids=["no-newline", "blank-line", "space-in-name", "plus-in-name", "empty-name"])
def test_a_note_that_could_not_be_read_back_is_refused(name: str, text: str) -> None:
    with pytest.raises(ValueError, match="a note's text ends with a newline"):
        signing.sign_note(Ed25519PrivateKey.generate(), name, text)
