"""Questions asked from the browser: each runs in a thread; its progress is a list of events that the
server-sent-events route replays and follows (a reconnecting browser gets everything again)."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.errors import EngineError

log = logging.getLogger(__name__)


@dataclass
class Job:
    """One question being answered: who asked it, and what happened so far."""

    job_id: str
    question: str
    actor: str
    events: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False
    audit_id: str | None = None
    error: str | None = None
    _cond: threading.Condition = field(default_factory=threading.Condition)

    def emit(self, kind: str, **data: Any) -> None:
        with self._cond:
            self.events.append({"event": kind, "at": time.time(), **data})
            self._cond.notify_all()

    def wait(self, seen: int, timeout: float) -> list[dict[str, Any]]:
        """Events after the first `seen`, waiting up to `timeout` seconds for one."""
        with self._cond:
            if len(self.events) <= seen and not self.done:
                self._cond.wait(timeout)
            return self.events[seen:]


class Jobs:
    """The jobs of one server process (kept in memory; an answered job's audit is in the trail anyway)."""

    def __init__(self, keep: int = 200) -> None:
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._keep = keep

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def start(self, question: str, actor: str, ask: Callable[..., dict[str, Any]]) -> Job:
        """Run `ask(question, actor=..., progress=...)` in a thread; its nodes become `node` events."""
        job = Job(job_id=f"job-{uuid.uuid4().hex[:12]}", question=question, actor=actor)
        with self._lock:
            self._jobs[job.job_id] = job
            while len(self._jobs) > self._keep:
                self._jobs.pop(next(iter(self._jobs)))
        threading.Thread(target=self._run, args=(job, ask), name=job.job_id, daemon=True).start()
        return job

    @staticmethod
    def _run(job: Job, ask: Callable[..., dict[str, Any]]) -> None:
        job.emit("node", name="queued")
        try:
            result = ask(job.question, actor=job.actor, progress=lambda name: job.emit("node", name=name))
        except EngineError as exc:
            job.error = str(exc)
        except Exception as exc:  # the web layer catches broadly: the traceback goes to the log
            log.exception("ask %s failed", job.job_id)
            job.error = f"unexpected {type(exc).__name__}; the server log has the traceback"
        else:
            job.audit_id = result["audit_id"]
        with job._cond:
            job.done = True
        if job.error is not None:
            job.emit("failed", message=job.error)
        else:
            job.emit("done", audit_id=job.audit_id)
