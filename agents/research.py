"""Run the research loop: `run_research` and `resume_research`.

With a checkpointer (LangGraph's PostgresSaver in the engine's database) every node's result is
saved under the run id, so a run killed mid-way continues with `resume_research(run_id, ...)` and
ends as it would have.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row
from pydantic import BaseModel, ConfigDict, Field

from agents.deps import Deps
from agents.graph import build_graph
from engine.config import Settings
from engine.db import Lock, database_url, session_unlock, try_session_lock
from engine.errors import EngineError, NotFoundError, StorageError
from engine.models import new_run_id


class ResearchResult(BaseModel):
    """What the research loop found, and how."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    question: str
    stem: str = Field(description="The question without multiple-choice options")
    options: list[str] = Field(default_factory=list)
    question_type: str | None = None
    rejected: bool = False
    rejection_reason: str | None = None
    steps: list[dict[str, Any]] = Field(default_factory=list)
    evidence: list[dict[str, Any]] = Field(default_factory=list, description="In order of first appearance")
    working_memory: dict[str, Any] = Field(default_factory=dict)
    metrics: list[dict[str, Any]] = Field(default_factory=list)
    fallbacks: list[str] = Field(default_factory=list)
    memory_hit: dict[str, Any] | None = None
    backend: str
    evidence_result: dict[str, Any] | None = None
    language: dict[str, Any] | None = Field(default=None, description="Question and corpus language, and a note")
    scope: dict[str, Any] | None = Field(default=None, description="Documents and source types the question "
                                                                   "was limited to (engine.search.scope), or None")


@contextmanager
def postgres_checkpointer(settings: Settings) -> Iterator[Any]:
    """LangGraph's PostgresSaver on its own connection to the engine's database."""


    with psycopg.connect(database_url(settings), autocommit=True, prepare_threshold=0,
                         row_factory=dict_row) as conn:  # type: ignore[arg-type]
        saver = PostgresSaver(conn)  # type: ignore[arg-type]
        if not _checkpointer_ready(conn, len(saver.MIGRATIONS)):
            if not settings.auto_migrate:
                raise StorageError("LangGraph's checkpoint tables are missing or older than this engine, and "
                                   "EVIDENCE_AUTO_MIGRATE is off (commands create nothing); the schema's owner runs "
                                   "'evidence db migrate', then 'evidence db grant ROLE'")
            _setup_serialized(conn, saver)
        yield saver


def _checkpointer_ready(conn: Any, migrations: int) -> bool:
    """True when LangGraph's tables already carry every migration this version knows."""
    if conn.execute("SELECT to_regclass('checkpoint_migrations') AS t").fetchone()["t"] is None:
        return False
    row = conn.execute("SELECT max(v) AS v FROM checkpoint_migrations").fetchone()
    return row["v"] is not None and row["v"] >= migrations - 1


def _setup_serialized(conn: Any, saver: Any) -> None:
    """Run setup() in one process at a time.

    Concurrent first runs (batch workers, parallel asks) would race on LangGraph's bookkeeping
    rows. Waiting with a blocking pg_advisory_lock deadlocks instead: setup() builds indexes
    CONCURRENTLY, which waits for every open transaction, including a waiter's blocked lock call.
    So waiters poll with short pg_try_advisory_lock transactions.
    """

    deadline = time.monotonic() + 120
    while not try_session_lock(conn, Lock.CHECKPOINT_SETUP):
        if time.monotonic() > deadline:
            raise EngineError("another process has been setting up the checkpoint tables for 2 minutes; "
                              "check 'evidence db status' and run the command again")
        time.sleep(0.05)
    try:
        saver.setup()
    finally:
        session_unlock(conn, Lock.CHECKPOINT_SETUP)


def _config(run_id: str, deps: Deps, progress: Callable[[str], None] | None) -> dict[str, Any]:
    # 100 steps before translate, question_parts and select became nodes of their own (the same runs fit)
    return {"configurable": {"thread_id": run_id, "deps": deps, "progress": progress}, "recursion_limit": 103}


def _result(run_id: str, state: dict[str, Any], deps: Deps) -> ResearchResult:
    return ResearchResult(
        run_id=run_id, question=state["question"], stem=state.get("stem", state["question"]),
        options=state.get("options", []), question_type=state.get("question_type"),
        rejected=bool(state.get("rejected")), rejection_reason=state.get("rejection_reason"),
        steps=state.get("steps", []), evidence=state.get("evidence", []), working_memory=state.get("memory", {}),
        metrics=state.get("metrics", []), fallbacks=state.get("fallbacks", []), memory_hit=state.get("memory_hit"),
        backend=deps.backend, evidence_result=state.get("evidence_result"), language=state.get("language"),
        scope=state.get("scope"))


def run_research(question: str, deps: Deps, *, run_id: str | None = None, checkpointer: Any = None,
                 progress: Callable[[str], None] | None = None, scope: dict[str, Any] | None = None
                 ) -> ResearchResult:
    """Research a question from scratch. `scope` (as `engine.search.scope.resolve` records it) is kept with the
    run, so a resumed run reads the same documents; the search filters themselves travel in `deps`."""
    run_id = run_id or new_run_id()
    graph = build_graph(checkpointer)
    if checkpointer is not None and graph.get_state(_config(run_id, deps, None)).values:
        raise EngineError(f"research run '{run_id}' already exists; continue it with 'evidence resume {run_id}'")
    initial: dict[str, Any] = {"question": question, "steps": [], "evidence": [], "metrics": [], "fallbacks": [],
                               "memory": {}, "scope": scope}
    state = graph.invoke(initial, _config(run_id, deps, progress))
    return _result(run_id, state, deps)


def resume_research(run_id: str, deps: Deps, checkpointer: Any, *,
                    progress: Callable[[str], None] | None = None) -> ResearchResult:
    """Continue a run from its last checkpoint (a finished run returns its stored result)."""
    graph = build_graph(checkpointer)
    config = _config(run_id, deps, progress)
    snapshot = graph.get_state(config)
    if not snapshot or not snapshot.values:
        raise NotFoundError(f"no research run '{run_id}' in the checkpoint store; start it with 'evidence ask'")
    if snapshot.next == ("extract",) and "parts" not in snapshot.values:
        # Paused by a version (0.3 and before) whose extract node translated, split and searched the parts itself:
        # those nodes run first now, from where its research ended
        graph.update_state(config, None, as_node="replan")
    state = graph.invoke(None, config) if snapshot.next else snapshot.values
    return _result(run_id, state, deps)


def run_scope(run_id: str, checkpointer: Any) -> dict[str, Any] | None:
    """The scope a stored run was started with (None: the whole corpus, or no such run)."""
    snapshot = build_graph(checkpointer).get_state({"configurable": {"thread_id": run_id}})
    return (snapshot.values or {}).get("scope") if snapshot else None


def run_or_resume(question: str, deps: Deps, run_id: str, checkpointer: Any, *,
                  progress: Callable[[str], None] | None = None) -> ResearchResult:
    """Run `run_id` from scratch, or continue it when a checkpoint exists (batch items have fixed run ids)."""
    if build_graph(checkpointer).get_state(_config(run_id, deps, None)).values:
        return resume_research(run_id, deps, checkpointer, progress=progress)
    return run_research(question, deps, run_id=run_id, checkpointer=checkpointer, progress=progress)
