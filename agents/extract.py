"""Extract: requirement sentences as verbatim quotes with REQ-IDs (the graph's extract node).

`classify_modality(sentence)` (agents/modality.py) is a public, stable API here too (also used by
evaluation scripts). Where a quote begins and ends, and the verbatim check, are agents/quotes.py: a quote
must equal the chunk text at its offsets after whitespace normalization (every run of whitespace read as
one space, ends trimmed) and nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agents.asks import states_what_is_asked
from agents.modality import DUTIES, Modality, classify_modality, defines, exempts, sets_time
from agents.quotes import (
    REFERS_ELSEWHERE,
    amends,
    excerpt,
    lead_in_of,
    locate,
    non_binding,
    open_lead_in,
    opening_points,
    opens_with_point,
    points_after,
    with_context,
    with_list,
)
from agents.runtime import evidence_allowance, evidence_update, llm_or_rules_within
from agents.select import Part
from agents.state import EvidenceItem, EvidenceState
from engine.config import EvidenceSettings
from engine.ingest.sentences import split_sentences
from engine.search import store
from engine.text import PERIOD, is_table_separator, normalize_ws, table_header, table_pairs, table_reading

if TYPE_CHECKING:
    from agents.deps import Deps

STATUTE_TYPES = frozenset({"statute", "regulation"})
_EVIDENCE = EvidenceSettings()  # the defaults (quote lengths); extract_node passes its settings' group


# How a point of a list that its lead-in's quote could not hold begins its confidence reason (offered one by one)
POINT_OF_LIST = "a point of its list: "


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
    table_header: str | None = Field(default=None, description="For a row of a table: its header row, verbatim from "
                                                               "the same chunk (it names the row's cells)")

    def reading(self) -> str:
        """The quote as a reader takes it: a table row cell by cell under its header ("SLA: 3 days"), else as is."""
        return table_reading(self.table_header, self.exact_quote) if self.table_header else self.exact_quote


def leads_of_points(requirements: list[Requirement]) -> dict[str, str]:
    """Each point of a list offered on its own (`POINT_OF_LIST`) -> the requirement that quotes its lead-in: the
    nearest one before it in its passage that is not itself such a point. A broad question's part judges a point
    with its lead-in ("The management body ... shall: (a) ... (d) ..." and then "(e) approve and periodically review
    the ... ICT internal audit plans ..."): a list is one requirement, whatever words each point states. Pure."""
    out: dict[str, str] = {}
    unique = sorted({r.requirement_id: r for r in requirements}.values(), key=lambda r: (r.chunk_id, r.char_start))
    lead: Requirement | None = None
    for req in unique:
        if lead is not None and lead.chunk_id != req.chunk_id:
            lead = None
        if req.confidence_reason.startswith(POINT_OF_LIST):
            if lead is not None:
                out[req.requirement_id] = lead.requirement_id
        else:
            lead = req
    return out


def _confidence(modality: Modality, excerpted: bool, elsewhere: bool, max_words: int) -> tuple[str, str]:
    if elsewhere:
        return "low", "points to text elsewhere"
    if excerpted:
        return "medium", f"sentence longer than {max_words} words: excerpted"
    if modality in DUTIES:
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


def _under_lead_in(point: str, lead_in: str, source_type: str) -> Modality:
    """A list point's force read with the lead-in of its list (in the chunk before); a definition has none. Pure."""
    return Modality.NONE if defines(point) else classify_modality(f"{lead_in}\n{point}", source_type=source_type)


def _requirement(chunk: EvidenceItem, numbering: _Numbering, start: int, end: int, excerpted: bool,
                 limits: EvidenceSettings, origin: str = "", sentence_start: int | None = None,
                 sentence_end: int | None = None, table_header: str | None = None, lead_in: str = "") -> Requirement:
    """`sentence_start`/`sentence_end`: the requirement's own sentence, when the quote opens with the text it
    leans on (its modality is the sentence's, not the context's) or is an excerpt of it (a sentence chosen
    for its modality keeps it when the excerpt leaves out the deciding words). `lead_in`: for a point of a list
    whose lead-in the chunk before holds, that lead-in (the point's force is the lead-in's)."""
    quote = chunk["text"][start:end]
    own = chunk["text"][max(start, sentence_start or start):end]
    modality = classify_modality(table_reading(table_header, own) if table_header else own,
                                 source_type=chunk["source_type"])
    if modality is Modality.NONE and table_header:  # a cell that states the row's rule ("Description: Verify that
        # ...", "Requirement: Keys must be rotated ..."), read alone as it opens, else a period under a column that
        # sets a time ("SLA: 3 days", "Retention period: 7 years"; `sets_time`)
        pairs = table_pairs(table_header, own)
        modality = next((m for _, cell in pairs
                         if (m := classify_modality(cell, source_type=chunk["source_type"])) is not Modality.NONE),
                        Modality.OBLIGATION if sets_time(pairs) else Modality.NONE)
    if modality is Modality.NONE and sentence_end is not None:  # the excerpt left out the words that decide it
        modality = classify_modality(chunk["text"][sentence_start or start:sentence_end],
                                     source_type=chunk["source_type"])
    if modality is Modality.NONE and sentence_end is not None and end > sentence_end:  # a lead-in run on over its
        # points ("Upon any expiration or termination:" over "b. ... Provider will delete ..."): the points' force
        modality = next((m for a, b in points_after(chunk["text"], start, end)
                         if (m := classify_modality(chunk["text"][a:b], source_type=chunk["source_type"]))
                         is not Modality.NONE), Modality.NONE)
    if modality is Modality.NONE and lead_in:
        modality = _under_lead_in(own, lead_in, chunk["source_type"])
        words = lead_in.split()
        origin = origin or f'a point of the list under "{" ".join(words[:8])}{" ..." if len(words) > 8 else ""}" ' \
                           "(in the passage before): "
    elsewhere = bool(REFERS_ELSEWHERE.search(own))
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
        refers_elsewhere=elsewhere, binding=kind is None, table_header=table_header)


