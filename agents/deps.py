"""Everything with side effects that the graph's nodes need, passed in one object."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg

from engine.config import Settings
from engine.llm.client import LLMClient, make_chat_model
from engine.llm.policy import CallPolicy
from engine.search.embeddings import Embedder
from engine.search.retrieval import Filters, Retriever
from engine.trail import store as audit_trail


@dataclass
class Deps:
    """Handed to the graph (via `config["configurable"]["deps"]`) and to stage functions.

    `llm` is None for the rules backend. For the llm backend it is a budgeted `LLMClient`;
    every stage falls back to its rules step when the client raises LLMOutputError.
    `qa_memory(question)` finds a near-identical earlier question (the audit trail supplies it).
    """

    conn: psycopg.Connection
    embedder: Embedder
    settings: Settings
    retriever: Retriever
    llm: LLMClient | None = None
    qa_memory: Callable[[str], dict[str, Any] | None] | None = None

    @property
    def backend(self) -> str:
        return "llm" if self.llm is not None else "rules"

    @classmethod
    def build(cls, conn: psycopg.Connection, settings: Settings, *, embedder: Embedder | None = None,
              backend: str | None = None, chat_model: Any = None, budget: int | None = None,
              scope: Filters | None = None) -> Deps:
        """Assemble dependencies; `chat_model` overrides the configured endpoint (tests inject fakes)."""

        embedder = embedder or Embedder.from_settings(settings)
        llm = None
        if (backend or settings.backend) == "llm":
            llm = LLMClient(chat_model or make_chat_model(settings),
                            budget=budget or settings.llm_budget_multi_hop, max_retries=settings.llm_max_retries,
                            policy=CallPolicy.from_settings(settings))
        retriever = Retriever(conn, embedder, settings, scope=scope)
        memory = trail_memory(conn, embedder, settings) if settings.memory_enabled else None
        return cls(conn=conn, embedder=embedder, settings=settings, retriever=retriever, llm=llm, qa_memory=memory)


def trail_memory(conn: psycopg.Connection, embedder: Embedder, settings: Settings
                 ) -> Callable[[str], dict[str, Any] | None]:
    """QA memory backed by the audit trail: the nearest earlier answered question above the threshold."""

    def lookup(stem: str) -> dict[str, Any] | None:
        return audit_trail.similar_question(conn, embedder.encode_query(stem), settings.memory_threshold)

    return lookup
