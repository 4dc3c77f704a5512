"""The `evidence` command. Only this module catches errors broadly: it maps them to exit codes."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table

from engine import db as dbmod
from engine.cli.audit import audit_app
from engine.cli.common import FullHelpGroup, answer_width, emit_json, engine_api, err, out, print_lines, run
from engine.cli.db import db_app
from engine.cli.relevance import relevance_app
from engine.cli.report import report_app
from engine.cli.trail import trail_app
from engine.cli.web import export_feedback, serve, user_app
from engine.config import SOURCE_TYPES, load_settings
from engine.errors import ExitCode, InputError, printable
from engine.ingest.citations import chunk_citation, derived_citation
from engine.report import export as exports
from engine.report.terminal import answer_lines, research_line
from engine.text import normalize_ws
from engine.trail import store as audit_trail

# Plain click errors (not rich panels): an error line is never wrapped at the terminal's width, so a path
# in it stays copyable; no traceback ever shows local variables (settings hold DATABASE_URL).
app = typer.Typer(cls=FullHelpGroup, add_completion=False, no_args_is_help=True,
                  help="Evidence Engine: grounded, auditable answers.",
                  rich_markup_mode=None, pretty_exceptions_enable=False)
app.add_typer(db_app, name="db")
app.add_typer(trail_app, name="trail")
app.add_typer(audit_app, name="audit")
app.add_typer(report_app, name="report")
app.add_typer(relevance_app, name="relevance")
app.add_typer(user_app, name="user")
app.command("serve")(serve)
relevance_app.command("export-feedback")(export_feedback)


PROGRESS_EVERY_S = 10.0  # without a terminal, a long ingest prints a progress line this often


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def progress_line(p: Any) -> str:
    """One line of ingest progress: files, chunks, rate and time left."""
    return (f"{p.files_done}/{p.files_total} files, {p.chunks_done:,} chunks embedded, "
            f"{p.chunks_per_second:.1f} chunks/s, ETA {_duration(p.eta_seconds)}")


class _IngestDisplay:
    """Progress on stderr: a live bar on a terminal, else a plain line every PROGRESS_EVERY_S seconds."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.live = not quiet and err.is_terminal
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[line]}"),
                            console=err, disable=not self.live)
        self.task = self.bar.add_task("ingesting", total=1, line="")
        self.last = time.monotonic()

    def __enter__(self) -> _IngestDisplay:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)  # type: ignore[arg-type]

    def update(self, p: Any) -> None:
        if self.live:
            self.bar.update(self.task, total=max(1, p.bytes_total), completed=p.bytes_done, line=progress_line(p))
        elif not self.quiet and time.monotonic() - self.last >= PROGRESS_EVERY_S:
            self.last = time.monotonic()
            err.print("progress: " + progress_line(p), markup=False, highlight=False)

    def file(self, path: Path, result: Any, as_json: bool) -> None:
        name = printable(str(path))
        for warning in result.warnings:
            err.print(f"warning {name}: {printable(warning)}", markup=False, highlight=False)
        for note in result.notes:
            err.print(f"note {name}: {printable(note)}", markup=False, highlight=False)
        if result.status == "failed":
            err.print(f"failed {name}: {printable(result.error or '')}", markup=False, highlight=False)
        elif not as_json:
            kind = f", {result.source_type}" if result.source_type else ""
            self.bar.console.print(f"{result.status:11} {name} ({result.chunks} chunks{kind})", markup=False,
                                   highlight=False)


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or directories (recursive).")],
    source_type: Annotated[str | None, typer.Option(
        "--source-type", help=f"One of {', '.join(SOURCE_TYPES)}. Without it: the stored version's type for a "
                              "new version, else EVIDENCE_SOURCE_TYPE, else inferred from the file name or title "
                              "(printed as a note), else the file is refused.")] = None,
    title: Annotated[str | None, typer.Option(
        "--title", help="Document title. Without it: the stored title for a new version, else the file's own.")] = None,
    fmt: Annotated[str, typer.Option(
        "--format", help="auto|pdf|docx|odt|xlsx|csv|html|md|txt|xml|obliqa|oscal")] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary (no progress shown).")] = False,
    follow_symlinks: Annotated[bool, typer.Option(
        "--follow-symlinks", help="Follow links inside a folder that point outside it (refused by default).")] = False,
) -> None:
    """Ingest documents: parse, chunk, embed and index them."""
    api = engine_api()

    def body() -> int:
        load_settings()  # configuration errors first
        if source_type is not None and source_type not in SOURCE_TYPES:
            raise typer.BadParameter(f"--source-type must be one of {', '.join(SOURCE_TYPES)}")
        with _IngestDisplay(quiet=as_json) as display:
            summary = api.ingest(paths, fmt=fmt, source_type=source_type, title=title,
                                 follow_symlinks=follow_symlinks,
                                 on_file=lambda path, result: display.file(path, result, as_json),
                                 on_progress=display.update)
        if as_json:
            emit_json(summary.model_dump())
        else:
            out.print(f"{summary.documents} documents, {summary.chunks} chunks in {summary.seconds:.1f} s; "
                      f"{len(summary.failed)} failed")
        return ExitCode.INGEST if summary.failed else ExitCode.SUCCESS

    run(body)


