"""`evidence trail verify`: recompute every hash and link, check the relational copies against the
hashed records, check signed checkpoints, and re-check every quote against the stored documents.

What each check catches:
* hash of `canonical` != stored hash, or the envelope's seq/prev_hash != the row's: a changed row;
* a seq gap, or a prev_hash that is not the previous record's hash: a deleted, inserted or rewritten
  record (the rewritten one is named when its successor still records the old hash);
* JSONB copy, header columns, audit_requirements or audit_documents rows that differ from the
  hashed record: a changed relational copy;
* a checkpoint (in the database, the local log, or a witness file published outside the database)
  whose signature fails, whose RFC 6962 root (signed-note checkpoints; head hash for the older
  format) differs from the live log's at its tree size, or whose size is beyond the chain's head: a
  chain rewritten (hashes recomputed) or cut short by someone with database-admin rights, up to the
  last checkpoint; the message names the checkpoint and where it was kept;
* a stored node of the tree (`trail_nodes`, what checkpoints and proofs are read from) that is not the
  hash the records give, missing, or beyond the chain's head: a node table altered or records removed;
* a quote that is no longer the document text at its offsets, or a document whose text no longer
  hashes to the SHA-256 in the record: changed evidence.

Which requirements are located in the document text is a versioned rule, `QUOTE_RULE`, named in
every report. It reads each requirement's own verdict, which is part of the hashed record, so it
applies to old and new records alike and no record is ever edited:

* `quotes@1` (engine 0.1.0 before this rule was named): every requirement on record was located.
  An LLM's proposal that code could not find in its chunk is stored rejected `not_verbatim` with
  offsets 0-0, so every audit holding one failed, and a trail holding one could never verify again.
* `quotes@2` (current): a requirement rejected `not_verbatim` is a *proposal*. It claims no place
  in any document; its text is covered by the record hash and the relational copy like the rest,
  and it is counted (`proposals_checked`), not located. A proposal that is marked verified or cited
  is a problem. Every other requirement (verified, or rejected for relevance) claims its offsets
  and is located there.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime
from typing import Any

import psycopg
from pydantic import BaseModel, ConfigDict, Field

from engine.config import Settings
from engine.text import normalize_ws
from engine.trail import keyring, local_log, signing
from engine.trail import store as audit_trail
from engine.trail import tree as trail_tree
from engine.trail.canonical import GENESIS_HASH, canonical_json, sha256_hex, utc_timestamp
from engine.trail.standalone_verify import VerifyError, parse_checkpoint, split_note, verified_checkpoint

QUOTE_RULE = "quotes@2"
PROPOSAL_REASON = "not_verbatim"  # the verdict that makes a requirement a proposal under quotes@2


class Problem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    seq: int | None = Field(description="The first seq the problem concerns (None: not tied to one record)")
    audit_id: str | None = None
    check: str = Field(description="hash | link | seq_gap | copy | checkpoint | tree | quote | document")
    message: str
    exact: bool = Field(default=True, description="False: `seq` is only the earliest record that may be bad")


class VerifyReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ok: bool
    audits_checked: int
    head_seq: int | None
    head_hash: str | None
    checkpoints_checked: int
    signatures_checked: bool
    quotes_checked: int = Field(description="Requirements located at their offsets in the stored document text")
    proposals_checked: int = Field(default=0, description="Rejected not_verbatim proposals: hashed, not located")
    quote_rule: str = Field(default=QUOTE_RULE, description="The versioned rule deciding what is located")
    first_bad_seq: int | None
    problems: list[Problem]
    notices: list[str] = Field(default_factory=list, description="Not failures: e.g. a local-log checkpoint "
                                                                  "whose transaction rolled back")


def _check_rows(rows: list[dict[str, Any]]) -> tuple[list[Problem], dict[str, dict[str, Any]], dict[int, str]]:
    """Hashes, envelopes, links and seq continuity. Returns problems, records by audit id, hash by seq."""
    problems: list[Problem] = []
    records: dict[str, dict[str, Any]] = {}
    hashes: dict[int, str] = {}
    expected, prev_row = 1, None
    for row in rows:
        seq, aid = row["seq"], row["audit_id"]
        if seq != expected:
            problems.append(Problem(seq=expected, check="seq_gap",
                                    message=f"seq {expected}..{seq - 1} missing: records were deleted"))
        digest = sha256_hex(row["canonical"])
        hashes[seq] = digest
        if digest != row["hash"]:
            problems.append(Problem(seq=seq, audit_id=aid, check="hash",
                                    message="stored hash does not match the record's canonical text"))
        try:
            env = json.loads(row["canonical"])
            record = env["record"]
        except (ValueError, KeyError, TypeError):
            problems.append(Problem(seq=seq, audit_id=aid, check="hash", message="canonical text is not a record"))
            expected, prev_row = seq + 1, row
            continue
        intact = digest == row["hash"] and env.get("seq") == seq and env.get("prev_hash") == row["prev_hash"]
        if env.get("seq") != seq or env.get("prev_hash") != row["prev_hash"]:
            problems.append(Problem(seq=seq, audit_id=aid, check="hash",
                                    message=f"row seq/prev_hash differ from the hashed envelope ({env.get('seq')})"))
        if prev_row is not None and seq == expected and env.get("prev_hash") != hashes[prev_row["seq"]]:
            problems.append(_link_problem(prev_row, row, intact))
        elif prev_row is None and seq == 1 and env.get("prev_hash") != GENESIS_HASH:
            problems.append(Problem(seq=1, audit_id=aid, check="link", message="first record lacks the genesis hash"))
        problems.extend(_check_copies(row, record))
        records[aid] = {**record, "_seq": seq}
        expected, prev_row = seq + 1, row
    return problems, records, hashes


def _link_problem(prev_row: dict[str, Any], row: dict[str, Any], intact: bool) -> Problem:
    if intact:  # the successor is self-consistent: the predecessor was rewritten
        return Problem(seq=prev_row["seq"], audit_id=prev_row["audit_id"], check="link",
                       message=f"record {prev_row['seq']} was rewritten: seq {row['seq']} recorded a different hash")
    return Problem(seq=row["seq"], audit_id=row["audit_id"], check="link",
                   message="prev_hash does not match the previous record")


def _check_copies(row: dict[str, Any], record: dict[str, Any]) -> list[Problem]:
    """The JSONB copy and header columns must equal the hashed record."""
    out = []
    if canonical_json(row["record"]) != canonical_json(record):
        out.append(Problem(seq=row["seq"], audit_id=row["audit_id"], check="copy",
                           message="the JSONB copy differs from the hashed record"))
    header = audit_trail._header(record)
    stored = {**{k: row[k] for k in header}, "created_at": utc_timestamp(row["created_at"])}
    header["created_at"] = utc_timestamp(_parse_ts(header["created_at"]))
    changed = sorted(k for k in header if header[k] != stored[k])
    if changed:
        out.append(Problem(seq=row["seq"], audit_id=row["audit_id"], check="copy",
                           message=f"columns {', '.join(changed)} differ from the hashed record"))
    return out


def _parse_ts(text: str) -> Any:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _check_tables(conn: psycopg.Connection, records: dict[str, dict[str, Any]]) -> list[Problem]:
    """audit_requirements and audit_documents hold exactly the rows the records imply."""
    problems = []
    for name, expected_fn, stored in (
            ("audit_requirements", audit_trail.requirement_rows, audit_trail.stored_requirement_rows(conn)),
            ("audit_documents", audit_trail.document_rows, audit_trail.stored_document_rows(conn))):
        expected = {row for rec in records.values() for row in map(tuple, expected_fn(rec))}
        actual = set(map(tuple, stored))
        bad: dict[str, int] = defaultdict(int)
        for row in expected ^ actual:
            bad[row[0]] += 1
        for aid, count in bad.items():
            seq = records[aid]["_seq"] if aid in records else None
            problems.append(Problem(seq=seq, audit_id=aid, check="copy",
                                    message=f"{count} row(s) of {name} differ from the hashed record"))
    return problems


def _stored_checkpoints(conn: psycopg.Connection, settings: Settings
                        ) -> tuple[list[dict[str, Any]], list[Problem], list[str]]:
    """Checkpoints in the database and the local log (deduplicated). A local one missing from the database is
    a problem (checkpoints were deleted), unless the transaction it was signed in rolled back: then it is an
    uncommitted leftover (a notice), and so is one whose transaction is still open."""
    stored = audit_trail.checkpoints(conn)
    known = {(c["payload"], c["signature"]) for c in stored}
    problems, extra, notices = [], [], []
    for c, state in local_log.settle(conn, local_log.entries(settings), known):
        where = f"the local log {local_log.log_path(settings)}:{c['line']}"
        if state == "missing":
            committed = audit_trail.hash_at(conn, c["seq"])
            hint = ("" if c.get("xact") or committed in (None, c["head_hash"]) else
                    f" (its signed head {str(c['head_hash'])[:16]}… is not the committed audit at seq {c['seq']}: "
                    "either that record was rewritten, or a batch signed this before its commit failed, under an "
                    "engine that did not yet mark such checkpoints with their transaction)")
            problems.append(Problem(seq=c["seq"], check="checkpoint", message=(
                f"checkpoint at seq {c['seq']} is in the local log, not in the database{hint}")))
            extra.append({**c, "where": where})
        elif state == "rolled_back":
            notices.append(f"checkpoint at seq {c['seq']} in {where} was signed in transaction {c['xact']}, which "
                           "rolled back: an uncommitted leftover (its audits were never recorded), not tampering")
        elif state == "pending":
            notices.append(f"checkpoint at seq {c['seq']} in {where}: its transaction {c['xact']} is still open")
    return [{**c, "where": "the database"} for c in stored] + extra, problems, notices


def _signed_heads(items: list[dict[str, Any]], spans: list[keyring.Span]) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Each checkpoint's (size, head hash or root) once its signature verifies with a key that may sign its tree
    size (`keyring.spans`: a retired key only up to its rotation); bad ones as problems."""
    heads, problems = [], []
    for c in items:
        where = c["where"]
        if c.get("format") == "c2sp-note":
            try:
                cp = _verified_by_span(c["note"], spans)
            except VerifyError as exc:
                problems.append(Problem(seq=c.get("seq"), check="checkpoint",
                                        message=f"checkpoint at seq {c.get('seq')} in {where}: {exc}"))
                continue
            signature = split_note(c["note"])[1][0][1][4:].hex()
            if c.get("seq") is not None and (c["seq"] != cp.size or c.get("root_hash") not in (None, cp.root.hex())
                                             or c.get("signature") not in (None, signature)):
                problems.append(Problem(seq=c["seq"], check="checkpoint", message=(
                    f"checkpoint at seq {c['seq']} in {where}: columns differ from the signed note")))
            heads.append({"seq": cp.size, "root": cp.root.hex(), "where": where})
            continue
        if not any(signing.verify(span.public, c["payload"], c["signature"]) for span in spans):
            problems.append(Problem(seq=c["seq"], check="checkpoint",
                                    message=f"checkpoint at seq {c['seq']} in {where}: bad signature"))
            continue
        payload = json.loads(c["payload"])
        if payload.get("seq") != c["seq"] or payload.get("head_hash") != c["head_hash"]:
            problems.append(Problem(seq=c["seq"], check="checkpoint",
                                    message=f"checkpoint at seq {c['seq']}: columns differ from the signed payload"))
        heads.append({"seq": payload["seq"], "head_hash": payload["head_hash"], "where": where})
    return heads, problems


