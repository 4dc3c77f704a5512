"""Select: which evidence chunks answer each part of the question, by the learned relevance model.

Each part is searched on its own (the features the rank head was calibrated on: one search of the
question, its fused scores and ranks), the research evidence that search did not return joins as
unranked candidates, and every candidate is scored against the part (`RelevanceModel.rank`: the
encoder's cosine to the stored vector, key-term and phrase coverage, heading coverage, the retrieval
score and ranks), and
the answer cites the chunks within `select_gap` of the best and above `select_floor`, at most
`select_max` (calibrated on held-out ObliQA questions: bench/calibrate_relevance.py). A few more
chunks below the cut are extracted too, so the record shows what was weighed and set aside, and so
are the part's searched chunks of other documents that impose the same duty as a chosen chunk with
other figures (however they rank): verify cites those so that a conflict is shown, never hidden.
Binding text first: beside a binding candidate, a recital or the preamble weighs `RECITAL_WEIGHT` of its score.

With `model=None` (tests of the rest of the stage) every chunk is a selected candidate, in research order.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, ConfigDict, Field

from agents.asks import asks_typed, states_what_is_asked
from agents.crossref import evidence_entry
from agents.duties import conflicting_figures
from agents.naming import (
    foreign,
    named_documents,
    named_groups,
    shared,
    title_names,
    title_words,
    without_kind,
    without_names,
)
from agents.parts import broad_topic, is_broad
from agents.provisions import asked_provisions, named_provisions
from agents.quotes import non_binding
from agents.state import EvidenceItem, EvidenceState
from engine.config import SOURCE_TYPES, AnswerSettings, EvidenceSettings
from engine.ingest.sentences import split_sentences
from engine.relevance.candidate import Candidate, candidate
from engine.relevance.protocol import RelevanceRanker
from engine.search import store
from engine.search.retrieval import Filters, stored_cosines
from engine.terms import key_terms, tokenize
from engine.text import withdrawn

if TYPE_CHECKING:
    from agents.deps import Deps
    from engine.search.retrieval import Retriever

_EVIDENCE = EvidenceSettings()  # the defaults; select_node passes its settings' group
LAW_TYPES = ("statute", "regulation")
_OVERLAP = AnswerSettings().same_duty_overlap
MAX_RIVALS = 3  # chunks kept below the cut for a possible conflict, per part
RECITAL_WEIGHT = 0.5  # a recital's share of its score beside binding candidates (see rank_part)


class RankedChunk(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    chunk_id: str
    relevance: float = Field(description="Probability that the chunk answers the part (learned relevance model)")
    selected: bool = Field(description="Within the selection cut: its verified quotes may be cited")
    section_of: str | None = Field(default=None, description="For a broad question: the chosen chunk whose section "
                                                             "this chunk completes (it takes that chunk's relevance)")
    law: bool = Field(default=False, description="For a broad question: chosen by the search of the law alone")
    rival: bool = Field(default=False, description="For a part that asks a time or an amount: found by searching the "
                                                   "source family (law, or the rest) that no chosen passage is of; "
                                                   "cited only where it gives another answer to the same duty")
    provision: bool = Field(default=False, description="Of the provision the part names and asks about whole "
                                                       "(agents.provisions): chosen as the text asked about, its "
                                                       "relevance 1.0")


class Part(BaseModel):
    """One part of the question and its ranked evidence."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    question: str
    ranked: list[RankedChunk] = Field(description="Candidates for extraction, best first")
    best: float = 0.0
    named: list[str] = Field(default_factory=list, description="The documents the part names (agents.naming), or "
                                                               "where it names none, those the part before "
                                                               "names: its own search looked in them alone")
    foreign: list[str] = Field(default_factory=list, description="The texts the part asks under by name that no "
                                                                 "document in scope is or mentions (agents.naming."
                                                                 "foreign): nothing in scope answers it")

    def relevance_of(self, chunk_id: str) -> RankedChunk | None:
        return next((r for r in self.ranked if r.chunk_id == chunk_id), None)


