"""Fixtures of the trail tests: a filled trail (three answers, checkpoints) cloned per test."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import psycopg
import pytest

from agents.deps import Deps
from agents.research import run_research
from engine import db as dbmod
from engine import embedded_db
from engine.config import Settings
from engine.trail import store as audit_trail
from engine.trail.canonical import canonical_json, sha256_hex
from engine.trail.checkpoints import create_checkpoint
from engine.trail.record import record_research

QUESTIONS = ("How long must transaction records be kept?",
             "When must a personal data breach be notified to the Commissioner?",
             "How often must user access rights be reviewed?")


def answer(conn: psycopg.Connection, settings, embedder, question: str, **kwargs) -> audit_trail.Appended:
    deps = Deps.build(conn, settings, embedder=embedder, backend="rules")
    result = run_research(question, deps)
    return record_research(conn, settings, embedder, result.model_dump(mode="json"), **kwargs)


class Trail(NamedTuple):
    conn: psycopg.Connection
    settings: Settings
    audits: list[audit_trail.Appended]


@pytest.fixture(scope="session")
def filled_template(server_settings, trail_template, embedder, tmp_path_factory) -> tuple[str, Path, list]:
    """Once per session: three answers and a checkpoint after the third, in a database to clone."""
    base = server_settings.database_url or embedded_db.start(server_settings)
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE trail_filled TEMPLATE "{trail_template}"')
    home = tmp_path_factory.mktemp("filled-home")
    settings = server_settings.model_copy(update={
        "database_url": base.replace("/postgres?", "/trail_filled?", 1), "home": home})
    with dbmod.connection(settings) as conn:
        done = [answer(conn, settings, embedder, q, actor="auditor") for q in QUESTIONS]
        create_checkpoint(conn, settings)
    return "trail_filled", home, done


@pytest.fixture()
def trail(filled_template, server_settings, tmp_path) -> Iterator[Trail]:
    """A fresh clone of the filled trail, with its own copy of the signing key and checkpoint log."""
    name, home, audits = filled_template
    base = server_settings.database_url or embedded_db.start(server_settings)
    clone = f"filled_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{clone}" TEMPLATE "{name}"')
    shutil.copytree(home / "keys", tmp_path / "keys")
    settings = server_settings.model_copy(update={
        "database_url": base.replace("/postgres?", f"/{clone}?", 1), "home": tmp_path})
    with dbmod.connection(settings) as conn:
        yield Trail(conn, settings, audits)


def superuser(conn: psycopg.Connection, sql: str, params: tuple = ()) -> None:
    """Change stored rows as a database administrator would: triggers off for this statement."""
    with conn.transaction():
        conn.execute("SET LOCAL session_replication_role = replica")
        conn.execute(sql, params or None)  # type: ignore[arg-type]


def rewrite(trail: Trail, seq: int, answer: str = "No records need to be kept.") -> None:
    """An administrator rewrites record `seq`'s answer and recomputes its hash and every later one."""
    rows = audit_trail.chain(trail.conn)
    prev = rows[seq - 2]["hash"] if seq > 1 else "0" * 64
    for row in rows[seq - 1:]:
        env = json.loads(row["canonical"])
        if row["seq"] == seq:
            env["record"]["answer"]["final_answer"] = answer
        env["prev_hash"] = prev
        text = canonical_json(env)
        prev = sha256_hex(text)
        superuser(trail.conn, "UPDATE audits SET canonical = %s, record = %s, prev_hash = %s, hash = %s WHERE seq = %s",
                  (text, json.dumps(env["record"]), env["prev_hash"], prev, row["seq"]))
