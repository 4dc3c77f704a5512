"""The reviewer's desk: `create_app(settings)` builds the FastAPI application `evidence serve` runs.

Pages are server-rendered Jinja2 (`templates/web/`, autoescape on: corpus text is data, never
markup) in the look of the reports (`templates/report.css`). Nothing is fetched from elsewhere: the
one script (`engine/web/static/app.js`, ours) and the stylesheets are served by the app, and the
Content-Security-Policy allows nothing else (no inline script, no other origin).
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes

import psycopg
from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.middleware.trustedhost import TrustedHostMiddleware

from engine.config import Settings, resource_dir
from engine.errors import EngineError, InputError, NotFoundError
from engine.web import routes_api, routes_auth, routes_live, routes_pages
from engine.web.auth import Denied, Flashes, client_of
from engine.web.backend import Backend
from engine.web.jobs import Jobs
from engine.web.pages import render
from engine.web.routes_live import Streams
from engine.web.security import LoginLimiter, deny
from engine.web.signoff import FourEyesError

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
_STATIC_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or "text/event-stream" in request.headers.get("accept", "")


def _here(request: Request) -> str:
    """The path and query asked for (where a login goes back to)."""
    return request.url.path + (f"?{request.url.query}" if request.url.query else "")


def _error(request: Request, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    if _wants_json(request):
        return JSONResponse({"error": message, "status": status}, status_code=status, headers=headers)
    response = render(request, "error.html.j2", status=status, status_code=status, message=message,
                      login_next=_here(request) if status == 401 else None)
    response.headers.update(headers or {})
    return response


def _install_handlers(app: FastAPI) -> None:
    @app.exception_handler(Denied)
    async def denied(request: Request, exc: Denied) -> Response:
        user = exc.user or getattr(request.state, "user", None)
        deny(exc.status, user=user.name if user else None, role=user.role if user else None, method=request.method,
             path=request.url.path, client=client_of(request), reason=exc.reason)
        if exc.status == 401 and not _wants_json(request):
            request.state.user = None
        return _error(request, exc.status, exc.reason, exc.headers)

    @app.exception_handler(EngineError)
    async def engine_error(request: Request, exc: EngineError) -> Response:
        if isinstance(exc, FourEyesError):
            user = getattr(request.state, "user", None)
            deny(403, user=user.name if user else None, role=user.role if user else None, method=request.method,
                 path=request.url.path, client=client_of(request), reason=str(exc))
            return _error(request, 403, str(exc))
        status = 404 if isinstance(exc, NotFoundError) else 400 if isinstance(exc, InputError) else 500
        if status == 500:
            log.error("%s %s: %s", request.method, request.url.path, exc)
        return _error(request, status, str(exc))

    @app.exception_handler(psycopg.DataError)
    async def bad_data(request: Request, exc: psycopg.DataError) -> Response:
        # Text PostgreSQL cannot hold (a NUL byte in a form field): the request's fault, not the server's.
        return _error(request, 400, "bad request: a field holds text that cannot be stored (a NUL byte or "
                                    "invalid characters)")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:  # the web layer catches broadly
        log.exception("%s %s failed", request.method, request.url.path)
        return _error(request, 500, f"unexpected {type(exc).__name__}; the server log has the traceback")


def _install_static(app: FastAPI) -> None:
    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        path = resource_dir("templates") / "report.css" if name == "report.css" else STATIC / name
        if "/" in name or name.startswith(".") or not path.is_file() or path.suffix not in _STATIC_TYPES:
            raise NotFoundError(f"no static file '{name}'")
        return FileResponse(path, media_type=_STATIC_TYPES[path.suffix], headers={"Cache-Control": "no-cache"})


def _bad_text(request: Request) -> str | None:
    """Why the request's path or query cannot be read as text (a NUL byte, bytes that are not UTF-8), or None."""
    raw = request.scope.get("raw_path") or request.scope.get("path", "").encode()
    for part in (raw, request.scope.get("query_string", b"")):
        try:
            text = unquote_to_bytes(part.decode("latin-1")).decode("utf-8")
        except UnicodeDecodeError:
            return "the address holds bytes that are not UTF-8 text"
        if "\x00" in text:
            return "the address holds a NUL byte"
    return None


def create_app(settings: Settings, *, backend: Backend | None = None, login_attempts: int = 5,
               login_window_s: float = 300.0, allowed_hosts: list[str] | None = None,
               streams_per_user: int = 6, streams_total: int = 200) -> FastAPI:
    """The application. `backend` defaults to one on `settings` (closed when the app shuts down).

    `allowed_hosts`: the Host header values served (others get 400: a DNS-rebinding page cannot reach a
    loopback server); None serves any (tests, a library caller behind its own check).
    """
    owned = backend is None
    backend = backend or Backend(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # type: ignore[no-untyped-def]
        yield
        if owned:
            backend.close()

    app = FastAPI(title="Evidence Engine", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.backend = backend
    app.state.jobs = Jobs()
    app.state.limiter = LoginLimiter(login_attempts, login_window_s)
    app.state.flashes = Flashes()
    app.state.streams = Streams(streams_per_user, streams_total)
    app.state.progress_cache = {}

    @app.middleware("http")
    async def headers(request: Request, call_next: Any) -> Response:
        request.state.user = None
        bad = _bad_text(request)
        response: Response = (_error(request, 400, f"bad request: {bad}") if bad is not None
                              else await call_next(request))
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        if not request.url.path.startswith("/static/"):
            response.headers.setdefault("Cache-Control", "no-store")
        if request.url.scheme == "https":
            response.headers.setdefault("Strict-Transport-Security", "max-age=31536000")
        return response

    _install_handlers(app)
    _install_static(app)
    for module in (routes_auth, routes_pages, routes_live, routes_api):
        app.include_router(module.router)
    if allowed_hosts is not None:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)  # outermost: checked first
    return app
