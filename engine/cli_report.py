"""`evidence report AUD-… [--pdf F] [--html F] [--md F] [--json F]` and `evidence report verify FILE.pdf`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import click
import psycopg
import typer
from rich.markup import escape

from engine import db as dbmod
from engine import embedded_db
from engine.cli_common import FullHelpGroup, emit_json, err, out, run, settings
from engine.config import Settings
from engine.errors import IntegrityError, StorageError


class _AuditFirst(FullHelpGroup):
    """`evidence report AUD-…` runs `render`; `evidence report verify FILE` runs `verify`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["render", *args]
        return super().parse_args(ctx, args)


report_app = typer.Typer(cls=_AuditFirst, no_args_is_help=True,
                         help="Auditor-ready reports of stored audits (PDF/A-3b, HTML, Markdown, JSON); verify.")


def write_reports(conn: psycopg.Connection, audit_id: str, *, pdf: Path | None = None, html: Path | None = None,
                  md: Path | None = None, json_file: Path | None = None) -> list[Path]:
    """Write the requested formats of one audit's report. Returns the files written."""
    from engine import report

    written = []
    if pdf is not None:
        written.append(report.write_pdf(conn, audit_id, pdf))
    for path, render in ((html, report.render_html), (md, report.render_markdown), (json_file, report.render_json)):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render(conn, audit_id), encoding="utf-8")
            written.append(path)
    return written


@report_app.command("render")
def render_cmd(
    audit_id: Annotated[str, typer.Argument(help="The audit (AUD-…, or a unique start of one); 'evidence trail list' "
                                                 "shows them")],
    pdf: Annotated[Path | None, typer.Option("--pdf", help="PDF/A-3b with the record embedded")] = None,
    html: Annotated[Path | None, typer.Option("--html", help="Standalone HTML page")] = None,
    md: Annotated[Path | None, typer.Option("--md", help="Markdown")] = None,
    json_file: Annotated[Path | None, typer.Option("--json", help="The canonical record (hashes to the record hash)")
                         ] = None,
) -> None:
    """Write the report of an audit (`evidence report AUD-…`; with no format given: ./AUD-….pdf)."""

    def body() -> int:
        from engine.audit_trail import resolve_id

        with dbmod.connection(settings()) as conn:
            full_id = resolve_id(conn, audit_id)
            target_pdf = pdf if any((pdf, html, md, json_file)) else Path(f"{full_id}.pdf")
            written = write_reports(conn, full_id, pdf=target_pdf, html=html, md=md, json_file=json_file)
        for path in written:
            out.print(f"wrote {escape(str(path))}", highlight=False)
        return 0

    run(body)


@contextmanager
def _trail(cfg: Settings, offline: bool) -> Iterator[tuple[psycopg.Connection | None, str]]:
    """A read connection to the trail, or None (with the reason) when there is none to reach."""
    if offline:
        yield None, "--offline"
        return
    if not cfg.database_url and not embedded_db.status(cfg)["initialized"]:
        yield None, f"no database configured and no embedded one in {cfg.home}"
        return
    try:
        conn = dbmod.connect(cfg, auto_migrate=False)
    except (StorageError, psycopg.Error) as exc:
        yield None, f"the database cannot be reached ({str(exc).splitlines()[0]})"
        return
    try:
        yield conn, ""
    finally:
        conn.close()


def _print_verify(result: Any, why_offline: str) -> None:
    if not result.trail_checked:
        out.print(f"[yellow]trail not checked[/]: {escape(why_offline)}; compared with the hashes the PDF states "
                  "(shows the attachment is the record the report shows, not that the trail holds it)")
    for r in result.records:
        flag = "[green]MATCH[/]" if r.ok else "[red]MISMATCH[/]"
        out.print(f"{flag} {r.audit_id} ({escape(r.attachment)}) sha256 {r.sha256}", highlight=False)
        out.print(f"    trail {r.trail} · printed hash {r.printed} · attachment description {r.described} · "
                  f"canonical form {'yes' if r.canonical else 'no'}", highlight=False)
        for p in r.problems:
            err.print(f"    [red]{escape(p)}[/]", highlight=False)
    for p in result.problems:
        err.print(f"[red]{escape(p)}[/]", highlight=False)
    out.print("[green]OK: the embedded record(s) match[/]" if result.ok else "[red]FAILED: mismatch[/]")


@report_app.command("verify")
def verify_cmd(
    file: Annotated[Path, typer.Argument(help="A PDF written by 'evidence report' or 'evidence ask --pdf'",
                                         exists=True, dir_okay=False, readable=True)],
    offline: Annotated[bool, typer.Option("--offline", help="Do not consult the trail")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Recompute each embedded record's SHA-256; compare with the trail (offline: the PDF). Exit 6 on mismatch."""
    from engine.report_verify import verify_pdf

    def body() -> int:
        with _trail(settings(), offline) as (conn, why):
            result = verify_pdf(file, conn)
        if as_json:
            emit_json(result.model_dump())
        else:
            _print_verify(result, why)
        return 0 if result.ok else IntegrityError.exit_code

    run(body)
