"""`evidence trail ...`: list, show, search, verify, diff, impact, checkpoint, prove, consistency, and amend
stored audits; public-key and rotate-key (engine.cli.keys); `evidence trail witness ...` (engine.cli.witness)."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from engine import db as dbmod
from engine.cli.common import FullHelpGroup, answer_width, emit_json, engine_api, err, out, print_lines, run, settings
from engine.cli.keys import public_key_cmd, rotate_key_cmd
from engine.cli.trail_changes import diff_cmd, impact_cmd, rerun_cmd
from engine.cli.witness import witness_app
from engine.errors import EngineError, ExitCode
from engine.report.terminal import answer_lines, wrap
from engine.search import store
from engine.search.embeddings import Embedder
from engine.trail import review
from engine.trail import store as audit_trail
from engine.trail.checkpoints import after_append, covering, publish
from engine.trail.proofs import consistency, inclusion_bundle
from engine.trail.queries import version_keys
from engine.trail.record import build_amendment

trail_app = typer.Typer(cls=FullHelpGroup, no_args_is_help=True,
                        help="The audit trail: append-only, hash-chained, verifiable.")
trail_app.add_typer(witness_app, name="witness")


def _when(value: str | None, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise typer.BadParameter(f"{name} wants an ISO date or time such as 2026-01-31 or 2026-01-31T12:00Z") from exc
    return parsed if parsed.tzinfo else parsed.astimezone()


def _document_keys(conn: Any, name: str) -> list[str]:
    """Ids and source keys of every version of the document `name` identifies (as `trail impact` does)."""
    return version_keys(store.find_documents(conn, name)) or [name]


def _print_headers(rows: list[dict[str, Any]], *, similarity: bool = False) -> None:
    """One audit per entry, its full id first (never cut), the question wrapped below it."""
    for r in rows:
        kind = "" if r["kind"] == "answer" else f"  ({r['kind']} of {r['amends']})"
        score = f"  similarity {r['similarity']:.3f}" if similarity else ""
        out.print(f"{r['audit_id']}  seq {r['seq']}  {r['created_at']:%Y-%m-%d %H:%M}  {r['status']}  "
                  f"{r['grounding_confidence'] or '-'}  {r['actor']}{kind}{score}", markup=False, highlight=False)
        for line in wrap(r["question"], answer_width(), "    "):
            out.print(line, markup=False, highlight=False)


@trail_app.command("list")
def list_cmd(
    since: Annotated[str | None, typer.Option("--since", help="ISO date/time (inclusive)")] = None,
    until: Annotated[str | None, typer.Option("--until", help="ISO date/time (exclusive)")] = None,
    actor: Annotated[str | None, typer.Option("--actor")] = None,
    document: Annotated[str | None, typer.Option("--document", help="Cited document (id, path, file, title)")] = None,
    status: Annotated[str | None, typer.Option("--status", help="ANSWERED | NO_AUTHORITATIVE_EVIDENCE | ...")] = None,
    confidence: Annotated[str | None, typer.Option("--confidence", help="high | medium | low | insufficient")] = None,
    batch: Annotated[str | None, typer.Option("--batch", help="Audits of one batch run")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """List stored audits, oldest first."""

    def body() -> int:
        with dbmod.connection(settings()) as conn:
            documents = _document_keys(conn, document) if document else None
            rows = audit_trail.list_audits(conn, since=_when(since, "--since"), until=_when(until, "--until"),
                                           actor=actor, documents=documents, status=status, confidence=confidence,
                                           batch=batch)
        if as_json:
            emit_json(rows)
        else:
            _print_headers(rows)
            out.print(f"{len(rows)} audit(s)")
        return ExitCode.SUCCESS

    run(body)


@trail_app.command("show")
def show_cmd(audit_id: Annotated[str, typer.Argument(help="AUD-… (or a unique start of one)")],
             as_json: Annotated[bool, typer.Option("--json", help="Exactly what was stored")] = False,
             brief: Annotated[bool, typer.Option("--brief", help="Leave out the rejected candidates")] = False
             ) -> None:
    """Show one audit: who asked what, when, the answer with its cited requirements, the rejected candidates,
    notes and corrections (`--json` prints the stored canonical text as is)."""

    def body() -> int:
        cfg = settings()
        with dbmod.connection(cfg) as conn:
            row = audit_trail.get(conn, audit_trail.resolve_id(conn, audit_id))
            notes = audit_trail.amendments(conn, row["audit_id"])
            state = review.review_of(conn, row["audit_id"], required=cfg.review_approvals)
        if as_json:
            sys.stdout.write(row["canonical"] + "\n")
            return ExitCode.SUCCESS
        _print_record(row, notes, show_rejected=not brief)
        if row["record"]["kind"] == "answer":
            out.print(f"review: [bold]{state.label}[/]: {escape(state.summary())}", highlight=False)
        return ExitCode.SUCCESS

    run(body)


def _print_record(row: dict[str, Any], notes: list[dict[str, Any]], *, show_rejected: bool = True) -> None:
    rec = row["record"]
    out.print(f"[bold]{row['audit_id']}[/]  seq {row['seq']}  {rec['kind']}  recorded {rec['recorded_at']}  "
              f"by {escape(rec['actor'])}", highlight=False)
    out.print(f"hash {row['hash']}\nprev {row['prev_hash']}", highlight=False)
    if rec["kind"] != "answer":
        out.print(f"question: {escape(rec['question'])}", highlight=False)
        out.print(f"{rec['kind']} of {rec['amends']}: {escape(rec['reason'])}\n{escape(rec['text'])}")
        return
    out.print(f"backend {rec['backend']}  engine {rec['engine']['version']}  settings {rec['settings_hash']}",
              highlight=False)
    if rec.get("supersedes"):
        out.print(f"answers again {rec['supersedes']} (its quotes had changed)", highlight=False)
    out.print()
    print_lines(answer_lines(rec, width=answer_width(), show_rejected=show_rejected,
                              rejected_hint="shown without --brief"))
    out.print(f"\n{len(rec['research']['steps'])} research step(s); corpus of {len(rec['corpus'])} document(s)")
    for note in notes:
        again = note["record"].get("superseded_by")
        out.print(f"[yellow]{note['kind']}[/] {note['audit_id']} by {escape(note['actor'])}: "
                  f"{escape(note['record']['reason'])}" + (f"\n    superseded by {again}" if again else ""),
                  highlight=False)
        if note["record"].get("text"):
            out.print("    " + escape(note["record"]["text"]), highlight=False)


@trail_app.command("search")
def search_cmd(text: str, k: Annotated[int, typer.Option("-k")] = 10,
               as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Semantic search over stored questions and answers."""
    def body() -> int:
        cfg = settings()
        with dbmod.connection(cfg) as conn:
            rows = audit_trail.search(conn, Embedder.from_settings(cfg).encode_query(text), k)
        if as_json:
            emit_json(rows)
        else:
            _print_headers(rows, similarity=True)
        return ExitCode.SUCCESS

    run(body)