def _describes_row(chunk: EvidenceItem, sentence: str) -> bool:
    """`sentence` is one of a spreadsheet row's "Header: value" lines (EvidenceItem.fields). Pure."""
    return any(sentence.startswith(f"{field}: ") for field in chunk.get("fields") or ())


def extract_from_chunks(chunks: list[EvidenceItem], limits: EvidenceSettings = _EVIDENCE,
                        questions: list[str] | None = None, lead_ins: dict[str, str] | None = None
                        ) -> list[Requirement]:
    """Requirement sentences of the evidence chunks, in evidence order, numbered per answer (quote
    lengths: `limits`, the run's `Settings.evidence`). `questions`: the parts asked; a sentence that states
    the time or amount one of them asks for alone is a candidate whatever its modality. `lead_ins`: chunk id ->
    the lead-in of the list its opening points go on (`list_lead_ins`)."""
    numbering = _Numbering()
    seen: set[str] = set()
    out: list[Requirement] = []
    for chunk in chunks:
        text = chunk["text"]
        spans = split_sentences(text)
        # A table's rows under their header row are requirements whatever their words (a matrix of what each class
        # of data needs, a severity's SLA); the header row and the separator are not.
        headers = {i: h for i, s in enumerate(spans) if (h := table_header(text, s.start)) is not None}
        in_table = {i for i, s in enumerate(spans) if text.startswith("|", s.start)}
        # A spreadsheet row's other cells ("Testing Procedure(s): Checking for Weaknesses in Third Party Libraries",
        # "Level 2: \u2713") describe the row; its requirement is its text. Such a line is a candidate only where
        # it states the time or amount a part asks ("Review frequency: Annually" to "how often").
        described = {i for i, s in enumerate(spans) if _describes_row(chunk, text[s.start:s.end])
                     and not (questions and states_what_is_asked(questions, text[s.start:s.end]))}
        # The points a chunk opens with go on a list whose lead-in the chunk before holds ("(e) approve and
        # periodically review ...;" under "... the management body shall:"): each is read with that lead-in.
        lead_in = (lead_ins or {}).get(chunk["chunk_id"], "")
        led = opening_points(text) if lead_in else 0
        modal = [i for i, s in enumerate(spans) if i not in in_table and i not in described
                 and (classify_modality(text[s.start:s.end], source_type=chunk["source_type"]) is not Modality.NONE
                      or i < led and _under_lead_in(text[s.start:s.end], lead_in, chunk["source_type"])
                      is not Modality.NONE)]
        # A policy states its rule in the present tense beside its duties ("Information systems automatically
        # lock users ... after 2 minutes or less of inactivity" among "Users are required to ..."): to "how
        # fast", that sentence is the answer, and Verify decides as for any other quote.
        # Not a table's row: its cells mean what the header row says, which the quote would not hold.
        if modal and questions:
            modal = sorted({*modal, *(i for i, s in enumerate(spans) if i not in in_table
                                      and states_what_is_asked(questions, text[s.start:s.end]))})
        # ... and so is a sentence that frees someone from a duty ("A controller is not required to communicate a
        # breach to data subjects if the personal data was encrypted ..."): the exception to the duty beside it
        if modal:
            modal = sorted({*modal, *(i for i, s in enumerate(spans) if i not in in_table and i not in described
                                      and exempts(text[s.start:s.end]))})
        # A passage that imposes nothing (a definition, a statement of what the rules provide) may still
        # be what answers: its sentences are candidates too, and Verify decides as for any other quote.
        # (Rows whose header another chunk holds are read as any other text.)
        # A list whose points are duties is offered with its lead-in too, though the lead-in imposes nothing itself
        # ("Upon any expiration or termination:" over "b. ... Provider will delete Customer Content ..."): the
        # lead-in says when the points apply, and a broad question wants the list whole.
        modal = sorted({*modal, *(k for i in modal if (k := lead_in_of(text, spans, i, limits.max_quote_words))
                                  is not None and k not in in_table)})
        chosen = sorted({*modal, *headers}) if modal else [
            i for i in range(len(spans)) if (i in headers or not (headers and i in in_table)) and i not in described
            and not is_table_separator(text[spans[i].start:spans[i].end])]  # "|---|:---:|" holds no text
        ran_on = 0  # where the last lead-in's quote, run on over its points, ends
        for i in chosen:
            span = spans[i]
            if i in headers:
                start, end = span
                if normalize_ws(text[start:end]) not in seen:
                    seen.add(normalize_ws(text[start:end]))
                    head = text[headers[i][0]:headers[i][1]]
                    out.append(_requirement(chunk, numbering, start, end, False, limits, origin="a table row: ",
                                            table_header=head))
                continue
            if amends(text[span.start:span.end]):  # its own words, not the other act's text it inserts
                start, lead, end = span.start, 0, span.end
            else:
                start, lead = with_context(text, spans, i)
                end = with_list(text, spans, i, limits.max_quote_words)
                if span.start < ran_on:  # a list nested in one already quoted: the outer quote holds its start,
                    end = span.end  # and its points past the outer quote's end are quoted one by one, not twice
                elif end > span.end:
                    ran_on = end
            cut = excerpt(text, start, end, limits, lead)
            if cut is None or normalize_ws(text[cut[0]:cut[1]]) in seen:
                continue
            seen.add(normalize_ws(text[cut[0]:cut[1]]))
            out.append(_requirement(chunk, numbering, cut[0], cut[1], cut != (start, end), limits,
                                    sentence_start=span.start, sentence_end=span.end,
                                    lead_in=lead_in if i < led else ""))
            # The points of a list the excerpt could not hold are offered one by one: each is a duty of the
            # lead-in ("shall designate ... where: ... (b) the core activities ... consist of ..."), with its
            # modality.
            for a, b in points_after(text, cut[1], end):
                point = excerpt(text, a, b, limits, whole=False)
                if point is not None and normalize_ws(text[point[0]:point[1]]) not in seen:
                    seen.add(normalize_ws(text[point[0]:point[1]]))
                    out.append(_requirement(chunk, numbering, point[0], point[1], True, limits,
                                            origin=POINT_OF_LIST, sentence_start=span.start,
                                            sentence_end=span.end))
            # A long sentence whose time falls outside its excerpt ("... is reinstated permanently if ...,
            # and you cure the violation prior to 30 days after ...") is offered around the time too: a
            # question that asks when needs it, and Verify chooses between them for the question asked.
            time = next((m for m in PERIOD.finditer(text, span.start, span.end) if m.start() >= cut[1]), None)
            again = excerpt(text, start, end, limits, lead, anchor_at=time.start()) if time else None
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


