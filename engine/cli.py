"""The `evidence` command. Only this module catches errors broadly: it maps them to exit codes."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table

from engine import db as dbmod
from engine import embedded_db
from engine.cli_audit import audit_app
from engine.cli_common import QUESTION_REFUSED, emit_json, err, out, run
from engine.cli_relevance import relevance_app
from engine.cli_report import report_app
from engine.cli_trail import trail_app
from engine.config import SOURCE_TYPES, Settings, load_settings
from engine.errors import printable, redact

# Plain click errors (not rich panels): an error line is never wrapped at the terminal's width, so a path
# in it stays copyable; no traceback ever shows local variables (settings hold DATABASE_URL).
app = typer.Typer(add_completion=False, no_args_is_help=True, help="Evidence Engine: grounded, auditable answers.",
                  rich_markup_mode=None, pretty_exceptions_enable=False)
db_app = typer.Typer(no_args_is_help=True, help="The database (embedded PostgreSQL unless DATABASE_URL is set).")
app.add_typer(db_app, name="db")
app.add_typer(trail_app, name="trail")
app.add_typer(audit_app, name="audit")
app.add_typer(report_app, name="report")
app.add_typer(relevance_app, name="relevance")



def _settings() -> Settings:
    return load_settings()


_emit_json = emit_json

@db_app.command("status")
def db_status(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show whether the embedded server runs (does not start it)."""

    def body() -> int:
        settings = _settings()
        settings.ensure_home()  # an unusable home is an error, not a status
        info = {"external": bool(settings.database_url), **embedded_db.status(settings)}
        if as_json:
            _emit_json(info)
        else:
            for key, value in info.items():
                out.print(f"{key:12} {value}")
        return 0

    run(body)


@db_app.command("url")
def db_url(show_password: Annotated[bool, typer.Option(
        "--show-password", help="Print a password in DATABASE_URL as it is (redacted by default).")] = False) -> None:
    """Print a URI that psql can use (starts the embedded server if needed)."""

    def body() -> int:
        url = dbmod.database_url(_settings())
        out.print(url if show_password else redact(url), highlight=False, markup=False)
        return 0

    run(body)


@db_app.command("stop")
def db_stop() -> None:
    """Stop the embedded server."""

    def body() -> int:
        stopped = embedded_db.stop(_settings())
        out.print("stopped" if stopped else "not running")
        return 0

    run(body)


@db_app.command("migrate")
def db_migrate() -> None:
    """Apply pending schema migrations."""

    def body() -> int:
        with dbmod.connection(_settings(), auto_migrate=False) as conn:
            version = dbmod.ensure_pgvector(conn)
            applied = dbmod.migrate(conn)
        out.print(("applied: " + ", ".join(applied) if applied else "schema is up to date") + f" (pgvector {version})")
        return 0

    run(body)


@db_app.command("reembed")
def db_reembed() -> None:
    """Re-embed every stored chunk with the configured embedder (after changing models)."""
    from engine.embeddings import Embedder
    from engine.ingest import reembed

    def body() -> int:
        settings = _settings()
        embedder = Embedder.from_settings(settings)
        with dbmod.connection(settings) as conn:
            done = reembed(conn, embedder)
        out.print(f"re-embedded {done} chunk(s) with {embedder.name} ({embedder.backend})")
        return 0

    run(body)


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
        if result.status == "failed":
            err.print(f"failed {name}: {printable(result.error or '')}", markup=False, highlight=False)
        elif not as_json:
            self.bar.console.print(f"{result.status:11} {name} ({result.chunks} chunks)", markup=False,
                                   highlight=False)


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or directories (recursive).")],
    source_type: Annotated[str | None, typer.Option("--source-type", help="|".join(SOURCE_TYPES))] = None,
    title: Annotated[str | None, typer.Option("--title")] = None,
    fmt: Annotated[str, typer.Option("--format", help="auto|pdf|docx|html|md|txt|obliqa")] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary (no progress shown).")] = False,
    follow_symlinks: Annotated[bool, typer.Option(
        "--follow-symlinks", help="Follow links inside a folder that point outside it (refused by default).")] = False,
) -> None:
    """Ingest documents: parse, chunk, embed and index them."""
    from engine.embeddings import Embedder
    from engine.ingest import ingest_paths

    def body() -> int:
        settings = _settings()
        if source_type is not None and source_type not in SOURCE_TYPES:
            raise typer.BadParameter(f"--source-type must be one of {', '.join(SOURCE_TYPES)}")
        with dbmod.connection(settings) as conn, _IngestDisplay(quiet=as_json) as display:
            summary = ingest_paths(conn, Embedder.from_settings(settings), settings, paths, fmt=fmt,
                                   source_type=source_type, title=title, follow_symlinks=follow_symlinks,
                                   on_file=lambda path, result: display.file(path, result, as_json),
                                   on_progress=display.update)
        if as_json:
            _emit_json(summary.model_dump())
        else:
            out.print(f"{summary.documents} documents, {summary.chunks} chunks in {summary.seconds:.1f} s; "
                      f"{len(summary.failed)} failed")
        return 3 if summary.failed else 0

    run(body)


