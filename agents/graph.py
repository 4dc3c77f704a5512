"""Wiring only: nodes live in their stage modules, routing in agents/routing.py."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from agents import routing
from agents.classify import classify_node
from agents.compose import compose_node
from agents.evaluate import evaluate_node
from agents.extract import extract_node
from agents.guard import guard_node
from agents.parts import parts_node
from agents.plan import plan_node, prepare_node
from agents.replan import replan_node
from agents.retrieve import crossref_node, retrieve_node
from agents.review import review_node
from agents.rewrite import rewrite_node
from agents.runtime import node
from agents.select import select_node
from agents.state import EvidenceState, ResearchState
from agents.translate import translate_node
from agents.verify import verify_node


def _add_evidence_stage(graph: StateGraph) -> None:
    """translate -> question_parts -> select -> extract -> verify -> compose -> review, with one way back from
    review to compose (the revision)."""
    graph.add_node("translate", node("translate")(translate_node))
    graph.add_node("question_parts", node("question_parts")(parts_node))
    graph.add_node("select", node("select")(select_node))
    graph.add_node("extract", node("extract")(extract_node))
    graph.add_node("verify", node("verify")(verify_node))
    graph.add_node("compose", node("compose")(compose_node))
    graph.add_node("review", node("review")(review_node))
    graph.add_edge("translate", "question_parts")
    graph.add_edge("question_parts", "select")
    graph.add_edge("select", "extract")
    graph.add_edge("extract", "verify")
    graph.add_edge("verify", "compose")
    graph.add_edge("compose", "review")
    graph.add_conditional_edges("review", routing.after_review, {"revise": "compose", "done": END})


def build_graph(checkpointer: Any = None) -> Any:
    graph = StateGraph(ResearchState)
    graph.add_node("prepare", node("prepare")(prepare_node))
    graph.add_node("guard", node("guard")(guard_node))
    graph.add_node("classify", node("classify")(classify_node))
    graph.add_node("plan", node("plan")(plan_node))
    graph.add_node("rewrite", node("rewrite")(rewrite_node))
    graph.add_node("retrieve", node("retrieve")(retrieve_node))
    graph.add_node("crossref", node("crossref")(crossref_node))
    graph.add_node("evaluate", node("evaluate")(evaluate_node))
    graph.add_node("replan", node("replan")(replan_node))
    graph.add_edge(START, "prepare")
    graph.add_edge("prepare", "guard")
    graph.add_conditional_edges("guard", routing.after_guard, {"rejected": END, "continue": "classify"})
    graph.add_edge("classify", "plan")
    graph.add_edge("plan", "rewrite")
    graph.add_edge("rewrite", "retrieve")
    graph.add_edge("retrieve", "crossref")
    graph.add_edge("crossref", "evaluate")
    graph.add_edge("evaluate", "replan")
    _add_evidence_stage(graph)
    graph.add_conditional_edges("replan", routing.after_replan, {"research": "rewrite", "done": "translate"})
    return graph.compile(checkpointer=checkpointer)


def build_evidence_graph() -> Any:
    """The evidence stage alone, over given evidence (`agents.evidence.run_evidence`)."""
    graph = StateGraph(EvidenceState)
    _add_evidence_stage(graph)
    graph.add_edge(START, "translate")
    return graph.compile()