def cut(probs: list[float], floor: float, gap: float, most: int) -> list[int]:
    """Indices cited: within `gap` of the best, at least `floor`, at most `most`, best first. Pure."""
    if not probs:
        return []
    order = sorted(range(len(probs)), key=lambda i: (-probs[i], i))
    best = probs[order[0]]
    return [i for i in order if probs[i] >= floor and probs[i] >= best - gap][:most]


def cut_limits(question: str, floor: float, gap: float, most: int, limits: EvidenceSettings = _EVIDENCE
               ) -> tuple[float, float, int]:
    """The cut's (floor, gap, most) for a part: the model's, or for a broad question every passage above
    `limits.broad_floor`, up to `limits.broad_max_passages` (every duty the sources state, not the best one
    to three passages). Pure."""
    if is_broad(question):
        return min(floor, limits.broad_floor), 1.0, limits.broad_max_passages
    return floor, gap, most


def _candidates(question: str, evidence: list[EvidenceItem], model: RelevanceRanker, conn: Any) -> list[Candidate]:
    cosines = stored_cosines(conn, model, question, [e["chunk_id"] for e in evidence])
    return [candidate(id=e["chunk_id"], text=e["text"], heading=e.get("section_heading", ""),
                      cosine=cosines.get(e["chunk_id"]), score=e.get("score") or 0.0, rank=i,
                      dense_rank=e.get("dense_rank"), lexical_rank=e.get("lexical_rank"),
                      document_id=e.get("document_id"), ordinal=e.get("ordinal"), neighbour_of=e.get("neighbour_of"))
            for i, e in enumerate(evidence, 1)]


def part_candidates(question: str, evidence: list[EvidenceItem], retriever: Retriever, k: int,
                    filters: Filters | None = None) -> tuple[list[EvidenceItem], list[EvidenceItem], int]:
    """A part's candidates: its own search (top k, with the retrieval scores and ranks the rank head was
    calibrated on), then the research evidence that search did not return (cross-references, later
    steps: candidates too, but unranked). Returns (candidates, the entries new to the run, how many the
    part's own search returned: the first ones of the candidates)."""
    known = {e["chunk_id"]: e for e in evidence}
    hits = retriever.search(question, k=k, filters=filters)
    searched, fresh = [], []
    for h in hits:
        entry = evidence_entry(h.chunk, score=h.score, query=question, dense=h.dense_score, lexical=h.lexical_score,
                               hit=h)
        searched.append(entry)
        if h.chunk_id not in known:
            fresh.append(entry)
    seen = {e["chunk_id"] for e in searched}
    rest: list[EvidenceItem] = [{**e, "score": 0.0, "dense_rank": None, "lexical_rank": None}
            for e in evidence if e["chunk_id"] not in seen]
    return searched + rest, fresh, len(searched)


def _sentences(text: str) -> list[str]:
    return [text[s.start:s.end] for s in split_sentences(text)]


def rivals(evidence: list[EvidenceItem], chosen: list[int], others: list[int], overlap: float = _OVERLAP,
           most: int = MAX_RIVALS) -> list[int]:
    """Of `others`, the chunks of another document than every chosen chunk with a sentence imposing the
    same duty as a sentence of a chosen chunk with other figures (agents.duties). Pure."""
    documents = {evidence[i].get("document_id") for i in chosen}
    chosen_sentences = [s for i in chosen for s in _sentences(evidence[i]["text"])]
    found: list[int] = []
    for i in others:
        if len(found) >= most:
            break
        if evidence[i].get("document_id") in documents:
            continue
        if any(conflicting_figures(a, b, overlap) for b in _sentences(evidence[i]["text"]) for a in chosen_sentences):
            found.append(i)
    return found


