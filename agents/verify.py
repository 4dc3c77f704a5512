"""Verify: the grounding gate. A requirement is verified only if it answers the question.

Relevance is decided by the learned relevance model (engine/relevance: a MiniLM fine-tuned on
regulatory question/passage pairs, served by ONNX Runtime, and logistic heads calibrated on
held-out ObliQA questions), in two steps:

* the passage: each part of the question cites only the chunks that `agents.select` put within the
  selection cut (close to the best-scoring chunk, above a floor); quotes of other chunks are
  rejected as `does_not_address_question`, with both scores in the rationale;
* the quote: its passage must pass the gate: the gate head (`engine.relevance.scorer.GATE_FEATURES`,
  fitted on passages the selection chose on every development corpus, bench/calibrate_gate.py) at
  `gate_head` (or the ranking at `gate_confident`), reading the pair head, the cross-encoder, late
  interaction and the passage's ranking beside its part's best; where the scorer has no gate head or
  no cross-encoder is loaded, the pair head at `gate_selected` (calibrated for chosen passages) unless
  the ranking scores the passage at least `gate_confident`; the pair head scores each sentence against
  the part; within a passage, sentences far below its best one are set aside, and code rules still
  apply: a question that asks for a time or an amount (a fee, a fine, a rate) needs a quote that
  states one (agents.asks: `requires_inference`), a quote that leans on preceding
  text ("such records") is `incomplete_quote`, and a sentence that imposes nothing is cited only
  from a passage that imposes nothing either (a definition or statement that answers; its modality
  is `none`).

`judge(question, quote)` is the public, stable form of the same gate for one text alone (a sentence
or a passage): the pair head against its calibrated threshold, then the time and context rules.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.asks import (
    asks_amount,
    asks_policy,
    asks_scope,
    asks_time,
    asks_typed,
    states_scope,
    states_time,
    states_what_is_asked,
    unstated,
)
from agents.duties import (
    ANCHORED_TOPIC_OVERLAP,
    answers_apart,
    conflicting_figures,
    kind,
    kinds_held,
    other_kinds,
    same_matter,
    shared_topic,
    unasked_action,
)
from agents.extract import Modality, Requirement, classify_modality, leads_of_points, states_requirement
from agents.modality import DUTIES, exempts
from agents.parts import broad_topic, is_broad
from agents.quotes import is_verbatim, leans_on_context, long_enough, non_binding
from agents.runtime import evidence_allowance, evidence_update, llm_or_rules_within
from agents.select import Part, RankedChunk, cut, cut_limits, relevance_model
from agents.state import EvidenceItem, EvidenceState
from engine.config import AnswerSettings, EvidenceSettings, load_settings
from engine.ingest.citations import innermost_section
from engine.relevance.model import RelevanceModel
from engine.relevance.protocol import RelevanceGate
from engine.search.embeddings import Embedder
from engine.terms import tokenize
from engine.text import normalize_ws, withdrawn

if TYPE_CHECKING:
    from agents.deps import Deps

class Rejection(StrEnum):
    """Why a candidate requirement is not verified (the string the record keeps)."""

    OFF_QUESTION = "does_not_address_question"  # off the question, below the gate or the selection cut
    INFERENCE = "requires_inference"  # it answers only with more than it says (a time it does not state, ...)
    INCOMPLETE = "incomplete_quote"  # too short, or leaning on preceding text
    NOT_VERBATIM = "not_verbatim"  # not the stored text at its offsets
    REPEATED = "repeated_quote"  # its words are cited within a longer verified quote of the same passage and part


REJECTION_REASONS = tuple(r.value for r in Rejection)
_BELOW_CUT = "its passage is ranked below the selection cut"
_EVIDENCE, _ANSWER = EvidenceSettings(), AnswerSettings()  # the defaults; verify_node passes its settings'
_Key = tuple[str, int]  # (requirement id, part index): a quote is judged for each part whose candidates hold it


class Verdict(BaseModel):
    """The gate's decision on one quote."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verified: bool
    rejection_reason: str | None = Field(default=None, description="One of REJECTION_REASONS when not verified")
    rationale: str
    score: float = Field(description="Relevance: probability that the text answers the question (pair head)")
    features: dict[str, Any] = Field(default_factory=dict)


@lru_cache(maxsize=1)
def _default_model() -> RelevanceModel:
    settings = load_settings()
    return RelevanceModel.for_embedder(settings.relevance_dir, Embedder.from_settings(settings))


def _model_for(embedder: Any) -> RelevanceModel:
    if embedder is None:
        return _default_model()

    return RelevanceModel.for_embedder(load_settings().relevance_dir, embedder)


def _unsaid(question: str, quote: str) -> str | None:
    """What the question asks that the quote does not say (a time, an amount, a party, who does the asked duty),
    or None. Pure."""
    return unstated(question, quote) or unasked_action(question, quote)


def decide(question: str, quote: str, score: float, threshold: float) -> tuple[bool, str | None, str]:
    """(verified, rejection reason, rationale) from the relevance score and the code rules. Pure."""
    if score < threshold:
        return False, Rejection.OFF_QUESTION, f"relevance {score:.3f} is below the gate ({threshold:.3f})"
    if (missing := _unsaid(question, quote)) is not None:
        return False, Rejection.INFERENCE, missing
    if leans_on_context(quote):
        return False, Rejection.INCOMPLETE, "the quote depends on preceding text"
    return True, None, f"answers the question (relevance {score:.3f}, gate {threshold:.3f})"