@trail_app.command("verify")
def verify_cmd(audit_id: Annotated[str | None, typer.Argument(help="Check this audit's quotes (chain: always all)")
                                   ] = None,
               all_: Annotated[bool, typer.Option("--all", help="Every audit (the default)")] = False,
               published: Annotated[list[Path] | None, typer.Option(
                   "--published", help="A witness file or folder of checkpoints kept outside the database "
                                       "(written by 'trail checkpoint --out'); repeatable")] = None,
               as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Recompute hashes, links and tree roots; check every checkpoint (and published ones) and quotes. Exit 6
    on any failure."""
    def body() -> int:
        api = engine_api()
        notes = api.witness_notes(published or [])
        report = api.verify_trail(audit_id=None if all_ else audit_id, witness=notes)
        if as_json:
            emit_json(report.model_dump())
        else:
            out.print(f"{report.audits_checked} audit(s), head seq {report.head_seq}, "
                      f"{report.checkpoints_checked} checkpoint(s)"
                      f"{'' if report.signatures_checked else ' (signatures not checked)'}"
                      f"{f' ({len(notes)} published)' if notes else ''}, "
                      f"{report.quotes_checked} quote(s) located, {report.proposals_checked} rejected proposal(s) "
                      f"hashed, not located (rule {report.quote_rule})", highlight=False)
            for notice in report.notices:
                err.print(f"[yellow]note[/] {escape(notice)}", highlight=False)
            for p in report.problems:
                where = f"seq {p.seq}" if p.seq is not None else "trail"
                err.print(f"[red]FAIL[/] {where} {p.audit_id or ''} [{p.check}] {escape(p.message)}", highlight=False)
            out.print("[green]OK: the trail verifies[/]" if report.ok
                      else f"[red]FAILED[/]: first bad seq {report.first_bad_seq}")
        return ExitCode.SUCCESS if report.ok else ExitCode.INTEGRITY

    run(body)


@trail_app.command("checkpoint")
def checkpoint_cmd(
    out_dir: Annotated[Path | None, typer.Option("--out", help="Also append the signed note to "
                                                 "DIR/trail-checkpoints.txt (keep DIR outside the database)")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Sign a checkpoint of the log (C2SP signed note: origin, tree size, root; Ed25519) unless the latest
    covers every audit, and print it."""
    def body() -> int:
        cfg = settings()
        with dbmod.connection(cfg) as conn:
            head = audit_trail.head(conn)
            if head is None:
                raise EngineError("the trail is empty: there is nothing to checkpoint yet; answer a question first")
            cp = covering(conn, cfg, head[0])
        written = publish(cp.note, out_dir) if out_dir is not None else None
        if as_json:
            emit_json({**cp.model_dump(), "published_to": str(written) if written else None})
            return ExitCode.SUCCESS
        if cp.key_created:
            err.print(f"created signing key {cp.key_file} — back it up; verification needs its public half "
                      "('evidence trail public-key')")
        sys.stdout.write(cp.note)
        err.print(f"tree size {cp.seq}, root {cp.root_hash}, head {cp.head_hash}; signed {cp.signed_at}; key "
                  f"fingerprint (SHA-256) {cp.key_fingerprint}", highlight=False, soft_wrap=True)
        if written:
            err.print(f"appended to {escape(str(written))}", highlight=False)
        return ExitCode.SUCCESS

    run(body)


@trail_app.command("prove")
def prove_cmd(audit_id: str,
              out_file: Annotated[Path | None, typer.Option("--out", help="Write the bundle to this file")] = None
              ) -> None:
    """Print an inclusion-proof bundle (JSON): the audit's record hash, its leaf, the audit path and the
    signed checkpoint. `python3 evidence_verify.py --proof P --record R --public-key K` checks it."""
    def body() -> int:
        cfg = settings()
        with dbmod.connection(cfg) as conn:
            bundle = inclusion_bundle(conn, cfg, audit_id)
        text = json.dumps(bundle, indent=2, ensure_ascii=False) + "\n"
        if out_file is not None:
            out_file.parent.mkdir(parents=True, exist_ok=True)
            out_file.write_text(text, encoding="utf-8")
            err.print(f"wrote {escape(str(out_file))}", highlight=False)
        else:
            sys.stdout.write(text)
        return ExitCode.SUCCESS

    run(body)


@trail_app.command("consistency")
def consistency_cmd(
    old: Annotated[str, typer.Argument(help="A tree size, or a witness file of signed checkpoints (every note is "
                                            "checked: a fork between them fails)")],
    new: Annotated[str | None, typer.Argument(help="The same kinds; default: the latest signed checkpoint")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Prove that the log at NEW extends the log at OLD (RFC 6962 consistency proof). Exit 6 if it does not."""
    def body() -> int:
        cfg = settings()
        with dbmod.connection(cfg) as conn:
            result = consistency(conn, cfg, old, new)
        if as_json:
            emit_json(result)
        else:
            for label in ("old", "new"):
                end = result[label]
                out.print(f"{label}: size {end['size']} root {end['root_hash']} ({escape(end['source'])})",
                          highlight=False, soft_wrap=True)
            out.print(f"proof: {len(result['proof'])} hash(es)")
            for h in result["proof"]:
                out.print(f"  {h}", highlight=False)
            if result["notes_checked"]:
                out.print(f"witness notes checked: {result['notes_checked']}")
            for problem in result["problems"]:
                err.print(f"[red]FAIL[/] {escape(problem)}", highlight=False, soft_wrap=True)
            out.print("[green]OK: consistent[/]" if result["consistent"]
                      else f"[red]INCONSISTENT[/]: {escape(result['problems'][0])}", highlight=False, soft_wrap=True)
        return ExitCode.SUCCESS if result["consistent"] else ExitCode.INTEGRITY

    run(body)


# How answers change with their documents (engine.cli.trail_changes), listed where they always were.
trail_app.command("diff")(diff_cmd)
trail_app.command("public-key")(public_key_cmd)
trail_app.command("rotate-key")(rotate_key_cmd)
trail_app.command("impact")(impact_cmd)
trail_app.command("rerun")(rerun_cmd)


@trail_app.command("amend")
def amend_cmd(audit_id: str,
              reason: Annotated[str, typer.Option("--reason", help="Why (required)")],
              text: Annotated[str, typer.Option("--text", help="The note or the corrected statement")] = "",
              correction: Annotated[bool, typer.Option("--correction", help="A correction, not a note")] = False,
              actor: Annotated[str | None, typer.Option("--actor")] = None,
              as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Add a reviewer note or a correction: a new record pointing to AUD (the original is never changed)."""
    def body() -> int:
        if not reason.strip():
            raise EngineError("--reason must say why the record is amended")
        cfg = settings()
        with dbmod.connection(cfg) as conn:
            target = audit_trail.get(conn, audit_trail.resolve_id(conn, audit_id))["record"]
            record = build_amendment(target, kind="correction" if correction else "note", reason=reason, text=text,
                                     actor=actor or cfg.actor)
            appended = audit_trail.append(conn, record)
            after_append(conn, cfg, appended.seq)
        if as_json:
            emit_json(appended.model_dump())
        else:
            out.print(f"{record['kind']} {appended.audit_id} (seq {appended.seq}) amends {record['amends']}")
        return ExitCode.SUCCESS

    run(body)
