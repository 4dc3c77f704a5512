"""Proofs out of the live trail: inclusion-proof bundles (an audit in a signed checkpoint) and
consistency proofs (an older tree is a prefix of a newer one).

An inclusion-proof bundle is what `evidence trail prove` prints and what a report PDF embeds beside
each record (`AUD-….proof.json`); `engine.trail.standalone_verify.verify_bundle` checks one with nothing but
the record, the bundle and the trail's public key. Before a bundle is handed out, the live log must
reproduce the checkpoint's root, so a proof is never issued from a log that disagrees with its own
signature.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

from engine.config import Settings
from engine.errors import EngineError, IntegrityError
from engine.trail import checkpoints, cosignatures
from engine.trail import store as audit_trail
from engine.trail import tree as trail_tree
from engine.trail.merkle import verify_consistency, verify_inclusion
from engine.trail.notes import Checkpoint, forks
from engine.trail.standalone_verify import PROOF_FORMAT


def _live_tree(conn: psycopg.Connection, checkpoint: checkpoints.Checkpoint) -> trail_tree.StoredTree:
    tree = audit_trail.stored_tree(conn, checkpoint.seq)
    head = audit_trail.hash_at(conn, checkpoint.seq)
    if head is None or tree.root().hex() != checkpoint.root_hash:
        raise IntegrityError(f"the live log does not reproduce the checkpoint signed at tree size {checkpoint.seq}; "
                             "no proof is issued. Run 'evidence trail verify'")
    return tree


def inclusion_bundles(conn: psycopg.Connection, settings: Settings, rows: list[dict[str, Any]]
                      ) -> dict[str, dict[str, Any]]:
    """Inclusion-proof bundles of trail rows (`audit_trail.get`), all in one checkpoint covering them.

    A checkpoint is signed first when the latest one does not cover the newest of the rows. Each proof is read
    from the stored tree (O(log n)) and checked against the checkpoint's root with the row's own record hash
    before it is handed out.
    """
    if not rows:
        return {}
    newest = max(r["seq"] for r in rows)  # a checkpoint a witness cosigned first: its note carries their lines
    checkpoint = cosignatures.witnessed(conn, settings, newest) or checkpoints.covering(conn, settings, newest)
    tree = _live_tree(conn, checkpoint)
    root = bytes.fromhex(checkpoint.root_hash)
    paths = tree.inclusion_proofs([row["seq"] - 1 for row in rows])
    out = {}
    for row, path in zip(rows, paths, strict=True):
        index = row["seq"] - 1
        if not verify_inclusion(trail_tree.leaves([row["hash"]])[0], index, checkpoint.seq, path, root):
            raise IntegrityError(f"{row['audit_id']}: its record hash is not leaf {index} of the log")
        out[row["audit_id"]] = {
            "format": PROOF_FORMAT, "audit_id": row["audit_id"], "record_hash": row["hash"], "leaf_index": index,
            "tree_size": checkpoint.seq, "root_hash": checkpoint.root_hash,
            "inclusion_path": [h.hex() for h in path],
            "checkpoint": checkpoint.note, "key_fingerprint": checkpoint.key_fingerprint}
    return out


def inclusion_bundle(conn: psycopg.Connection, settings: Settings, audit_id: str) -> dict[str, Any]:
    """The inclusion-proof bundle of one audit. Raises NotFoundError for an unknown audit."""
    return inclusion_bundles(conn, settings, [audit_trail.get(conn, audit_id)])[audit_id]


def _file_notes(settings: Settings, spec: str) -> list[dict[str, Any]]:
    """Every signed checkpoint of a witness file, oldest first, each verified with the trail key."""
    notes = checkpoints.read_notes(Path(spec))
    if not notes:
        raise EngineError(f"{spec} holds no signed checkpoint")
    return [{**checkpoints.parse_note(note, settings), "source": where} for where, note in notes]


def _tree_end(conn: psycopg.Connection, spec: str | None, live: list[bytes],
              notes: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """One end of a consistency check: a tree size of the live log, a witness file (its last note, the newest),
    or the latest checkpoint."""
    if spec is None:
        row = audit_trail.latest_note_checkpoint(conn)
        if row is None:
            raise EngineError("no signed checkpoint yet: run 'evidence trail checkpoint'")
        return {"size": row["seq"], "root_hash": row["root_hash"], "source": "latest signed checkpoint"}
    if spec in notes:
        return notes[spec][-1]  # a witness file grows at the end: its last note is the newest
    if spec.isdigit():
        size = int(spec)
        if size > len(live):
            raise EngineError(f"tree size {size} is beyond the log's {len(live)} audits")
        return {"size": size, "root_hash": trail_tree.roots_at(live, [size])[size].hex(), "source": "live log"}
    raise EngineError(f"'{spec}' is neither a tree size nor a file holding a signed checkpoint")


def witness_problems(witnessed: list[dict[str, Any]], live: list[bytes]) -> list[str]:
    """Every note of the witness files against each other (a fork: one tree size, two roots; two logs) and
    against the live log (its root at each note's size)."""
    problems = forks([(n["source"], Checkpoint(n["origin"], n["size"], bytes.fromhex(n["root_hash"])))
                      for n in witnessed])
    roots = trail_tree.roots_at(live, [n["size"] for n in witnessed if n["size"] <= len(live)])
    for n in witnessed:
        if n["size"] > len(live):
            problems.append(f"{n['source']}: signs tree size {n['size']}; the live log holds {len(live)} audits: "
                            "records were removed")
        elif roots[n["size"]].hex() != n["root_hash"]:
            problems.append(f"{n['source']}: tree size {n['size']} has root {n['root_hash'][:16]}…, the live log's "
                            f"is {roots[n['size']].hex()[:16]}…: the log was rewritten, or the note is of a fork")
    return problems


def consistency(conn: psycopg.Connection, settings: Settings, old: str, new: str | None) -> dict[str, Any]:
    """A consistency proof from OLD to NEW (tree sizes, signed note files, NEW default the latest checkpoint),
    built from the live log and verified against the two roots. Every note of a witness file is checked, not
    only its last: two notes of one size with different roots (a fork), or a note the live log does not
    reproduce, make the answer inconsistent. Raises IntegrityError for a note not signed by the trail key."""
    live = trail_tree.leaves(audit_trail.record_hashes(conn))
    notes = {spec: _file_notes(settings, spec) for spec in (old, new)
             if spec is not None and not spec.isdigit() and Path(spec).is_file()}
    witnessed = [n for spec in dict.fromkeys(notes) for n in notes[spec]]
    first, second = _tree_end(conn, old, live, notes), _tree_end(conn, new, live, notes)
    if first["size"] > second["size"]:
        raise EngineError(f"OLD (size {first['size']}) must not be larger than NEW (size {second['size']})")
    problems = witness_problems(witnessed, live)
    proof: list[bytes] = []
    if second["size"] > len(live):
        problems.append(f"NEW covers {second['size']} audits; the live log holds {len(live)}: records were removed")
    else:
        proof = trail_tree.consistency_proof(first["size"], live[:second["size"]])
        if not verify_consistency(first["size"], second["size"], bytes.fromhex(first["root_hash"]),
                                  bytes.fromhex(second["root_hash"]), proof):
            problems.append("the live log does not lead from OLD to NEW: a checkpoint does not match the log "
                            "(rewritten history, or a note from another log)")
    return {"old": first, "new": second, "proof": [p.hex() for p in proof], "notes_checked": len(witnessed),
            "consistent": not problems, "problems": problems, "problem": "; ".join(problems) or None}
