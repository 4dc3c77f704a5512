"""Wiring only: nodes live in their stage modules, routing in agents/routing.py."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from agents import routing
from agents.classify import classify_node
from agents.evaluate import evaluate_node
from agents.evidence_node import evidence_node
from agents.guard import guard_node
from agents.plan import plan_node, prepare_node
from agents.replan import replan_node
from agents.retrieve import crossref_node, retrieve_node
from agents.rewrite import rewrite_node
from agents.runtime import node
from agents.state import ResearchState


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
    graph.add_node("evidence", node("evidence")(evidence_node))
    graph.add_conditional_edges("replan", routing.after_replan, {"research": "rewrite", "done": "evidence"})
    graph.add_edge("evidence", END)
    return graph.compile(checkpointer=checkpointer)
