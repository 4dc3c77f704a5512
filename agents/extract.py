"""Extract: requirement sentences as verbatim quotes with REQ-IDs.

`classify_modality(sentence)` (agents/modality.py) is a public, stable API here too (also used by
evaluation scripts).
The verbatim check is code: a quote must equal the chunk text at its offsets after whitespace
normalization (every run of whitespace read as one space, ends trimmed) and nothing else.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, ConfigDict, Field

from agents.modality import Modality, classify_modality, rx
from agents.parts import question_parts
from agents.runtime import evidence_allowance, evidence_update, llm_or_rules_within
from agents.select import part_candidates, rank_part, relevance_model
from agents.state import EvidenceItem, EvidenceState
from agents.translate import relevance_question
from engine.config import EvidenceSettings
from engine.ingest.sentences import split_sentences
from engine.text import MODAL_ANCHOR, PERIOD, normalize_ws

if TYPE_CHECKING:
    from agents.deps import Deps
    from agents.select import Part


_LEANS_ON_CONTEXT = re.compile(r"^\s*(such|these|those|this|that|it|they|the\s+foregoing|the\s+above)\b", re.I)
# "It" as a dummy subject leans on nothing: "It is expected that ...", "It should also be noted that ...",
# "It is important for firms to ...", "It is imperative to adhere ...".
_EXPLETIVE_IT = re.compile(
    r"^\s*it\s+(?:is|was|will\s+be|would\s+be|(?:should|must|may|might|can|could)\s+(?:also\s+)?be|"
    r"has\s+(?:also\s+)?been)\s+(?:also\s+|not\s+|therefore\s+)?(?:\w+ly\s+)?"
    r"(?:\w+\s+(?:that|whether)\b|(?:important|essential|imperative|necessary|advisable|vital|critical|crucial|"
    r"prudent|appropriate|possible|impossible|permissible|acceptable|unacceptable|sufficient|insufficient|"
    r"recommended|expected|required|good\s+practice|best\s+practice)\s+(?:for\s+|to\b))", re.I)


# "This Chapter", "these Rules": the document speaking of itself, which the citation names.
_SELF_REFERENCE = re.compile(r"^\s*(?:this|these)\s+(?:chapter|part|section|rules?|rulebook|regulations?|guidance|"
                             r"polic(?:y|ies)|document|schedule|appendix|annex|article|paragraph|module|"
                             r"standard|licen[cs]e|agreement|act|law|directive|code|notice)\b", re.I)


def leans_on_context(quote: str) -> bool:
    """The quote starts with a word that points back at text before it ("Such records", "They must");
    "IT" in capitals is information technology, not the pronoun; "It is expected that" and "This Chapter"
    point at nothing before them."""
    match = _LEANS_ON_CONTEXT.search(quote)
    if match is None or _EXPLETIVE_IT.search(quote) or _SELF_REFERENCE.search(quote):
        return False
    return match.group(1) != "IT" or quote.isupper()


_REFERS_ELSEWHERE = rx(r"\b(?:as\s+)?(?:set\s+out|described|specified|referred\s+to|defined)\s+in\s+"
                        r"(?:section|rule|article|paragraph|part|chapter|schedule)\b",
                        r"^\s*(?:such|these|those|the\s+foregoing|the\s+above|this|that)\b",
                        r"\bthe\s+foregoing\b", r"\bsuch\s+(?:records?|information|persons?|measures?|data)\b",
                        r"\b(?:in\s+accordance\s+with|under|pursuant\s+to)\s+(?:section|rule|article|paragraph)\b")
STATUTE_TYPES = frozenset({"statute", "regulation"})
# Text that explains or illustrates rather than binds, recognised from the document's structure
# (section path or heading) or the sentence's own opening ("Guidance:", "For example, ...").
_NON_BINDING_SECTION = rx(r"\b(?:recitals?|guidance|notes?|examples?|explanatory|commentary|preamble|whereas|"
                          r"discussion|rationale|"
                           r"illustrations?|background)\b")
_NON_BINDING_TEXT = rx(r"^\s*(?:guidance|note|example|illustration|for\s+example|for\s+instance|e\.g\.|whereas|"
                      r"discussion|rationale|supplemental\s+guidance|commentary)\b",
                        r"^\s*\(\d{1,3}\)\s+(?:whereas\b|[A-Z][a-z]+\s+(?:should|ought)\b)")


def non_binding(chunk: EvidenceItem, sentence: str = "", paragraph: str = "") -> str | None:
    """What kind of non-binding text this is (guidance, note, example, recital, discussion...), or None when
    it binds; `paragraph`: the opening of the paragraph the sentence stands in ("Discussion: ..." makes each of
    its sentences commentary, as catalogues mark a control's explanation). Pure."""
    for where in (chunk.get("section_path", ""), chunk.get("section_heading", "")):
        found = _NON_BINDING_SECTION.search(where or "")
        if found:
            return _KIND.get(found.group(0).lower().rstrip("s"), found.group(0).lower().rstrip("s"))
    found = _NON_BINDING_TEXT.search(sentence) or _NON_BINDING_TEXT.search(paragraph)
    if found is None:
        return None
    opening = normalize_ws(found.group(0).lower())
    return "recital" if opening.startswith("(") else next(
        (kind for word, kind in _KIND.items() if opening.startswith(word)), "guidance")


_KIND = {"discussion": "discussion", "rationale": "discussion", "commentary": "discussion",
         "supplemental": "guidance", "whereas": "recital", "preamble": "recital", "recital": "recital",
         "for example": "example",
         "for instance": "example", "e.g.": "example", "example": "example", "illustration": "example",
         "note": "note", "guidance": "guidance"}
_EVIDENCE = EvidenceSettings()  # the defaults (quote lengths); extract_node passes its settings' group


def is_verbatim(chunk_text: str, char_start: int, char_end: int, quote: str) -> bool:
    """True when `quote` is exactly the chunk text at [char_start, char_end) (whitespace normalized)."""
    if not (0 <= char_start < char_end <= len(chunk_text)):
        return False
    return normalize_ws(chunk_text[char_start:char_end]) == normalize_ws(quote) != ""


class Requirement(BaseModel):
    """One extracted requirement: a verbatim quote and where it stands."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requirement_id: str = Field(description="REQ-S### (statute/regulation) or REQ-P### (policy/guidance/other)")
    source_type: str
    document_id: str
    document_version: int
    document_title: str
    section_path: str
    chunk_id: str
    char_start: int = Field(description="Offset of the quote within the chunk text")
    char_end: int
    exact_quote: str = Field(description="Verbatim text of the chunk at [char_start, char_end)")
    modality: Modality
    extraction_confidence: str = Field(description="high | medium | low")
    confidence_reason: str
    refers_elsewhere: bool = Field(description="Points to other text ('as set out in section 4.2', 'such records')")
    binding: bool = Field(default=True, description="False for recitals, guidance, notes and examples: shown as "
                                                    "context, numbered REQ-P, never presented as a REQ-S requirement")


def _word_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(start + m.start(), start + m.end()) for m in re.finditer(r"\S+", text[start:end])]


# A clause boundary: the word after one of these (or after a line break) may open an excerpt.
_CLAUSE_END = (",", ";", ":", ")")
MIN_AFTER_MODAL = 12  # words an excerpt keeps from the modal verb on


def whole_sentences(text: str, start: int, end: int) -> bool:
    """`text[start:end]` begins where a sentence begins and ends where one ends. Pure."""
    spans = split_sentences(text)
    return any(s.start == start for s in spans) and any(s.end == end for s in spans)


def long_enough(text: str, start: int, end: int, limits: EvidenceSettings, whole: bool | None = None) -> bool:
    """At least `limits.min_quote_words` words, or whole sentences of at least `limits.min_sentence_words`."""
    n = len(text[start:end].split())
    if n >= limits.min_quote_words:
        return True
    return n >= limits.min_sentence_words and (whole if whole is not None else whole_sentences(text, start, end))


def _excerpt(text: str, start: int, end: int, limits: EvidenceSettings, lead: int = 0,
             whole: bool = True, anchor_at: int | None = None) -> tuple[int, int] | None:
    """A contiguous span of at most `limits.max_quote_words` words (plus `lead`, the words of sentences
    prepended for context) holding the sentence's modal verb; None for a span too short to quote
    (`long_enough`; `whole`: the span is whole sentences). The span keeps the sentence's beginning (its
    subject, and a time or condition stated first: "On an annual basis ..., the officer must ...") whenever
    the modal verb and `MIN_AFTER_MODAL` words after it fit; otherwise it opens at the earliest clause
    boundary that lets them fit, or 8 words before the modal verb. `anchor_at`: hold that offset instead of the
    modal verb (a time the sentence states beyond the first excerpt)."""
    most = limits.max_quote_words + lead
    words = _word_spans(text, start, end)
    if len(words) <= most:
        return (start, end) if long_enough(text, start, end, limits, whole) else None
    own = start + _offset(words, lead, start)  # where the sentence itself begins, after its context
    modal = MODAL_ANCHOR.search(text[own:end])
    anchor = anchor_at if anchor_at is not None else own + (modal.start() if modal else 0)
    at = next((i for i, (s, _) in enumerate(words) if s >= anchor), 0)
    earliest = max(0, at + min(MIN_AFTER_MODAL, len(words) - at) - most)
    boundaries = [i for i in range(earliest, at + 1)
                  if i == 0 or text[words[i - 1][1] - 1] in _CLAUSE_END or "\n" in text[words[i - 1][1]:words[i][0]]]
    first = boundaries[0] if boundaries else max(0, at - 8)
    first = min(first, len(words) - most)
    last = first + most - 1
    # In a list ("... in any case where: (a) ...; (b) ..."), end where a point ends, never inside one or at
    # the next point's label: cut before the last label the span reaches, once it holds a first point.
    labels = [i for i in range(max(first, at) + 1, min(last + 2, len(words)))
              if "\n" in text[words[i - 1][1]:words[i][0]] and _POINT.match(text, words[i][0])]
    if len(labels) >= 2:
        last = labels[-1] - 1
    return words[first][0], words[last][1]


def _offset(words: list[tuple[int, int]], lead: int, start: int) -> int:
    """Characters from `start` to the first word after the `lead` prepended words."""
    return words[lead][0] - start if 0 < lead < len(words) else 0


def _confidence(modality: Modality, excerpted: bool, elsewhere: bool, max_words: int) -> tuple[str, str]:
    if elsewhere:
        return "low", "points to text elsewhere"
    if excerpted:
        return "medium", f"sentence longer than {max_words} words: excerpted"
    if modality in (Modality.OBLIGATION, Modality.PROHIBITION):
        return "high", f"whole sentence with an explicit {modality.value}"
    if modality is Modality.NONE:  # a statement of a passage that imposes nothing, or an LLM proposal
        return "low", "a statement: no obligation, prohibition, permission or recommendation found by code"
    return "medium", f"whole sentence; {modality.value} only"


class _Numbering:
    """REQ-IDs per answer: REQ-S### for statute/regulation sources, REQ-P### for every other source."""

    def __init__(self) -> None:
        self.counters = {"S": 0, "P": 0}

    def next(self, source_type: str, binding: bool = True) -> str:
        kind = "S" if source_type in STATUTE_TYPES and binding else "P"
        self.counters[kind] += 1
        return f"REQ-{kind}{self.counters[kind]:03d}"


