"""Pure routing functions: where the graph goes next, from state alone."""

from __future__ import annotations

from typing import Any, Literal


def after_guard(state: dict[str, Any]) -> Literal["rejected", "continue"]:
    return "rejected" if state.get("rejected") else "continue"


def after_replan(state: dict[str, Any]) -> Literal["research", "done"]:
    return "done" if state.get("decision") == "complete" else "research"
