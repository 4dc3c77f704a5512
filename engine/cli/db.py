"""`evidence db status|url|stop|migrate|grant|prewarm|reembed`: the database the engine uses (the embedded
PostgreSQL unless DATABASE_URL names another)."""

from __future__ import annotations

import math
import time
from typing import Annotated

import typer

from engine import db as dbmod
from engine import embedded_db
from engine.cli.common import FullHelpGroup, emit_json, err, out, run
from engine.config import load_settings
from engine.errors import ExitCode, redact
from engine.search import store
from engine.search.embeddings import Embedder

db_app = typer.Typer(cls=FullHelpGroup, no_args_is_help=True,
                     help="The database (embedded PostgreSQL unless DATABASE_URL is set).")


@db_app.command("status")
def db_status(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show the database without starting anything: with DATABASE_URL, whether that server answers, its version,
    TLS, the role, pgvector and the schema (pending migrations); else whether the embedded server runs (and the
    same when it does). Exit 4 when the configured server does not answer."""

    def body() -> int:
        settings = load_settings()
        settings.ensure_home()  # an unusable home is an error, not a status
        info = dbmod.server_status(settings)
        if as_json:
            emit_json(info)
        else:
            for key, value in info.items():
                shown = (", ".join(value) or "none") if isinstance(value, list) else value
                out.print(f"{key:18} {shown}", highlight=False, markup=False)
        if info.get("reachable") is False:
            err.print(f"error: the database at {info.get('url') or info.get('uri')} does not answer; check that the "
                      "server is up and reachable from here, or fix DATABASE_URL", highlight=False, markup=False)
            return ExitCode.STORAGE
        return ExitCode.SUCCESS

    run(body)


@db_app.command("url")
def db_url(show_password: Annotated[bool, typer.Option(
        "--show-password", help="Print a password in DATABASE_URL as it is (redacted by default).")] = False) -> None:
    """Print a URI that psql can use (starts the embedded server if needed)."""

    def body() -> int:
        url = dbmod.database_url(load_settings())
        out.print(url if show_password else redact(url), highlight=False, markup=False)
        return ExitCode.SUCCESS

    run(body)


@db_app.command("stop")
def db_stop() -> None:
    """Stop the embedded server."""

    def body() -> int:
        stopped = embedded_db.stop(load_settings())
        out.print("stopped" if stopped else "not running")
        return ExitCode.SUCCESS

    run(body)


@db_app.command("migrate")
def db_migrate() -> None:
    """Apply pending schema migrations, and create LangGraph's checkpoint tables (as the schema's owner)."""
    from agents.research import postgres_checkpointer  # the research graph (LangGraph): not for every command

    def body() -> int:
        settings = load_settings().model_copy(update={"auto_migrate": True})  # this command is the DDL
        with dbmod.connection(settings, auto_migrate=False) as conn:
            version = dbmod.ensure_pgvector(conn)
            applied = dbmod.migrate(conn)
        with postgres_checkpointer(settings):
            pass
        out.print(("applied: " + ", ".join(applied) if applied else "schema is up to date") + f" (pgvector {version})")
        return ExitCode.SUCCESS

    run(body)


@db_app.command("grant")
def db_grant(role: Annotated[str, typer.Argument(help="The runtime role (it must exist)")],
             as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Give a runtime role exactly what the engine's commands need (run as the schema's owner, after 'db
    migrate' and again after each later one): the audit trail SELECT and INSERT only, the working tables
    SELECT/INSERT/UPDATE/DELETE, migrations' bookkeeping SELECT; nothing else. Run the role's commands with
    EVIDENCE_AUTO_MIGRATE=0 (they then never run DDL)."""

    def body() -> int:
        with dbmod.connection(load_settings(), auto_migrate=False) as conn:
            statements = dbmod.grant_runtime(conn, role)
        if as_json:
            emit_json({"role": role, "statements": statements})
        else:
            for statement in statements:
                out.print(statement + ";", highlight=False, markup=False)
        return ExitCode.SUCCESS

    run(body)


@db_app.command("prewarm")
def db_prewarm(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Load the search indexes into PostgreSQL's memory (after a restart; large corpora)."""

    def body() -> int:
        with dbmod.connection(load_settings()) as conn:
            started = time.perf_counter()
            blocks = store.prewarm(conn)
            seconds = time.perf_counter() - started
            sizes, shared = store.search_working_set(conn)
        total = sum(sizes.values())
        if as_json:
            emit_json({"blocks": blocks, "bytes": sizes, "working_set_bytes": total, "shared_buffers_bytes": shared,
                       "seconds": round(seconds, 2)})
            return ExitCode.SUCCESS
        for name, size in sizes.items():
            out.print(f"{name:24} {size / 2**20:10,.1f} MB  {blocks.get(name, 0):>10,} blocks", highlight=False)
        out.print(f"read {total / 2**20:,.1f} MB in {seconds:.1f} s; shared_buffers {shared / 2**20:,.0f} MB",
                  highlight=False)
        if total > shared:
            out.print(f"The search working set is larger than shared_buffers: what does not fit stays in the "
                      f"operating system's cache and searches slow down (docs/scale.md). Set shared_buffers to "
                      f"at least {math.ceil(total * 1.25 / 2**30)} GB if the machine has the memory.", highlight=False)
        return ExitCode.SUCCESS

    run(body)


@db_app.command("reembed")
def db_reembed() -> None:
    """Re-embed every stored chunk with the configured embedder (after changing models)."""
    from engine.ingest.pipeline import reembed  # the ingest stage (its parsers' patterns): not for --help

    def body() -> int:
        settings = load_settings()
        embedder = Embedder.from_settings(settings)
        with dbmod.connection(settings) as conn:
            done = reembed(conn, embedder)
        out.print(f"re-embedded {done} chunk(s) with {embedder.name} ({embedder.backend})")
        return ExitCode.SUCCESS

    run(body)
