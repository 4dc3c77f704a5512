"""Who is asking, and may they: sessions, bearer tokens, role checks and CSRF, as FastAPI dependencies.

Every route declares the role it needs with `need("viewer" | "analyst" | "reviewer" | "admin")`.
No login: 401. A lower role: 403. A POST whose CSRF token is missing or wrong: 403. Each denial
is logged (`security.deny`) before the error page or JSON is sent.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import Request, Response
from starlette.concurrency import run_in_threadpool

from engine.web import security
from engine.web import store as web_store

SESSION_COOKIE = "evidence_session"
LOGIN_CSRF_COOKIE = "evidence_login_csrf"
SESSION_HOURS = 8


@dataclass(frozen=True)
class User:
    name: str
    role: str
    csrf_token: str | None = None  # None for bearer-token requests (no forms)
    via: str = "session"


class Denied(Exception):
    """A refused request: the app's handler logs it and answers `status`."""

    def __init__(self, status: int, reason: str, user: User | None = None, headers: dict[str, str] | None = None):
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.user = user
        self.headers = headers or {}


def client_of(request: Request) -> str:
    return request.client.host if request.client else "-"


def is_https(request: Request) -> bool:
    return request.url.scheme == "https"


def cookie_name(request: Request, base: str) -> str:
    # __Host- cookies are Secure, host-only and path=/ by the browser's own rule: used behind TLS.
    return f"__Host-{base}" if is_https(request) else base


def set_cookie(response: Response, request: Request, base: str, value: str, max_age: int | None) -> None:
    response.set_cookie(cookie_name(request, base), value, max_age=max_age, path="/", httponly=True,
                        samesite="strict", secure=is_https(request))


def clear_cookie(response: Response, request: Request, base: str) -> None:
    response.delete_cookie(cookie_name(request, base), path="/", httponly=True, samesite="strict",
                           secure=is_https(request))


def open_session(request: Request, response: Response, name: str) -> None:
    """Store a new session (its SHA-256) and set its cookie."""
    secret, csrf = security.new_secret(), security.new_secret()
    expires = datetime.now(UTC) + timedelta(hours=SESSION_HOURS)
    with request.app.state.backend.connection() as conn:
        web_store.add_session(conn, security.secret_digest(secret), name, csrf, expires)
    set_cookie(response, request, SESSION_COOKIE, secret, SESSION_HOURS * 3600)


def close_session(request: Request, response: Response) -> None:
    secret = request.cookies.get(cookie_name(request, SESSION_COOKIE))
    if secret:
        with request.app.state.backend.connection() as conn:
            web_store.drop_session(conn, security.secret_digest(secret))
    clear_cookie(response, request, SESSION_COOKIE)


class Flashes:
    """One-time messages for a session's next page (kept server-side, keyed by the session's digest: a link
    cannot make the app show text it did not say). At most `keep` pending; the oldest go first."""

    def __init__(self, keep: int = 1000) -> None:
        self._pending: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self._keep = keep

    def put(self, key: str, message: str) -> None:
        with self._lock:
            self._pending[key] = message
            self._pending.move_to_end(key)
            while len(self._pending) > self._keep:
                self._pending.popitem(last=False)

    def take(self, key: str) -> str | None:
        with self._lock:
            return self._pending.pop(key, None)


def _session_key(request: Request) -> str | None:
    secret = request.cookies.get(cookie_name(request, SESSION_COOKIE))
    return security.secret_digest(secret) if secret else None


def flash(request: Request, message: str) -> None:
    """Show `message` once, on this session's next page."""
    key = _session_key(request)
    if key:
        request.app.state.flashes.put(key, message)


def take_flash(request: Request) -> str | None:
    key = _session_key(request)
    return request.app.state.flashes.take(key) if key and hasattr(request.app.state, "flashes") else None


def current_user(request: Request) -> User | None:
    """The session's user, or for /api/* a bearer token's; None when neither is valid."""
    backend = request.app.state.backend
    header = request.headers.get("authorization", "")
    if request.url.path.startswith("/api/") and header.lower().startswith("bearer "):
        with backend.connection() as conn:
            row = web_store.user_by_token(conn, security.secret_digest(header[7:].strip()))
        return User(row["name"], row["role"], None, "token") if row else None
    secret = request.cookies.get(cookie_name(request, SESSION_COOKIE))
    if not secret:
        return None
    with backend.connection() as conn:
        row = web_store.session_user(conn, security.secret_digest(secret))
    return User(row["name"], row["role"], row["csrf_token"]) if row else None


async def _check_csrf(request: Request, expected: str | None) -> None:
    given = request.headers.get("x-csrf-token")
    if given is None and request.headers.get("content-type", "").startswith(
            ("application/x-www-form-urlencoded", "multipart/form-data")):
        given = (await request.form()).get("csrf_token")  # type: ignore[assignment]
    if not security.same(given if isinstance(given, str) else None, expected):
        raise Denied(403, "CSRF token missing or wrong" if given else "CSRF token missing")


def need(role: str) -> Callable[..., Any]:
    """A dependency: the user, when logged in with at least `role` (and, on POST, a valid CSRF token)."""

    async def dependency(request: Request) -> User:
        user = await run_in_threadpool(current_user, request)  # a database read: not on the event loop
        if user is None:
            raise Denied(401, "not logged in")
        request.state.user = user
        if request.method == "POST":
            if user.via == "token":
                raise Denied(403, "bearer tokens are for GET /api/* only", user)
            await _check_csrf(request, user.csrf_token)
        if not security.allows(user.role, role):
            raise Denied(403, f"needs role {role} or higher", user)
        return user

    return dependency


async def check_login_csrf(request: Request) -> None:
    """POST /login carries the token its form was given in a cookie (there is no session yet)."""
    await _check_csrf(request, request.cookies.get(cookie_name(request, LOGIN_CSRF_COOKIE)))