def rank_part(index: int, question: str, evidence: list[EvidenceItem], model: RelevanceRanker | None, conn: Any,
              searched: int | None = None, limits: EvidenceSettings = _EVIDENCE, overlap: float = _OVERLAP) -> Part:
    """Score every candidate chunk for one part and mark the selection cut. The first `searched`
    candidates come from the part's own search, in its order; the rest are unranked. `searched=None`:
    evidence given without retrieval scores, judged by the pair head with the gate as the floor.
    `limits.extra_candidates` chunks below the cut are kept too (extracted, judged, rejected on record),
    and the chunks that may conflict with a chosen one (`rivals`, `overlap` being the run's
    `Settings.answer.same_duty_overlap`)."""
    if model is None or not evidence:
        ranked = [RankedChunk(chunk_id=e["chunk_id"], relevance=0.0, selected=True) for e in evidence]
        return Part(index=index, question=question, ranked=ranked)
    t = model.thresholds
    if searched is None:  # given evidence (run_evidence): no retrieval scores, so each passage alone
        probs = model.pair_probabilities(question, [e["text"] for e in evidence],
                                         [e.get("section_heading", "") for e in evidence])
        floor = float(t["gate"])
    else:
        candidates = _candidates(question, evidence, model, conn)
        # The rank feature is the position by fused retrieval score, as the rank head was fitted on
        # (bench/calibrate_relevance.py searches without reranking); the part's own search may have been
        # reranked by this same head, and its order fed back would count the head's verdict twice.
        # A neighbour the search's reranking added was not found by it: unranked, as the context head was fitted.
        by_fused = sorted((i for i in range(searched) if not candidates[i]["neighbour"]),
                          key=lambda i: (-candidates[i]["score"], i))
        position = {i: r for r, i in enumerate(by_fused, 1)}
        for i, c in enumerate(candidates):
            c["rank"] = position.get(i)
        probs = model.rank(question, candidates)
        # Binding text first: a recital or the preamble says why the act provides what it does, and ranks by
        # topic beside the article that provides it; where a binding passage is among the candidates, a recital
        # weighs RECITAL_WEIGHT of its score
        recital = [non_binding(e) == "recital" for e in evidence]
        if not all(recital[:searched]):
            probs = [p * RECITAL_WEIGHT if recital[i] else p for i, p in enumerate(probs)]
        floor = float(t["select_floor"])
    chosen = cut(probs, *cut_limits(question, floor, float(t["select_gap"]), int(t["select_max"]), limits))
    order = sorted(range(len(probs)), key=lambda i: (-probs[i], i))
    keep = order[: len(chosen) + limits.extra_candidates]
    keep += rivals(evidence, chosen, [i for i in order[len(keep):] if searched is None or i < searched], overlap)
    ranked = [RankedChunk(chunk_id=evidence[i]["chunk_id"], relevance=round(probs[i], 4), selected=i in chosen)
              for i in keep]
    return Part(index=index, question=question, ranked=ranked, best=round(max(probs), 4))


def law_filters(scope: Filters | None) -> Filters | None:
    """The search of the law alone within an audit's `scope`: its statutes and regulations (None: the scope
    holds none)."""
    if scope is None:
        return Filters(source_types=LAW_TYPES)
    types = tuple(t for t in scope.source_types if t in LAW_TYPES) if scope.source_types else LAW_TYPES
    return Filters(source_types=types, document_ids=scope.document_ids, current_only=scope.current_only) if types \
        else None


def named_scope(scope: Filters | None, named: list[str]) -> Filters | None:
    """The audit's `scope` kept to the documents a part names, where it names any (else the scope as it is): the
    law's own search for a broad part that names a text ("What details must we give the FTC ...?") searches that
    text's duties, not another regulation's."""
    return within(scope, named) if named else scope


def within(scope: Filters | None, documents: list[str]) -> Filters:
    """The audit's `scope` (its source types, current versions or not) kept to `documents`."""
    return replace(scope or Filters(), document_ids=tuple(documents))


