"""Cut blocks into chunks of whole sentences, keeping offsets into the document text."""

from __future__ import annotations

import hashlib
import re

from engine.ingest.formats import ParsedDocument
from engine.ingest.sentences import Span, split_sentences, word_count
from engine.models import ChunkDraft
from engine.text import REQUIREMENT_ID, leans_on_context


def chunk_id(document_id: str, start: int, end: int, text: str) -> str:
    """Stable id from the document id, the offsets and the text."""
    digest = hashlib.sha256(f"{document_id}\x00{start}\x00{end}\x00{text}".encode()).hexdigest()
    return f"chk_{digest[:24]}"


CHARS_PER_WORD = 12  # a chunk holds at most max_words * this many characters (text without spaces: hashes, blobs)
_WORD = re.compile(r"\S+")
_CLAUSE_END = re.compile(r"[;:,](?=\s)")


def _best_cut(text: str, start: int, end: int) -> int:
    """Where to end a piece of `text[start:end]`: the last line break in its second half, else the
    last clause mark (`;` `:` `,`), else the last space; a run with no space at all is cut at `end`."""
    half = start + (end - start) // 2
    newline = text.rfind("\n", half, end)
    if newline > start:
        return newline
    last_clause = None
    for match in _CLAUSE_END.finditer(text, half, end):
        last_clause = match
    if last_clause is not None:
        return last_clause.end()
    for i in range(end - 1, half, -1):
        if text[i].isspace():
            return i
    return end


def _split_oversized(text: str, span: Span, limit: int, max_chars: int) -> list[Span]:
    """A 'sentence' over the size of a chunk (tables, run-on lists, text with no sentence end or no
    space at all): pieces of at most `limit` words and `max_chars` characters, cut as `_best_cut` says."""
    pieces: list[Span] = []
    cursor = span.start
    while cursor < span.end:
        while cursor < span.end and text[cursor].isspace():
            cursor += 1
        if cursor >= span.end:
            break
        window = min(span.end, cursor + max_chars)
        for count, word in enumerate(_WORD.finditer(text, cursor, window), 1):
            if count > limit:  # the piece ends before the word after the limit-th
                window = word.start()
                break
        if window >= span.end:
            pieces.append(Span(cursor, span.end))
            break
        cut = _best_cut(text, cursor, window)
        end = cut
        while end > cursor and text[end - 1].isspace():
            end -= 1
        pieces.append(Span(cursor, end))
        cursor = cut
    return [p for p in pieces if p.end > p.start]


# A sentence that points back by a determiner or a plural pronoun ("Such incident response plan shall ...", "These
# measures ...", "They must ..."): "This" and "It" open as many sentences that point at nothing before them ("This
# MNDA constitutes the entire agreement", "It is expected that ...") and are left where the words fall.
_POINTS_BACK = re.compile(r"^\W*(?:such|these|those|they|the\s+foregoing|the\s+above)\b", re.IGNORECASE)


def points_back(sentence: str) -> bool:
    """The sentence opens by pointing at the one before it (`_POINTS_BACK`, and `leans_on_context`). Pure."""
    return _POINTS_BACK.match(sentence) is not None and leans_on_context(sentence)


def _pack(text: str, spans: list[Span], max_words: int, max_chars: int) -> list[Span]:
    """Consecutive spans packed into groups of at most `max_words` words and `max_chars` characters (a span
    longer than that is a group of its own). A sentence that points back at the one before it ("Such incident
    response plan shall address the following areas: ...") never opens a group: the sentence it points at moves
    with it, so that a chunk, and every quote of it, says what it speaks of."""
    groups: list[Span] = []
    group: list[Span] = []
    words: list[int] = []
    for span in spans:
        n = word_count(text[span.start : span.end])
        if group and (sum(words) + n > max_words or span.end - group[0].start > max_chars):
            carried = 1 if len(group) > 1 and points_back(text[span.start : span.end]) else 0
            groups.append(Span(group[0].start, group[-1 - carried].end))
            group, words = group[len(group) - carried:], words[len(words) - carried:]
        group.append(span)
        words.append(n)
    if group:
        groups.append(Span(group[0].start, group[-1].end))
    return groups


