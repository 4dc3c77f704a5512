"""Advisory locks: one registry (`engine.db.Lock`), two keys, and no lock taken around it."""

from __future__ import annotations

import re

import pytest

from engine import db as dbmod
from tests.conftest import ROOT

SOURCES = sorted(p for folder in ("engine", "agents") for p in (ROOT / folder).rglob("*.py"))
REGISTRY = ROOT / "engine" / "db.py"


def test_namespaces_are_distinct() -> None:
    assert len({int(m) for m in dbmod.Lock.__members__.values()}) == len(dbmod.Lock.__members__)


@pytest.mark.parametrize("pattern", [r"pg_(?:try_)?advisory_\w*(?:lock|unlock)\b", r"\b77020\d\d\b"],
                         ids=["lock-call", "lock-number"])
def test_every_advisory_lock_goes_through_the_registry(pattern: str) -> None:
    """Lock functions are called, and lock numbers written, in engine/db.py only (docstrings aside)."""
    outside = []
    for path in SOURCES:
        if path == REGISTRY:
            continue
        code = re.sub(r'"""[\s\S]*?"""', "", path.read_text())  # prose may name the functions
        outside += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in re.finditer(pattern, code)]
    assert outside == []
    assert re.search(pattern, REGISTRY.read_text())  # the pattern does find what it looks for


def test_a_source_key_lock_never_meets_another_namespace(settings) -> None:
    """The same name in two namespaces, and the trail's lock, are different locks; the same name in one
    namespace is the same lock."""
    with dbmod.connect(settings) as holder, dbmod.connect(settings) as other:
        with holder.transaction():
            dbmod.xact_lock(holder, dbmod.Lock.INGEST_SOURCE, "regulation.md")
            assert not dbmod.try_session_lock(other, dbmod.Lock.INGEST_SOURCE, "regulation.md")
            for namespace in (dbmod.Lock.BATCH, dbmod.Lock.WORKER):
                assert dbmod.try_session_lock(other, namespace, "regulation.md")
                dbmod.session_unlock(other, namespace, "regulation.md")
            assert dbmod.try_session_lock(other, dbmod.Lock.TRAIL_APPEND)
            dbmod.session_unlock(other, dbmod.Lock.TRAIL_APPEND)
        assert dbmod.try_session_lock(other, dbmod.Lock.INGEST_SOURCE, "regulation.md")  # released at commit


def test_lock_held_sees_a_session_lock(settings) -> None:
    held = dbmod.lock_held(dbmod.Lock.WORKER, "%s")
    with dbmod.connect(settings) as worker, dbmod.connect(settings) as observer:
        assert observer.execute(f"SELECT {held}", ("w-1",)).fetchone()[0] is False
        dbmod.session_lock(worker, dbmod.Lock.WORKER, "w-1")
        assert observer.execute(f"SELECT {held}", ("w-1",)).fetchone()[0] is True
        assert observer.execute(f"SELECT {held}", ("w-2",)).fetchone()[0] is False
        dbmod.session_unlock(worker, dbmod.Lock.WORKER, "w-1")
        assert observer.execute(f"SELECT {held}", ("w-1",)).fetchone()[0] is False
