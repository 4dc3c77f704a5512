"""What every node shares: its Deps (from the run config), metrics, and LLM calls with rules fallback."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

from agents.deps import Deps
from agents.state import EvidenceState
from engine.errors import ConfigError, LLMOutputError

logger = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
# A node: the graph state (ResearchState or EvidenceState) and the Deps in, a partial state update out.
NodeFunction = Callable[[Any, Deps], dict[str, Any]]
GraphNode = Callable[..., dict[str, Any]]  # (state, config): the signature LangGraph reads


def deps_of(config: RunnableConfig) -> Deps:
    deps = (config.get("configurable") or {}).get("deps")
    if deps is None:
        raise ConfigError("the research graph needs config['configurable']['deps']")
    return deps


def node(name: str) -> Callable[[NodeFunction], GraphNode]:
    """Record wall time, LLM calls, parse failures and characters for each run of a node."""

    def wrap(fn: NodeFunction) -> GraphNode:
        def run(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            deps = deps_of(config)
            progress = (config.get("configurable") or {}).get("progress")
            if progress:
                progress(name)
            llm = deps.llm
            calls, failures, records = (llm.calls, llm.parse_failures, len(llm.records)) if llm else (0, 0, 0)
            started = time.perf_counter()
            update = fn(state, deps)
            new_records = llm.records[records:] if llm else []
            update["metrics"] = [{
                "node": name, "seconds": round(time.perf_counter() - started, 4),
                "llm_calls": (llm.calls - calls) if llm else 0,
                "parse_failures": (llm.parse_failures - failures) if llm else 0,
                "input_chars": sum(r.input_chars for r in new_records),
                "output_chars": sum(r.output_chars for r in new_records),
                "fallbacks": len(update.get("fallbacks", [])),
            }]
            return update

        run.__name__ = f"{name}_node"  # not functools.wraps: LangGraph reads the signature
        return run

    return wrap


def llm_or_rules(deps: Deps, step: str, skill: str, schema: type[T], rules: Callable[[], R],
                 accept: Callable[[T], R | None], **variables: Any) -> tuple[R, list[str]]:
    """Ask the LLM (when configured); fall back to the rules step on any failure or rejected reply.

    `accept` turns a validated reply into the result, or returns None when code rejects it (for
    example a reply that skips steps); the fallback is then recorded.
    """
    if deps.llm is None:
        return rules(), []
    try:
        reply = deps.llm.structured(skill, schema, **variables)
    except LLMOutputError as exc:
        logger.info("%s: rules used: %s", step, exc)
        return rules(), [f"{step}: {exc}"]
    result = accept(reply)
    if result is None:
        logger.info("%s: rules used: the reply was rejected by code checks", step)
        return rules(), [f"{step}: reply rejected by code checks"]
    return result, []


def llm_or_rules_within(deps: Deps, allowed: int, step: str, skill: str, schema: type[T], rules: Callable[[], R],
                        accept: Callable[[T], R | None], **variables: Any) -> tuple[R, list[str], int]:
    """`llm_or_rules` with at most `allowed` LLM calls: a stage's own budget, whatever earlier stages spent.

    Returns the result, the recorded fallbacks and the calls spent (retries included), so the stage
    can keep its running total in graph state (a resumed run then still honours the budget).
    """
    llm = deps.llm
    if llm is None:
        return rules(), [], 0
    saved, before = llm.budget, llm.calls
    llm.budget = before + max(0, allowed)
    try:
        result, fallbacks = llm_or_rules(deps, step, skill, schema, rules=rules, accept=accept, **variables)
    finally:
        llm.budget = saved
    return result, fallbacks, llm.calls - before


def evidence_allowance(state: EvidenceState, deps: Deps) -> int:
    """LLM calls the evidence stage may still make: `llm_budget_evidence` minus what it has spent."""
    return deps.settings.llm_budget_evidence - int(state.get("evidence_llm_calls") or 0)


def evidence_update(fallbacks: list[str], calls: int, **values: Any) -> dict[str, Any]:
    """A partial state update from an evidence-stage node (its fallbacks also go to the run's list)."""
    return {**values, "fallbacks": fallbacks, "evidence_fallbacks": fallbacks, "evidence_llm_calls": calls}
