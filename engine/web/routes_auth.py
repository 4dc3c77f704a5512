"""GET /login, POST /login (rate-limited, CSRF-checked), POST /logout."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from engine.web import security
from engine.web import store as web_store
from engine.web.auth import (
    LOGIN_CSRF_COOKIE,
    Denied,
    User,
    check_login_csrf,
    client_of,
    close_session,
    current_user,
    need,
    open_session,
    set_cookie,
)
from engine.web.pages import render

router = APIRouter()


def _safe_next(target: str | None) -> str:
    """Only a path of this site (never `//host` or a scheme): no open redirect after login."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/audits"


def _login_page(request: Request, *, status: int = 200, error: str | None = None, name: str = "",
                next_path: str = "/audits") -> Response:
    token = security.new_secret()
    response = render(request, "login.html.j2", status=status, csrf_token=token, error=error, name=name,
                      next_path=_safe_next(next_path))
    set_cookie(response, request, LOGIN_CSRF_COOKIE, token, 3600)
    return response


@router.get("/")
def home() -> Response:
    return RedirectResponse("/audits", status_code=303)


@router.get("/login")
def login_form(request: Request, next: str = "/audits") -> Response:  # noqa: A002 - the query parameter's name
    if current_user(request) is not None:
        return RedirectResponse(_safe_next(next), status_code=303)
    return _login_page(request, next_path=next)


@router.post("/login", dependencies=[Depends(check_login_csrf)])
def login(request: Request, name: Annotated[str, Form(max_length=64)], password: Annotated[str, Form(max_length=1024)],
          next: Annotated[str, Form()] = "/audits") -> Response:  # noqa: A002
    limiter, client = request.app.state.limiter, client_of(request)
    wait = limiter.begin(name, client)
    if wait:
        raise Denied(429, f"too many failed logins for '{name}' or from {client}; try again in {wait} s",
                     headers={"Retry-After": str(wait)})
    with request.app.state.backend.connection() as conn:
        user = web_store.get_user(conn, name)
        ok, rehashed = security.check_password(user["password_hash"] if user and not user["disabled"] else None,
                                               password)
        if ok and rehashed:
            web_store.set_password_hash(conn, name, rehashed)
    if not ok:
        security.deny(401, user=name, role=None, method="POST", path="/login", client=client,
                      reason="wrong user name or password")
        return _login_page(request, status=401, error="Wrong user name or password.", name=name, next_path=next)
    limiter.succeeded(name, client)
    response = RedirectResponse(_safe_next(next), status_code=303)
    open_session(request, response, name)
    return response


@router.post("/logout")
def logout(request: Request, user: Annotated[User, Depends(need("viewer"))]) -> Response:
    response = RedirectResponse("/login", status_code=303)
    close_session(request, response)
    return response