# "4.", "(a)", "b)", "iv.": a paragraph's or point's number alone (not a word: "Form.")
_LONE_LABEL = re.compile(r"\(?\d{1,3}[.)]|\([A-Za-z]{1,4}\)|[A-Za-z][.)]|[ivxIVX]{1,5}[.)]")


def _labels_glued(text: str, spans: list[Span]) -> list[Span]:
    """A paragraph's number on a line of its own ("4." before a long paragraph of an EU act) is one piece with the
    text it numbers: no chunk is the number alone, and none ends with the next paragraph's number."""
    out: list[Span] = []
    glue: int | None = None
    for span in spans:
        start = span.start if glue is None else glue
        glue = None
        if _LONE_LABEL.fullmatch(text[span.start:span.end].strip()):
            glue = start
            continue
        out.append(Span(start, span.end))
    if glue is not None:
        out.append(Span(glue, spans[-1].end))
    return out


# A row's first cell that is a requirement's id (engine.text.REQUIREMENT_ID): the row is a requirement of its own
_ROW_ID = re.compile(rf"\|\s*\**{REQUIREMENT_ID}\**\s*\|")


def _identified(text: str, rows: list[Span]) -> bool:
    """Most rows under the header open with an id: each row says what it requires by itself."""
    body = [r for r in rows[2:] if text.startswith("|", r.start)]
    return bool(body) and sum(_ROW_ID.match(text, r.start) is not None for r in body) >= 0.8 * len(body)


def _tables_whole(text: str, spans: list[Span], max_words: int, max_chars: int) -> list[Span]:
    """A pipe table's rows (one span a line) as one span when the table is at most three chunks' size, so that
    no chunk holds rows without the header row that names their cells; a larger table keeps its rows apart.
    A table whose rows each open with an id (a standard's requirements) is one span only within one chunk's
    size: its rows need no header, and a passage of a dozen requirements ranks under the one that answers."""
    out: list[Span] = []
    run: list[Span] = []

    def close() -> None:
        most = 1 if _identified(text, run) else 3
        if len(run) > 1 and (run[-1].end - run[0].start <= most * max_chars
                             and word_count(text[run[0].start:run[-1].end]) <= most * max_words):
            out.append(Span(run[0].start, run[-1].end))
        else:
            out.extend(run)
        run.clear()

    for span in spans:
        row = text.startswith("|", span.start)
        if run and not (row and text[run[-1].end:span.start].strip() == "" and "\n\n" not in
                        text[run[-1].end:span.start]):
            close()
        if row:
            run.append(span)
        else:
            out.append(span)
    close()
    return out


def chunk_document(document_id: str, parsed: ParsedDocument, max_words: int = 160) -> list[ChunkDraft]:
    """Chunks of whole sentences, at most `max_words` words unless one sentence is longer.

    A single sentence longer than three times `max_words` (typically a table flattened to text),
    or than three times `max_words * CHARS_PER_WORD` characters (text with no space), is the one
    exception: it is cut at line breaks, else after a clause, else between words, else anywhere.
    A pipe table up to that size is one piece with its header row (`_tables_whole`).
    """
    text = parsed.text
    max_chars = max_words * CHARS_PER_WORD
    drafts: list[ChunkDraft] = []
    for block in parsed.blocks:
        spans: list[Span] = []
        for sentence in split_sentences(text, block.start, block.end):
            if (sentence.end - sentence.start > 3 * max_chars
                    or word_count(text[sentence.start : sentence.end]) > 3 * max_words):
                spans.extend(_split_oversized(text, sentence, max_words, max_chars))
            else:
                spans.append(sentence)
        pieces = _tables_whole(text, _labels_glued(text, spans), max_words, max_chars)
        for group in _pack(text, pieces, max_words, max_chars):
            body = text[group.start : group.end]
            drafts.append(ChunkDraft(
                id=chunk_id(document_id, group.start, group.end, body), ordinal=len(drafts), text=body,
                char_start=group.start, char_end=group.end, section_number=block.section_number,
                section_path=block.section_path, section_heading=block.section_heading,
                metadata=block.metadata,
            ))
    return drafts
