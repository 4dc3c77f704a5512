"""SQL of the reviewer's desk: users, API tokens, browser sessions, and the sign-off records of the trail.

Secrets are never stored: a password as its Argon2id hash (`engine.web.security`), a token or a
session id as the SHA-256 of its 256 random bits. Sign-offs themselves are trail records (kind
'signoff', appended by `engine.trail.store.append`); this module only reads them back.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from engine.errors import InputError, NotFoundError

ROLES = ("viewer", "analyst", "reviewer", "admin")


def add_user(conn: psycopg.Connection, name: str, role: str, password_hash: str) -> None:
    """A new user. InputError when the name is taken or not a valid user name."""
    try:
        conn.execute("INSERT INTO web_users (name, role, password_hash) VALUES (%s, %s, %s)",
                      (name, role, password_hash))
    except psycopg.errors.UniqueViolation as exc:
        raise InputError(f"user '{name}' exists already; choose another name") from exc
    except psycopg.errors.CheckViolation as exc:
        raise InputError(f"user name '{name}' or role '{role}' is not allowed: a name is 1-64 letters, digits or "
                         f"'.', '_', '@', '-' (starting with a letter or digit); a role one of {', '.join(ROLES)}"
                         ) from exc


def get_user(conn: psycopg.Connection, name: str) -> dict[str, Any] | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute("SELECT name, role, password_hash, created_at, disabled FROM web_users WHERE name = %s",
                           (name,)).fetchone()


def require_user(conn: psycopg.Connection, name: str) -> dict[str, Any]:
    user = get_user(conn, name)
    if user is None:
        raise NotFoundError(f"no user '{name}'; add one with 'evidence user add {name} --role viewer'")
    return user


def list_users(conn: psycopg.Connection) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute("SELECT name, role, created_at, disabled, (SELECT count(*) FROM web_tokens t "
                           "WHERE t.user_name = u.name) AS tokens FROM web_users u ORDER BY name").fetchall()


def set_password_hash(conn: psycopg.Connection, name: str, password_hash: str) -> None:
    """Replace a stored hash (Argon2 parameters raised since it was made)."""
    conn.execute("UPDATE web_users SET password_hash = %s WHERE name = %s", (password_hash, name))


def add_token(conn: psycopg.Connection, name: str, token_sha256: str) -> None:
    conn.execute("INSERT INTO web_tokens (token_sha256, user_name) VALUES (%s, %s)", (token_sha256, name))


def user_by_token(conn: psycopg.Connection, token_sha256: str) -> dict[str, Any] | None:
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute("UPDATE web_tokens t SET last_used_at = now() FROM web_users u "
                          "WHERE t.token_sha256 = %s AND u.name = t.user_name AND NOT u.disabled "
                          "RETURNING u.name, u.role", (token_sha256,)).fetchone()
    return row


def add_session(conn: psycopg.Connection, session_sha256: str, name: str, csrf_token: str,
                expires_at: datetime) -> None:
    conn.execute("DELETE FROM web_sessions WHERE expires_at < now()")
    conn.execute("INSERT INTO web_sessions (session_sha256, user_name, csrf_token, expires_at) "
                 "VALUES (%s, %s, %s, %s)", (session_sha256, name, csrf_token, expires_at))


def session_user(conn: psycopg.Connection, session_sha256: str) -> dict[str, Any] | None:
    """The live session's user (name, role) and CSRF token, or None (unknown, expired, user disabled)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute("SELECT u.name, u.role, s.csrf_token FROM web_sessions s JOIN web_users u "
                           "ON u.name = s.user_name WHERE s.session_sha256 = %s AND s.expires_at > now() "
                           "AND NOT u.disabled", (session_sha256,)).fetchone()


def drop_session(conn: psycopg.Connection, session_sha256: str) -> None:
    conn.execute("DELETE FROM web_sessions WHERE session_sha256 = %s", (session_sha256,))


def signoffs(conn: psycopg.Connection, audit_ids: list[str] | None = None) -> list[dict[str, Any]]:
    """Sign-off records (oldest first), of the given audits or of all: seq, id, actor, time, the signed audit
    (`amends`) and the record's `signoff` part (decision, scope, requirement, role, approved hash)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "SELECT seq, audit_id, amends, actor, created_at, record->'signoff' AS signoff, record->>'text' AS comment "
            "FROM audits WHERE kind = 'signoff' AND (%(ids)s::text[] IS NULL OR amends = ANY(%(ids)s)) ORDER BY seq",
            {"ids": audit_ids}).fetchall()
