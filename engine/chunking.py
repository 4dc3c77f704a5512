"""Cut blocks into chunks of whole sentences, keeping offsets into the document text."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from engine.formats import ParsedDocument
from engine.sentences import Span, split_sentences, word_count


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


def chunk_id(document_id: str, start: int, end: int, text: str) -> str:
    """Stable id from the document id, the offsets and the text."""
    digest = hashlib.sha256(f"{document_id}\x00{start}\x00{end}\x00{text}".encode()).hexdigest()
    return f"chk_{digest[:24]}"


def _split_oversized(text: str, span: Span, limit: int) -> list[Span]:
    """A 'sentence' longer than `limit` words (tables, run-on lists): cut at line breaks, else words."""
    pieces: list[Span] = []
    cursor = span.start
    words = 0
    last_break = None
    i = span.start
    while i < span.end:
        if text[i] == "\n":
            last_break = i
        if text[i].isspace() and i > span.start and not text[i - 1].isspace():
            words += 1
            if words >= limit:
                cut = last_break if last_break and last_break > cursor else i
                pieces.append(Span(cursor, cut))
                cursor = cut + 1
                while cursor < span.end and text[cursor].isspace():
                    cursor += 1
                words, last_break, i = 0, None, cursor
                continue
        i += 1
    if cursor < span.end:
        pieces.append(Span(cursor, span.end))
    return [p for p in pieces if p.end > p.start]


def _pack(text: str, spans: list[Span], max_words: int) -> list[Span]:
    groups: list[Span] = []
    start = end = None
    words = 0
    for span in spans:
        n = word_count(text[span.start : span.end])
        if start is not None and words + n > max_words:
            groups.append(Span(start, end))  # type: ignore[arg-type]
            start = None
        if start is None:
            start, words = span.start, 0
        end = span.end
        words += n
    if start is not None:
        groups.append(Span(start, end))  # type: ignore[arg-type]
    return groups


def chunk_document(document_id: str, parsed: ParsedDocument, max_words: int = 160) -> list[ChunkDraft]:
    """Chunks of whole sentences, at most `max_words` words unless one sentence is longer.

    A single sentence longer than three times `max_words` (typically a table flattened to text)
    is the one exception: it is cut at line breaks, or else between words.
    """
    text = parsed.text
    drafts: list[ChunkDraft] = []
    for block in parsed.blocks:
        spans: list[Span] = []
        for sentence in split_sentences(text, block.start, block.end):
            if word_count(text[sentence.start : sentence.end]) > 3 * max_words:
                spans.extend(_split_oversized(text, sentence, max_words))
            else:
                spans.append(sentence)
        for group in _pack(text, spans, max_words):
            body = text[group.start : group.end]
            drafts.append(ChunkDraft(
                id=chunk_id(document_id, group.start, group.end, body), ordinal=len(drafts), text=body,
                char_start=group.start, char_end=group.end, section_number=block.section_number,
                section_path=block.section_path, section_heading=block.section_heading,
                metadata=block.metadata,
            ))
    return drafts