def _requirement(chunk: EvidenceItem, numbering: _Numbering, start: int, end: int, excerpted: bool,
                 limits: EvidenceSettings, origin: str = "", sentence_start: int | None = None,
                 sentence_end: int | None = None) -> Requirement:
    """`sentence_start`/`sentence_end`: the requirement's own sentence, when the quote opens with the text it
    leans on (its modality is the sentence's, not the context's) or is an excerpt of it (a sentence chosen
    for its modality keeps it when the excerpt leaves out the deciding words)."""
    quote = chunk["text"][start:end]
    own = chunk["text"][max(start, sentence_start or start):end]
    modality = classify_modality(own)
    if modality is Modality.NONE and sentence_end is not None:  # the excerpt left out the words that decide it
        modality = classify_modality(chunk["text"][sentence_start or start:sentence_end])
    elsewhere = bool(_REFERS_ELSEWHERE.search(own))
    level, reason = _confidence(modality, excerpted, elsewhere, limits.max_quote_words)
    opening = chunk["text"].rfind("\n\n", 0, start)
    kind = non_binding(chunk, own, chunk["text"][opening + 2 if opening >= 0 else 0:start][:40])
    if kind:
        reason = f"non-binding ({kind}): context, not a requirement; {reason}"
    rid = numbering.next(chunk["source_type"], binding=kind is None)
    return Requirement(
        requirement_id=rid, source_type=chunk["source_type"], document_id=chunk["document_id"],
        document_version=chunk["document_version"], document_title=chunk["document_title"],
        section_path=chunk["section_path"], chunk_id=chunk["chunk_id"], char_start=start, char_end=end,
        exact_quote=quote, modality=modality, extraction_confidence=level, confidence_reason=origin + reason,
        refers_elsewhere=elsewhere, binding=kind is None)


