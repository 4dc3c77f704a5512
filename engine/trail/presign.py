"""Checks before the engine signs a checkpoint: one signing identity, and never two signed histories.

A signature is the one thing a database-only attacker cannot make. So before signing the current tree
the engine takes the previous checkpoints it can find, the latest of the local log beside the key
(`engine.trail.local_log`, out of the database's reach) and the latest row of the database, and

* verifies each one's signature with this host's key: an unsigned or forged row inserted with the
  writer role's INSERT right, or a checkpoint signed by another host's key, stops it;
* checks that the live log extends each one (an RFC 6962 consistency proof from its size to the
  current size, verified against its signed root): a rewritten record (the same size with another
  root) or removed records (a shrinking tree) stop it.

Signing on would be equivocation: two signed checkpoints that no single append-only log can satisfy.
The engine refuses (`IntegrityError`, exit 6) and says what differs. It also never creates a signing
key while the log already has signed checkpoints (`signing_key`): a key lost or deleted is restored,
not silently replaced.
"""

from __future__ import annotations

from typing import Any, NoReturn

import psycopg
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from engine.config import Settings
from engine.errors import ConfigError, IntegrityError
from engine.trail import keyring, local_log, signing
from engine.trail import store as audit_trail
from engine.trail import tree as trail_tree
from engine.trail.merkle import verify_consistency
from engine.trail.notes import VerifyError, verified_checkpoint
from engine.trail.signer import FileSigner, Signer

SHARED_KEY_HINT = ("every host that records audits must sign with the one shared key: set EVIDENCE_TRAIL_KEY_FILE "
                   "to it (docs/usage.md, 'Workers on several machines')")


def signing_key(conn: psycopg.Connection, settings: Settings, local: list[dict[str, Any]]) -> tuple[Signer, bool]:
    """This host's checkpoint signer: the external command when configured, else the key file; a new key only
    while no checkpoint was ever signed (a new installation, which gets its certificate key then too).
    Returns (signer, created).

    Raises ConfigError naming the key file when it is missing but the database or the local log holds
    checkpoints: a new key would be a second identity, able to sign another history.
    """
    key_file = settings.signing_key_file
    signer = keyring.checkpoint_signer(settings)
    if signer is not None:
        return signer, False
    row = audit_trail.latest_checkpoint(conn)
    if row is None and not local:
        key, created = signing.load_or_create(key_file, settings.trail_passphrase)
        if created:
            keyring.create_cert_key(settings)
        return FileSigner(key, key_file), created
    latest = row or max(local, key=lambda c: c["seq"])
    where = "the database" if row is not None else f"the local log {local_log.log_path(settings)}"
    raise ConfigError(
        f"the trail signing key {key_file} is missing, but {where} holds checkpoints signed by key "
        f"{str(latest.get('key_fingerprint'))[:16]}… (latest: tree size {latest['seq']}). A new key would start a "
        f"second identity, so none is created. Restore {key_file} (and {signing.public_key_path(key_file).name}) "
        f"from your backup, or set EVIDENCE_TRAIL_KEY_FILE to the key this deployment shares")