@app.command()
def search(
    query: Annotated[str, typer.Argument()],
    k: Annotated[int, typer.Option("-k", help="How many results.")] = 10,
    source_types: Annotated[list[str] | None, typer.Option(
        "--source-type", help=f"Only documents of this type ({', '.join(SOURCE_TYPES)}); repeat for several.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Hits with their chunks and every score.")] = False,
) -> None:
    """Hybrid search over the current corpus (dense + BM25, fused): passages with citation, section and scores."""
    api = engine_api()

    def body() -> int:
        hits = api.search(query, k=k, source_types=source_types or ())
        if as_json:
            emit_json([h.model_dump() for h in hits])
            return ExitCode.SUCCESS
        for i, h in enumerate(hits, 1):
            c = h.chunk
            scores = f"(dense {h.dense_score or 0:.3f}, bm25 {h.lexical_score or 0:.2f})"
            if h.neighbour_of:  # added by reranking beside a better hit, not matched by the search itself
                origin = next((n for n, o in enumerate(hits, 1) if o.chunk_id == h.neighbour_of), None)
                scores = f"(next to {f'#{origin}' if origin else h.neighbour_of}, not matched by the search)"
            cite = chunk_citation(c.section_number, c.section_path, c.metadata)
            out.print(f"[bold]{i}.[/] {h.score:.3f}  {scores}  [cyan]{escape(c.document_title)}[/] "
                      f"v{c.document_version} \\[{c.source_type}]  {escape(cite + ' · ' if cite else '')}"
                      f"{escape(c.section_path)}", highlight=False)
            out.print("   " + c.text.replace("\n", "\n   "), highlight=False, markup=False)
            out.print(f"   [dim]{c.id}  chars {c.char_start}-{c.char_end}[/]")
        return ExitCode.SUCCESS

    run(body)


documents_app = typer.Typer(cls=FullHelpGroup,
                            help="Ingested documents: list them (full ids), or one document's sections.")
app.add_typer(documents_app, name="documents")


@documents_app.callback(invoke_without_command=True)
def documents(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False,
              all_versions: Annotated[bool, typer.Option(
                  "--all-versions", help="Superseded versions too (they stay readable).")] = False) -> None:
    """List ingested documents, one per line with its full id (`evidence documents sections ID` lists a
    document's sections)."""
    api = engine_api()

    if ctx.invoked_subcommand is not None:
        return

    def body() -> int:
        docs = api.documents(include_superseded=all_versions)
        if as_json:
            emit_json([d.model_dump(mode="json") for d in docs])
            return ExitCode.SUCCESS
        for d in docs:
            state = "current" if d.is_current else f"superseded by {d.superseded_by}"
            same = d.metadata.get("same_text_as")
            out.print(f"{d.id}  v{d.version}  {d.source_type:10}  {state}\n    {d.title}" + (
                f"\n    the same text as {same}, read again or changed back" if same else ""), markup=False,
                      highlight=False)
        out.print(f"{len(docs)} document(s)" + ("" if all_versions else " (--all-versions: superseded ones too)"))
        return ExitCode.SUCCESS

    run(body)