def judge(question: str, quote: str, *, backend: str = "rules", embedder: Any = None) -> Verdict:
    """Public, stable API: does `quote` (a sentence or a passage) answer `question`?

    `backend` names the reasoning backend; outside a run only the deterministic one exists (the
    learned relevance model plus code rules, no LLM). `embedder` may be any engine Embedder; the
    relevance model's own encoder scores the pair when it is not that encoder.
    """
    if backend != "rules":
        raise ValueError("judge() outside a run supports the rules backend")
    model = _model_for(embedder)
    score = model.pair_probabilities(question, [quote])[0]
    threshold = float(model.thresholds["gate"])
    verified, reason, rationale = decide(question, quote, score, threshold)
    return Verdict(verified=verified, rejection_reason=reason, rationale=rationale, score=round(score, 4),
                   features={"asks_time": asks_time(question), "states_time": states_time(quote, question),
                             "asks_amount": asks_amount(question),
                             "modality": classify_modality(quote).value, "gate": threshold})


class JudgedRequirement(BaseModel):
    """A requirement and the gate's verdict on it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requirement: Requirement
    verified: bool
    rejection_reason: str | None
    rationale: str
    score: float
    decided_by: str = Field(default="rules", description="code (verbatim/length checks), rules (the gate) or llm")
    part: int = Field(default=0, description="The part of the question the requirement was judged against")
    relevance: float | None = Field(default=None, description="Relevance of its passage to the part (selection)")
    also_parts: list[int] = Field(default_factory=list, description="Later parts it answers too, cited for `part` "
                                  "(one list whose points answer both parts)")


def _code_check(req: Requirement, chunks: dict[str, EvidenceItem],
                limits: EvidenceSettings) -> JudgedRequirement | None:
    """What code alone decides, whatever the backend: verbatim at the offsets, and a quote long enough."""
    chunk = chunks.get(req.chunk_id)
    if chunk is None or not is_verbatim(chunk["text"], req.char_start, req.char_end, req.exact_quote):
        return JudgedRequirement(requirement=req, verified=False, rejection_reason=Rejection.NOT_VERBATIM,
                                 rationale="the quote is not the chunk text at its offsets", score=0.0,
                                 decided_by="code")
    if not long_enough(chunk["text"], req.char_start, req.char_end, limits):
        return JudgedRequirement(requirement=req, verified=False, rejection_reason=Rejection.INCOMPLETE,
                                 rationale=f"a quote of fewer than {limits.min_quote_words} words that is not whole "
                                           f"sentences of at least {limits.min_sentence_words}", score=0.0,
                                 decided_by="code")
    return None


def _reject(req: Requirement, reason: str, why: str, score: float, part: int, relevance: float | None,
            by: str = "rules") -> JudgedRequirement:
    return JudgedRequirement(requirement=req, verified=False, rejection_reason=reason, rationale=why, score=score,
                             decided_by=by, part=part, relevance=relevance)


def _part_of(req: Requirement, parts: list[Part]) -> tuple[Part, RankedChunk | None]:
    for part in parts:
        ranked = part.relevance_of(req.chunk_id)
        if ranked is not None:
            return part, ranked
    return parts[0], None


def verify_requirements(parts: list[Part], requirements: list[Requirement], chunks: dict[str, EvidenceItem],
                        model: RelevanceGate, limits: EvidenceSettings = _EVIDENCE, *,
                        same_duty_overlap: float = _ANSWER.same_duty_overlap) -> list[JudgedRequirement]:
    """Code checks, the selection cut per part, then the quote-level gate (see the module docstring).
    `limits` is the run's `Settings.evidence`; `same_duty_overlap` its `Settings.answer.same_duty_overlap`
    (a quote set aside that conflicts with a cited one is cited after all)."""
    judged: dict[str, JudgedRequirement] = {}
    eligible: list[tuple[Requirement, Part, RankedChunk]] = []
    for req in requirements:
        checked = _code_check(req, chunks, limits)
        part, ranked = _part_of(req, parts)
        relevance = ranked.relevance if ranked else None
        if checked is not None:
            judged[req.requirement_id] = checked.model_copy(update={"part": part.index, "relevance": relevance})
        elif (req.modality is Modality.NONE and states_requirement(chunks[req.chunk_id])
              and not states_what_is_asked([part.question], req.exact_quote) and not exempts(req.exact_quote)):
            judged[req.requirement_id] = _reject(req, Rejection.OFF_QUESTION,
                                                 "the text imposes, permits or recommends nothing (its passage has "
                                                 "a sentence that does)", 0.0, part.index, relevance)
        elif front_matter(chunks[req.chunk_id]) and not states_what_is_asked([part.question], req.exact_quote):
            judged[req.requirement_id] = _reject(req, Rejection.OFF_QUESTION,
                                                 "front matter (the document's opening, under its title, where "
                                                 "nothing is required): a title, an author, a copyright or a licence "
                                                 "line answers no question", 0.0, part.index, relevance)
        elif bibliography(chunks[req.chunk_id]) and not _ASKS_WORKS.search(part.question):
            judged[req.requirement_id] = _reject(req, Rejection.OFF_QUESTION,
                                                 "the text's list of the works it cites (its references): it names "
                                                 "documents and requires nothing", 0.0, part.index, relevance)
        elif ranked is None:
            judged[req.requirement_id] = _reject(req, Rejection.OFF_QUESTION,
                                                 "its passage was not among this part's candidates", 0.0, part.index,
                                                 relevance)
        elif part.foreign and not any(p.relevance_of(req.chunk_id) for p in parts if not p.foreign):
            judged[req.requirement_id] = _reject(req, Rejection.OFF_QUESTION, _foreign(part.foreign), 0.0,
                                                 part.index, relevance)
        elif withdrawn(req.exact_quote) and not any(k.provision for p in parts if (k := p.relevance_of(req.chunk_id))):
            judged[req.requirement_id] = _reject(req, Rejection.OFF_QUESTION,
                                                 "it says its provision is withdrawn: that answers a question about "
                                                 "that provision, which this one does not name", 0.0, part.index,
                                                 relevance)
        else:
            if not part.foreign:
                eligible.append((req, part, ranked))
            # ... and for each later part whose candidates hold its passage too: one list or article often answers
            # both parts of a question ("how often are systems scanned, and when are penetration tests due?")
            eligible.extend((req, p, k) for p in parts if p.index != part.index and not p.foreign
                            and (k := p.relevance_of(req.chunk_id)) is not None)
    quoted = _judge_quotes(eligible, model, chunks, limits)
    decided = _selection_cut(eligible, quoted, model, limits)
    # A quote is cited for the first part it answers; one that answers none keeps its first part's verdict, and
    # so does one that a part before repeats (a list's item, cited there with its lead-in).
    firsts = {r.requirement_id: decided[(r.requirement_id, p.index)] for r, p, _ in reversed(eligible)}
    cited = [v.requirement for v in firsts.values() if v.verified]
    for req, _, _ in eligible:
        if req.requirement_id not in judged:
            verdicts = [decided[(req.requirement_id, p.index)] for p in parts
                        if (req.requirement_id, p.index) in decided]
            judged[req.requirement_id] = next(
                (v for v in verdicts if v.verified and (v is firsts[req.requirement_id] or not any(
                    c.chunk_id == req.chunk_id and req.exact_quote in c.exact_quote for c in cited))),
                firsts[req.requirement_id])
    below_cut = {rid for (rid, index), j in quoted.items()
                 if j.verified and judged[rid].part == index and not judged[rid].verified}
    # ... but a rival (agents.select.with_rivals) gives another answer to the part's time only where its quote speaks
    # of the part's subject (at least `limits.broad_topic_coverage` of its terms): the other family's best passage
    # that states a time may state it of another matter ("produce any record ... within five business days" to
    # "How long must transaction records be kept?", "Internet-facing systems shall be scanned for vulnerabilities at
    # least once every week" to "How often does the anti-malware agent scan a machine?"), and is no conflict then
    subjects = {p.index: broad_topic(p.question) for p in parts}
    astray = frozenset(r.requirement_id for r, p, k in eligible if k.rival and not _speaks_of(
        subjects[p.index], set(tokenize(r.exact_quote)), limits.broad_topic_coverage))
    below_cut -= astray
    guidance = frozenset(r.requirement_id for r in requirements if not r.binding and r.chunk_id in chunks
                         and non_binding(chunks[r.chunk_id], r.exact_quote) == "guidance")
    judged.update(_binding_first(judged, guidance))
    judged.update(_conflicting_sources(judged, same_duty_overlap, {p.index: p.question for p in parts}, below_cut,
                                       astray))
    for rid, j in judged.items():  # the later parts a cited quote answers too
        if j.verified and (also := [p.index for p in parts if p.index != j.part
                                    and (v := decided.get((rid, p.index))) is not None and v.verified]):
            judged[rid] = j.model_copy(update={"also_parts": also})
    return [judged[r.requirement_id] for r in requirements]


def _selection_cut(eligible: list[tuple[Requirement, Part, RankedChunk]], quoted: dict[_Key, JudgedRequirement],
                   model: RelevanceGate | None, limits: EvidenceSettings = _EVIDENCE) -> dict[_Key, JudgedRequirement]:
    """Per part, cite the passages within the calibrated gap of the best passage that has a quote
    passing the quote-level checks (a top passage with no citable sentence does not block the next);
    verified quotes of other passages are rejected, with both relevances in the rationale."""
    t = model.thresholds if model is not None else {"select_floor": 0.0, "select_gap": 1.0, "select_max": 99}
    out = dict(quoted)
    for index in {p.index for _, p, _ in eligible}:
        viable = {r.chunk_id: k.relevance for r, p, k in eligible
                  if p.index == index and quoted[(r.requirement_id, index)].verified and not k.rival}
        ids = list(viable)
        question = next(p.question for _, p, _ in eligible if p.index == index)
        # A part that asks for a time or an amount cites what states one: the passages ranked above that state
        # none are already rejected, and the floor, calibrated on lists where the best passage answers, would
        # refuse the one that does ("within 6 months of receipt" ranked under two passages about the same
        # decision that give no time); the gate still decides whether it answers at all.
        typed = asks_typed(question)
        chosen = {ids[i] for i in cut([viable[c] for c in ids], *cut_limits(
            question, 0.0 if typed else float(t["select_floor"]), float(t["select_gap"]), int(t["select_max"]),
            limits))}
        # the law's own choice for a broad question (agents.select.with_law), and the rest of a chosen passage's
        # section with it (agents.select.with_sections)
        chosen |= {r.chunk_id for r, p, k in eligible if p.index == index and k.law and r.chunk_id in viable}
        # a part that asks what a provision says cites that provision (agents.select.with_provisions), nothing else
        if named := {r.chunk_id for r, p, k in eligible if p.index == index and k.provision and r.chunk_id in viable}:
            chosen = named
        chosen |= {r.chunk_id for r, p, k in eligible if p.index == index and k.section_of in chosen
                   and r.chunk_id in viable}
        # The law's statement of a chosen policy quote's matter, under the cut ("Must remote access use MFA?": the
        # Act's "A controller must require multi-factor authentication for any remote access ..." ranked 0.130
        # beside the policy's "Multi-factor authentication must be used for all remote access ..." at 0.837): the
        # law answers first (agents.compose), so the best such passage is cited too, unless a chosen passage is the
        # law's already or the question asks what a policy says. A firm's policy only: a regulator's guidance beside
        # its rules answers as it is (on ObliQA a rule was added beside 7 of 331 answers whose gold is guidance).
        mine = [(r, k) for r, p, k in eligible if p.index == index and quoted[(r.requirement_id, index)].verified]
        policy = [r.exact_quote for r, _ in mine if r.chunk_id in chosen and r.source_type == "policy"]
        if (policy and not named and not is_broad(question) and not asks_policy(question)
                and not any(r.requirement_id[4] == "S" for r, _ in mine if r.chunk_id in chosen)):
            law = sorted({(-k.relevance, r.chunk_id) for r, k in mine if r.chunk_id in viable and r.binding
                          and r.requirement_id[4] == "S" and any(same_matter(q, r.exact_quote) for q in policy)})
            chosen |= {c for _, c in law[:1]}
        best = max(viable.values(), default=0.0)
        for req, part, ranked in eligible:
            if part.index != index:
                continue
            verdict = quoted[(req.requirement_id, index)]
            if not verdict.verified or req.chunk_id in chosen:
                continue
            out[(req.requirement_id, index)] = _reject(
                req, Rejection.OFF_QUESTION, f"{_BELOW_CUT} for this part (relevance {ranked.relevance:.3f}; "
                f"best answering passage {best:.3f})", verdict.score, part.index, ranked.relevance)
    return out


def _binding_first(judged: dict[str, JudgedRequirement],
                   guidance: frozenset[str] = frozenset()) -> dict[str, JudgedRequirement]:
    """Binding text first: a part answered by non-binding text alone (a recital, a control's discussion, a note)
    cites the binding quote that states the same matter (agents.duties.same_matter) where the gate or the selection
    cut set it aside: a recital explains the article it goes with ("... a final report within one month of their
    handling of the significant incident" beside the article's own words), and the article is what binds. Not a
    quote set aside for what it does not state (a time, a party) nor one that imposes nothing; the closest one per
    non-binding quote. A regulator's guidance (its REQ-IDs in `guidance`) answers as it is, as beside a policy
    (`_selection_cut`): on ObliQA, whose answers are often the guidance itself, a rule was added beside 20 of 406
    answers and was the answer to none. Returns the changed verdicts."""
    by_part: dict[int, list[JudgedRequirement]] = {}
    for j in judged.values():
        by_part.setdefault(j.part, []).append(j)
    out: dict[str, JudgedRequirement] = {}
    for mine in by_part.values():
        context = [j.requirement for j in mine if j.verified]
        if not context or any(r.binding or r.requirement_id in guidance for r in context):
            continue
        for note in context:
            matching = [j for j in mine if not j.verified and j.requirement.binding and j.decided_by != "code"
                        and j.rejection_reason == Rejection.OFF_QUESTION and j.requirement.requirement_id not in out
                        and j.requirement.modality is not Modality.NONE
                        and same_matter(note.exact_quote, j.requirement.exact_quote)]
            if not matching:
                continue
            best = max(matching, key=lambda j: (shared_topic(note.exact_quote, j.requirement.exact_quote),
                                                j.relevance or 0.0, j.score or 0.0))
            out[best.requirement.requirement_id] = best.model_copy(update={
                "verified": True, "rejection_reason": None,
                "rationale": f"states in binding text the matter that the non-binding {note.requirement_id} explains "
                             f"(binding text answers first; set aside before: {best.rationale})"})
    return out


def _conflicting_sources(judged: dict[str, JudgedRequirement], overlap: float, questions: dict[int, str],
                         below_cut: set[str], astray: frozenset[str] = frozenset()) -> dict[str, JudgedRequirement]:
    """A requirement set aside as not addressing the question (below the selection cut or the gate) is cited
    after all when it imposes the same duty as a verified one of another document with different figures: a
    conflict is shown, never hidden (a policy's "is tested annually" beside the law's "twice a year"). One that
    passed the gate and fell only under the selection cut is cited too where its part asks only for a time and
    it gives a law's or a policy's other answer to it (agents.duties.answers_apart; `below_cut`: their IDs). Not a
    rival the other family's own search found that does not speak of its part's subject (`astray`)."""
    verified = [j for j in judged.values() if j.verified]
    out = {}
    # a kind of thing is weighed against its own kind where a document has both (agents.duties.other_kinds): the law's
    # transaction records against the policy's transaction records, not its complaint records
    kinds = {j.requirement.requirement_id: kind(j.requirement.exact_quote) for j in judged.values()}
    held = kinds_held([(v.requirement.document_id, kinds[v.requirement.requirement_id]) for v in verified])

    def conflicts(v: JudgedRequirement, j: JudgedRequirement) -> bool:
        a, b = v.requirement, j.requirement
        if other_kinds(kinds[a.requirement_id], kinds[b.requirement_id], held.get(a.document_id, set()),
                       held.get(b.document_id, set())):
            return False
        return conflicting_figures(a.exact_quote, b.exact_quote, overlap, same_question=True) or (
            b.requirement_id in below_cut and answers_apart(
                a.exact_quote, b.exact_quote, questions.get(j.part),
                families_differ=a.requirement_id[4] != b.requirement_id[4], topic=ANCHORED_TOPIC_OVERLAP))

    for j in judged.values():
        if j.verified or j.decided_by == "code" or j.rejection_reason != Rejection.OFF_QUESTION or (
                j.requirement.requirement_id in astray):
            continue
        rival = next((v for v in verified if v.part == j.part and v.requirement.document_id != j.requirement.document_id
                      and conflicts(v, j)), None)
        if rival is not None and j.requirement.modality is not Modality.NONE:
            out[j.requirement.requirement_id] = j.model_copy(update={
                "verified": True, "rejection_reason": None,
                "rationale": f"imposes the same duty as {rival.requirement.requirement_id} with different figures: "
                             f"cited so that the conflict is shown (relevance {j.relevance or 0.0:.3f})"})
    return out


def _foreign(names: list[str]) -> str:
    """Why a part that asks under texts no document in scope is or mentions (agents.select.Part.foreign) has no
    answer. Pure."""
    return (f"the question asks under {' and '.join(names)}, which no document in scope is or mentions: another "
            "text's passages answer another question")


def _speaks_of(subject: list[str], held: set[str], share: float) -> bool:
    """A text whose terms are `held` holds at least `share` of the `subject` terms (any text, where there are none).
    Pure."""
    return not subject or sum(t in held for t in subject) / len(subject) >= share


def _further_duty(topic: list[str], req: Requirement, held: set[str], relevance: float,
                  limits: EvidenceSettings) -> bool:
    """For a broad question with subject terms `topic`: the passage (its terms `held`) holds
    `limits.broad_topic_coverage` of them, is weighed (relevance at least `limits.broad_floor`) and the
    quote imposes a duty or a prohibition. Pure."""
    if not topic or relevance < limits.broad_floor or req.modality not in DUTIES:
        return False
    return _speaks_of(topic, held, limits.broad_topic_coverage)


def _under_heading(chunk: EvidenceItem) -> set[str]:
    """The passage's terms and its own heading's: a heading names the matter of the text under it ("You lost a
    device without encryption" over "Post to Slack ... to let the team know", "Account termination" over "Access
    shall be removed within one business day"). Pure."""
    return set(tokenize(chunk.get("text") or "")) | set(tokenize(innermost_section(chunk.get("section_path"))))


def front_matter(chunk: EvidenceItem) -> bool:
    """The document's first chunk, under its top heading alone, stating no requirement at all: a catalogue's
    author and copyright lines, a policy's version line; not a numbered section ("1 Purpose", the body's first)
    nor one that says whom or what the document applies to. Pure."""
    path = chunk.get("section_path") or ""
    return (chunk.get("ordinal") == 0 and bool(path) and " > " not in path and not chunk.get("section_number")
            and not re.match(r"\d", path) and not states_scope(chunk.get("text") or "")
            and not states_requirement(chunk))


# The heading of a list of the works a text cites ("12.2.  Informative References", "1.3 Normative References",
# "Bibliography"), and a question about those works
_BIBLIOGRAPHY = re.compile(r"(?:(?:non[\s-]?normative|normative|informative)\s+)?references|bibliography",
                           re.IGNORECASE)
_ASKS_WORKS = re.compile(r"\b(?:referen\w*|bibliograph\w*|cit(?:e|es|ed|ing|ation)\b)", re.IGNORECASE)


def bibliography(chunk: EvidenceItem) -> bool:
    """The passage stands under a heading of references or a bibliography, as standards list the works they cite
    (an RFC's "12.2. Informative References", ASVS's "References"): entries that name documents. Pure."""
    heading = innermost_section(chunk.get("section_path"))
    return bool(_BIBLIOGRAPHY.fullmatch(re.sub(r"^(?:[\dA-Z]{1,3}(?:\.\d+)*\.?\s+)", "", heading.strip())))


def _judge_quotes(eligible: list[tuple[Requirement, Part, RankedChunk]], model: RelevanceGate,
                  chunks: dict[str, EvidenceItem], limits: EvidenceSettings) -> dict[_Key, JudgedRequirement]:
    """Quote-level decisions, per requirement and part: the passage must pass the calibrated gate (the pair head
    was calibrated on passages); among its sentences, those more than `limits.quote_gap` below the best are set
    aside, and at most `limits.max_quotes_per_chunk` kept (every one, for a broad question's part); time
    and context rules."""
    scores: dict[_Key, float] = {}
    passage: dict[tuple[int, str], float] = {}
    for part in {p.index: p for _, p, _ in eligible}.values():
        mine = [r for r, p, _ in eligible if p.index == part.index]
        for req, score in zip(mine, model.pair_probabilities(part.question, [r.reading() for r in mine]),
                              strict=True):
            scores[(req.requirement_id, part.index)] = round(score, 4)
        ids = list(dict.fromkeys(r.chunk_id for r in mine))
        texts = [chunks[c]["text"] for c in ids]
        for cid, p in zip(ids, model.pair_probabilities(part.question, texts), strict=True):
            passage[(part.index, cid)] = p
    out: dict[_Key, JudgedRequirement] = {}
    # The passages here are a part's ranked candidates: the pipeline's own gate threshold (calibrated for
    # chosen passages, see engine.relevance.scorer), not the one `judge` uses for a text alone.
    gate = float(model.thresholds["gate_selected"]) if model is not None else 0.0
    confident = float(model.thresholds.get("gate_confident", 1.0)) if model is not None else 1.0
    decided = _gate_head(eligible, model, chunks)
    head_cut = float(model.thresholds.get("gate_head", 1.0)) if decided else 1.0

    # The ranking's sure verdict (at least `gate_confident`, which the best passage retrieved for another document's
    # question reaches for 1% of calibration questions) stands whatever the gate reads: "What should we do with
    # drafts?" ranks "A firm is not required to retain drafts or working copies ..." at 0.940, and the gate head,
    # which reads a statement of no duty as off the question, scored it 0.299.
    def passes(key: tuple[int, str], relevance: float) -> bool:
        if decided:
            return decided[key] >= head_cut or relevance >= confident
        return passage[key] >= gate or relevance >= confident

    def below(key: tuple[int, str], relevance: float) -> str:
        if decided:
            return (f"the gate scores its passage {decided[key]:.3f}, below the gate ({head_cut:.3f}; ranking "
                    f"{relevance:.3f}, the passage alone {passage[key]:.3f})")
        return f"its passage's relevance {passage[key]:.3f} is below the gate ({gate:.3f})"

    def share_of_gate(key: tuple[int, str]) -> float:
        if decided:
            return decided[key] / head_cut if head_cut else 1.0
        return passage[key] / gate if gate else 1.0

    kept: dict[tuple[int, str], list[str]] = {}
    best: dict[tuple[int, str], float] = {}
    lead_of = leads_of_points([req for req, _, _ in eligible])
    for req, part, _ in eligible:
        key = (part.index, req.chunk_id)
        best[key] = max(best.get(key, 0.0), scores[(req.requirement_id, part.index)])
    # A broad question's part is in scope once one chosen passage passes the gate on its own; then every other
    # passage that speaks of its subject and states a duty is one of the duties asked for.
    topics = {p.index: broad_topic(p.question) for _, p, _ in eligible if is_broad(p.question)}
    passing = {(part.index, req.chunk_id) for req, part, ranked in eligible
               if part.index in topics and ranked.selected and passes((part.index, req.chunk_id), ranked.relevance)}
    anchored = {index for index, _ in passing}
    held: dict[str, set[str]] = {}  # each passage's terms, read once
    under: dict[str, set[str]] = {}  # ... and with its heading's
    # The law's passages that its own search chose (agents.select.with_law) for a part in scope speak of its subject
    # when they name any of it ("Records of every incident ... shall be kept" to "What must we do when a security
    # incident occurs?"): the law's duties, with the rest of their sections.
    # Not one the gate all but rules out (under `limits.broad_gate_share` of its threshold): the law's best for a
    # matter it does not regulate ("Every new member of staff must complete security awareness training" to "What
    # has to be in place before we start working with a new supplier?").
    law = {(part.index, req.chunk_id) for req, part, ranked in eligible
           if part.index in anchored and ranked.law and any(t in held.setdefault(
               req.chunk_id, set(tokenize(chunks[req.chunk_id]["text"]))) for t in topics[part.index])
           and share_of_gate((part.index, req.chunk_id)) >= limits.broad_gate_share}
    passing |= law
    # A later part that leans on the one before ("Do we have to encrypt customer data ..., and does every user need
    # MFA?") is answered by the passage the part before cites where its own ranking puts that passage first: the
    # gate reads the part alone, and a part of a few words shares few of them with the passage that answers the
    # question whole (a rule's list of safeguards, encryption in one point and multi-factor authentication in the
    # next).
    # So is the passage its ranking puts first in the section whose passage answers the part before: the second
    # question asks a second thing of the same matter ("When does our first notice of a major incident have to
    # reach the regulator, and by when is the final write-up due?": the final report's paragraph of the incident
    # reporting section, ranked first for "By when is the final write-up due?", which names no incident); not for a
    # broad part, which asks for every duty and takes them by its own subject (above).
    answering = {(r.chunk_id, q.index) for r, q, k in eligible if k.selected and passes((q.index, r.chunk_id),
                                                                                            k.relevance)}
    carried = {(part.index, req.chunk_id) for req, part, ranked in eligible
               if part.index > 0 and ranked.relevance >= part.best and any(
                   i < part.index and (c == req.chunk_id or part.index not in topics and _same_section(
                       chunks[c], chunks[req.chunk_id])) for c, i in answering)}
    scoping: dict[int, float] = {}  # per scope question, the ranking's best chosen passage that states a scope
    for req, part, ranked in eligible:
        if ranked.selected and asks_scope(part.question) and states_scope(req.exact_quote):
            scoping[part.index] = max(scoping.get(part.index, 0.0), ranked.relevance)
    for req, part, ranked in sorted(eligible, key=lambda e: -scores[(e[0].requirement_id, e[1].index)]):
        judged_key = (req.requirement_id, part.index)
        score, key = scores[judged_key], (part.index, req.chunk_id)
        # ... and so is every duty of the section of a passage that passes (agents.select.with_sections)
        duty = req.modality in DUTIES
        further = (part.index in anchored and not passes(key, ranked.relevance)
                   and (duty and (key in law or (part.index, ranked.section_of) in passing)
                        or share_of_gate(key) >= limits.broad_gate_share and _further_duty(
                            topics[part.index], req, under.setdefault(req.chunk_id, _under_heading(
                                chunks[req.chunk_id])), ranked.relevance, limits)))
        # A scope question is answered by the scope statement the ranking put first among those it chose ("Which
        # firms do the client assessment rules apply to?": "These Rules ... apply to every firm that provides
        # investment advice ..."): the gate, fitted on duties, reads a statement of whom a text covers as off the
        # question.
        scope = ranked.selected and ranked.relevance >= scoping.get(part.index, 2.0) and states_scope(req.exact_quote)
        # ... and a point of a list, for a broad question's part, as well as its lead-in answers
        with_lead = max(score, scores.get((lead_of.get(req.requirement_id, ""), part.index), 0.0)) if (
            part.index in topics) else score
        if (missing := _unsaid(part.question, req.exact_quote)) is not None:
            out[judged_key] = _reject(req, Rejection.INFERENCE, missing, score, part.index, ranked.relevance)
        elif leans_on_context(req.exact_quote):
            out[judged_key] = _reject(req, Rejection.INCOMPLETE, "the quote depends on preceding text", score,
                                      part.index, ranked.relevance)
        elif not passes(key, ranked.relevance) and not further and not scope and key not in carried and (
                not ranked.provision):
            out[judged_key] = _reject(req, Rejection.OFF_QUESTION, below(key, ranked.relevance), score,
                                      part.index, ranked.relevance)
        elif not ranked.provision and (with_lead < best[key] - limits.quote_gap or part.index not in topics and len(
                kept.get(key, [])) >= limits.max_quotes_per_chunk):  # a broad question asks for every duty, and
            # a question about a provision whole for all it says
            out[judged_key] = _reject(req, Rejection.OFF_QUESTION,
                                      f"another sentence of the same passage answers more directly "
                                      f"(relevance {score:.3f} vs {best[key]:.3f})", score, part.index,
                                      ranked.relevance)
        else:
            kept.setdefault(key, []).append(req.requirement_id)
            out[judged_key] = JudgedRequirement(
                requirement=req, verified=True, rejection_reason=None, score=score, part=part.index,
                relevance=ranked.relevance,
                rationale="answers the question: it asks what the provision it names says, and this passage is "
                          "that provision" if ranked.provision else
                          f"answers the question: its passage scores {ranked.relevance:.3f} (best candidate "
                          f"{part.best:.3f}) and the sentence {score:.3f}" + _passed_because(
                              key, further, decided, head_cut, passage, gate, confident, ranked.relevance) + (
                    "; it says whom or what the text applies to, which the question asks, and the ranking put its "
                    "passage first of the chosen ones that say so" if scope and not passes(key, ranked.relevance)
                    else "; under it for this part alone, but the part before cites its passage or another of its "
                         "section, and this part's ranking puts it first" if key in carried and not passes(
                             key, ranked.relevance) and not further
                    else ""))
    return out


def _passed_because(key: tuple[int, str], further: bool, decided: dict[tuple[int, str], float], head_cut: float,
                    passage: dict[tuple[int, str], float], gate: float, confident: float, relevance: float) -> str:
    """The end of a verified quote's rationale: what let its passage through the gate. Pure."""
    duty = "it states a further duty on the broad question's subject, which another passage of this part answers"
    if decided:
        return (f"; the gate scores its passage {decided[key]:.3f} (threshold {head_cut:.3f})"
                + (f", under it, but {duty}" if further else "")
                + (f", under it, but the ranking is sure of it (at least {confident:.3f})"
                   if not further and decided[key] < head_cut and relevance >= confident else ""))
    if passage[key] >= gate:
        return ""
    return (f"; the passage alone scores {passage[key]:.3f}, under the gate ({gate:.3f}), but "
            + (duty if further else f"the ranking is sure of it (at least {confident:.3f})"))


def _same_section(a: EvidenceItem, b: EvidenceItem) -> bool:
    """Two passages of one section of one document (not of a document without sections). Pure."""
    where = (a.get("document_id"), a.get("section_path"))
    return bool(where[1]) and where == (b.get("document_id"), b.get("section_path"))


def _gate_head(eligible: list[tuple[Requirement, Part, RankedChunk]], model: RelevanceGate | None,
               chunks: dict[str, EvidenceItem]) -> dict[tuple[int, str], float]:
    """The gate head's probability for each (part, passage) at the gate ({} where the model has no gate head
    or cannot compute its inputs: the pair head and the ranking decide then). Each part's passages are weighed
    beside the best ranking probability among them."""
    if model is None:
        return {}
    out: dict[tuple[int, str], float] = {}
    for index in dict.fromkeys(p.index for _, p, _ in eligible):
        mine = {r.chunk_id: (p, k) for r, p, k in eligible if p.index == index}
        ids = list(mine)
        relevances = [mine[c][1].relevance for c in ids]
        probs = model.gate_probabilities(mine[ids[0]][0].question, [chunks[c]["text"] for c in ids], relevances,
                                         max(relevances))
        if probs is None:
            return {}
        out.update({(index, c): p for c, p in zip(ids, probs, strict=True)})
    return out


# --- llm backend: verdicts are accepted only for requirements that passed the code checks -----------

class LLMVerdict(BaseModel):
    """The model's verdict on one requirement (reply item of skills/verify.md)."""

    model_config = ConfigDict(extra="forbid")

    requirement_id: str = Field(description="A REQ-ID from the list given")
    verified: bool = Field(description="True only if the quote alone explicitly answers the question")
    rejection_reason: Literal["does_not_address_question", "requires_inference", "incomplete_quote"] | None = Field(
        default=None, description="Required when verified is false; null when true")
    rationale: str = Field(default="", max_length=400, description="One line: why")


class VerifyReply(BaseModel):
    """LLM reply schema for skills/verify.md."""

    model_config = ConfigDict(extra="forbid")

    verdicts: list[LLMVerdict] = Field(max_length=80)


def apply_llm_verdicts(judged: list[JudgedRequirement], verdicts: list[LLMVerdict],
                       notes: list[str]) -> list[JudgedRequirement] | None:
    """Apply the model's verdicts where code allows them: the model may reject what code accepts, never
    accept what code rejects (the verbatim and length checks, and the rules gate: relevance, the time
    rule, the relative checks).

    Only requirements that code verified are open to the model. Verdicts on other IDs (unknown,
    rejected by code) and self-contradicting ones (verified with a reason, rejected without) are
    ignored and noted; requirements the model skipped keep the rules verdict. Returns None when no
    verdict was usable (the caller then records a fallback).
    """
    eligible = {j.requirement.requirement_id for j in judged if j.verified}
    rejected = {j.requirement.requirement_id for j in judged if not j.verified}
    usable: dict[str, LLMVerdict] = {}
    ignored, overruled = [], []
    for verdict in verdicts:
        if verdict.verified and verdict.requirement_id in rejected:
            overruled.append(verdict.requirement_id)
        elif verdict.requirement_id not in eligible or verdict.verified == (verdict.rejection_reason is not None):
            ignored.append(verdict.requirement_id)
        else:
            usable.setdefault(verdict.requirement_id, verdict)
    if ignored:
        notes.append(f"verify: ignored llm verdicts on unknown, unverifiable or contradictory {', '.join(ignored)}")
    if overruled:
        notes.append(f"verify: ignored llm verdicts accepting {', '.join(overruled)}: code rejected them")
    skipped = sorted(eligible - usable.keys())
    if skipped and usable:
        notes.append(f"verify: no llm verdict for {', '.join(skipped)}; rules verdict kept")
    if not usable:
        return None
    return [j.model_copy(update={"verified": usable[rid].verified, "rejection_reason": usable[rid].rejection_reason,
                                 "rationale": usable[rid].rationale or "llm verdict", "decided_by": "llm"})
            if (rid := j.requirement.requirement_id) in usable else j for j in judged]


def verify_node(state: EvidenceState, deps: Deps) -> dict[str, Any]:
    """Graph node: code checks, then the gate, or the model's verdicts where code allows them."""

    question = state["stem"]
    requirements = [Requirement.model_validate(r) for r in state.get("requirements") or []]
    parts = [Part.model_validate(p) for p in state.get("parts") or []] or [Part(index=0, question=question, ranked=[])]
    chunks = {e["chunk_id"]: e for e in state["evidence"]}
    by_rules = verify_requirements(parts, requirements, chunks, relevance_model(deps), deps.settings.evidence,
                                   same_duty_overlap=deps.settings.answer.same_duty_overlap)
    eligible = [j.requirement for j in by_rules if j.verified]  # the model may only reject what code accepts
    judged, calls = by_rules, 0
    fallbacks: list[str] = []
    notes: list[str] = []
    if deps.llm is not None and eligible:
        judged, fallbacks, calls = llm_or_rules_within(
            deps, evidence_allowance(state, deps), "verify", "verify", VerifyReply, rules=lambda: by_rules,
            accept=lambda reply: apply_llm_verdicts(by_rules, reply.verdicts, notes), question=question,
            requirements=[{"requirement_id": r.requirement_id, "quote": normalize_ws(r.exact_quote),
                           "document_title": r.document_title, "section_path": r.section_path} for r in eligible])
    judged = without_repeats(judged)
    return evidence_update(fallbacks + notes, calls, judged=[j.model_dump(mode="json") for j in judged])


def without_repeats(judged: list[JudgedRequirement]) -> list[JudgedRequirement]:
    """A verified quote whose words another verified quote of the same passage, for the same part, holds (a list's
    point beside its lead-in run over the points; a sentence beside the same sentence quoted with the one it
    leans on) is not cited twice: it is set aside as `repeated_quote`, naming the quote that holds it. Pure."""
    cited = [j for j in judged if j.verified]
    words = {j.requirement.requirement_id: normalize_ws(j.requirement.exact_quote) for j in cited}

    def holder(j: JudgedRequirement) -> JudgedRequirement | None:
        mine = words[j.requirement.requirement_id]
        return next((c for c in cited if c is not j and c.part == j.part
                     and c.requirement.chunk_id == j.requirement.chunk_id
                     and len(words[c.requirement.requirement_id]) > len(mine)
                     and mine in words[c.requirement.requirement_id]), None)

    out = []
    for j in judged:
        if j.verified and (c := holder(j)) is not None:
            j = j.model_copy(update={"verified": False, "rejection_reason": Rejection.REPEATED, "rationale":
                                     f"its words are cited within {c.requirement.requirement_id}, a longer quote of "
                                     "the same passage"})
        out.append(j)
    return out