def previous(conn: psycopg.Connection, settings: Settings, local: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The checkpoints a new one must extend: the latest committed one of the local log, then the database's
    latest signed note. Read them before the head, so the head is never behind them."""
    out = []
    # the largest tree, and of several for it the last written (a key rotation re-signs the latest size)
    for item in sorted((c for c in reversed(local) if c["format"] == "c2sp-note"), key=lambda c: -c["seq"]):
        (_, state), = local_log.settle(conn, [item])
        if state in ("stored", "missing"):  # a rolled-back or still-open transaction's note is no checkpoint
            line = f":{item['line']}" if item.get("line") else " (near its end)"
            out.append({**item, "where": f"the local log {local_log.log_path(settings)}{line}"})
            break
    row = audit_trail.latest_note_checkpoint(conn)
    if row is not None:
        out.append({**row, "where": "the database"})
    return out


def check(conn: psycopg.Connection, priors: list[dict[str, Any]], key: Signer, origin: str,
          size: int, settings: Settings) -> bytes:
    """Refuse (IntegrityError) unless every prior checkpoint is signed by `key` and the live log of `size` audits
    extends it. Returns the live tree's root, the one to sign.

    The live log is read from its stored nodes (`audit_trail.stored_tree`): O(log n) at any size. Where those
    could differ from the records, at each prior checkpoint's last leaf and at the head, the leaf stored must be
    the record's: the chain links every record to the head, so a record rewritten with the chain recomputed
    shows there. When they differ, the records' own tree (O(n)) says what was rewritten; the engine never signs
    a tree its stored nodes and its records disagree on.
    """
    public = key.public_key()
    fingerprint = signing.fingerprint(public)
    verified = [(c, _verified(c, public, fingerprint, settings)) for c in priors]
    for c, cp in verified:
        if cp.origin != origin:
            raise ConfigError(f"refusing to sign: the checkpoint at tree size {cp.size} in {c['where']} names the "
                              f"log '{cp.origin}', this host would sign as '{origin}'. Set EVIDENCE_TRAIL_ORIGIN="
                              f"{cp.origin} (one log, one name); {SHARED_KEY_HINT}")
    if len(verified) == 2 and verified[0][1].size == verified[1][1].size and verified[0][1].root != verified[1][1].root:
        (a, one), (b, two) = verified
        raise IntegrityError(f"refusing to sign: two checkpoints of tree size {one.size} with different roots, "
                             f"{one.root.hex()[:16]}… in {a['where']} and {two.root.hex()[:16]}… in {b['where']}: "
                             "the log was already forked. Run 'evidence trail verify'")
    tree = audit_trail.stored_tree(conn, size)
    if not _nodes_agree(conn, tree, [cp.size for _, cp in verified] + [size]):
        leaves = trail_tree.leaves(audit_trail.record_hashes(conn, upto=size))
        root = trail_tree.root(leaves)
        for c, cp in verified:
            _extends(c["where"], cp.size, cp.root, leaves, root)
        raise IntegrityError("refusing to sign: the stored tree (trail_nodes) and the audits' record hashes give "
                             f"different leaves at tree size {size}: one of them was altered outside the engine. "
                             "Run 'evidence trail verify'")
    root = tree.root()
    for c, cp in verified:
        _extends_stored(c["where"], cp.size, cp.root, tree, root)
    return root


def _nodes_agree(conn: psycopg.Connection, tree: trail_tree.StoredTree, sizes: list[int]) -> bool:
    """Whether the stored leaf of each tree size's last audit (sizes within the tree) is that audit's record."""
    seqs = sorted({s for s in sizes if 0 < s <= tree.size})
    records = audit_trail.hashes_at(conn, seqs)
    if len(records) != len(seqs):
        return False
    return tree.leaves([s - 1 for s in seqs]) == trail_tree.leaves(records[s] for s in seqs)


def _verified(item: dict[str, Any], public: Ed25519PublicKey, fingerprint: str, settings: Settings) -> Any:
    try:
        cp = verified_checkpoint(item["note"] or "", public)
    except VerifyError as exc:
        signer = str(item.get("key_fingerprint") or "")
        if signer and signer != fingerprint:
            raise IntegrityError(
                f"refusing to sign: the checkpoint at tree size {item['seq']} in {item['where']} was signed by key "
                f"{signer[:16]}…, this host's key {settings.signing_key_file} is {fingerprint[:16]}…: "
                f"{SHARED_KEY_HINT}. (Or the row was forged in the database: 'evidence trail verify' tells.)") from exc
        raise IntegrityError(f"refusing to sign: the checkpoint at tree size {item['seq']} in {item['where']} does "
                             f"not verify with this host's key ({exc}); it was inserted or altered outside the "
                             "engine. Run 'evidence trail verify'") from exc
    if cp.size != item["seq"] or (item.get("root_hash") and item["root_hash"] != cp.root.hex()):
        raise IntegrityError(f"refusing to sign: the checkpoint row at tree size {item['seq']} in {item['where']} "
                             f"differs from its signed note (size {cp.size}, root {cp.root.hex()[:16]}…): it was "
                             "altered outside the engine. Run 'evidence trail verify'")
    return cp


def _extends_stored(where: str, size: int, signed_root: bytes, tree: trail_tree.StoredTree, root: bytes) -> None:
    """`_extends` over the stored nodes: the same proof, O(log n) reads."""
    if size > tree.size:
        _shrank(where, size, tree.size)
    if verify_consistency(size, tree.size, signed_root, root, tree.consistency_proof(size)):
        return
    _rewritten(where, size, tree.size, signed_root, tree.roots([size])[size])


def _extends(where: str, size: int, signed_root: bytes, leaves: list[bytes], root: bytes) -> None:
    """The live tree (`leaves`, root `root`) must extend the signed tree of `size`: an RFC 6962 consistency
    proof from the live leaves, verified against the signed root."""
    if size > len(leaves):
        _shrank(where, size, len(leaves))
    proof = trail_tree.consistency_proof(size, leaves)
    if verify_consistency(size, len(leaves), signed_root, root, proof):
        return
    _rewritten(where, size, len(leaves), signed_root, trail_tree.roots_at(leaves, [size])[size])


def _shrank(where: str, size: int, live_size: int) -> NoReturn:
    raise IntegrityError(f"refusing to sign: {where} holds a checkpoint for tree size {size}, the live log holds "
                         f"{live_size} audits: records were removed (the tree shrank); a checkpoint of size "
                         f"{live_size} would contradict it. Run 'evidence trail verify'")


def _rewritten(where: str, size: int, live_size: int, signed_root: bytes, live: bytes) -> NoReturn:
    what = ("another root for the same tree size" if size == live_size
            else f"a tree of size {live_size} that does not extend it")
    raise IntegrityError(f"refusing to sign: the checkpoint at tree size {size} in {where} has root "
                         f"{signed_root.hex()[:16]}…, the live log's root at that size is {live.hex()[:16]}…: "
                         f"records 1..{size} were rewritten; signing {what} would be equivocation. "
                         "Run 'evidence trail verify'")