def family_filters(scope: Filters | None, law: bool) -> Filters | None:
    """The search of one source family within an audit's `scope`: the law (statutes, regulations) or the rest
    (policies, guidance, standards, contracts); None where the scope holds none of it."""
    if law:
        return law_filters(scope)
    allowed = scope.source_types if scope is not None and scope.source_types else SOURCE_TYPES
    types = tuple(t for t in allowed if t not in LAW_TYPES)
    if not types:
        return None
    return Filters(source_types=types, document_ids=scope.document_ids if scope else (),
                   current_only=scope.current_only if scope else True)


def with_rivals(part: Part, other: Part, most: int) -> Part:
    """A part with the best `most` passages of its search of the other source family (`other`: those that state
    what the part asks) that it lacks, as rivals: weighed for another answer to the same duty (a policy's "at
    least monthly" beside the law's "at least once every seven days" that its own search ranked far below), never
    chosen by the selection cut. Their relevance is at most the part's best, so the answer's confidence does not
    move."""
    known = {r.chunk_id for r in part.ranked}
    fresh = [r for r in other.ranked if r.chunk_id not in known][:most]
    return part.model_copy(update={"ranked": [*part.ranked, *(
        r.model_copy(update={"selected": False, "rival": True, "relevance": min(r.relevance, part.best)})
        for r in fresh)]})


def with_law(part: Part, law: Part, most: int, *, law_search: bool = True) -> Part:
    """A broad part with the passages its search of the law alone chose (`law`, ranked by the same model: at most
    `most`), beside those of the whole search: the law's duties first, whatever the policies around it say at
    greater length ("What must we do when a security incident occurs?": a regulation's reporting duties
    outranked by a policy's playbook). Relevance stays on the whole search's scale (a list of the law alone puts
    its best passage first, and so scores it higher): a passage already weighed keeps its own, a new one takes at
    most the part's best, so neither the order of the rest nor the answer's confidence moves. `law_search`: False
    for another search within some documents alone (`named_groups`), whose passages are not the law's, and which
    each keep the relevance that search gives them (at most the part's best): the answer in the text named."""
    chosen = {r.chunk_id: r for r in law.ranked if r.selected}
    chosen = dict(list(chosen.items())[:most])
    if not chosen:
        return part
    # a passage of a text the question names keeps the relevance of that text's own search (its answer there)
    ranked = [r.model_copy(update={"selected": True, "law": law_search or r.law} | (
        {} if law_search else {"relevance": max(r.relevance, min(chosen[r.chunk_id].relevance, part.best))}))
        if r.chunk_id in chosen else r for r in part.ranked]
    known = {r.chunk_id for r in part.ranked}
    return part.model_copy(update={"ranked": [*ranked, *(
        r.model_copy(update={"law": law_search, "relevance": min(r.relevance, part.best)})
        for c, r in chosen.items() if c not in known)]})


