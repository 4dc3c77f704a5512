"""The `evidence` command. Only this module catches errors broadly: it maps them to exit codes."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from engine import db as dbmod
from engine import embedded_db
from engine.cli_audit import audit_app
from engine.cli_common import emit_json, err, out, run
from engine.cli_report import report_app
from engine.cli_trail import trail_app
from engine.config import SOURCE_TYPES, Settings, load_settings

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Evidence Engine: grounded, auditable answers.")
db_app = typer.Typer(no_args_is_help=True, help="The database (embedded PostgreSQL unless DATABASE_URL is set).")
app.add_typer(db_app, name="db")
app.add_typer(trail_app, name="trail")
app.add_typer(audit_app, name="audit")
app.add_typer(report_app, name="report")



def _settings() -> Settings:
    return load_settings()


_emit_json = emit_json

@db_app.command("status")
def db_status(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show whether the embedded server runs (does not start it)."""

    def body() -> int:
        settings = _settings()
        info = {"external": bool(settings.database_url), **embedded_db.status(settings)}
        if as_json:
            _emit_json(info)
        else:
            for key, value in info.items():
                out.print(f"{key:12} {value}")
        return 0

    run(body)


@db_app.command("url")
def db_url() -> None:
    """Print a URI that psql can use (starts the embedded server if needed)."""
    run(lambda: out.print(dbmod.database_url(_settings()), highlight=False, soft_wrap=True) or 0)


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
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            applied = dbmod.migrate(conn)
        out.print("applied: " + ", ".join(applied) if applied else "schema is up to date")
        return 0

    run(body)


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or directories (recursive).")],
    source_type: Annotated[str | None, typer.Option("--source-type", help="|".join(SOURCE_TYPES))] = None,
    title: Annotated[str | None, typer.Option("--title")] = None,
    fmt: Annotated[str, typer.Option("--format", help="auto|pdf|docx|html|md|txt|obliqa")] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Ingest documents: parse, chunk, embed and index them."""
    from engine.embeddings import Embedder
    from engine.ingest import expand_paths, ingest_paths

    def body() -> int:
        settings = _settings()
        if source_type is not None and source_type not in SOURCE_TYPES:
            raise typer.BadParameter(f"--source-type must be one of {', '.join(SOURCE_TYPES)}")
        files = expand_paths(paths)
        with dbmod.connection(settings) as conn, Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=err, disable=as_json or not err.is_terminal,
        ) as progress:
            task = progress.add_task("ingesting", total=len(files))

            def on_file(path: Path, result: Any) -> None:
                progress.advance(task)
                if result.status == "failed":
                    err.print(f"[red]failed[/] {path}: {result.error}", highlight=False)
                elif not as_json:
                    progress.console.print(f"{result.status:11} {path} ({result.chunks} chunks)", highlight=False)

            summary = ingest_paths(conn, Embedder.from_settings(settings), settings, paths, fmt=fmt,
                                   source_type=source_type, title=title, on_file=on_file)
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


def _print_research(result: Any, verbose: bool, usage: dict[str, Any] | None = None) -> None:
    """Human output of a research run: steps, evidence, and (with --verbose) per-node metrics.

    With the llm backend, how far the LLM answered comes first ("LLM unavailable: answered by rules").
    """
    from engine.llm import availability_line, usage_line

    availability = availability_line(usage, result.fallbacks)
    if availability:
        out.print(f"[bold yellow]{escape(availability)}[/]", highlight=False, soft_wrap=True)
    if result.rejected:
        out.print(f"[bold red]Rejected:[/] {escape(result.rejection_reason or '')} (run {result.run_id})")
        return
    out.print(f"[bold]{escape(result.stem)}[/]  "
              f"({result.question_type}, backend {result.backend}, run {result.run_id})")
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
        if usage is not None:
            out.print(escape(usage_line(usage) or ""), highlight=False, soft_wrap=True)


def _print_answer(answer: dict[str, Any]) -> None:
    """The answer with its inline REQ-IDs, then every requirement with its verdict."""
    colour = "green" if answer["status"] == "ANSWERED" else "red"
    out.print(f"\n[bold {colour}]{answer['status']}[/]  grounding confidence: {answer['grounding_confidence']}  "
              f"(review {'passed' if answer['review']['passed'] else 'FAILED'})")
    for statement in answer["statements"] or [{"text": answer["final_answer"]}]:
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


def _llm_events(status: Any, verbose: bool) -> Any:
    """Show which step waits for the LLM (spinner); retries and an unavailable LLM also as lines on stderr."""

    def on_event(kind: str, message: str) -> None:
        status.update(escape(message))
        if kind != "waiting" or (verbose and not err.is_terminal):
            err.print(f"[yellow]LLM[/] {escape(message)}", highlight=False)

    return on_event


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

        if deps.llm is not None:
            deps.llm.on_event = _llm_events(status, verbose)

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
    usage = deps.llm.usage() if deps.llm is not None else None
    if as_json:
        _emit_json({**result.model_dump(mode="json"), "llm_usage": usage, "audit": audit.model_dump()})
    else:
        _print_research(result, verbose, usage)
        out.print(f"audit [bold]{audit.audit_id}[/] (seq {audit.seq}, hash {audit.hash[:16]}…)"
                  + ("" if audit.created else " (recorded earlier)"), highlight=False)
    if pdf is not None:
        err.print(f"report written to {pdf}", highlight=False)
    return 0


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
