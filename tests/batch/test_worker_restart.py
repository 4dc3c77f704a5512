"""A batch worker survives a restart of its PostgreSQL (a failover of a few seconds): it reconnects with
back-off and finishes, each question recorded once. Against tests/pg_server.py (TCP, TLS, SCRAM, a role
that is not a superuser), restarted with `pg_ctl stop -m fast` mid-question."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import db as dbmod
from engine.batch.runner import work
from engine.config import Settings
from engine.errors import StorageError
from engine.ingest.pipeline import ingest_paths
from tests import pg_server
from tests.batch.test_batch_workers import SIX_QUESTIONS, _batch, _items, _recorded_once, _until_leased, _worker
from tests.conftest import CORPUS

pytestmark = pytest.mark.slow
PASSWORD = "w0rker-restart-pw"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pg_server.ExternalServer]:
    with pg_server.running(tmp_path_factory.mktemp("restart-pg"), roles={"engine_app": PASSWORD},
                           databases={"engine": "engine_app"}, vector=("engine",)) as running:
        yield running


@pytest.fixture(scope="module")
def external(server, embedder, tmp_path_factory) -> Settings:
    home = tmp_path_factory.mktemp("restart-home")
    settings = Settings(home=home, database_url=server.url("engine_app", PASSWORD, "engine"))
    with dbmod.connection(settings) as conn:
        assert not ingest_paths(conn, embedder, settings, [CORPUS]).failed
    return settings


def test_a_worker_rides_out_a_server_restart(server, external, tmp_path: Path) -> None:
    batch_id = _batch(external, tmp_path, SIX_QUESTIONS)
    proc = _worker(external, batch_id, lease_s=10)
    _until_leased(external, batch_id, proc, time.monotonic() + 120)
    down = time.monotonic()
    server.restart(pause_s=3)
    outage = time.monotonic() - down
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr[-2000:]
    assert "lost its database connection" in stderr and "reconnected after" in stderr, stderr[-2000:]
    assert json.loads(stdout)["answered"] == 6 and outage >= 3
    assert all(i["failed_at"] is None for i in _items(external, batch_id).values())
    _recorded_once(external, batch_id, 6)


def test_a_worker_that_cannot_reconnect_gives_up_after_its_window(server, external, embedder, tmp_path) -> None:
    batch_id = _batch(external, tmp_path, SIX_QUESTIONS)
    events: list[tuple] = []

    def emit(event: tuple) -> None:
        events.append(event)
        if event[0] == "start" and not any(e[0] == "reconnect" for e in events):
            server.stop_backend()

    try:
        with pytest.raises(StorageError, match=r"could not reconnect in 2 s .*evidence audit worker B-"):
            work(batch_id, external.model_copy(update={"batch_reconnect_s": 2.0}), embedder, emit)
    finally:
        server.start_backend()
    assert [e for e in events if e[0] == "reconnect"]