def with_sections(part: Part, pool: list[EvidenceItem], conn: Any, limits: EvidenceSettings = _EVIDENCE
                  ) -> tuple[Part, list[EvidenceItem]]:
    """A broad part with the rest of each chosen passage's section (`limits.broad_section_max`): the paragraphs
    of an article, the items of a policy section are one matter, and a broad question asks for every duty on
    it, whatever words each states it in. Each such chunk takes its chosen passage's relevance and says whose
    section it completes (`section_of`); returns the part and the evidence entries new to the run."""
    if not limits.broad_section_max or not is_broad(part.question):
        return part, []
    by_id = {e["chunk_id"]: e for e in pool}
    anchors: dict[tuple[str, str], RankedChunk] = {}
    law: set[tuple[str, str]] = set()
    for r in part.ranked:
        entry = by_id.get(r.chunk_id)
        if r.selected and entry and entry.get("section_path") and non_binding(entry) is None:
            anchors.setdefault((entry["document_id"], entry["section_path"]), r)
            if entry.get("source_type") in LAW_TYPES:
                law.add((entry["document_id"], entry["section_path"]))
    # The law's sections beside a chosen one, under the same heading, whose own heading names the subject ("7.2
    # Incident reporting" beside "7.4 Incident records" to "What must we do when a security incident occurs?")
    topic = set(broad_topic(part.question))
    for key, siblings in store.sibling_sections(conn, sorted(law)).items():
        for path in siblings:
            if topic & set(tokenize(path.rsplit(" > ", 1)[-1])):
                anchors.setdefault((key[0], path), anchors[key])
    known = {r.chunk_id: r for r in part.ranked}
    completes: dict[str, str] = {}  # a candidate the cut left out -> the chosen passage whose section it is in
    added_ranked, added = [], []
    around = {key: r.chunk_id for key, r in anchors.items()}
    for key, chunks in store.section_chunks(conn, list(anchors), most=limits.broad_section_max, around=around,
                                            window=limits.broad_section_window).items():
        anchor = anchors[key]
        for chunk in chunks:
            if chunk.id in known:
                # found by the search too, but under the cut ("(b) Privileged accounts shall be reviewed ..."
                # ranked far below "(a) ... review the access rights of every user"): the section's all the same
                if not known[chunk.id].selected and known[chunk.id].section_of is None:
                    completes.setdefault(chunk.id, anchor.chunk_id)
                continue
            known[chunk.id] = anchor
            added_ranked.append(RankedChunk(chunk_id=chunk.id, relevance=anchor.relevance, selected=True,
                                            section_of=anchor.chunk_id))
            if chunk.id not in by_id:
                added.append(evidence_entry(chunk, score=0.0, query=part.question))
    relevance = {r.chunk_id: r.relevance for r in part.ranked}
    ranked = [r.model_copy(update={"selected": True, "section_of": completes[r.chunk_id],
                                   "relevance": max(r.relevance, relevance[completes[r.chunk_id]])})
              if r.chunk_id in completes else r for r in part.ranked]
    return part.model_copy(update={"ranked": [*ranked, *added_ranked]}), added


_SECTION_CHUNKS = 2  # chunks of each binding section beside a chosen commentary weighed (a control is one or two)


def with_binding(part: Part, pool: list[EvidenceItem], conn: Any, limits: EvidenceSettings = _EVIDENCE
                 ) -> tuple[Part, list[EvidenceItem]]:
    """Binding text first: a chosen passage of commentary that stands under a heading of its own ("Caching 802.1X
    authentication outcomes > Overview (commentary)", a catalogue's explanation of a topic) brings the binding
    sections beside it under the same heading (the topic's controls, `limits.commentary_sections` of them) as
    candidates, unchosen and at no relevance: the commentary's words rank above the control's terse statement
    ("If PMK caching is used, the PMK caching period should not be set to greater than 1440 minutes" above "The PMK
    caching period is not set to greater than 1440 minutes (24 hours)"), and where a control states the matter the
    commentary explains, verify cites it first (agents.verify._binding_first). Returns the part and the evidence
    entries new to the run."""
    if not limits.commentary_sections:
        return part, []
    by_id = {e["chunk_id"]: e for e in pool}
    anchors = {(entry["document_id"], entry["section_path"]) for r in part.ranked if r.selected
               and (entry := by_id.get(r.chunk_id)) and " > " in (entry.get("section_path") or "")
               and non_binding(entry) == "discussion"}
    if not anchors:
        return part, []
    beside = {(document_id, path) for (document_id, _), paths in store.sibling_sections(conn, sorted(anchors)).items()
              for path in paths[:limits.commentary_sections]}
    known = {r.chunk_id for r in part.ranked}
    added_ranked, added = [], []
    for chunks in store.section_chunks(conn, sorted(beside - anchors), most=_SECTION_CHUNKS).values():
        for chunk in chunks:
            entry = by_id.get(chunk.id) or evidence_entry(chunk, score=0.0, query=part.question)
            if chunk.id in known or non_binding(entry) is not None:
                continue
            known.add(chunk.id)
            added_ranked.append(RankedChunk(chunk_id=chunk.id, relevance=0.0, selected=False))
            if chunk.id not in by_id:
                added.append(entry)
    return part.model_copy(update={"ranked": [*part.ranked, *added_ranked]}), added


