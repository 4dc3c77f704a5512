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
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.rows import tuple_row

from engine import embedded_db
from engine.config import Settings, resource_dir
from engine.errors import ConfigError, InputError, NotFoundError, StorageError, redact

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


def one(conn: psycopg.Connection, sql: str, params: Any = None) -> tuple[Any, ...]:
    """The one row of a query that always returns one (an aggregate, a setting, a function call)."""
    row = conn.execute(sql, params).fetchone()  # type: ignore[arg-type]
    if row is None:
        raise StorageError(f"the query returned no row: {sql[:80]}")
    return tuple(row)


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
    """Apply pending migrations. Returns the names applied. Nothing pending, it runs no DDL (a role that may
    read the schema but not change it gets through); a pending one it may not apply is a StorageError."""
    applied: list[str] = []
    try:
        with conn.transaction():
            xact_lock(conn, Lock.MIGRATIONS)
            if one(conn, "SELECT to_regclass('schema_migrations')")[0] is None:
                conn.execute(
                    "CREATE TABLE schema_migrations ("
                    " version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
                )
            done = applied_migrations(conn)
            for version, name, text in migrations():
                if version in done:
                    continue
                with conn.transaction():
                    conn.execute(text)  # type: ignore[arg-type]
                    conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (version, name))
                applied.append(name)
    except psycopg.errors.InsufficientPrivilege as exc:
        raise StorageError(
            f"the schema needs migrating and role '{conn.info.user}' may not do it "
            f"({str(exc).strip().splitlines()[0]}); the schema's owner runs 'evidence db migrate' and 'evidence db "
            f"grant {conn.info.user}'; a runtime role runs with EVIDENCE_AUTO_MIGRATE=0") from exc
    return applied


def applied_migrations(conn: psycopg.Connection) -> set[int]:
    """Versions of the migrations applied in this database (read only: none when it has no schema yet)."""
    if one(conn, "SELECT to_regclass('schema_migrations')")[0] is None:
        return set()
    return {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}


def pending_migrations(conn: psycopg.Connection) -> list[str]:
    """Names of the migrations this engine has and the database lacks, in order (read only)."""
    done = applied_migrations(conn)
    return [name for version, name, _ in migrations() if version not in done]


def _pgvector_facts(conn: psycopg.Connection) -> tuple[str | None, str | None, str, str]:
    """(pgvector installed here, pgvector the server offers, the database, the role)."""
    row = one(conn, "SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
                    "(SELECT default_version FROM pg_available_extensions WHERE name = 'vector'), "
                    "current_database(), current_user")
    return row[0], row[1], row[2], row[3]


def check_schema(conn: psycopg.Connection) -> None:
    """The database as a runtime role needs it, checked without DDL: pgvector at a usable version and every
    migration applied; StorageError saying what the owner must run otherwise."""
    installed, available, database, user = _pgvector_facts(conn)
    if installed is None:
        raise StorageError(f"the pgvector extension is not installed in database '{database}', and "
                           "EVIDENCE_AUTO_MIGRATE is off (commands create nothing); an administrator runs 'CREATE "
                           "EXTENSION vector;' there once, and the owner 'evidence db migrate'")
    if problem := pgvector_problem(installed, available):
        raise StorageError(f"database '{database}': {problem}")
    try:
        pending = pending_migrations(conn)
    except psycopg.errors.InsufficientPrivilege as exc:
        raise StorageError(f"role '{user}' may not read schema_migrations in database '{database}'; the owner "
                           f"runs 'evidence db grant {user}'") from exc
    if pending:
        raise StorageError(f"database '{database}' lacks migration(s) {', '.join(pending)}, and EVIDENCE_AUTO_MIGRATE "
                           "is off (commands run no DDL); the schema's owner runs 'evidence db migrate' (then "
                           f"'evidence db grant {user}' for the tables it adds)")


# What a runtime role may do, table by table: the trail (the tables the append-only triggers guard) is read
# and appended to, never changed; the bookkeeping of migrations is read; the working tables (corpus,
# batches, checkpoints, users) are read and written, and may be vacuumed (PostgreSQL 17: MAINTAIN). Nothing
# else: no TRUNCATE, REFERENCES or TRIGGER, no ownership, so no ALTER, DROP or CREATE INDEX.
TRAIL_PRIVILEGES, READ_ONLY, WORKING = "SELECT, INSERT", "SELECT", "SELECT, INSERT, UPDATE, DELETE"
READ_ONLY_TABLES = ("schema_migrations", "checkpoint_migrations")


