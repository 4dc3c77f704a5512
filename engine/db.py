"""Connections, schema migrations and advisory locks. Migrations are `sql/NNN_name.sql`, applied in
order, each together with its bookkeeping row in one transaction. Every advisory lock the engine takes
is named in `Lock` and taken through the functions below."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from enum import IntEnum
from importlib import resources
from pathlib import Path

import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import tuple_row

from engine import embedded_db
from engine.config import Settings, resource_dir
from engine.errors import ConfigError, StorageError, redact

SQL_DIR = resource_dir("sql")
_MIGRATION_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


class Lock(IntEnum):
    """The namespaces of the engine's advisory locks: the first key of every lock, which is always the
    two-key form `pg_advisory_*lock(namespace, key)`. The second key is 0 for a lock of one thing, or
    `hashtext(name)` (a source key, a batch id, a worker id): a name can then only meet names of its
    own kind, never another lock (a one-key `hashtext(source_key)` could equal the trail's lock number).
    The numbers are the ones these locks had before the registry."""

    MIGRATIONS = 7702001  # one process applies migrations at a time
    CHECKPOINT_SETUP = 7702002  # one process runs LangGraph's checkpointer set-up at a time
    TRAIL_APPEND = 7702005  # appends to the audit chain, one at a time
    BATCH = 7702007  # one coordinator per batch (key: the batch id)
    WORKER = 7702008  # a batch worker's liveness, held while its connection lives (key: the worker id)
    INGEST_SOURCE = 7702009  # one writer per document source at ingest (key: the source key)


def _lock_call(function: str, namespace: Lock, key: str | None) -> tuple[str, tuple[object, ...]]:
    if key is None:
        return f"SELECT {function}(%s, 0)", (int(namespace),)
    return f"SELECT {function}(%s, hashtext(%s))", (int(namespace), key)


def xact_lock(conn: psycopg.Connection, namespace: Lock, key: str | None = None) -> None:
    """Wait for the lock (namespace, key); it is released when the caller's transaction ends."""
    conn.execute(*_lock_call("pg_advisory_xact_lock", namespace, key))  # type: ignore[arg-type]


def session_lock(conn: psycopg.Connection, namespace: Lock, key: str | None = None) -> None:
    """Wait for the lock (namespace, key); it is held until `session_unlock` or the connection closes."""
    conn.execute(*_lock_call("pg_advisory_lock", namespace, key))  # type: ignore[arg-type]


def try_session_lock(conn: psycopg.Connection, namespace: Lock, key: str | None = None) -> bool:
    """Take the session lock (namespace, key) if it is free; whether it was taken."""
    with conn.cursor(row_factory=tuple_row) as cur:
        row = cur.execute(*_lock_call("pg_try_advisory_lock", namespace, key)).fetchone()  # type: ignore[arg-type]
    return bool(row and row[0])


def session_unlock(conn: psycopg.Connection, namespace: Lock, key: str | None = None) -> None:
    conn.execute(*_lock_call("pg_advisory_unlock", namespace, key))  # type: ignore[arg-type]


def lock_held(namespace: Lock, key_sql: str) -> str:
    """A SQL condition: some session holds the lock (namespace, hashtext(<key_sql>)), where `key_sql` is a
    column or expression of the query it goes into (whether a batch item's worker is still alive)."""
    return (f"EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted "
            f"AND l.classid = {int(namespace)} AND l.objid = hashtext({key_sql})::oid AND l.objsubid = 2)")


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
        xact_lock(conn, Lock.MIGRATIONS)
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


def applied_migrations(conn: psycopg.Connection) -> set[int]:
    """Versions of the migrations applied in this database (read only: none when it has no schema yet)."""
    if conn.execute("SELECT to_regclass('schema_migrations')").fetchone()[0] is None:
        return set()
    return {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}


def pending_migrations(conn: psycopg.Connection) -> list[str]:
    """Names of the migrations this engine has and the database lacks, in order (read only)."""
    done = applied_migrations(conn)
    return [name for version, name, _ in migrations() if version not in done]


PGVECTOR_MIN = (0, 8, 0)  # hnsw.iterative_scan (filtered searches that stay full) came with 0.8.0


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def pgvector_problem(installed: str | None, available: str | None) -> str | None:
    """What is wrong with pgvector in a database, or None. Pure (`ensure_pgvector` asks the server)."""
    need = ".".join(map(str, PGVECTOR_MIN))
    if installed is None and available is None:
        return (f"the server has no pgvector extension; install pgvector {need} or later on the PostgreSQL "
                "server (a managed service: enable its 'vector' extension), then run 'evidence db migrate'")
    if installed is None:
        return None
    if _version(installed) < PGVECTOR_MIN:
        hint = (f"run 'ALTER EXTENSION vector UPDATE;' as its owner or a superuser (the server offers {available})"
                if available and _version(available) >= PGVECTOR_MIN
                else f"upgrade pgvector on the server to {need} or later, then run 'ALTER EXTENSION vector UPDATE;'")
        return (f"pgvector {installed} is installed in this database; the engine needs {need} or later "
                f"(HNSW iterative scans); {hint}")
    return None


def ensure_pgvector(conn: psycopg.Connection) -> str:
    """pgvector in this database at a usable version, created when missing and allowed; else StorageError.

    Returns the installed version. A role that is not a superuser cannot create the extension (it is
    not trusted), so on a managed server an administrator creates it once; the engine needs no more.
    """
    row = conn.execute("SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
                       "(SELECT default_version FROM pg_available_extensions WHERE name = 'vector'), "
                       "current_database(), current_user").fetchone()
    installed, available, database, user = row
    if installed is None and available is not None:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StorageError(
                f"the pgvector extension is not installed in database '{database}', and role '{user}' may not "
                f"create it ({str(exc).strip()}); ask an administrator to run 'CREATE EXTENSION vector;' in that "
                "database once (pgvector 0.8.0 or later), then run 'evidence db migrate'") from exc
        installed = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
    problem = pgvector_problem(installed, available)
    if problem:
        raise StorageError(f"database '{database}': {problem}")
    return str(installed)


def connect(settings: Settings, *, auto_migrate: bool = True) -> psycopg.Connection:
    """Open a connection (autocommit; use `conn.transaction()` for units of work)."""
    url = database_url(settings)
    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.OperationalError as exc:
        hint = ("\nCheck that the server named by DATABASE_URL is up and reachable from here ('evidence db status' "
                "tells), or fix DATABASE_URL." if settings.database_url else
                "\nThe embedded server did not accept the connection: 'evidence db status' shows it; 'evidence db "
                "stop' then any command starts it again.")
        raise StorageError(redact(f"cannot connect to PostgreSQL at {url}: {exc}".strip()) + hint) from exc
    except psycopg.ProgrammingError as exc:  # a malformed URL or an unknown option
        raise ConfigError(redact(f"DATABASE_URL is not a valid PostgreSQL connection string ({str(exc).strip()})")
                          + "; expected a URL such as postgresql://user@host:5432/dbname") from exc
    try:
        if auto_migrate:
            ensure_pgvector(conn)
            register_vector(conn)
            migrate(conn)
        else:
            try:
                register_vector(conn)
            except psycopg.ProgrammingError:  # no pgvector in this database yet: `db migrate` says what to do
                pass
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def connection(settings: Settings, *, auto_migrate: bool = True) -> Iterator[psycopg.Connection]:
    """Context manager around `connect` that always closes."""
    conn = connect(settings, auto_migrate=auto_migrate)
    try:
        yield conn
    finally:
        conn.close()


def server_status(settings: Settings) -> dict[str, object]:
    """What `evidence db status` reports, starting nothing: for DATABASE_URL, whether the server answers and
    what it is (version, TLS, role, pgvector, schema); for the embedded server, whether it runs, and the same
    details when it does. `reachable` False carries the (redacted) error."""
    if settings.database_url:
        info: dict[str, object] = {"external": True, "url": redact(settings.database_url)}
        url = settings.database_url
    else:
        info = {"external": False, **embedded_db.status(settings)}
        url = str(info["uri"]) if info["running"] else ""
        if not url:
            return info
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            info.update(reachable=True, **_describe_server(conn))
    except psycopg.Error as exc:
        info.update(reachable=False, error=redact(str(exc).strip()))
    return info


def _describe_server(conn: psycopg.Connection) -> dict[str, object]:
    row = conn.execute("SELECT current_setting('server_version'), current_user, current_database(), "
                       "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user), "
                       "(SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
                       "(SELECT default_version FROM pg_available_extensions WHERE name = 'vector')").fetchone()
    version, role, database, superuser, installed, available = row
    schema: dict[str, object] = {"schema_version": None, "pending_migrations": None}
    if conn.execute("SELECT to_regclass('schema_migrations') IS NULL "
                    "OR has_table_privilege('schema_migrations', 'SELECT')").fetchone()[0]:
        applied = applied_migrations(conn)
        schema = {"schema_version": max(applied) if applied else None,
                  "pending_migrations": [name for number, name, _ in migrations() if number not in applied]}
    else:
        schema["schema_error"] = f"role {role} may not read schema_migrations ('evidence db grant {role}' as the owner)"
    return {"server_version": version, "tls": conn.pgconn.ssl_in_use,
            "sslmode": conn.info.get_parameters().get("sslmode", "prefer"),
            "role": role, "superuser": superuser, "database": database, "pgvector": installed,
            "pgvector_available": available, "pgvector_problem": pgvector_problem(installed, available), **schema}
