"""A candidate of a ranked list: one passage as the relevance model's `rank` reads it, built in one place.

Retrieval's learned rerank, the evidence stage's selection, the chunks adjoining the best candidates and
the calibration bench all rank lists of these; `candidate` is the one constructor they use. A plain dict
(a TypedDict), because the ranking fills missing cosines in place and adds `maxsim` and `cross` where the
rank head reads them.
"""

from __future__ import annotations

from typing import Required, TypedDict


class Candidate(TypedDict, total=False):
    """One passage of a list to rank.

    `cosine` is the question against the passage's stored vector (None: not known yet, the model encodes
    it); `score` the fused retrieval score; `rank`, `dense_rank`, `lexical_rank` its places in this search
    (None: not found by it); `document_id` and `ordinal` its place in its document (the context head);
    `neighbour` whether it was added as a neighbour of `neighbour_of`, a better candidate. `maxsim` and
    `cross` are set by `RelevanceModel.rank` when its rank head reads them.
    """

    id: str
    text: Required[str]
    heading: str
    cosine: float | None
    score: float
    rank: int | None
    dense_rank: int | None
    lexical_rank: int | None
    document_id: str | None
    ordinal: int | None
    neighbour: bool
    neighbour_of: str | None
    maxsim: float
    cross: float


def candidate(*, id: str, text: str, heading: str, cosine: float | None, score: float,
              rank: int | None, dense_rank: int | None, lexical_rank: int | None, document_id: str | None,
              ordinal: int | None, neighbour_of: str | None = None) -> Candidate:
    """A candidate; a neighbour (`neighbour` true) exactly when `neighbour_of` names the one it adjoins."""
    return {"id": id, "text": text, "heading": heading, "cosine": cosine, "score": score, "rank": rank,
            "dense_rank": dense_rank, "lexical_rank": lexical_rank, "document_id": document_id,
            "ordinal": ordinal, "neighbour": bool(neighbour_of), "neighbour_of": neighbour_of}
