"""Compose: an answer made only of verified requirements; every statement cites REQ-IDs.

Rules backend: extractive. Each statement carries its quote in quotation marks and its ID,
grouped by document and section; requirements that conflict (statute/regulation against
policy, same subject, different figures or opposite force) are presented together.
"""

from __future__ import annotations

import re
from itertools import product
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.evaluate import key_terms
from agents.extract import Modality, Requirement

_FIGURE = re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|seventy[- ]two)\s+"
                     r"(business\s+)?(hours?|days?|weeks?|months?|years?)\b", re.IGNORECASE)
MAX_STATEMENTS = 8
SAME_SUBJECT = 0.3  # share of key terms two quotes must share to be about the same subject
SAME_ACTION = 0.6  # ... and to be about the same action, for an obligation/prohibition pair to conflict


class Statement(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    requirement_ids: list[str] = Field(description="REQ-IDs the statement rests on")


class Conflict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    requirement_ids: list[str]
    reason: str


class ComposedAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    statements: list[Statement]
    conflicts: list[Conflict] = Field(default_factory=list)
    unused_requirement_ids: list[str] = Field(default_factory=list)
    composer: Literal["rules", "llm"] = "rules"
    attempt: int = Field(default=1, description="2 for the revision after a failed review")

    @property
    def text(self) -> str:
        return "\n".join(s.text for s in self.statements)


def _figures(quote: str) -> set[str]:
    return {" ".join(m.group(0).lower().split()) for m in _FIGURE.finditer(quote)}


def find_conflicts(verified: list[Requirement]) -> list[Conflict]:
    """Pairs of a statute/regulation and a policy on the same subject whose figures or force differ."""
    statutes = [r for r in verified if r.requirement_id.startswith("REQ-S")]
    policies = [r for r in verified if r.requirement_id.startswith("REQ-P")]
    out = []
    for s, p in product(statutes, policies):
        ts, tp = set(key_terms(s.exact_quote)), set(key_terms(p.exact_quote))
        shared = len(ts & tp) / min(len(ts), len(tp)) if ts and tp else 0.0
        if shared < SAME_SUBJECT:
            continue
        fs, fp = _figures(s.exact_quote), _figures(p.exact_quote)
        # "must keep X" beside "must not destroy X" agree; opposite force needs the same action and object.
        opposite = {s.modality, p.modality} == {Modality.OBLIGATION, Modality.PROHIBITION} and shared >= SAME_ACTION
        if (fs and fp and fs != fp) or opposite:
            why = f"{', '.join(sorted(fs))} vs {', '.join(sorted(fp))}" if fs and fp and fs != fp else "opposite force"
            out.append(Conflict(requirement_ids=[s.requirement_id, p.requirement_id], reason=why))
    return out


def _where(req: Requirement) -> str:
    section = req.section_path.split(" > ")[-1] if req.section_path else ""
    return f"{req.document_title}" + (f" (section {section})" if section else "")


def compose_rules(verified: list[Requirement]) -> ComposedAnswer:
    """Deterministic extractive answer."""
    if not verified:
        return ComposedAnswer(statements=[])
    conflicts = find_conflicts(verified)
    in_conflict = {i for c in conflicts for i in c.requirement_ids}
    statements = []
    for conflict in conflicts:
        a, b = (next(r for r in verified if r.requirement_id == i) for i in conflict.requirement_ids)
        statements.append(Statement(
            text=f'The sources differ ({conflict.reason}): {_where(a)} states "{" ".join(a.exact_quote.split())}" '
                 f'[{a.requirement_id}], while {_where(b)} states "{" ".join(b.exact_quote.split())}" '
                 f"[{b.requirement_id}].", requirement_ids=[a.requirement_id, b.requirement_id]))
    ordered = sorted((r for r in verified if r.requirement_id not in in_conflict),
                     key=lambda r: (r.requirement_id[4] != "S", r.document_title, r.section_path, r.requirement_id))
    used = ordered[: max(0, MAX_STATEMENTS - len(statements))]
    for req in used:
        statements.append(Statement(text=f'{_where(req)} states: "{" ".join(req.exact_quote.split())}" '
                                         f"[{req.requirement_id}]", requirement_ids=[req.requirement_id]))
    unused = [r.requirement_id for r in ordered[len(used):]]
    return ComposedAnswer(statements=statements, conflicts=conflicts, unused_requirement_ids=unused)


def grounding_confidence(verified: list[Requirement]) -> str:
    """high (>=5, all explicit), medium (2-4), low (1, or any leaning on other text), insufficient (0)."""
    if not verified:
        return "insufficient"
    if len(verified) == 1 or any(r.refers_elsewhere for r in verified):
        return "low"
    return "high" if len(verified) >= 5 else "medium"


class OptionChoice(BaseModel):
    """Which multiple-choice option the verified evidence supports."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    option: str | None = Field(description="The letter chosen, or None when the evidence cannot decide")
    supporting_requirement_ids: list[str] = Field(default_factory=list)
    reason: str


def _support(option: str, quote: str) -> float:
    from engine.lexical import tokenize

    terms = set(key_terms(option))
    figures = _figures(option)
    if figures:  # an option that states a figure is supported only by a quote with that figure
        return 1.0 if figures <= _figures(quote) else 0.0
    return len(terms & set(tokenize(quote))) / len(terms) if terms else 0.0


def select_option(options: list[str], verified: list[Requirement], *, need: float = 0.6,
                  margin: float = 0.15) -> OptionChoice:
    """Pick the option the verified quotes support best, by a clear margin; otherwise say so."""
    if not options or not verified:
        return OptionChoice(option=None, reason="no verified requirement to decide with")
    scored = []
    for i, option in enumerate(options):
        support = {r.requirement_id: _support(option, r.exact_quote) for r in verified}
        scored.append((max(support.values()), chr(ord("A") + i), [k for k, v in support.items() if v >= need]))
    scored.sort(key=lambda x: (-x[0], x[1]))
    best, runner_up = scored[0], scored[1] if len(scored) > 1 else (0.0, "", [])
    if best[0] < need or best[0] - runner_up[0] < margin:
        return OptionChoice(option=None, reason=f"the evidence cannot decide (best support {best[0]:.2f}, "
                                                f"next {runner_up[0]:.2f})")
    return OptionChoice(option=best[1], supporting_requirement_ids=best[2],
                        reason=f"supported by {', '.join(best[2])} (support {best[0]:.2f})")


# --- llm backend: the model writes statements; code fixes conflicts and unused IDs, Review checks ----

_CITED = re.compile(r"REQ-[SP]\d{3}")


class ComposeReply(BaseModel):
    """LLM reply schema for skills/compose.md."""

    model_config = ConfigDict(extra="forbid")

    statements: list[Statement] = Field(min_length=1, max_length=MAX_STATEMENTS + 4)


def answer_from_reply(reply: ComposeReply, verified: list[Requirement], attempt: int) -> ComposedAnswer:
    """The model's statements as an answer; conflicts and unused IDs are computed by code, never taken."""
    cited = {i for s in reply.statements for i in [*s.requirement_ids, *_CITED.findall(s.text)]}
    return ComposedAnswer(statements=reply.statements, conflicts=find_conflicts(verified),
                          unused_requirement_ids=[r.requirement_id for r in verified if r.requirement_id not in cited],
                          composer="llm", attempt=attempt)


def _prompt_requirement(r: Requirement) -> dict[str, Any]:
    return {"requirement_id": r.requirement_id, "quote": " ".join(r.exact_quote.split()), "where": _where(r),
            "modality": r.modality.value}


def verified_of(state: dict[str, Any]) -> list[Requirement]:
    """The verified requirements in graph state, in extraction order."""
    return [Requirement.model_validate(j["requirement"]) for j in state.get("judged") or [] if j["verified"]]


def compose_node(state: dict, deps: Any) -> dict:
    """Graph node. A failed review in state means this is the one revision: the model gets the reasons."""
    from agents.runtime import evidence_allowance, evidence_update, llm_or_rules_within
    from engine.language import answer_language, language_name

    verified = verified_of(state)
    review = state.get("review")
    attempt = 2 if review and not review["passed"] else 1
    if deps.llm is None or not verified:
        answer = compose_rules(verified).model_copy(update={"attempt": attempt})
        return evidence_update([], 0, composition=answer.model_dump(mode="json"))
    previous = (state.get("composition") or {}).get("statements", []) if attempt == 2 else []
    answer, fallbacks, calls = llm_or_rules_within(
        deps, evidence_allowance(state, deps), "compose", "compose", ComposeReply,
        rules=lambda: compose_rules(verified).model_copy(update={"attempt": attempt}),
        accept=lambda reply: answer_from_reply(reply, verified, attempt), question=state["stem"],
        language=language_name(answer_language(state.get("language"))),
        requirements=[_prompt_requirement(r) for r in verified],
        conflicts=[c.model_dump() for c in find_conflicts(verified)],
        previous=[s["text"] for s in previous], reasons=review["reasons"] if attempt == 2 else [])
    return evidence_update(fallbacks, calls, composition=answer.model_dump(mode="json"))
