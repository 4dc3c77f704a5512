"""The transparency-log primitives, without a database: RFC 6962 tree hashing and proofs, C2SP signed notes.

Proofs are built by `engine.trail.tree` (RFC 6962's recursive PATH/SUBPROOF) and checked by
`engine.trail.standalone_verify` (RFC 9162's iterative algorithms, the auditor's code); known vectors are the
RFC 6962 test leaves used by Certificate Transparency and Trillian, and the example note of Go's
golang.org/x/mod/sumdb/note.
"""

from __future__ import annotations

import ast
import hashlib
import sys

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.trail import signing, standalone_build
from engine.trail import tree as trail_tree
from engine.trail.standalone_verify import (
    EMPTY_ROOT,
    VerifyError,
    leaf_hash,
    load_public_key,
    node_hash,
    parse_checkpoint,
    verified_checkpoint,
    verify_consistency,
    verify_inclusion,
    verify_note,
)

# The eight leaves of the RFC 6962 test vectors (certificate-transparency, Trillian merkle/testonly).
LEAVES = [b"", b"\x00", b"\x10", b"\x20\x21", b"\x30\x31", b"\x40\x41\x42\x43", bytes(range(0x50, 0x58)),
          bytes(range(0x60, 0x70))]
ROOTS = ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
         "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
         "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
         "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
         "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
         "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
         "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
         "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"]
HASHES = [leaf_hash(x) for x in LEAVES]


def mth(hashes: list[bytes]) -> bytes:
    """RFC 6962 section 2.1, word for word: the reference the tree code is held to."""
    if not hashes:
        return hashlib.sha256(b"").digest()
    if len(hashes) == 1:
        return hashes[0]
    k = 1
    while k * 2 < len(hashes):
        k *= 2
    return node_hash(mth(hashes[:k]), mth(hashes[k:]))


def test_rfc6962_definitions() -> None:
    assert EMPTY_ROOT == hashlib.sha256(b"").digest() == trail_tree.root([])
    assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert leaf_hash(b"abc") == hashlib.sha256(b"\x00abc").digest()
    assert node_hash(b"L", b"R") == hashlib.sha256(b"\x01LR").digest()
    assert trail_tree.leaves(["ab" * 32]) == [hashlib.sha256(b"\x00" + bytes.fromhex("ab" * 32)).digest()]


@pytest.mark.parametrize("size", range(1, 9))
def test_known_roots(size: int) -> None:
    assert trail_tree.root(HASHES[:size]).hex() == ROOTS[size - 1]
    assert trail_tree.roots_at(HASHES, [size])[size].hex() == ROOTS[size - 1]