_POINTER = re.compile(r"^\s*(?:such|these|those|this|that)\s+([a-z][\w-]{2,})", re.I)


def _with_context(text: str, spans: list[Any], i: int, most: int = 3) -> tuple[int, int]:
    """Where a quote of `span` starts, and how many words before the sentence it takes: a sentence that
    leans on text before it is quoted from the sentence it points at, so the quote names what it speaks
    of: "Such reports must ..." from the nearest of the `most` sentences before it that mentions reports,
    "They must ..." from the sentence before. `i`: the sentence's index in `spans`."""
    span = spans[i]
    sentence = text[span.start:span.end]
    if i == 0 or not leans_on_context(sentence):
        return span.start, 0
    back = 1
    noun = _POINTER.match(sentence)
    if noun:
        stem = noun.group(1).lower()[:5]
        back = next((b for b in range(1, min(most, i) + 1)
                     if stem in text[spans[i - b].start:spans[i - b].end].lower()), 1)
    start = spans[i - back].start
    return start, len(text[start:span.start].split())


# A list point's label at a line start: "(a)", "a)", "(iv)", "1.", "(1)", "-", "*", "\u2022".
_POINT = re.compile(r"(?:\(?[a-z]{1,4}\)|\(?\d{1,3}[.)]|\([A-Z]{1,3}\)|[-*\u2022\u25aa])(?=\s)")
_LIST_LEAD_IN = (":", "\u2014", "\u2013", "-")  # "A firm must:", "Rules may make provision\u2014"