def _verified_by_span(note: str, spans: list[keyring.Span]) -> Any:
    """The checkpoint of `note`, verified with a key whose span covers its tree size. Raises VerifyError."""
    size = parse_checkpoint(split_note(note)[0]).size
    allowed = keyring.keys_for_size(spans, size)
    try:
        return verified_checkpoint(note, allowed)
    except VerifyError:
        verified_checkpoint(note, [s.public for s in spans])  # raises when no key of the trail signed it at all
        raise VerifyError(f"signed for tree size {size} by a retired key after its rotation: a retired key signs "
                          "nothing new (was it stolen?)") from None


def _check_checkpoints(conn: psycopg.Connection, settings: Settings, hashes: dict[int, str],
                       head_seq: int | None, published: list[tuple[str, str]]
                       ) -> tuple[list[Problem], int, bool, list[str]]:
    """Every signed checkpoint (database, local log, published witness files) against the live log."""
    everything, problems, notices = _stored_checkpoints(conn, settings)
    everything += [{"format": "c2sp-note", "note": note, "seq": None, "where": where} for where, note in published]
    spans = keyring.spans(settings)
    if everything and not spans:
        problems.append(Problem(seq=None, check="checkpoint", message=(
            f"{len(everything)} checkpoint(s) cannot be checked: no public key at "
            f"{signing.public_key_path(settings.signing_key_file)}")))
        return problems, len(everything), False, notices
    heads, bad = _signed_heads(everything, spans)
    problems += bad
    size = head_seq or 0
    leaves = trail_tree.leaves(hashes.get(s, GENESIS_HASH) for s in range(1, size + 1))
    roots = trail_tree.roots_at(leaves, [h["seq"] for h in heads if h["seq"] <= size])
    last_good = 0
    for h in sorted(heads, key=lambda h: h["seq"]):
        seq = h["seq"]
        if seq > size:
            problems.append(Problem(seq=size + 1, check="checkpoint", message=(
                f"a checkpoint signed for seq {seq} ({h['where']}), but the chain ends at {size}: records were "
                "removed")))
        elif (roots[seq].hex() != h["root"]) if "root" in h else (hashes.get(seq) != h["head_hash"]):
            problems.append(Problem(seq=last_good + 1, check="checkpoint", exact=False, message=(
                f"the live log differs from the checkpoint signed at seq {seq} ({h['where']}): rewritten between "
                f"seq {last_good + 1} and {seq}")))
        else:
            last_good = max(last_good, seq)
    return problems, len(everything), True, notices


