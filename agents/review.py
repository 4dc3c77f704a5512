"""Review: fail any statement without a REQ-ID, citing an unknown or unverified ID, quoting what its
requirements do not say, or saying (outside quotation marks) more than its quotes.

The checks are code and apply to every composition, rules or llm. With the llm backend a model may
add "says more than its quotes" findings (skills/review.md); it can only add failures, never clear one.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agents.attribution import answer_conflict_problems, statement_problems
from agents.compose import ComposedAnswer, rules_composition, verified_of
from agents.extract import Requirement
from agents.result import Review, assemble_result
from agents.runtime import evidence_allowance, evidence_update, llm_or_rules_within
from agents.state import EvidenceState
from engine.config import AnswerSettings
from engine.ingest.language import answer_language
from engine.terms import key_terms, tokenize
from engine.text import NUMBER, STATEMENT_FORCE, normalize_ws

if TYPE_CHECKING:
    from agents.deps import Deps

_ANSWER = AnswerSettings()  # the defaults; review_node passes its settings' group
_QUOTED = re.compile(r'["\u201c]([^"\u201c\u201d]{3,})["\u201d]')
_CITED = re.compile(r"REQ-[SP]\d{3}")
_BRACKETED_IDS = re.compile(r"\[\s*REQ-[SP]\d{3}(?:\s*,\s*REQ-[SP]\d{3})*\s*\]")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
# Words that frame quotes ("X states: ...", "the sources differ ...") and so need no support in them.
FRAMING = frozenset(tokenize("states says provides requires sources differ while whereas opposite force section "
                             "rule document according vs non binding context table columns"))
# The same for an answer written in the question's language (llm backend): articles, prepositions and
# verbs that introduce a quote. No force or negation words: those must come from the quotes.
FRAMING_BY_LANGUAGE = {code: frozenset(tokenize(words)) for code, words in {
    "de": "der die das den dem des ein eine einer eines einem einen und oder sowie in im zu zur zum von vom mit "
          "für bei nach laut gemäß abschnitt regel dokument verordnung gesetz richtlinie vorschrift politik standard "
          "quelle quellen besagt sagt bestimmt verlangt fordert sieht vor schreibt regelt legt fest heißt es dass "
          "während hingegen unterscheiden sich gegenteil wie",
    "fr": "le la les un une des du de et ou en au aux dans selon section article règle document source sources "
          "dispose prévoit précise indique exige énonce stipule que alors tandis diffèrent contraire comme règlement "
          "loi directive politique norme",
    "es": "el la los las un una unos unas de del y o en al según sección artículo regla documento fuente fuentes "
          "dispone establece indica exige estipula que mientras difieren contrario como reglamento ley directiva "
          "política norma",
    "it": "il lo la i gli le un una di del della dei delle e o in al alla secondo sezione articolo regola "
          "documento fonte fonti dispone stabilisce prevede indica richiede che mentre differiscono contrario come "
          "regolamento legge direttiva politica norma",
    "nl": "de het een en of in van voor volgens sectie artikel regel document bron bronnen bepaalt stelt vereist "
          "zegt dat terwijl verschillen tegendeel als verordening wet richtlijn beleid norm",
    "pt": "o a os as um uma de do da dos das e ou em no na ao segundo seção artigo regra documento fonte fontes "
          "dispõe estabelece prevê indica exige que enquanto diferem contrário como regulamento lei diretiva "
          "política norma",
}.items()}


def _unquoted_sentences(text: str) -> list[str]:
    """The statement's own words: quoted spans and bracketed REQ-IDs removed, split into sentences."""
    bare = _BRACKETED_IDS.sub(" ", _QUOTED.sub(" \u2026 ", text))
    return [s for s in _SENTENCE_END.split(_CITED.sub(" ", bare)) if s.strip()]


def _unsupported(sentence: str, support_terms: set[str], support_text: str, framing: frozenset[str] = FRAMING
                 ) -> str | None:
    """Why an unquoted sentence says more than the cited quotes, or None."""
    extra = [t for t in key_terms(sentence) if t not in support_terms and t not in framing]
    if extra:
        return f"says more than its quotes (unsupported: {', '.join(extra[:6])})"
    numbers = {n.lower() for n in NUMBER.findall(sentence)} - {n.lower() for n in NUMBER.findall(support_text)}
    if numbers:
        return f"says more than its quotes (figures {', '.join(sorted(numbers))} not in them)"
    # An unquoted sentence may use only the force words its quotes use.
    force = ({w.lower() for w in STATEMENT_FORCE.findall(sentence)}
             - {w.lower() for w in STATEMENT_FORCE.findall(support_text)})
    if force:
        return f"says more than its quotes (changes their force: {', '.join(sorted(force))})"
    return None


def _statement_problems(i: int, text: str, ids: set[str], by_id: dict[str, Requirement],
                        framing: frozenset[str], overlap: float) -> list[str]:
    cited = [by_id[x] for x in sorted(ids)]
    # a table row's quote stands with its header row, which names its cells (a verbatim line of the same chunk)
    quotes = " ".join(normalize_ws(f"{r.table_header or ''} {r.exact_quote}") for r in cited)
    problems = [f"statement {i} quotes text its requirements do not contain: \"{span[:60]}\""
                for span in _QUOTED.findall(text)
                if not any(normalize_ws(span) in normalize_ws(r.exact_quote)
                           or (r.table_header and normalize_ws(span) in normalize_ws(r.table_header)) for r in cited)]
    support_text = " ".join([quotes, *(f"{r.document_title} {r.section_path}" for r in cited)])
    support_terms = set(tokenize(support_text))
    for sentence in _unquoted_sentences(text):
        why = _unsupported(sentence, support_terms, support_text, framing)
        if why:
            problems.append(f"statement {i} {why}")
    return problems + statement_problems(i, text, ids, by_id, overlap)