def _with_list(text: str, spans: list[Any], i: int, most: int) -> int:
    """Where a quote of `span` ends: a sentence that introduces a list ("A firm must:", "Rules may make
    provision\u2014") runs on over the items that follow it, up to `most` words, so that the quote says what
    is required rather than that something is. `i`: the sentence's index in `spans`."""
    span = spans[i]
    if not text[span.start:span.end].rstrip().endswith(_LIST_LEAD_IN):
        return span.end
    end = span.end
    while i + 1 < len(spans) and len(text[span.start:end].split()) < most:
        i += 1
        end = spans[i].end
    return end


def _points_after(text: str, after: int, end: int, most: int = 8) -> list[tuple[int, int]]:
    """The list points that open a line between `after` and `end`, each up to the next (ends trimmed)."""
    starts = [after + m.end() for m in re.finditer(r"\n[ \t]*", text[after:end]) if _POINT.match(text, after + m.end())]
    bounds = [*starts, end]
    return [(a, a + len(text[a:b].rstrip())) for a, b in zip(bounds, bounds[1:], strict=False)][:most]


def extract_from_chunks(chunks: list[EvidenceItem], limits: EvidenceSettings = _EVIDENCE) -> list[Requirement]:
    """Requirement sentences of the evidence chunks, in evidence order, numbered per answer (quote
    lengths: `limits`, the run's `Settings.evidence`)."""
    numbering = _Numbering()
    seen: set[str] = set()
    out: list[Requirement] = []
    for chunk in chunks:
        text = chunk["text"]
        spans = split_sentences(text)
        modal = [i for i, s in enumerate(spans) if classify_modality(text[s.start:s.end]) is not Modality.NONE]
        # A passage that imposes nothing (a definition, a statement of what the rules provide) may still
        # be what answers: its sentences are candidates too, and Verify decides as for any other quote.
        for i in modal or range(len(spans)):
            span = spans[i]
            start, lead = _with_context(text, spans, i)
            end = _with_list(text, spans, i, limits.max_quote_words)
            cut = _excerpt(text, start, end, limits, lead)
            if cut is None or normalize_ws(text[cut[0]:cut[1]]) in seen:
                continue
            seen.add(normalize_ws(text[cut[0]:cut[1]]))
            out.append(_requirement(chunk, numbering, cut[0], cut[1], cut != (start, end), limits,
                                    sentence_start=span.start, sentence_end=span.end))
            # The points of a list the excerpt could not hold are offered one by one: each is a duty of the
            # lead-in ("shall designate ... where: ... (b) the core activities ... consist of ..."), with its
            # modality.
            for a, b in _points_after(text, cut[1], end):
                point = _excerpt(text, a, b, limits, whole=False)
                if point is not None and normalize_ws(text[point[0]:point[1]]) not in seen:
                    seen.add(normalize_ws(text[point[0]:point[1]]))
                    out.append(_requirement(chunk, numbering, point[0], point[1], True, limits,
                                            origin="a point of its list: ", sentence_start=span.start,
                                            sentence_end=span.end))
            # A long sentence whose time falls outside its excerpt ("... is reinstated permanently if ...,
            # and you cure the violation prior to 30 days after ...") is offered around the time too: a
            # question that asks when needs it, and Verify chooses between them for the question asked.
            time = next((m for m in PERIOD.finditer(text, span.start, span.end) if m.start() >= cut[1]), None)
            again = _excerpt(text, start, end, limits, lead, anchor_at=time.start()) if time else None
            if again is not None and normalize_ws(text[again[0]:again[1]]) not in seen:
                seen.add(normalize_ws(text[again[0]:again[1]]))
                out.append(_requirement(chunk, numbering, again[0], again[1], True, limits,
                                        sentence_start=span.start, sentence_end=span.end))
    return out