def _check_nodes(conn: psycopg.Connection, hashes: dict[int, str], head_seq: int | None) -> list[Problem]:
    """The stored perfect subtrees against the tree the records give (`tree.perfect_nodes`); the first wrong,
    missing or surplus node by its first leaf."""
    size = head_seq or 0
    expected = trail_tree.perfect_nodes(trail_tree.leaves(hashes.get(s, GENESIS_HASH) for s in range(1, size + 1)))
    stored = audit_trail.all_tree_nodes(conn)
    bad = [(level, index) for (level, index), h in expected.items() if stored.get((level, index)) != h]
    bad += [node for node in stored if node not in expected]
    if not bad:
        return []
    level, index = min(bad, key=lambda n: (n[1] << n[0], -n[0]))
    first, last = index << level, ((index + 1) << level) - 1
    what = ("is missing" if (level, index) not in stored else "is beyond the chain's head: records were removed"
            if (level, index) not in expected else "differs from the records' hashes")
    return [Problem(seq=first + 1, check="tree", exact=False, message=(
        f"trail_nodes: node (level {level}, index {index}) over audits {first + 1}..{last + 1} {what}; "
        f"{len(bad)} node(s) in all. Checkpoints and proofs are read from these nodes"))]


def _check_proposal(rec: dict[str, Any], r: dict[str, Any]) -> Problem | None:
    """A proposal claims no place in a document; it must not claim to be evidence either."""
    if r.get("verified") or r.get("cited"):
        return Problem(seq=rec["_seq"], audit_id=rec["audit_id"], check="quote", message=(
            f"{r['requirement_id']}: rejected {PROPOSAL_REASON}, yet marked verified or cited"))
    return None


