"""`evidence trail diff|impact|rerun`: how answers change with their documents: what differs between two
answers, which audits rest on a document or section (and went stale), and answering stale ones again.
Registered on `evidence trail` by engine.cli.trail."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

from engine import db as dbmod
from engine.cli.common import answer_width, emit_json, err, out, run, settings
from engine.errors import EngineError, ExitCode
from engine.report.terminal import wrap
from engine.search.embeddings import Embedder
from engine.trail import store as audit_trail
from engine.trail.queries import diff, impact, stale_audits


def diff_cmd(audit_a: Annotated[str, typer.Argument(help="The earlier audit (AUD-… or a unique start)")],
             audit_b: Annotated[str, typer.Argument(help="The later audit")],
             all_: Annotated[bool, typer.Option("--all", help="Also every other candidate requirement that was added, "
                                                              "removed or judged differently")] = False,
             as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """What changed from AUD-A to AUD-B: the answer and its citations first (matched by document, place and
    text, not by REQ-ID, which is numbered per answer), corpus versions, then on request the rest."""
    def body() -> int:
        with dbmod.connection(settings()) as conn:
            d = diff(conn, audit_trail.resolve_id(conn, audit_a), audit_trail.resolve_id(conn, audit_b))
        if as_json:
            emit_json(d)
            return ExitCode.SUCCESS
        _print_diff(d, all_)
        return ExitCode.SUCCESS

    run(body)


def _print_diff(d: dict[str, Any], everything: bool) -> None:
    width = answer_width()

    def say(text: str, indent: str = "    ", first: str = "  ", style: str = "") -> None:
        for line in wrap(text, width, indent, first):
            out.print(line, style=style or None, markup=False, highlight=False)

    out.print(f"{d['a']['audit_id']} -> {d['b']['audit_id']}", highlight=False)
    if not d["same_question"]:
        out.print("[yellow]note: the two audits answer different questions[/]")
    out.print(f"status {d['status'][0]} -> {d['status'][1]}; confidence {d['grounding_confidence'][0]} -> "
              f"{d['grounding_confidence'][1]}", highlight=False)
    direct = d["direct_answer"]
    if direct["changed"]:
        out.print("[bold]Answer changed[/]")
        for (question, before), (_, after) in zip(direct["before"], direct["after"], strict=False):
            if question:
                say(question, first="  ", style="bold")
            say(f"before: {before}", first="    ", indent="      ")
            say(f"after:  {after}", first="    ", indent="      ")
    else:
        out.print("answer unchanged")
    c = d["citations"]
    out.print(f"[bold]Citations[/]: {len(c['unchanged'])} unchanged, {len(c['changed'])} changed, "
              f"{len(c['added'])} added, {len(c['removed'])} removed")
    for item in c["changed"]:
        a, b = item["before"], item["after"]
        say(f"~ {a['requirement_id']} -> {b['requirement_id']}  {b['citation'] or b['section_path']}, "
            f"{b['document_title']} v{a['document_version']} -> v{b['document_version']}")
        say(item["words"], first="      ", indent="      ")
    for label, group in (("+", c["added"]), ("-", c["removed"])):
        for r in group:
            say(f"{label} {r['requirement_id']}  {r['citation'] or r['section_path']}, {r['document_title']} "
                f"v{r['document_version']}: \u201c{r['exact_quote']}\u201d")
    for change in d["corpus_changes"]:
        out.print(f"corpus: {escape(change['title'])} v{change['before']} -> v{change['after']}", highlight=False)
    if not everything:
        if d["other_changes"]:
            out.print(f"[dim]{d['other_changes']} other candidate change(s) not shown (--all lists them)[/]")
        return
    for label, items in (("+", d["other_added"]), ("-", d["other_removed"])):
        for r in items:
            verdict = "verified" if r["verified"] else r["rejection_reason"]
            say(f"{label} {r['requirement_id']} ({verdict}) \u201c{r['exact_quote']}\u201d")
    for v in d["verdicts_changed"]:
        say(f"~ {v['after']['requirement_id']} {v['before']['rejection_reason'] or 'verified'} -> "
            f"{v['after']['rejection_reason'] or 'verified'}: \u201c{v['after']['exact_quote']}\u201d")


def impact_cmd(target: Annotated[str, typer.Argument(
                   help="DOCUMENT or DOCUMENT#SECTION: id (or a unique start), path, file or title; the section as "
                        "'evidence documents sections' numbers it (4.2, 33(1), Recital 3; 'Art. 33(1)' works too)")],
               as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Which audits cite a document or section, and which are stale: a quote they cite changed or vanished in
    the current version. 'evidence trail rerun --stale' answers stale audits again."""
    def body() -> int:
        with dbmod.connection(settings()) as conn:
            result = impact(conn, target)
        if as_json:
            emit_json(result)
            return ExitCode.SUCCESS
        where = f" section {result['section']}" if result["section"] else ""
        out.print(f"{len(result['audits'])} audit(s) cite {escape(target.partition('#')[0])}{where}; "
                  f"{len(result['stale_audits'])} stale (a cited quote changed or vanished)", highlight=False)
        for a in result["audits"]:
            flag = "[red]STALE[/]" if a["stale"] else "[green]current[/]"
            again = f" [dim](answered again: {a['superseded_by']})[/]" if a.get("superseded_by") else ""
            out.print(f"{flag} {a['audit_id']} (seq {a['seq']}){again} {escape(a['question'])}", highlight=False)
            for q in a["requirements"]:
                if q["superseded"]:
                    state = "still in" if q["quote_in_current_version"] else "[red]no longer in[/]"
                    out.print(f"    {q['requirement_id']} v{q['document_version']} {state} v{q['current_version']}: "
                              f"{escape(q['exact_quote'])}", highlight=False)
        return ExitCode.SUCCESS

    run(body)


