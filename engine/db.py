"""Connections and schema migrations. Migrations are `sql/NNN_name.sql`, applied in order,
each together with its bookkeeping row in one transaction."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import psycopg
from pgvector.psycopg import register_vector

from engine import embedded_db
from engine.config import Settings
from engine.errors import ConfigError, StorageError, redact

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
_MIGRATION_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


def database_url(settings: Settings) -> str:
    """The configured external URL, or the embedded server's (started if needed)."""
    return settings.database_url or embedded_db.start(settings)


def sql_dir() -> Path:
    """Directory holding the numbered migrations (source checkout or installed package data)."""
    if SQL_DIR.is_dir():
        return SQL_DIR
    return Path(str(resources.files("engine"))).parent / "sql"  # pragma: no cover


def migrations() -> list[tuple[int, str, str]]:
    """All migrations as (number, name, sql), in order."""
    found = []
    for path in sorted(sql_dir().glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if match:
            found.append((int(match.group(1)), path.stem, path.read_text()))
    return found


def migrate(conn: psycopg.Connection) -> list[str]:
    """Apply pending migrations. Returns the names applied."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(7702001)")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
        applied = []
        for version, name, sql in migrations():
            if version in done:
                continue
            with conn.transaction():
                conn.execute(sql)  # type: ignore[arg-type]
                conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (version, name))
            applied.append(name)
    return applied


def connect(settings: Settings, *, auto_migrate: bool = True) -> psycopg.Connection:
    """Open a connection (autocommit; use `conn.transaction()` for units of work)."""
    url = database_url(settings)
    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.OperationalError as exc:
        raise StorageError(
            redact(f"cannot connect to PostgreSQL at {url}: {exc}".strip())
            + "\nStart it (the embedded one starts on demand) or fix DATABASE_URL."
        ) from exc
    except psycopg.ProgrammingError as exc:  # a malformed URL or an unknown option
        raise ConfigError(redact(f"DATABASE_URL is not a valid PostgreSQL connection string ({str(exc).strip()})")
                          + "; expected a URL such as postgresql://user@host:5432/dbname") from exc
    if auto_migrate:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(conn)
        migrate(conn)
    else:
        register_vector(conn)
    return conn


@contextmanager
def connection(settings: Settings, *, auto_migrate: bool = True) -> Iterator[psycopg.Connection]:
    """Context manager around `connect` that always closes."""
    conn = connect(settings, auto_migrate=auto_migrate)
    try:
        yield conn
    finally:
        conn.close()
