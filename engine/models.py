"""Records shared by storage, retrieval and the agents."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Document(BaseModel):
    """A stored document version."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="'doc_' + hash of the normalized text (with its source and a count where a version "
                                "of the same text is stored already)")
    source_key: str = Field(description="Identity of the source across versions")
    version: int
    content_sha256: str
    title: str
    source_type: str
    source_uri: str
    format: str
    ingested_at: datetime
    is_current: bool
    superseded_by: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class ChunkDraft(BaseModel):
    """A chunk before it is stored: its text is exactly `document.text[char_start:char_end]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    ordinal: int
    text: str
    char_start: int
    char_end: int
    section_number: str = ""
    section_path: str = ""
    section_heading: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


class Chunk(BaseModel):
    """A stored chunk with the document facts needed to cite it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    document_id: str
    document_title: str
    document_version: int
    source_type: str
    is_current: bool
    ordinal: int
    section_number: str
    section_path: str
    section_heading: str
    text: str
    char_start: int = Field(description="Offset of the chunk in the document text")
    char_end: int
    metadata: dict[str, Any] = Field(default_factory=dict)


class Hit(BaseModel):
    """A retrieved chunk with its fused score and each component's score and rank."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chunk: Chunk
    score: float
    dense_score: float | None = None
    lexical_score: float | None = None
    dense_rank: int | None = None
    lexical_rank: int | None = None
    rerank_score: float | None = None
    relevance: float | None = Field(default=None, description="Learned relevance probability (reranking)")
    query: str = Field(default="", description="The query that found this chunk best")
    neighbour_of: str | None = Field(default=None, description="The chunk this one adjoins in its document, when "
                                     "reranking added it as a neighbour of a better hit (not found by the search)")

    @property
    def chunk_id(self) -> str:
        return self.chunk.id


def new_run_id() -> str:
    """A research run's id ('run-' + 12 hex digits): what `evidence resume` and the checkpointer key on."""
    return f"run-{uuid.uuid4().hex[:12]}"
