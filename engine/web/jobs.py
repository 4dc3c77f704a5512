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


# What a reader of the progress page is told for each research or evidence node (and the steps after them);
# the research loop's nodes run once per round, shown as one line per round.
_SELECTING = "Selecting the passages for each part of the question"
STEP_LABELS = {
    "prepare": "Reading the question", "guard": "Screening the question", "classify": "Planning the research",
    "plan": "Planning the research", "rewrite": "Searching the documents", "retrieve": "Searching the documents",
    "crossref": "Searching the documents", "evaluate": "Searching the documents", "replan": "Searching the documents",
    "translate": _SELECTING, "question_parts": _SELECTING, "select": _SELECTING,
    "extract": "Extracting requirement quotes", "verify": "Checking each quote against its source",
    "compose": "Writing the answer", "review": "Reviewing the answer", "recording the audit": "Recording the audit",
}
ROUND_STARTS = "rewrite"


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

    def step(self, name: str) -> None:
        """A node started: a `node` event when what the reader is told changes (its `step` is the node's name);
        each research round is one line."""
        label = STEP_LABELS.get(name, name[:1].upper() + name[1:])
        with self._cond:
            rounds = sum(1 for e in self.events if e.get("step") == ROUND_STARTS)
            last = next((e["name"] for e in reversed(self.events) if e["event"] == "node"), "")
        if name == ROUND_STARTS:
            self.emit("node", name=label if not rounds else f"{label} (round {rounds + 1})", step=name)
        elif not last.startswith(label):
            self.emit("node", name=label, step=name)

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
        job.emit("node", name="Queued", step="queued")
        try:
            result = ask(job.question, actor=job.actor, progress=job.step)
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