def _check_quotes(conn: psycopg.Connection, records: dict[str, dict[str, Any]]) -> tuple[list[Problem], int, int]:
    """Every quote a record locates is still the stored document text at its offsets; cited documents still
    hash right. Proposals (rule `QUOTE_RULE`) are counted, not located. Returns problems, quotes, proposals."""
    reqs = [(rec, r) for rec in records.values() for r in rec.get("requirements", [])]
    proposals = [(rec, r) for rec, r in reqs if r.get("rejection_reason") == PROPOSAL_REASON]
    located = [(rec, r) for rec, r in reqs if r.get("rejection_reason") != PROPOSAL_REASON]
    problems: list[Problem] = [p for rec, r in proposals if (p := _check_proposal(rec, r)) is not None]
    texts = audit_trail.document_texts(conn, list({r["document_id"] for _, r in located}))
    checked_docs: dict[str, bool] = {}
    for rec, r in located:
        doc_id, text = r["document_id"], texts.get(r["document_id"])
        snapshot = {d["document_id"]: d["content_sha256"] for d in rec.get("corpus", [])}
        if text is not None and doc_id not in checked_docs and doc_id in snapshot:
            checked_docs[doc_id] = sha256_hex(text) == snapshot[doc_id]
            if not checked_docs[doc_id]:
                problems.append(Problem(seq=rec["_seq"], audit_id=rec["audit_id"], check="document",
                                        message=f"document {doc_id} no longer hashes to its recorded SHA-256"))
        span = None if text is None else text[r["doc_char_start"]:r["doc_char_end"]]
        if span is None or normalize_ws(span) != normalize_ws(r["exact_quote"]):
            where = "document missing" if text is None else f"chars {r['doc_char_start']}-{r['doc_char_end']}"
            problems.append(Problem(seq=rec["_seq"], audit_id=rec["audit_id"], check="quote", message=(
                f"{r['requirement_id']}: quote is not the text of {doc_id} at {where}")))
    return problems, len(located), len(proposals)


