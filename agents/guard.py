"""Guard: screen the question for prompt injection before any research.

Legal topics (crime, fraud, sanctions, violence) are legitimate research; what is refused is an
attempt to steer the engine: override its instructions, reveal its prompt, or dictate a verdict.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

INJECTION_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|earlier|all|your|system|these)\b"
     r".{0,20}\b(instructions?|rules?|prompts?|guidelines?|directions?)\b",
     "asks to override the engine's instructions"),
    (r"\b(ignore|disregard|forget)\b.{0,20}\b(instructions?|prompts?)\s+(above|before|previously)\b",
     "asks to override the engine's instructions"),
    (r"\b(reveal|show|print|repeat|display|output|leak)\b.{0,30}\b(system|hidden|initial|your)\s+"
     r"(prompt|instructions?|rules)\b", "asks for the engine's prompt"),
    (r"\b(mark|declare|report|record|rate|treat)\b.{0,40}\b(as\s+)?(compliant|passed|satisfied|approved)\b"
     r".{0,40}\b(regardless|anyway|no matter|without (checking|evidence|verification))", "dictates a verdict"),
    (r"\b(you are now|act as|pretend to be|from now on you)\b", "tries to change the engine's role"),
    (r"\b(do not|don't|never)\s+(cite|quote|use)\s+(the\s+)?(sources?|evidence|quotes?)\b",
     "asks to answer without evidence"),
    (r"<\s*/?\s*(system|assistant|instructions?)\s*>|\[\s*(system|inst)\s*\]", "carries prompt markup"),
)


class GuardVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    adversarial: bool
    reason: str | None = Field(default=None, description="Why the question was refused")


def screen(question: str) -> GuardVerdict:
    """Rules screening by patterns (deterministic)."""
    text = " ".join(question.split())
    for pattern, reason in INJECTION_PATTERNS:
        if re.search(pattern, text, re.IGNORECASE):
            return GuardVerdict(adversarial=True, reason=reason)
    return GuardVerdict(adversarial=False)


class GuardReply(BaseModel):
    """LLM reply schema for skills/guard.md."""

    model_config = ConfigDict(extra="forbid")

    adversarial: bool
    reason: str = ""


def guard_node(state: dict, deps: object) -> dict:
    """Refuse adversarial questions (recorded in state); legal topics pass."""
    from agents.runtime import llm_or_rules

    if not deps.settings.guard_enabled:  # type: ignore[attr-defined]
        return {"rejected": False, "rejection_reason": None}
    rules_verdict = screen(state["question"])
    if rules_verdict.adversarial:  # patterns are decisive: an LLM cannot talk the guard out of them
        return {"rejected": True, "rejection_reason": rules_verdict.reason}
    verdict, fallbacks = llm_or_rules(
        deps, "guard", "guard", GuardReply, rules=lambda: rules_verdict,  # type: ignore[arg-type]
        accept=lambda r: GuardVerdict(adversarial=r.adversarial, reason=r.reason or None),
        question=state["question"])
    return {"rejected": verdict.adversarial, "rejection_reason": verdict.reason if verdict.adversarial else None,
            "fallbacks": fallbacks}