# --- llm backend: the model proposes (chunk id, quote); code locates, numbers and checks ---------------

class ProposedQuote(BaseModel):
    """One requirement the LLM proposes, copied from a chunk."""

    model_config = ConfigDict(extra="forbid")

    chunk_id: str = Field(description="Id of the evidence chunk the quote is copied from")
    quote: str = Field(description="The requirement sentence, copied character for character from the chunk")


class ExtractReply(BaseModel):
    """LLM reply schema for skills/extract.md."""

    model_config = ConfigDict(extra="forbid")

    quotes: list[ProposedQuote] = Field(max_length=60, description="Requirement sentences, in chunk order")


def _normalized_with_positions(text: str) -> tuple[str, list[int]]:
    """The whitespace-normalized text and, for each of its characters, its offset in `text`."""
    chars: list[str] = []
    positions: list[int] = []
    for word in re.finditer(r"\S+", text):
        if chars:
            chars.append(" ")
            positions.append(word.start() - 1)
        chars.extend(word.group(0))
        positions.extend(range(word.start(), word.end()))
    return "".join(chars), positions


def locate(chunk_text: str, quote: str) -> tuple[int, int] | None:
    """Offsets of `quote` in `chunk_text`, matched after whitespace normalization only; None if absent.

    The match must start and end at word boundaries: a fragment of a word is not a quote.
    """
    target = normalize_ws(quote)
    if not target:
        return None
    normalized, positions = _normalized_with_positions(chunk_text)
    at = normalized.find(target)
    while at >= 0:
        start, end = positions[at], positions[at + len(target) - 1] + 1
        if (start == 0 or not chunk_text[start - 1].isalnum()) and (
                end == len(chunk_text) or not chunk_text[end].isalnum()):
            return start, end
        at = normalized.find(target, at + 1)
    return None


def _unlocated(proposal: ProposedQuote, chunk: EvidenceItem | None, rid: str) -> Requirement:
    """A proposal that is not verbatim text of a known chunk: kept on record, rejected as not_verbatim."""
    known: dict[str, Any] = dict(chunk or {})
    return Requirement(
        requirement_id=rid, source_type=known.get("source_type", "unknown"), document_id=known.get("document_id", ""),
        document_version=known.get("document_version", 0), document_title=known.get("document_title", ""),
        section_path=known.get("section_path", ""), chunk_id=proposal.chunk_id, char_start=0, char_end=0,
        exact_quote=proposal.quote, modality=classify_modality(proposal.quote), extraction_confidence="low",
        confidence_reason="llm proposal not found verbatim in the named chunk", refers_elsewhere=False)


def requirements_from_proposals(proposals: list[ProposedQuote], chunks: list[EvidenceItem],
                                limits: EvidenceSettings = _EVIDENCE) -> list[Requirement]:
    """Turn LLM proposals into requirements. Code finds each quote in its chunk and assigns offsets and IDs.

    A quote longer than `limits.max_quote_words` is cut around its modal verb like a rules quote; a quote that is
    not in the named chunk (or names an unknown chunk) is kept with offsets 0-0, so Verify rejects it
    as `not_verbatim` and it stays on record.
    """
    by_id = {c["chunk_id"]: c for c in chunks}
    numbering, seen, out = _Numbering(), set(), []
    for proposal in proposals:
        chunk = by_id.get(proposal.chunk_id)
        span = locate(chunk["text"], proposal.quote) if chunk else None
        if chunk is None or span is None:
            out.append(_unlocated(proposal, chunk, numbering.next(chunk["source_type"] if chunk else "")))
            continue
        cut = _excerpt(chunk["text"], *span, limits, whole=False) or span  # a short quote stays whole; Verify judges it
        if normalize_ws(chunk["text"][cut[0]:cut[1]]) in seen:
            continue
        seen.add(normalize_ws(chunk["text"][cut[0]:cut[1]]))
        out.append(_requirement(chunk, numbering, cut[0], cut[1], cut != span, limits, origin="llm proposal; "))
    return out


