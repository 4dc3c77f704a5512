"""Translate -> Parts -> Select -> Extract -> Verify -> Compose -> Review over the research evidence, in the
output shape of issue 4.

The stages are graph nodes in their own modules (`translate_node`, `parts_node`, `select_node`, `extract_node`,
`verify_node`, `compose_node`, `review_node`); `agents/graph.py` wires them after research. `run_evidence` runs
the same nodes as a graph of their own, so bench scripts and tests get exactly what `evidence ask` gets. The
review node assembles the `EvidenceResult` (`agents/result.py`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from agents.result import NO_EVIDENCE, EvidenceResult, Review, assemble_result
from agents.state import EvidenceItem
from agents.verify import JudgedRequirement, verify_requirements

if TYPE_CHECKING:
    from agents.deps import Deps

__all__ = ["NO_EVIDENCE", "EvidenceResult", "JudgedRequirement", "Review", "assemble_result", "run_evidence",
           "verify_requirements"]


@lru_cache(maxsize=1)
def _evidence_graph() -> Any:
    from agents.graph import build_evidence_graph

    return build_evidence_graph()


def run_evidence(question: str, evidence: list[EvidenceItem], deps: Deps,
                 options: list[str] | None = None) -> EvidenceResult:
    """Answer `question` from research evidence (chunk dicts in order found).

    Runs the same evidence-stage nodes (translate ... review) as `evidence ask`. Deterministic with
    the rules backend (`deps.llm is None`).
    """
    state = _evidence_graph().invoke(
        {"stem": question, "options": options or [], "evidence": evidence, "metrics": [], "fallbacks": []},
        {"configurable": {"deps": deps}})
    return EvidenceResult.model_validate(state["evidence_result"])
