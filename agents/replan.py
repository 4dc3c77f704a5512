"""Replan (multi_hop): the next unanswered aspect, a retry in new words, or complete.

Hard limits: `max_completed` completed steps, an iteration cap, and stagnation (two failed steps
in a row whose confidence differs by less than `stagnation_delta`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.evaluate import uncovered_terms
from agents.runtime import llm_or_rules
from agents.state import ResearchState, ResearchStep
from engine.config import ResearchStepSettings, Settings

if TYPE_CHECKING:
    from agents.deps import Deps

Decision = Literal["next_step", "retry", "complete"]


_FIELDS, _STEP = Settings.model_fields, ResearchStepSettings()  # the declared defaults (no environment read)


class Limits(BaseModel):
    """The loop's limits; `limits_from(settings)` takes them from a run's settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_completed: int = _FIELDS["research_max_completed"].default
    max_iterations: int = _FIELDS["research_max_iterations"].default
    max_attempts: int = _STEP.max_attempts
    stagnation_delta: float = _STEP.stagnation_delta


class ReplanDecision(BaseModel):
    """What the replanner decided, and why (also the LLM's reply schema)."""

    model_config = ConfigDict(extra="forbid")

    decision: Decision
    aspect: str | None = Field(default=None, description="The aspect to research next (next_step/retry)")
    reason: str = Field(default="", description="One line: why")


def stagnating(steps: list[ResearchStep], delta: float) -> bool:
    failed = [s for s in steps[-2:] if s["status"] == "failed"]
    return len(failed) == 2 and abs(failed[0]["confidence"] - failed[1]["confidence"]) < delta


def decide(state: ResearchState, limits: Limits, uncovered: list[str]) -> ReplanDecision:
    """Rules replanning. Pure: the decision depends only on the state, the limits and uncovered terms."""
    steps = state["steps"]
    completed = [s for s in steps if s["status"] == "completed"]
    last = steps[-1]
    if len(completed) >= limits.max_completed:
        return ReplanDecision(decision="complete", reason=f"{len(completed)} steps completed (the limit)")
    if state["iterations"] >= limits.max_iterations:
        return ReplanDecision(decision="complete", reason="iteration cap reached")
    if stagnating(steps, limits.stagnation_delta):
        return ReplanDecision(decision="complete", reason="stagnation: repeated failures with similar scores")
    if last["status"] == "failed" and last["attempt"] < limits.max_attempts:
        return ReplanDecision(decision="retry", aspect=last["aspect"], reason="step failed; retry in other words")
    if state["question_type"] == "simple":
        return ReplanDecision(decision="complete", reason="simple question researched")
    done = {s["aspect"] for s in steps}
    remaining = [a for a in state["aspects"] if a not in done]
    if remaining:
        return ReplanDecision(decision="next_step", aspect=remaining[0], reason="planned aspect not yet researched")
    if len(uncovered) >= 2:  # one stray word ('quickly') is not an unanswered aspect
        aspect = " ".join(uncovered[:6])
        if aspect not in done:
            return ReplanDecision(decision="next_step", aspect=aspect,
                                  reason="question terms not yet covered by evidence: " + ", ".join(uncovered[:6]))
    return ReplanDecision(decision="complete", reason="every aspect researched")


def limits_from(settings: Any) -> Limits:
    return Limits(max_completed=settings.research_max_completed, max_iterations=settings.research_max_iterations,
                  max_attempts=settings.research.max_attempts, stagnation_delta=settings.research.stagnation_delta)


def replan_node(state: ResearchState, deps: Deps) -> dict[str, Any]:
    """Rules decide; an LLM may choose among the same moves, but cannot skip or break the limits."""
    limits = limits_from(deps.settings)
    rules_decision = decide(state, limits, uncovered_terms(state["stem"], state["evidence"]))

    def accept(reply: ReplanDecision) -> ReplanDecision | None:
        if rules_decision.decision == "complete":
            return None if reply.decision != "complete" else reply  # hard limits are not negotiable
        if reply.decision == "complete" and not any(s["status"] == "completed" for s in state["steps"]):
            return None  # skipping research altogether
        if reply.decision != "complete" and not (reply.aspect or "").strip():
            return None
        return reply

    fallbacks: list[str]
    if rules_decision.decision == "complete" or state["question_type"] == "simple":
        decision, fallbacks = rules_decision, []
    else:
        decision, fallbacks = llm_or_rules(
            deps, "replan", "replan", ReplanDecision, rules=lambda: rules_decision, accept=accept,
            question=state["stem"], memory=state["memory"],
            steps=[{k: s[k] for k in ("aspect", "status", "confidence")} for s in state["steps"]])
    update: dict[str, Any] = {"decision": decision.decision, "fallbacks": fallbacks,
                              "memory": {"findings": [f"replan: {decision.decision} ({decision.reason})"]}}
    if decision.decision != "complete":
        last = state["steps"][-1]
        attempt = last["attempt"] + 1 if decision.decision == "retry" else 1
        update["current"] = {"aspect": decision.aspect, "attempt": attempt}
    return update