def _prompt_chunk(chunk: EvidenceItem) -> dict[str, Any]:
    return {k: chunk[k] for k in ("chunk_id", "source_type", "document_title", "section_path", "text")}


def candidate_chunks(evidence: list[EvidenceItem], parts: list[Part]) -> list[EvidenceItem]:
    """The chunks to extract from: each part's ranked candidates, part by part, best first."""
    by_id = {e["chunk_id"]: e for e in evidence}
    order = list(dict.fromkeys(r.chunk_id for part in parts for r in part.ranked))
    return [by_id[cid] for cid in order if cid in by_id]


def states_requirement(chunk: EvidenceItem) -> bool:
    """The chunk has a sentence that imposes, permits or recommends something (then its other sentences
    are context, not quotes to cite)."""
    return any(classify_modality(chunk["text"][s.start:s.end]) is not Modality.NONE
               for s in split_sentences(chunk["text"]))


def with_rejected_proposals(rules: list[Requirement], proposals: list[Requirement]) -> list[Requirement]:
    """The rules extraction, then the model's unlocated proposals (kept on record), numbered after it."""
    numbering = _Numbering()
    for r in rules:
        numbering.counters[r.requirement_id[4]] = max(numbering.counters[r.requirement_id[4]],
                                                      int(r.requirement_id[5:]))
    return [*rules, *(p.model_copy(update={"requirement_id": numbering.next(p.source_type)}) for p in proposals)]


def extract_node(state: EvidenceState, deps: Deps) -> dict[str, Any]:
    """Graph node. Parts are ranked first (agents.select); then requirement sentences of each part's
    candidate chunks. Rules: modal sentences. LLM: proposed quotes, located and numbered by code.

    The model sees only the candidate chunks that state a requirement. When not one of its proposals
    is verbatim text of its chunk, the step falls back to rules (recorded), keeping the proposals on
    record as rejected.
    """

    evidence = state["evidence"]
    model = relevance_model(deps)
    limits = deps.settings.evidence
    parts: list[Part] = []
    added: list[EvidenceItem] = []
    # run_evidence answers from the evidence it is given, nothing else (its state has no research steps)
    researched = bool(cast(dict[str, Any], state).get("steps"))
    # Passages are selected and gated against the question in the corpus's language (agents.translate)
    asked, spent_fallbacks, spent = relevance_question(state, deps)
    for i, question in enumerate(question_parts(asked, deps.settings.answer)):
        if researched:
            pool, fresh, searched = part_candidates(question, evidence + added, deps.retriever,
                                                    deps.settings.rerank_depth)
            added.extend(fresh)
        else:
            pool, searched = evidence, None
        parts.append(rank_part(i, question, pool, model, deps.conn, searched=searched, limits=limits,
                               overlap=deps.settings.answer.same_duty_overlap))
    dumped = [p.model_dump(mode="json") for p in parts]
    evidence = evidence + added
    chunks = candidate_chunks(evidence, parts)
    needed = [c for c in chunks if states_requirement(c)] if deps.llm is not None else []
    if not needed:
        return evidence_update(spent_fallbacks, spent, requirements=[r.model_dump(mode="json")
                                                    for r in extract_from_chunks(chunks, limits=limits)],
                               parts=dumped, evidence=added)
    unlocated: list[Requirement] = []

    def accept(reply: ExtractReply) -> list[Requirement] | None:
        found = requirements_from_proposals(reply.quotes, needed, limits)
        if found and all(r.char_end == 0 for r in found):
            unlocated.extend(found)
            return None
        return found

    requirements, fallbacks, calls = llm_or_rules_within(
        deps, evidence_allowance(state, deps) - spent, "extract", "extract", ExtractReply,
        rules=lambda: extract_from_chunks(chunks, limits=limits), accept=accept,
        question=state["stem"], chunks=[_prompt_chunk(c) for c in needed])
    if unlocated:
        requirements = with_rejected_proposals(requirements, unlocated)
        fallbacks = [f"extract: none of the {len(unlocated)} quotes the llm proposed is verbatim text of its "
                     "chunk; rules extraction used (the proposals stay on record, rejected not_verbatim)"]
    return evidence_update(spent_fallbacks + fallbacks, spent + calls,
                           requirements=[r.model_dump(mode="json") for r in requirements], parts=dumped, evidence=added)