def _unlocated(proposal: ProposedQuote, chunk: EvidenceItem | None, rid: str) -> Requirement:
    """A proposal that is not verbatim text of a known chunk: kept on record, rejected as not_verbatim."""
    known: dict[str, Any] = dict(chunk or {})
    return Requirement(
        requirement_id=rid, source_type=known.get("source_type", "unknown"), document_id=known.get("document_id", ""),
        document_version=known.get("document_version", 0), document_title=known.get("document_title", ""),
        section_path=known.get("section_path", ""), chunk_id=proposal.chunk_id, char_start=0, char_end=0,
        exact_quote=proposal.quote, extraction_confidence="low",
        modality=classify_modality(proposal.quote, source_type=known.get("source_type", "")),
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
        cut = excerpt(chunk["text"], *span, limits, whole=False) or span  # a short quote stays whole; Verify judges it
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
    return any(classify_modality(chunk["text"][s.start:s.end], source_type=chunk["source_type"]) is not Modality.NONE
               for s in split_sentences(chunk["text"]))


def with_rejected_proposals(rules: list[Requirement], proposals: list[Requirement]) -> list[Requirement]:
    """The rules extraction, then the model's unlocated proposals (kept on record), numbered after it."""
    numbering = _Numbering()
    for r in rules:
        numbering.counters[r.requirement_id[4]] = max(numbering.counters[r.requirement_id[4]],
                                                      int(r.requirement_id[5:]))
    return [*rules, *(p.model_copy(update={"requirement_id": numbering.next(p.source_type)}) for p in proposals)]


def list_lead_ins(conn: Any, chunks: list[EvidenceItem]) -> dict[str, str]:
    """Chunk id -> the lead-in of the list that the chunk's opening points go on, where the chunk before it in
    the same section ends inside that list (`agents.quotes.open_lead_in`): a list longer than a chunk is cut
    between its points, and a point read without its lead-in imposes nothing."""
    opening = [c["chunk_id"] for c in chunks if opens_with_point(c["text"])]
    if conn is None or not opening:
        return {}
    by_id = {c["chunk_id"]: c for c in chunks}
    out: dict[str, str] = {}
    for chunk_id, around in store.adjoining_chunks(conn, opening).items():
        mine = by_id[chunk_id]
        before = next((c for c in around if c.ordinal == mine.get("ordinal", -2) - 1
                       and c.section_path == mine["section_path"]), None)
        if before is not None and (lead := open_lead_in(before.text, mine["text"])) is not None:
            out[chunk_id] = lead
    return out


def extract_node(state: EvidenceState, deps: Deps) -> dict[str, Any]:
    """Graph node: requirement sentences of each part's candidate chunks (the parts ranked by
    `agents.select.select_node`). Rules: modal sentences. LLM: proposed quotes, located and numbered by code.

    The model sees only the candidate chunks that state a requirement. When not one of its proposals
    is verbatim text of its chunk, the step falls back to rules (recorded), keeping the proposals on
    record as rejected.
    """

    limits = deps.settings.evidence
    chunks = candidate_chunks(state["evidence"], [Part.model_validate(p) for p in state["parts"]])
    questions = [p["question"] for p in state["parts"]]
    lead_ins = list_lead_ins(getattr(deps, "conn", None), chunks)
    needed = [c for c in chunks if states_requirement(c)] if deps.llm is not None else []
    if not needed:
        return evidence_update([], 0, requirements=[r.model_dump(mode="json") for r in extract_from_chunks(
            chunks, limits=limits, questions=questions, lead_ins=lead_ins)])
    unlocated: list[Requirement] = []

    def accept(reply: ExtractReply) -> list[Requirement] | None:
        found = requirements_from_proposals(reply.quotes, needed, limits)
        if found and all(r.char_end == 0 for r in found):
            unlocated.extend(found)
            return None
        return found

    requirements, fallbacks, calls = llm_or_rules_within(
        deps, evidence_allowance(state, deps), "extract", "extract", ExtractReply,
        rules=lambda: extract_from_chunks(chunks, limits=limits, questions=questions, lead_ins=lead_ins),
        accept=accept,
        question=state["stem"], chunks=[_prompt_chunk(c) for c in needed])
    if unlocated:
        requirements = with_rejected_proposals(requirements, unlocated)
        fallbacks = [f"extract: none of the {len(unlocated)} quotes the llm proposed is verbatim text of its "
                     "chunk; rules extraction used (the proposals stay on record, rejected not_verbatim)"]
    return evidence_update(fallbacks, calls, requirements=[r.model_dump(mode="json") for r in requirements])
