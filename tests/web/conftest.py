"""Fixtures of the web tests: a database per test module cloned from the sample-corpus template, with a
document that carries HTML, users of every role, and the app on it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest

from engine import db as dbmod
from engine import embedded_db
from engine.config import Settings
from engine.web import security
from engine.web import store as web_store
from engine.web.backend import Backend

PASSWORDS = {"vera": "viewer-password-1", "alice": "analyst-password-1", "rita": "reviewer-password-1",
             "bob": "reviewer-password-2", "adam": "admin-password-123"}
ROLES = {"vera": "viewer", "alice": "analyst", "rita": "reviewer", "bob": "reviewer", "adam": "admin"}
# A document whose stored text holds markup the pages must escape: in a code span, which Markdown keeps as text (a
# script set straight in Markdown is not read, as a renderer does not show it)
HOSTILE_DOC = """# Hostile Notice

## 1. Scope

This notice applies to every vendor `<script>alert('x')</script>` that stores client records.

## 2. Retention

A vendor must retain client records for at least four years after the contract ends.
"""


@dataclass
class WebEnv:
    settings: Settings
    backend: Backend
    hostile_doc: str = ""
    hostile_path: Path | None = None
    tokens: dict[str, str] = field(default_factory=dict)


def _clone(server_settings: Settings, template: str, home: Path) -> Settings:
    base = server_settings.database_url or embedded_db.start(server_settings)
    name = f"web_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return server_settings.model_copy(update={"database_url": base.replace("/postgres?", f"/{name}?", 1),
                                              "home": home, "trail_key_file": None})


@pytest.fixture(scope="module")
def web_env(server_settings: Settings, trail_template: str, embedder, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[WebEnv]:
    """One database per module: the sample corpus, a document holding `<script>`, the five users."""
    from engine.ingest.pipeline import ingest_paths

    home = tmp_path_factory.mktemp("web-home")
    settings = _clone(server_settings, trail_template, home)
    docs = tmp_path_factory.mktemp("web-docs")
    (docs / "hostile-vendor-policy.md").write_text(HOSTILE_DOC, encoding="utf-8")
    with dbmod.connection(settings) as conn:
        summary = ingest_paths(conn, embedder, settings, [docs / "hostile-vendor-policy.md"])
        assert not summary.failed, summary.failed
        hostile = conn.execute("SELECT id FROM documents WHERE title = 'Hostile Notice'").fetchone()[0]
        tokens = {}
        for name, role in ROLES.items():
            web_store.add_user(conn, name, role, security.hash_password(PASSWORDS[name]))
            tokens[name] = security.new_secret()
            web_store.add_token(conn, name, security.secret_digest(tokens[name]))
    backend = Backend(settings, pool_size=4)
    try:
        yield WebEnv(settings, backend, hostile, docs / "hostile-vendor-policy.md", tokens)
    finally:
        backend.close()