def review_answer(answer: ComposedAnswer, verified: list[Requirement], language: str = "en", *,
                  limits: AnswerSettings = _ANSWER) -> Review:
    """Code checks only; an LLM's answer gets the same checks as the rules one. `language` is the
    answer's (ISO 639-1): its framing words may stand outside quotation marks too. `limits`: the run's
    `Settings.answer` (conflicts are found as compose found them).

    Besides support (`_statement_problems`), each figure, period and modal verb must belong to the
    quotes its citation names, and conflicting requirements must be presented together
    (`agents.attribution`).
    """
    by_id = {r.requirement_id: r for r in verified}
    framing = FRAMING | FRAMING_BY_LANGUAGE.get(language, frozenset())
    reasons = []
    cited_ids = []
    for i, statement in enumerate(answer.statements, 1):
        ids = set(statement.requirement_ids) | set(_CITED.findall(statement.text))
        cited_ids.append((statement.text, ids))
        if not ids:
            reasons.append(f"statement {i} cites no REQ-ID")
            continue
        unknown = sorted(ids - by_id.keys())
        if unknown:
            reasons.append(f"statement {i} cites unknown or unverified {', '.join(unknown)}")
            continue
        if not _CITED.search(statement.text):
            reasons.append(f"statement {i} does not cite its REQ-IDs inline")
        reasons.extend(_statement_problems(i, statement.text, ids, by_id, framing, limits.same_duty_overlap))
    reasons.extend(answer_conflict_problems(cited_ids, verified, limits.same_duty_overlap))
    return Review(passed=not reasons, reasons=reasons, composer=answer.composer)


# --- llm backend: a second reader for "says more than its quotes" ------------------------------------

class ReviewFinding(BaseModel):
    """One statement the model finds unsupported by its quotes."""

    model_config = ConfigDict(extra="forbid")

    statement: int = Field(ge=1, description="1-based number of the statement")
    problem: str = Field(max_length=300, description="What the statement says that its quotes do not")


class ReviewReply(BaseModel):
    """LLM reply schema for skills/review.md."""

    model_config = ConfigDict(extra="forbid")

    findings: list[ReviewFinding] = Field(default_factory=list, max_length=30)


def findings_to_reasons(reply: ReviewReply, n_statements: int) -> list[str]:
    """Findings on existing statements become failure reasons; any other finding is ignored."""
    return [f"statement {f.statement} says more than its quotes (llm review: {f.problem})"
            for f in reply.findings if f.statement <= n_statements]


def _llm_review(state: EvidenceState, deps: Deps, answer: ComposedAnswer, verified: list[Requirement]) -> tuple[
        list[str], list[str], int]:

    by_id = {r.requirement_id: r for r in verified}
    statements = [{"number": i, "text": s.text,
                   "quotes": {x: normalize_ws(by_id[x].exact_quote) for x in s.requirement_ids if x in by_id}}
                  for i, s in enumerate(answer.statements, 1)]
    return llm_or_rules_within(deps, evidence_allowance(state, deps), "review", "review", ReviewReply,
                               rules=lambda: [], accept=lambda r: findings_to_reasons(r, len(statements)),
                               question=state["stem"], statements=statements)


def _merge(previous: dict[str, Any] | None, current: Review) -> Review:
    if not previous:
        return current
    return Review(passed=current.passed, reasons=previous["reasons"] + current.reasons, revised=True,
                  composer=current.composer)


def review_node(state: EvidenceState, deps: Deps) -> dict[str, Any]:
    """Graph node. A first failure goes back to compose once; a revised llm answer that fails again is
    replaced by the rules composition (recorded in fallbacks); then the evidence result is assembled."""

    verified = verified_of(state)
    limits = deps.settings.answer
    answer = ComposedAnswer.model_validate(state["composition"])
    review = review_answer(answer, verified, answer_language(state.get("language")) if answer.composer == "llm"
                           else "en", limits=limits)
    fallbacks: list[str] = []
    calls = 0
    if review.passed and answer.composer == "llm":
        found, fallbacks, calls = _llm_review(state, deps, answer, verified)
        review = Review(passed=not found, reasons=found, composer="llm")
    previous = state.get("review") if answer.attempt == 2 else None
    review = _merge(previous, review)
    if not review.passed and answer.attempt == 1:
        return evidence_update(fallbacks, calls, review=review.model_dump())
    if not review.passed and answer.composer == "llm":
        fallbacks = [*fallbacks, "compose: the revised llm answer failed review; rules composition used"]
        answer = rules_composition(state, limits)
        rules_review = review_answer(answer, verified, limits=limits)
        review = Review(passed=rules_review.passed, reasons=review.reasons + rules_review.reasons, revised=True)
    result = assemble_result(state, deps, answer, review, extra_fallbacks=fallbacks, extra_calls=calls)
    return evidence_update(fallbacks, calls, review=review.model_dump(), evidence_result=result.model_dump(mode="json"))
