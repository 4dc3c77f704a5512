"""The graph node that runs the evidence stage on the research evidence."""

from __future__ import annotations

from typing import Any

from agents.evidence import run_evidence


def evidence_node(state: dict, deps: Any) -> dict:
    result = run_evidence(state["stem"], state["evidence"], deps, options=state.get("options") or None)
    return {"evidence_result": result.model_dump(mode="json"), "fallbacks": result.fallbacks}