def provision_titles(conn: Any, question: str) -> frozenset[str]:
    """The key terms of the titles of the provisions `question` names, their own headings (not their subdivisions'):
    "What does Article 12 say about record-keeping?" names Article 12 by its title as well as its number, and asks
    nothing else of it (agents.provisions.asked_provisions). Empty where it names none."""
    terms: set[str] = set()
    for _, number in named_provisions(question):
        own = number.rstrip(".")
        for chunk in store.chunks_by_section(conn, own, limit=20):  # its own paragraphs come first
            found = (chunk.section_number or "").rstrip(".")
            if found == own or found.startswith(f"{own}("):
                terms.update(key_terms(chunk.section_heading or ""))
    return frozenset(terms)


# The kinds of provision a text's body numbers, and the headings of the parts appended to it that number their
# paragraphs afresh
_BODY_KIND = re.compile(r"(?:article|section|regulation|rule|clause|\u00a7)", re.IGNORECASE)
_APPENDED = re.compile(r"(?:schedule|annex|appendix)\b", re.IGNORECASE)


def with_provisions(part: Part, numbers: list[str], evidence: list[EvidenceItem], deps: Deps,
                    limits: EvidenceSettings, named: list[str]) -> tuple[Part, list[EvidenceItem]]:
    """A part that asks about provisions whole ("What does Article 11 require?": agents.provisions) chooses their
    passages (`limits.broad_section_max` each, in the documents the part names, else in the search's scope), in the
    text's order, each the text asked about (relevance 1.0: the ranking and the gate read a number and "require",
    and score the article the question names as off it); the search's own candidates stay on record, not chosen.
    Returns the part and the evidence entries new to the run; the part as it was where no document of the scope
    holds such a provision."""
    scope = deps.retriever.scope
    allowed = set(named) or (set(scope.document_ids) if scope is not None and scope.document_ids else None)
    # a withdrawn sub-provision says nothing of the one asked about ("What does FS-1 require?" is not answered with
    # FS-1(2)'s "[Withdrawn: Incorporated into FS-1.]"); asked about itself, its notice is the answer
    def held(number: str) -> list[Any]:
        """The chunks of provision `number`, or of the nearest one it lies in that a block of its own holds (a
        point set in its paragraph's text, "§ 64.2011(e)(5)" in "(e) Definitions. (1) ... (5) ..."); a control's
        enhancement is no part of its base control ("AC-2(1)" is not answered with AC-2). A paragraph that a text
        numbers on across its guidelines ("paragraph 38", cited 12(38) under Guideline 12) is the one block numbered
        so within a provision, where no block is numbered 38 and only one is numbered X(38)."""
        while True:
            found = [c for c in store.chunks_by_section(deps.conn, number, document_ids=allowed,
                                                        limit=limits.broad_section_max or 12)
                     if (c.section_number or "").rstrip(".") == number.rstrip(".") or not withdrawn(c.text)]
            outer = re.sub(r"\([^()]*\)$", "", number)
            if found or outer == number or not (outer[:1].isdigit() or "(" in outer):
                break
            number = outer
        if not found and number.isdigit():
            within = {n for d, n in store.numbered_within(deps.conn, number) if allowed is None or d in allowed}
            if len(within) == 1:
                return held(within.pop())
        return found

    # "regulation 10", "Article 5": a provision of the body, not the paragraph so numbered in a schedule or an annex
    # ("Schedule 2 > 10 The digital infrastructure subsector"), where the body has one
    body = {number for words, number in named_provisions(part.question) if _BODY_KIND.match(words)}

    def in_body(found: list[Any], number: str) -> list[Any]:
        kept = [c for c in found if not any(_APPENDED.match(h) for h in (c.section_path or "").split(" > "))]
        return kept if number in body and kept else found

    chunks = [c for number in numbers for c in in_body(held(number), number)]
    chunks = list({c.id: c for c in chunks}.values())
    if not chunks:
        return part, []
    known = {e["chunk_id"]: e for e in evidence}
    entries = [known.get(c.id) or evidence_entry(c, score=0.0, query=part.question, via="the provision asked about")
               for c in chunks]
    chosen = [RankedChunk(chunk_id=e["chunk_id"], relevance=1.0, selected=True, provision=True) for e in entries]
    ids = {r.chunk_id for r in chosen}
    rest = [r.model_copy(update={"selected": False}) for r in part.ranked if r.chunk_id not in ids]
    return (part.model_copy(update={"ranked": [*chosen, *rest], "best": 1.0}),
            [e for e in entries if e["chunk_id"] not in known])


