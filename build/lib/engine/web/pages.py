"""Rendering of the web view's pages: the Jinja2 environment over `templates/web/` (autoescape on: corpus
text is data, never markup) and `render(request, template, **context)`, shared by the routes."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader

from engine.config import resource_dir
from engine.web.backend import format_utc


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(resource_dir("templates") / "web"), autoescape=True,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["utc"] = format_utc
    return env


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A page; the layout gets the user (or None) and their CSRF token for the logout form."""
    user = getattr(request.state, "user", None)
    html = environment().get_template(template).render(request=request, user=user, **context)
    return HTMLResponse(html, status_code=status)