@pytest.mark.parametrize(("kind", "m", "n", "expected"), [
    ("inclusion", 0, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                         "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                         "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    ("consistency", 1, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                           "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                           "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    ("consistency", 6, 8, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
                           "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                           "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    ("consistency", 2, 5, ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                           "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
], ids=["inclusion-0-in-8", "consistency-1-8", "consistency-6-8", "consistency-2-5"])
def test_known_proofs(kind: str, m: int, n: int, expected: list[str]) -> None:
    if kind == "inclusion":
        proof = trail_tree.inclusion_proof(m, HASHES[:n])
        assert verify_inclusion(HASHES[m], m, n, proof, bytes.fromhex(ROOTS[n - 1]))
    else:
        proof = trail_tree.consistency_proof(m, HASHES[:n])
        assert verify_consistency(m, n, bytes.fromhex(ROOTS[m - 1]), bytes.fromhex(ROOTS[n - 1]), proof)
    assert [p.hex() for p in proof] == expected


def _flip(data: bytes, bit: int) -> bytes:
    out = bytearray(data)
    out[bit // 8 % len(out)] ^= 1 << (bit % 8)
    return bytes(out)


trees = st.lists(st.binary(max_size=12), min_size=1, max_size=70).map(lambda xs: [leaf_hash(x) for x in xs])


@settings(max_examples=60, deadline=None)
@given(trees, st.data())
def test_every_inclusion_proof_verifies_and_any_flipped_bit_fails(hashes: list[bytes], data) -> None:
    n = len(hashes)
    root = trail_tree.root(hashes)
    assert root == mth(hashes)
    index = data.draw(st.integers(0, n - 1))
    proof = trail_tree.inclusion_proof(index, hashes)
    assert verify_inclusion(hashes[index], index, n, proof, root)
    bit = data.draw(st.integers(0, 255))
    assert not verify_inclusion(_flip(hashes[index], bit), index, n, proof, root)
    assert not verify_inclusion(hashes[index], index, n, proof, _flip(root, bit))
    if proof:
        at = data.draw(st.integers(0, len(proof) - 1))
        assert not verify_inclusion(hashes[index], index, n, [*proof[:at], _flip(proof[at], bit), *proof[at + 1:]],
                                    root)
        assert not verify_inclusion(hashes[index], index, n, proof[:-1], root)  # a shortened path
    if n > 1:
        other = data.draw(st.integers(0, n - 1).filter(lambda i: i != index))
        assert not verify_inclusion(hashes[index], other, n, proof, root) or hashes[index] == hashes[other]


@settings(max_examples=60, deadline=None)
@given(trees, st.data())
def test_every_consistency_proof_verifies_and_any_flipped_bit_fails(hashes: list[bytes], data) -> None:
    n = len(hashes)
    m = data.draw(st.integers(1, n))
    roots = trail_tree.roots_at(hashes, [m, n])
    assert roots[m] == mth(hashes[:m]) and roots[n] == mth(hashes)
    proof = trail_tree.consistency_proof(m, hashes)
    assert verify_consistency(m, n, roots[m], roots[n], proof)
    bit = data.draw(st.integers(0, 255))
    if m < n:
        assert not verify_consistency(m, n, _flip(roots[m], bit), roots[n], proof)
        assert not verify_consistency(m, n, roots[m], _flip(roots[n], bit), proof)
        at = data.draw(st.integers(0, len(proof) - 1))
        assert not verify_consistency(m, n, roots[m], roots[n],
                                      [*proof[:at], _flip(proof[at], bit), *proof[at + 1:]])
    else:
        assert not verify_consistency(m, n, roots[m], _flip(roots[n], bit), proof)


def test_roots_at_every_size_equal_the_definition() -> None:
    hashes = [leaf_hash(bytes([i])) for i in range(40)]
    assert trail_tree.roots_at(hashes, range(41)) == {size: mth(hashes[:size]) for size in range(41)}


@pytest.mark.parametrize(("call", "args"), [(trail_tree.inclusion_proof, (3, HASHES[:3])),
                                             (trail_tree.consistency_proof, (9, HASHES)),
                                             (trail_tree.roots_at, (HASHES, [9]))],
                         ids=["leaf-outside-tree", "old-size-too-big", "prefix-too-big"])
def test_out_of_range_requests_are_refused(call, args) -> None:
    with pytest.raises(ValueError):
        call(*args)


def test_c2sp_note_matches_go_sumdb_note_example() -> None:
    """The example of golang.org/x/mod/sumdb/note: our verifier accepts a note signed by Go's implementation."""
    key = load_public_key("PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")
    note = ("If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n\n"
            "\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6Ryy"
            "BwJnAM=\n")
    assert verify_note(note, key)[1] == "PeterNeumann"
    with pytest.raises(VerifyError, match="does not verify"):
        verify_note(note.replace("cryptography", "Cryptography"), key)


def test_signed_checkpoint_round_trip_and_another_key() -> None:
    key, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    body = f"example.com/log\n8\n{__import__('base64').b64encode(bytes.fromhex(ROOTS[7])).decode()}\n"
    note = signing.sign_note(key, "example.com/log", body)
    checkpoint = verified_checkpoint(note, key.public_key())
    assert (checkpoint.origin, checkpoint.size, checkpoint.root.hex()) == ("example.com/log", 8, ROOTS[7])
    assert load_public_key(signing.verifier_key("example.com/log", key.public_key())).public_bytes_raw() == \
        key.public_key().public_bytes_raw()
    assert load_public_key(signing.public_pem(key.public_key())).public_bytes_raw() == \
        key.public_key().public_bytes_raw()
    with pytest.raises(VerifyError, match="not signed by the given public key"):
        verified_checkpoint(note, other.public_key())
    forged = signing.sign_note(other, "example.com/log", body)  # the same text, another key, the same name
    with pytest.raises(VerifyError, match="not signed by the given public key"):
        verified_checkpoint(forged, key.public_key())


@pytest.mark.parametrize("body", ["origin\n", "origin\nx\nAAAA\n", "origin\n3\nnot-base64!\n", "origin\n3\nAAAA\n"],
                         ids=["too-short", "bad-size", "bad-base64", "short-root"])
def test_malformed_checkpoints_are_refused(body: str) -> None:
    with pytest.raises(VerifyError, match="checkpoint"):
        parse_checkpoint(body)


def test_standalone_verifier_imports_only_stdlib_and_cryptography() -> None:
    source = standalone_build.source()  # the one file the operator hands over
    modules = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            modules.add(node.module.split(".")[0])
    assert modules - set(sys.stdlib_module_names) == {"cryptography"}
