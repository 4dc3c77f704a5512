"""What the stages read of the relevance model, written as protocols.

`RelevanceGate` is what the gate and the research steps read (the thresholds, a passage's probability
alone, the gate head's); `RelevanceRanker` adds what the ranking reads (a list's probabilities, the
cosines from the index's own vectors). `engine.relevance.model.RelevanceModel` is both; a test hands a
stage a fake with only what that stage reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from engine.relevance.candidate import Candidate


class RelevanceGate(Protocol):
    """The thresholds and per-passage probabilities the gate reads (agents.verify, agents.evaluate)."""

    @property
    def thresholds(self) -> Mapping[str, float]:
        """The calibrated cuts by name: gate, gate_selected, gate_confident, gate_head, select_floor, ..."""
        ...

    def pair_probabilities(self, question: str, texts: Sequence[str], headings: Sequence[str] | None = None
                           ) -> list[float]:
        """Probability that each text, alone, answers the question."""
        ...

    def gate_probabilities(self, question: str, texts: Sequence[str], relevances: Sequence[float], best: float
                           ) -> list[float] | None:
        """The gate head's probability for each chosen passage; None where it cannot be computed."""
        ...


class RelevanceRanker(RelevanceGate, Protocol):
    """What the ranking reads too (agents.select, engine.search.retrieval)."""

    @property
    def shares_index(self) -> bool:
        """Whether the index's stored vectors are this model's encoder's own (cosines need no encoding)."""
        ...

    def stored_cosines(self, question: str, vectors: Mapping[str, Any]) -> dict[str, float]:
        """The question's cosine to each stored vector (by chunk id)."""
        ...

    def rank(self, question: str, candidates: Sequence[Candidate], *, context: bool = True) -> list[float]:
        """Probability that each candidate of a ranked list answers the question."""
        ...
