"""Pure routing functions: where the graph goes next, from state alone."""

from __future__ import annotations

from typing import Literal

from agents.state import EvidenceState, ResearchState


def after_guard(state: ResearchState) -> Literal["rejected", "continue"]:
    return "rejected" if state.get("rejected") else "continue"


def after_replan(state: ResearchState) -> Literal["research", "done"]:
    return "done" if state.get("decision") == "complete" else "research"


def after_review(state: EvidenceState) -> Literal["revise", "done"]:
    """One revision after a failed first review; then the verdict is final."""
    review = state.get("review") or {}
    return "done" if review.get("passed") or review.get("revised") else "revise"