@documents_app.command("sections")
def document_sections(
    document: Annotated[str, typer.Argument(help="Document id (or a unique start of one), path, file name or "
                                                 "title; an id of a superseded version lists that version's")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """List a document's sections in reading order: citation, the number `trail impact DOC#NUMBER` takes,
    and the section path."""
    api = engine_api()

    def body() -> int:
        doc, sections = api.document_sections(document)
        rows = [{"citation": s["citation"] or derived_citation(s["section_number"], s["section_path"]),
                 "section_number": s["section_number"], "section_path": s["section_path"],
                 "section_heading": s["section_heading"], "chunks": s["chunks"]} for s in sections]
        if as_json:
            emit_json({"document_id": doc.id, "title": doc.title, "version": doc.version, "sections": rows})
            return ExitCode.SUCCESS
        out.print(f"{doc.title} v{doc.version} ({doc.id}): {len(rows)} section(s)", markup=False, highlight=False)
        above = None
        for r in rows:
            # the path's outer parts once, as a line of their own where they change, so that a section's line
            # holds what tells it from its neighbours ("Article 33 Notification ...") and fits 80 columns
            *outer, own = (r["section_path"] or "(before any heading)").split(" > ")
            if outer != above and above is not None:
                out.print()
            if outer != above and outer:
                out.print(" > ".join(outer), markup=False, highlight=False, style="bold")
            above = outer
            where = f"#{r['section_number']}" if r["section_number"] else "(no number)"
            out.print(f"{r['citation'] or '-':14} {where:12} {own}  [{r['chunks']} chunk(s)]", markup=False,
                      highlight=False)
        return ExitCode.SUCCESS

    run(body)


def _print_research(result: Any) -> None:
    """--verbose: every research step with its queries, and every passage found (in order found)."""
    out.print(f"run {result.run_id}: {result.question_type}, backend {result.backend}", highlight=False)
    if result.options:
        out.print("options (stripped before research): " + escape(" | ".join(result.options)))
    for step in result.steps:
        flag = "[green]completed[/]" if step["status"] == "completed" else "[yellow]failed[/]"
        out.print(f"step {step['index']} {flag} conf {step['confidence']:.2f}  {escape(step['aspect'])}")
        for query in step["queries"]:
            out.print(f"    query: {escape(query)}", highlight=False)
    out.print(f"[bold]{len(result.evidence)} evidence chunks[/] (in order found)")
    for i, item in enumerate(result.evidence, 1):
        via = f"  [dim]via {escape(item['cross_reference'])}[/]" if item.get("cross_reference") else ""
        if item.get("neighbour_of"):
            via = f"  [dim]next to {escape(item['neighbour_of'])}[/]"
        out.print(f"{i:3}. {escape(item['document_title'])} v{item['document_version']}  "
                  f"{escape(item['section_path'])}{via}", highlight=False)
        out.print("     " + escape(normalize_ws(item["text"])[:240]), highlight=False)


def _print_metrics(result: Any) -> None:
    table = Table(title="node metrics")
    for col in ("node", "seconds", "llm calls", "in chars", "out chars", "parse failures", "fallbacks"):
        table.add_column(col)
    for m in result.metrics:
        table.add_row(m["node"], f"{m['seconds']:.3f}", str(m["llm_calls"]), str(m["input_chars"]),
                      str(m["output_chars"]), str(m["parse_failures"]), str(m["fallbacks"]))
    out.print(table)


def print_answer(record: dict[str, Any], *, show_rejected: bool, verbose: bool, result: Any = None) -> None:
    """What `ask` and `resume` print: the answer of the recorded audit, and with --verbose how it was found."""

    if verbose and result is not None:
        _print_research(result)
        out.print()
    width = answer_width()
    print_lines(answer_lines(record, width=width, show_rejected=show_rejected))
    if not verbose:
        print_lines(research_line(record, width))
    fallbacks = record.get("fallbacks") or (result.fallbacks if result is not None else [])
    if fallbacks:
        out.print("[yellow]fallbacks to rules:[/] " + escape("; ".join(fallbacks)))
    if verbose and result is not None:
        _print_metrics(result)


def _llm_events(status: Any, verbose: bool) -> Any:
    """Show which step waits for the LLM (spinner); retries and an unavailable LLM also as lines on stderr."""

    def on_event(kind: str, message: str) -> None:
        status.update(escape(message))
        if kind != "waiting" or (verbose and not err.is_terminal):
            err.print(f"[yellow]LLM[/] {escape(message)}", highlight=False)

    return on_event


def _research_command(question: str | None, run_id: str | None, as_json: bool, backend: str | None,
                      verbose: bool, actor: str | None = None, pdf: Path | None = None, *,
                      documents: list[str] | None = None, source_types: list[str] | None = None,
                      show_rejected: bool = False) -> int:
    api = engine_api()

    load_settings()  # configuration errors before the spinner
    with err.status("starting", spinner="dots") as status:
        hooks = api.Hooks(
            run_started=lambda new_id: err.print(f"run {new_id} (if interrupted: evidence resume {new_id})",
                                                 highlight=False),
            node=lambda name: status.update(f"running [bold]{name}[/]"),
            phase=status.update, llm_event=_llm_events(status, verbose))
        if question is not None:
            audit = api.ask(question, backend=backend, actor=actor, documents=documents or (),
                            source_types=source_types or (), pdf=pdf, hooks=hooks)
        else:
            audit = api.resume(run_id or "", actor=actor, hooks=hooks)
    result, usage = audit.research, audit.llm_usage
    if as_json:
        emit_json(audit.as_json())
    else:
        from engine.llm.client import availability_line, usage_line  # prompts (Jinja2): not for --help

        availability = availability_line(usage, result.fallbacks)
        if availability:  # with the llm backend, how far the LLM answered comes first
            out.print(f"[bold yellow]{escape(availability)}[/]", highlight=False, soft_wrap=True)
        print_answer(audit.record, show_rejected=show_rejected, verbose=verbose, result=result)
        if verbose and usage is not None:
            out.print(escape(usage_line(usage) or ""), highlight=False, soft_wrap=True)
        out.print(f"\naudit [bold]{audit.audit_id}[/] (seq {audit.entry.seq})" + ("" if audit.entry.created else
                  " (recorded earlier)") + f"\nrecord hash {audit.entry.hash}", highlight=False)
    if pdf is not None:
        err.print(f"report written to {pdf}", highlight=False)
    return ExitCode.QUESTION_REFUSED if audit.refused else ExitCode.SUCCESS


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The compliance question.")],
    as_json: Annotated[bool, typer.Option("--json", help="The whole research result and audit as JSON (every "
                                                        "candidate, rejected ones too).")] = False,
    backend: Annotated[str | None, typer.Option("--backend", help="rules (default) or llm")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Research steps with their queries, every "
                                                                  "passage found, per-node metrics.")] = False,
    actor: Annotated[str | None, typer.Option("--actor", help="Who asks (default: the OS user).")] = None,
    pdf: Annotated[Path | None, typer.Option("--pdf", help="Write the PDF report of the recorded audit here.")] = None,
    documents: Annotated[list[str] | None, typer.Option(
        "--document", help="Answer from this document only: id (or a unique start of one), path, file name or "
                           "title; repeat for several. Recorded in the audit.")] = None,
    source_types: Annotated[list[str] | None, typer.Option(
        "--source-type", help=f"Answer from documents of this type only ({', '.join(SOURCE_TYPES)}); repeat for "
                              "several. Recorded in the audit.")] = None,
    show_rejected: Annotated[bool, typer.Option(
        "--show-rejected", help="Also list the rejected candidate quotes with their reasons.")] = False,
) -> None:
    """Answer a question from the corpus and record the audit (research, extract, verify, compose, review).

    Prints the direct answer, the cited requirements with their citations (Art. 33(1), Section 4.2(b)),
    conflicts and missing evidence. Exit status 8 when the guard refuses the question.
    """
    if backend not in (None, "rules", "llm"):
        raise typer.BadParameter("--backend must be rules or llm")
    run(lambda: _research_command(question, None, as_json, backend, verbose, actor, pdf, documents=documents,
                                  source_types=source_types, show_rejected=show_rejected))