def rerun_cmd(audit_ids: Annotated[list[str] | None, typer.Argument(help="Audits to answer again (AUD-… or unique "
                                                                         "starts); with --stale, every stale one")
                                   ] = None,
              stale: Annotated[bool, typer.Option("--stale", help="Every audit a changed or vanished quote made "
                                                                  "stale and not answered again yet")] = False,
              backend: Annotated[str | None, typer.Option("--backend", help="rules or llm (default: each audit's own)")
                                 ] = None,
              actor: Annotated[str | None, typer.Option("--actor")] = None,
              as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Ask stale audits' questions again against the current documents (within the same scope). Each new audit
    supersedes the old one: the old record stays, a correction on it points to the new one and says what
    changed."""
    from engine.batch.rerun import rerun_one  # the research graph (about 1.5 s): not for --help

    if backend not in (None, "rules", "llm"):
        raise typer.BadParameter("--backend must be rules or llm")

    def body() -> int:
        if not stale and not audit_ids:
            raise EngineError("name the audits to answer again, or give --stale for every stale one "
                              "('evidence trail impact DOCUMENT' shows which are stale)")
        cfg = settings()
        done = []
        with dbmod.connection(cfg) as conn, err.status("re-asking", spinner="dots") as status:
            targets = [audit_trail.resolve_id(conn, a) for a in audit_ids or []]
            if stale:
                targets += [s["audit_id"] for s in stale_audits(conn) if s["audit_id"] not in targets]
            embedder = Embedder.from_settings(cfg)
            for i, target in enumerate(targets, 1):
                status.update(f"{i}/{len(targets)}: {target}")
                done.append(rerun_one(conn, cfg, target, embedder=embedder, actor=actor or cfg.actor, backend=backend))
        if as_json:
            emit_json([r.model_dump() for r in done])
            return ExitCode.SUCCESS
        out.print(f"{len(done)} audit(s) answered again against the current documents" if done
                  else "no stale audits: every cited quote is still in its document's current version")
        for r in done:
            out.print(f"{r.old_audit_id} -> {r.new_audit_id}: {r.summary}", highlight=False)
            direct = r.diff["direct_answer"]
            if direct["changed"]:
                for (_, before), (_, after) in zip(direct["before"], direct["after"], strict=False):
                    out.print(f"    before: {escape(before)}\n    after:  {escape(after)}", highlight=False)
            out.print(f"    correction {r.correction_id} on {r.old_audit_id} points to {r.new_audit_id}",
                      highlight=False)
        return ExitCode.SUCCESS

    run(body)
