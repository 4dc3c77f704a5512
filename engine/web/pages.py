"""Rendering of the web view's pages: the Jinja2 environment over `templates/web/` (autoescape on: corpus
text is data, never markup) and `render(request, template, **context)`, shared by the routes."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader

from engine.config import resource_dir
from engine.report.render import utc
from engine.report.terminal import modality_label
from engine.web.auth import take_flash


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(resource_dir("templates") / "web"), autoescape=True,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["utc"] = utc  # a time as the reports print it
    env.filters["modality_label"] = modality_label  # "none: exemption", as the terminal and reports show it
    return env


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A page; the layout gets the user (or None), their CSRF token for the logout form, and the session's
    one-time message (`auth.flash`), shown once as the page's status line."""
    user = getattr(request.state, "user", None)
    flash = take_flash(request) if user is not None else None
    html = environment().get_template(template).render(request=request, user=user, flash=flash, **context)
    return HTMLResponse(html, status_code=status)