@app.command()
def resume(
    run_id: Annotated[str, typer.Argument(help="The run id printed by 'evidence ask'.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
    actor: Annotated[str | None, typer.Option("--actor")] = None,
    show_rejected: Annotated[bool, typer.Option("--show-rejected", help="Also list the rejected candidates.")
                             ] = False,
) -> None:
    """Continue a run that was interrupted (or show a finished one); its audit is recorded once."""
    run(lambda: _research_command(None, run_id, as_json, None, verbose, actor, show_rejected=show_rejected))


@app.command("export")
def export_cmd(
    audit_ids: Annotated[list[str], typer.Argument(help="Audits (AUD-…, or unique starts of them)")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="csv, xlsx or json")] = "csv",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="File to write (csv and json: standard "
                                                                      "output when not given; xlsx needs it)")] = None,
    cited_only: Annotated[bool, typer.Option("--cited-only", help="Only the requirements the answers cite")] = False,
) -> None:
    """Export the requirements of audits for working papers (CSV, XLSX, JSON).

    One row per requirement: audit, REQ-ID, citation, verbatim quote, modality, verdict, cited, binding,
    document title, id, version and SHA-256, section, question, time.
    """
    def body() -> int:
        if fmt not in exports.FORMATS:
            raise InputError(f"--format {fmt!r} is not one of {', '.join(exports.FORMATS)}")
        if fmt == "xlsx" and output is None:
            raise InputError("--format xlsx writes a file: give --output PATH (for example --output out/audit.xlsx)")
        with dbmod.connection(load_settings()) as conn:
            ids = list(dict.fromkeys(audit_trail.resolve_id(conn, a) for a in audit_ids))
            rows = exports.requirement_rows(conn, ids, cited_only=cited_only)
        if fmt == "xlsx":
            exports.write_xlsx(rows, output)  # type: ignore[arg-type]
        else:
            text = exports.to_csv(rows) if fmt == "csv" else exports.to_json(rows)
            if output is None:
                sys.stdout.write(text)
                return ExitCode.SUCCESS
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(text, encoding="utf-8")
        err.print(f"wrote {len(rows)} requirement(s) of {len(ids)} audit(s) to {output}", highlight=False)
        return ExitCode.SUCCESS

    run(body)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