def _search_alone(index: int, question: str, flt: Filters, deps: Deps, model: RelevanceRanker,
                  limits: EvidenceSettings, *, whole: bool = False
                  ) -> tuple[Part, list[EvidenceItem], list[EvidenceItem]] | None:
    """A part's second search, within `flt` alone (the law, the other source family), ranked by the same model:
    (the part it makes, its entries new to the run, what it found); None where it finds nothing. `whole`: the
    part keeps the whole order, not only the cut and a few candidates."""
    found, fresh, n = part_candidates(question, [], deps.retriever, deps.settings.rerank_depth, flt)
    if not n:
        return None
    ranked = rank_part(index, question, found[:n], model, deps.conn, searched=n,
                       limits=limits.model_copy(update={"extra_candidates": n}) if whole else limits,
                       overlap=deps.settings.answer.same_duty_overlap)
    return ranked, fresh, found[:n]


def _searched_too(pool: list[EvidenceItem], added: list[EvidenceItem], evidence: list[EvidenceItem],
                  fresh: list[EvidenceItem], found: list[EvidenceItem]) -> list[EvidenceItem]:
    """After a part's second search (the law alone, the other source family): its entries new to the run join
    `added` (in place), and the part's pool with what that search `found` is returned."""
    known = {e["chunk_id"] for e in [*evidence, *added]}
    added.extend(e for e in fresh if e["chunk_id"] not in known)
    pooled = {e["chunk_id"] for e in pool}
    return [*pool, *(e for e in found if e["chunk_id"] not in pooled)]


def relevance_model(deps: Deps) -> RelevanceRanker:
    """The learned relevance model (shared with the retriever). Reranking may be off; the gate and the
    selection always use the model."""
    return deps.retriever.relevance_model()