@app.command()
def search(
    query: Annotated[str, typer.Argument()],
    k: Annotated[int, typer.Option("-k", help="How many results.")] = 10,
    source_types: Annotated[list[str] | None, typer.Option("--source-type")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Hybrid search over the current corpus."""
    from engine.embeddings import Embedder
    from engine.retrieval import Filters, Retriever

    def body() -> int:
        settings = _settings()
        with dbmod.connection(settings) as conn:
            retriever = Retriever(conn, Embedder.from_settings(settings), settings)
            hits = retriever.search(query, k, filters=Filters(source_types=tuple(source_types or ())))
        if as_json:
            _emit_json([h.model_dump() for h in hits])
            return 0
        for i, h in enumerate(hits, 1):
            c = h.chunk
            scores = f"(dense {h.dense_score or 0:.3f}, bm25 {h.lexical_score or 0:.2f})"
            out.print(f"[bold]{i}.[/] {h.score:.3f}  {scores}  [cyan]{escape(c.document_title)}[/] "
                      f"v{c.document_version} \\[{c.source_type}]  {escape(c.section_path)}", highlight=False)
            out.print("   " + c.text.replace("\n", "\n   "), highlight=False, markup=False)
            out.print(f"   [dim]{c.id}  chars {c.char_start}-{c.char_end}[/]")
        return 0

    run(body)


@app.command()
def documents(as_json: Annotated[bool, typer.Option("--json")] = False,
              all_versions: Annotated[bool, typer.Option("--all-versions")] = False) -> None:
    """List ingested documents."""
    from engine import store

    def body() -> int:
        with dbmod.connection(_settings()) as conn:
            docs = store.list_documents(conn, include_superseded=all_versions)
        if as_json:
            _emit_json([d.model_dump(mode="json") for d in docs])
            return 0
        table = Table()
        for col in ("id", "v", "type", "title", "current"):
            table.add_column(col)
        for d in docs:
            table.add_row(d.id, str(d.version), d.source_type, d.title, "yes" if d.is_current else "no")
        out.print(table)
        return 0

    run(body)


def _print_research(result: Any, verbose: bool) -> None:
    """Human output of a research run: steps, evidence, and (with --verbose) per-node metrics."""
    if result.rejected:
        out.print(f"[bold red]Rejected:[/] {escape(result.rejection_reason or '')} (run {result.run_id})")
        return
    out.print(f"[bold]{escape(result.stem)}[/]  "
              f"({result.question_type}, backend {result.backend}, run {result.run_id})")
    if result.language and result.language.get("note"):
        out.print("[yellow]language:[/] " + escape(result.language["note"]), highlight=False)
    if result.options:
        out.print("options (stripped before research): " + escape(" | ".join(result.options)))
    for step in result.steps:
        flag = "[green]completed[/]" if step["status"] == "completed" else "[yellow]failed[/]"
        out.print(f"step {step['index']} {flag} conf {step['confidence']:.2f}  {escape(step['aspect'])}")
        for query in step["queries"]:
            out.print(f"    query: {escape(query)}", highlight=False)
    out.print(f"[bold]{len(result.evidence)} evidence chunks[/] (in order found)")
    if verbose:
        for i, item in enumerate(result.evidence, 1):
            via = f"  [dim]via {escape(item['cross_reference'])}[/]" if item.get("cross_reference") else ""
            out.print(f"{i:3}. {escape(item['document_title'])} v{item['document_version']}  "
                      f"{escape(item['section_path'])}{via}", highlight=False)
            out.print("     " + escape(" ".join(item["text"].split())[:240]), highlight=False)
    if result.evidence_result:
        _print_answer(result.evidence_result)
    if result.fallbacks:
        out.print("[yellow]fallbacks to rules:[/] " + escape("; ".join(result.fallbacks)))
    if verbose:
        table = Table(title="node metrics")
        for col in ("node", "seconds", "llm calls", "in chars", "out chars", "parse failures", "fallbacks"):
            table.add_column(col)
        for m in result.metrics:
            table.add_row(m["node"], f"{m['seconds']:.3f}", str(m["llm_calls"]), str(m["input_chars"]),
                          str(m["output_chars"]), str(m["parse_failures"]), str(m["fallbacks"]))
        out.print(table)


def _print_answer(answer: dict[str, Any]) -> None:
    """The answer with its inline REQ-IDs, then every requirement with its verdict."""
    colour = "green" if answer["status"] == "ANSWERED" else "red"
    out.print(f"\n[bold {colour}]{answer['status']}[/]  grounding confidence: {answer['grounding_confidence']}  "
              f"(review {'passed' if answer['review']['passed'] else 'FAILED'})")
    parts = answer.get("parts") or []
    if len(parts) > 1:  # one short section per part, each with its own direct answer
        for part in parts:
            out.print(f"[bold]({part['index'] + 1}) {escape(part['question'])}[/]", highlight=False)
            mine = [st for st in answer["statements"] if st.get("part", 0) == part["index"]]
            for statement in mine:
                out.print("- " + escape(statement["text"]), highlight=False)
            for item in [] if mine else part["missing_evidence"]:
                out.print("[red]- no authoritative evidence for this part:[/] " + escape(item), highlight=False)
    else:
        if answer.get("direct_answer"):
            out.print("[bold]Answer:[/] " + escape(answer["direct_answer"]), highlight=False)
        for statement in [st for st in answer["statements"] if st.get("kind") != "direct"] or (
                [] if answer.get("direct_answer") else [{"text": answer["final_answer"]}]):
            out.print("- " + escape(statement["text"]), highlight=False)
    table = Table(title="requirements", show_lines=True)
    for col in ("REQ-ID", "modality", "verdict", "quote", "source"):
        table.add_column(col)
    for req in answer["extracted_requirements"]:
        verdict = "[green]verified[/]" if req["verified"] else f"[yellow]{req['rejection_reason']}[/]"
        table.add_row(req["requirement_id"], req["modality"], verdict, escape(req["exact_quote"]),
                      escape(f"{req['document_title']} v{req['document_version']}, {req['section_path']}"))
    out.print(table)
    if answer["unused_requirements"]:
        out.print("verified but unused: " + ", ".join(answer["unused_requirements"]))
    for item in answer["missing_evidence"]:
        out.print("[red]missing:[/] " + escape(item))


def _research_command(question: str | None, run_id: str | None, as_json: bool, backend: str | None,
                      verbose: bool, actor: str | None = None, pdf: Path | None = None) -> int:
    from agents.deps import Deps
    from agents.research import postgres_checkpointer, resume_research, run_research
    from engine.audit_trail import crash_point
    from engine.trail_record import record_research

    settings = _settings()
    asked_at = datetime.now(UTC)
    with dbmod.connection(settings) as conn, postgres_checkpointer(settings) as saver, \
            err.status("starting", spinner="dots") as status:
        deps = Deps.build(conn, settings, backend=backend)

        def progress(name: str) -> None:
            status.update(f"running [bold]{name}[/]")

        if question is not None:
            new_id = f"run-{uuid.uuid4().hex[:12]}"
            err.print(f"run {new_id} (if interrupted: evidence resume {new_id})", highlight=False)
            result = run_research(question, deps, run_id=new_id, checkpointer=saver, progress=progress)
        else:
            result = resume_research(run_id or "", deps, saver, progress=progress)
        crash_point(settings.fault_injection, "audit:before")
        status.update("recording the audit")
        audit = record_research(conn, settings, deps.embedder, result.model_dump(mode="json"), llm=deps.llm,
                                actor=actor, asked_at=asked_at)
        crash_point(settings.fault_injection, "audit:after")
        if pdf is not None:
            from engine.report import write_pdf

            status.update("writing the report")
            write_pdf(conn, audit.audit_id, pdf)
    if as_json:
        _emit_json({**result.model_dump(mode="json"), "audit": audit.model_dump()})
    else:
        _print_research(result, verbose)
        out.print(f"audit [bold]{audit.audit_id}[/] (seq {audit.seq}, hash {audit.hash[:16]}…)"
                  + ("" if audit.created else " (recorded earlier)"), highlight=False)
    if pdf is not None:
        err.print(f"report written to {pdf}", highlight=False)
    return QUESTION_REFUSED if result.rejected else 0


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The compliance question.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
    backend: Annotated[str | None, typer.Option("--backend", help="rules (default) or llm")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Per-node metrics.")] = False,
    actor: Annotated[str | None, typer.Option("--actor", help="Who asks (default: the OS user).")] = None,
    pdf: Annotated[Path | None, typer.Option("--pdf", help="Write the PDF report of the recorded audit here.")] = None,
) -> None:
    """Answer a question from the corpus and record the audit (research, extract, verify, compose, review)."""
    if backend not in (None, "rules", "llm"):
        raise typer.BadParameter("--backend must be rules or llm")
    run(lambda: _research_command(question, None, as_json, backend, verbose, actor, pdf))


@app.command()
def resume(
    run_id: Annotated[str, typer.Argument(help="The run id printed by 'evidence ask'.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
    actor: Annotated[str | None, typer.Option("--actor")] = None,
) -> None:
    """Continue a run that was interrupted (or show a finished one); its audit is recorded once."""
    run(lambda: _research_command(None, run_id, as_json, None, verbose, actor))


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
