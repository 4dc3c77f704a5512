"""Embedded server lifecycle and migrations."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from engine import db as dbmod
from engine import embedded_db
from engine.config import Settings
from tests.conftest import ROOT


def test_migrations_recorded_once(conn) -> None:
    names = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY version")]
    assert names and names[0] == "001_core"
    assert dbmod.migrate(conn) == []


@pytest.mark.slow
def test_server_reused_after_killed_process_and_stopped(tmp_path: Path) -> None:
    """A process killed with SIGKILL leaves the server and its pid behind; the next start copes."""
    settings = Settings(home=tmp_path / "home")
    code = ("import os, signal; from engine.config import Settings; from engine import embedded_db; "
            f"embedded_db.start(Settings(home={str(settings.home)!r})); os.kill(os.getpid(), signal.SIGKILL)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=os.environ.copy())
    assert proc.returncode == -signal.SIGKILL
    try:
        assert embedded_db.status(settings)["running"]
        uri = embedded_db.start(settings)
        assert uri.startswith("postgresql://")
        handles = json.loads((settings.pgdata / ".handle_pids.json").read_text())
        assert all(pid == os.getpid() for pid in handles)
    finally:
        assert embedded_db.stop(settings)
    assert not embedded_db.status(settings)["running"]