def select_node(state: EvidenceState, deps: Deps) -> dict[str, Any]:
    """Graph node: each part searched on its own (`part_candidates`) and its candidates ranked and cut
    (`rank_part`); the chunks its search found that research had not join the evidence. Evidence given
    without research (`agents.evidence.run_evidence`: no research steps in its state) is ranked as given."""
    evidence = state["evidence"]
    model = relevance_model(deps)
    limits = deps.settings.evidence
    parts: list[Part] = []
    added: list[EvidenceItem] = []
    researched = bool(cast(dict[str, Any], state).get("steps"))
    titles = store.current_titles(deps.conn) if researched else {}
    scope = deps.retriever.scope
    titles = {d: t for d, t in titles.items() if scope is None or not scope.document_ids or d in scope.document_ids}
    before: list[str] = []  # the documents the part before named
    for i, question in enumerate(state["part_questions"]):
        asked_words = title_words(question, titles) if titles else {}
        proper = shared(store.proper_words(deps.conn, asked_words), asked_words) if asked_words else {}
        named = sorted(named_documents(question, titles, proper))
        # A part that names none asks about the text the part before named ("Can I charge for a warranty on
        # Apache-licensed software, and what do I owe the contributors if I do?")
        named = named or before
        if researched:
            # A part that names documents ("the MPL", "GPLv3", "HIPAA") is searched in them alone, when they
            # hold anything for it; the research's other evidence stays among its candidates, unranked.
            flt = within(scope, named) if named else None
            asked = without_names(question, titles, set(named), proper) if named else question
            pool, fresh, searched = part_candidates(asked, evidence + added, deps.retriever,
                                                    deps.settings.rerank_depth, flt)
            if flt is not None and not searched:
                named, asked = [], question
                pool, fresh, searched = part_candidates(question, evidence + added, deps.retriever,
                                                        deps.settings.rerank_depth)
            added.extend(fresh)
        else:
            pool, searched, asked = evidence, None, question
        # ranked for the question without the names its search kept to; judged later for the question as asked
        part = rank_part(i, asked, pool, model, deps.conn, searched=searched, limits=limits,
                         overlap=deps.settings.answer.same_duty_overlap).model_copy(update={"question": question})
        if researched and limits.named_group_passages and len(groups := named_groups(question, titles, proper)) > 1:
            # Two texts named apart ("HIPAA ... but the Safeguards Rule ..."): each searched on its own, so that the
            # one whose passages rank higher does not hide the other's answer
            for group in groups:
                flt = within(scope, sorted(group))
                if (alone := _search_alone(i, question, flt, deps, model, limits)) is not None:
                    own, fresh, found = alone
                    part = with_law(part, own, limits.named_group_passages, law_search=False)
                    pool = _searched_too(pool, added, evidence, fresh, found)
        if researched and limits.broad_law_passages and is_broad(question) and (
                flt := law_filters(named_scope(scope, named))) is not None:
            if (alone := _search_alone(i, question, flt, deps, model, limits)) is not None:
                law, fresh, found = alone
                part = with_law(part, law, limits.broad_law_passages)
                pool = _searched_too(pool, added, evidence, fresh, found)
        if researched and limits.rival_passages and asks_typed(question) and not is_broad(question):
            # One family chose every passage: the other's own answer to the same time or amount, if it states one,
            # may rank far below (a conflict shown, never hidden)
            selected = {r.chunk_id for r in part.ranked if r.selected}
            chosen = {(e.get("source_type") in LAW_TYPES) for e in pool if e["chunk_id"] in selected}
            if len(chosen) == 1 and (flt := family_filters(scope, not chosen.pop())) is not None and (
                    alone := _search_alone(i, question, flt, deps, model, limits, whole=True)) is not None:
                other, fresh, found = alone
                stating = {e["chunk_id"] for e in found if states_what_is_asked([question], e["text"])}
                part = with_rivals(part, other.model_copy(update={
                    "ranked": [r for r in other.ranked if r.chunk_id in stating]}), limits.rival_passages)
                pool = _searched_too(pool, added, evidence, fresh, found)
        # the words of the titles in question, and the names they give ("ODF" of "Open Document Format ...")
        naming = frozenset(t for d in (named or titles) for t in key_terms(
            f"{titles.get(d, '')} {' '.join(title_names(titles.get(d, '')))}"))
        if researched and (numbers := asked_provisions(question, naming) or asked_provisions(
                question, naming | provision_titles(deps.conn, question))):
            part, more = with_provisions(part, numbers, evidence + added, deps, limits, named)
            added.extend(more)
        if researched:
            part, more = with_sections(part, pool, deps.conn, limits)
            added.extend(more)
            part, more = with_binding(part, pool, deps.conn, limits)
            added.extend(more)
        # "Under PSD2, ...", where no document in scope is PSD2 nor writes its name: another text's passages answer
        # another question, however well they rank ("fees can also be paid online" to a question on payments)
        if researched and (away := foreign(question, titles)):
            bare = {name: without_kind(name) for name in away}
            written = store.names_written(deps.conn, titles, [*away, *(b for b in bare.values() if b)])
            if away := [name for name in away if name not in written and bare[name] not in written]:
                part = part.model_copy(update={"foreign": away})
        parts.append(part.model_copy(update={"named": named}) if named else part)
        before = named
    return {"parts": [p.model_dump(mode="json") for p in parts], "evidence": added}
