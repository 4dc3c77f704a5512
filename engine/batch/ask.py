"""Ask, then record: the one path from a question to its audit in the trail.

`engine.api` (ask and resume), the batch workers (`runner`) and `trail rerun` (`rerun`) all answer through
`ask_and_record`, and build what a question may draw on (`Scope`) here. It lives above the research and the
trail, since it runs the one and records in the other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from agents.deps import Deps
from agents.research import ResearchResult, resume_research, run_or_resume, run_research, run_scope
from engine.config import Settings
from engine.models import new_run_id
from engine.search import scope as scopes
from engine.search.retrieval import Filters
from engine.trail.record import record_research
from engine.trail.store import Appended

Recording = Callable[[Callable[[], Appended]], Appended | None]
"""Runs the recording it is given (inside a caller's transaction or between its crash points) and returns its
entry, or None to record nothing (a batch item another worker recorded meanwhile)."""


@dataclass
class Hooks:
    """What a caller wants to hear while a question is answered (all optional).

    `run_started(run_id)` before research (a caller can print how to resume); `node(name)` as each research
    and evidence node starts; `phase(text)` for the steps after research ("recording the audit", "writing
    the report"); `llm_event(kind, message)` for LLM waits, retries and unavailability.
    """

    run_started: Callable[[str], None] | None = None
    node: Callable[[str], None] | None = None
    phase: Callable[[str], None] | None = None
    llm_event: Callable[[str, str], None] | None = None

    def _phase(self, text: str) -> None:
        if self.phase is not None:
            self.phase(text)


@dataclass(frozen=True)
class Scope:
    """What a question may draw on: the search filters, and the scope as the research run and its audit keep
    it (`engine.search.scope`). Both None: the whole current corpus."""

    filters: Filters | None = None
    recorded: dict[str, Any] | None = None


def named_scope(conn: psycopg.Connection, documents: Sequence[str] = (), source_types: Sequence[str] = ()
                ) -> Scope:
    """A new question limited to named documents and source types (`evidence ask --document --source-type`)."""
    return Scope(*scopes.resolve(conn, documents, source_types))


def resumed_scope(run_id: str, saver: Any) -> Scope:
    """A resumed run keeps the scope it was started with, exactly as its checkpoint holds it."""
    recorded = run_scope(run_id, saver)
    return Scope(scopes.filters_of(recorded), recorded)


def current_scope(conn: psycopg.Connection, recorded: dict[str, Any] | None) -> Scope:
    """An audit's recorded scope over today's documents: each document's current version (`trail rerun`)."""
    return Scope(*scopes.current(conn, recorded))


def pinned_scope(resolved: dict[str, Any] | None) -> Scope:
    """A batch's scope, resolved to exact document ids when the batch started (`runner.resolve_scope`). Its
    audits record it under `batch`, and the research run does not keep it."""
    if not resolved:
        return Scope()
    return Scope(Filters(source_types=tuple(resolved["source_types"]), document_ids=tuple(resolved["document_ids"]),
                         current_only=resolved["current_only"]))


@dataclass(frozen=True)
class Asked:
    """A question researched and (unless the recording declined) recorded."""

    research: ResearchResult
    entry: Appended | None
    deps: Deps


def _now(record: Callable[[], Appended]) -> Appended:
    return record()


def _research(deps: Deps, question: str | None, scope: Scope, *, run_id: str | None, saver: Any, resume: bool,
              hooks: Hooks) -> ResearchResult:
    if question is None:
        return resume_research(run_id or "", deps, saver, progress=hooks.node)
    if resume:
        return run_or_resume(question, deps, run_id or "", saver, progress=hooks.node)
    run_id = run_id or new_run_id()
    if hooks.run_started is not None:
        hooks.run_started(run_id)
    return run_research(question, deps, run_id=run_id, checkpointer=saver, progress=hooks.node,
                        scope=scope.recorded)


def ask_and_record(conn: psycopg.Connection, settings: Settings, question: str | None, scope: Scope, *,
                   run_id: str | None = None, saver: Any = None, resume: bool = False, embedder: Any = None,
                   backend: str | None = None, hooks: Hooks | None = None, actor: str | None = None,
                   asked_at: datetime | None = None, batch: dict[str, Any] | None = None,
                   finish: Callable[[dict[str, Any]], None] | None = None, supersedes: str | None = None,
                   checkpoint: bool = True, recording: Recording = _now) -> Asked:
    """Research `question` within `scope`, then record its audit in the trail.

    `question` None continues the checkpointed run `run_id` (`evidence resume`); `resume` runs `run_id` from
    scratch or continues it when its checkpoint exists (batch items have fixed run ids); otherwise a new run
    starts (with `run_id`, or a new one). The audit keeps the scope the run kept; `actor`, `asked_at`,
    `batch`, `finish`, `supersedes` and `checkpoint` go to `engine.trail.record.record_research`, which
    `recording` runs (default: at once).
    """
    hooks = hooks or Hooks()
    deps = Deps.build(conn, settings, embedder=embedder, backend=backend, scope=scope.filters)
    if deps.llm is not None and hooks.llm_event is not None:
        deps.llm.on_event = hooks.llm_event
    result = _research(deps, question, scope, run_id=run_id, saver=saver, resume=resume, hooks=hooks)

    def record() -> Appended:
        return record_research(conn, settings, deps.embedder, result.model_dump(mode="json"), llm=deps.llm,
                               actor=actor, batch=batch, asked_at=asked_at, scope=result.scope,
                               supersedes=supersedes, finish=finish, checkpoint=checkpoint)

    return Asked(research=result, entry=recording(record), deps=deps)