def runtime_grants(conn: psycopg.Connection, role: str) -> list[sql.Composed]:
    """The statements that give `role` exactly what the engine's commands need in this database (run by the
    owner, after `migrate`): ALL is revoked first, so running them again after a migration is exact too."""
    row = conn.execute("SELECT rolname = current_user, current_schema(), current_database(), "
                       "current_setting('server_version_num')::int >= 170000 FROM pg_roles WHERE rolname = %s",
                       (role,)).fetchone()
    if row is None:
        raise NotFoundError(f"no role '{role}' on this server; create it first (CREATE ROLE {role} LOGIN PASSWORD "
                            "'...';), then run 'evidence db grant' again")
    is_self, schema, database, maintain = row
    if is_self:
        raise InputError(f"'{role}' is the role running this command (the owner); grant to the runtime role, "
                         "another one")
    trail = {r[0] for r in conn.execute(
        "SELECT DISTINCT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
        "JOIN pg_proc p ON p.oid = t.tgfoid WHERE p.proname = 'trail_append_only' "
        "AND c.relnamespace = %s::regnamespace", (schema,))}
    tables = [r[0] for r in conn.execute("SELECT relname FROM pg_class WHERE relnamespace = %s::regnamespace "
                                         "AND relkind IN ('r', 'p') ORDER BY relname", (schema,))]
    who, where = sql.Identifier(role), sql.Identifier(schema)
    out = [sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(database), who),
           sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(where, who),
           sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA {} FROM {}").format(where, who),
           sql.SQL("REVOKE ALL ON ALL SEQUENCES IN SCHEMA {} FROM {}").format(where, who),
           sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {} TO {}").format(where, who)]
    for table in tables:
        privileges = (TRAIL_PRIVILEGES if table in trail else READ_ONLY if table in READ_ONLY_TABLES
                      else WORKING + (", MAINTAIN" if maintain else ""))
        out.append(sql.SQL("GRANT {} ON {} TO {}").format(sql.SQL(privileges), sql.Identifier(schema, table), who))
    return out


def grant_runtime(conn: psycopg.Connection, role: str) -> list[str]:
    """Run `runtime_grants` in one transaction; the statements as run."""
    with conn.transaction():
        statements = runtime_grants(conn, role)
        for statement in statements:
            conn.execute(statement)
    return [statement.as_string(conn) for statement in statements]


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
    installed, available, database, user = _pgvector_facts(conn)
    if installed is None and available is not None:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StorageError(
                f"the pgvector extension is not installed in database '{database}', and role '{user}' may not "
                f"create it ({str(exc).strip()}); ask an administrator to run 'CREATE EXTENSION vector;' in that "
                "database once (pgvector 0.8.0 or later), then run 'evidence db migrate'") from exc
        installed = one(conn, "SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector')")[0]
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
        if auto_migrate and settings.auto_migrate:
            ensure_pgvector(conn)
            register_vector(conn)
            migrate(conn)
        elif auto_migrate:  # EVIDENCE_AUTO_MIGRATE off: no DDL, but a schema this engine can use
            check_schema(conn)
            register_vector(conn)
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
    installed, available, database, role = _pgvector_facts(conn)
    version, superuser = one(conn, "SELECT current_setting('server_version'), "
                                   "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user)")
    schema: dict[str, object] = {"schema_version": None, "pending_migrations": None}
    if one(conn, "SELECT to_regclass('schema_migrations') IS NULL "
                 "OR has_table_privilege('schema_migrations', 'SELECT')")[0]:
        applied = applied_migrations(conn)
        schema = {"schema_version": max(applied) if applied else None,
                  "pending_migrations": [name for number, name, _ in migrations() if number not in applied]}
    else:
        schema["schema_error"] = f"role {role} may not read schema_migrations ('evidence db grant {role}' as the owner)"
    return {"server_version": version, "tls": conn.pgconn.ssl_in_use,
            "sslmode": conn.info.get_parameters().get("sslmode", "prefer"),
            "role": role, "superuser": superuser, "database": database, "pgvector": installed,
            "pgvector_available": available, "pgvector_problem": pgvector_problem(installed, available), **schema}