def verify_trail(conn: psycopg.Connection, settings: Settings, *, audit_id: str | None = None,
                 published: list[tuple[str, str]] | None = None) -> VerifyReport:
    """Verify the whole chain and every checkpoint; quotes of every audit, or of `audit_id` only.

    `published` holds signed notes kept outside the database, as (where, note) pairs
    (`checkpoints.read_notes`): the live log must reproduce each of their roots.
    """
    rows = audit_trail.chain(conn)
    problems, records, hashes = _check_rows(rows)
    problems += _check_tables(conn, records)
    head_seq = rows[-1]["seq"] if rows else None
    cp_problems, n_checkpoints, signed, notices = _check_checkpoints(conn, settings, hashes, head_seq, published or [])
    problems += cp_problems + _check_nodes(conn, hashes, head_seq)
    if audit_id is not None:
        audit_trail.get(conn, audit_id)  # NotFoundError when unknown
        records = {audit_id: records[audit_id]} if audit_id in records else {}
    quote_problems, n_quotes, n_proposals = _check_quotes(conn, records)
    problems += quote_problems
    # A checkpoint mismatch only bounds the damage; a problem pinned to one record is more precise.
    seqs = [p.seq for p in problems if p.seq is not None and p.exact] or [
        p.seq for p in problems if p.seq is not None]
    return VerifyReport(ok=not problems, audits_checked=len(rows), head_seq=head_seq,
                        head_hash=rows[-1]["hash"] if rows else None, checkpoints_checked=n_checkpoints,
                        signatures_checked=signed, quotes_checked=n_quotes, proposals_checked=n_proposals,
                        first_bad_seq=min(seqs) if seqs else None, problems=problems, notices=notices)
