"""Test fixtures: one embedded PostgreSQL per test session, stopped at the end.

* `settings` / `conn`: a scratch database, emptied before each test that asks for `conn`.
* `corpus_settings` / `corpus_conn`: a second database holding the sample corpus
  (examples/corpus), ingested once per session; tests must only read it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from engine import db as dbmod
from engine import embedded_db
from engine.config import Settings
from engine.search.embeddings import Embedder

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "examples" / "corpus"
SCRATCH_TABLES = ("postings", "lexical_terms", "chunks", "documents", "embedding_space", "vocabulary")


def _database(base_url: str, name: str) -> str:
    with psycopg.connect(base_url, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            admin.execute(f'CREATE DATABASE "{name}"')
    return base_url.replace("/postgres?", f"/{name}?", 1)


@pytest.fixture(scope="session")
def server_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    home = tmp_path_factory.mktemp("evidence-home")
    with pytest.MonkeyPatch.context() as env:  # the environment is given back as it was at the session's end
        env.setenv("EVIDENCE_HOME", str(home))
        _keep(env, "XDG_RUNTIME_DIR")  # the embedded server sets it (engine.embedded_db)
        settings = Settings(home=home, database_url=None)
        if os.environ.get("DATABASE_URL"):
            yield Settings(home=home)
            return
        embedded_db.start(settings)
        try:
            yield settings
        finally:
            embedded_db.stop(settings)


def _keep(env: pytest.MonkeyPatch, name: str) -> None:
    """Have `env` restore variable `name` to its present value (or absence), whoever changes it meanwhile."""
    if name in os.environ:
        env.setenv(name, os.environ[name])
    else:
        env.delenv(name, raising=False)


@pytest.fixture(scope="session")
def settings(server_settings: Settings) -> Settings:
    base = server_settings.database_url or embedded_db.start(server_settings)
    return server_settings.model_copy(update={"database_url": _database(base, "scratch")})


@pytest.fixture(scope="session")
def embedder(settings: Settings) -> Embedder:
    return Embedder.from_settings(settings)


@pytest.fixture()
def conn(settings: Settings) -> Iterator[psycopg.Connection]:
    connection = dbmod.connect(settings)
    connection.execute("TRUNCATE " + ", ".join(SCRATCH_TABLES) + " RESTART IDENTITY CASCADE")
    connection.execute("UPDATE corpus_stats SET n_chunks = 0, sum_dl = 0")
    try:
        yield connection
    finally:
        connection.close()


@pytest.fixture(scope="session")
def corpus_settings(server_settings: Settings, embedder: Embedder) -> Settings:
    from engine.ingest.pipeline import ingest_paths

    base = server_settings.database_url or embedded_db.start(server_settings)
    settings = server_settings.model_copy(update={"database_url": _database(base, "corpus")})
    with dbmod.connection(settings) as connection:
        summary = ingest_paths(connection, embedder, settings, [CORPUS])
    assert not summary.failed, summary.failed
    return settings


@pytest.fixture()
def corpus_conn(corpus_settings: Settings) -> Iterator[psycopg.Connection]:
    with dbmod.connection(corpus_settings) as connection:
        yield connection


@pytest.fixture(scope="session")
def trail_template(server_settings: Settings, corpus_settings: Settings, embedder: Embedder) -> str:
    """A database holding the sample corpus (no audits) that trail tests clone: its name."""
    from engine.ingest.pipeline import ingest_paths

    base = server_settings.database_url or embedded_db.start(server_settings)
    url = _database(base, "trail_template")
    with dbmod.connection(server_settings.model_copy(update={"database_url": url})) as connection:
        if not connection.execute("SELECT count(*) FROM documents").fetchone()[0]:
            ingest_paths(connection, embedder, server_settings, [CORPUS])
    return "trail_template"


@pytest.fixture()
def trail_settings(server_settings: Settings, trail_template: str, tmp_path: Path) -> Settings:
    """A fresh database cloned from the template, and a home of its own (signing key, checkpoint log)."""
    import uuid

    base = server_settings.database_url or embedded_db.start(server_settings)
    name = f"trail_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{trail_template}"')
    home = tmp_path / "home"
    home.mkdir()
    return server_settings.model_copy(update={"database_url": base.replace("/postgres?", f"/{name}?", 1),
                                              "home": home, "trail_key_file": None})


@pytest.fixture()
def trail_conn(trail_settings: Settings) -> Iterator[psycopg.Connection]:
    with dbmod.connection(trail_settings) as connection:
        yield connection


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="Rewrite the golden files under tests/data/golden/ from this run instead of comparing.")
