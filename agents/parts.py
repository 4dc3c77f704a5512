"""Parts: a question that asks several things ("How long must records be kept, and when must a
breach be notified?") is answered part by part, each with its own evidence, citations, conflicts
and missing evidence.

Rules: several question marks; a coordinated second question ("…, and when/what/how/must…");
"as well as"/"and also" before a question word; ", and" before a lead-in clause that holds the question word
("…, and if the firm is dissolved, what …"). A conjunction splits only before a question word, so
"rights and obligations" never splits, and a part needs a content term of its own. The subject of a
bare second part ("and when must it be notified?") is completed from the first part when it only has
a pronoun.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from agents.state import EvidenceState
from engine.config import AnswerSettings
from engine.terms import key_terms, tokenize
from engine.text import normalize_ws

if TYPE_CHECKING:
    from agents.deps import Deps

_QUESTION_WORD = (r"(?:what|how|when|which|who|whom|whose|whether|where|why|does|do|did|is|are|was|were|must|"
                  r"should|shall|can|could|may|might|will|would|has|have)\b")
# A clause that opens a second question before its question word: "…, and if X, what …",
# "…, and in what situation …", "…, and under FCSA guidelines, when …", "…, and regarding X, what …"
# ("and if so" continues the first).
_LEAD_IN = (r"(?!if\s+so\b)(?:if|in|under|for|when|where|despite|after|before|during|as|with|given|once|upon|"
            r"following|regarding|concerning|by|within|according\s+to)\b[^?,;]{0,120}?,?\s*\b(?:to\s+)?"
            + _QUESTION_WORD)
# A split point: a question mark followed by more text, a conjunction before a question word, or a comma and
# "and" before a lead-in clause holding one. A dash after the conjunction ("and - What …") is part of it; "also"
# alone splits only after a comma ("does it also have to ..." is one question).
_SPLIT = re.compile(rf"\?\s+(?=\S)|(?:[,;]?\s+(?:and|and\s+also|as\s+well\s+as)|[,;]\s+also)\s+(?:-\s+)?"
                    rf"(?={_QUESTION_WORD})|"
                    rf",\s+and\s+(?:-\s+)?(?={_LEAD_IN})|;\s+(?={_QUESTION_WORD})", re.IGNORECASE)
_PRONOUN_WITHIN = 10  # words before a pronoun that refers back to the part before
# ... or "that" before a noun after a verb or a preposition ("what must that notice identify?", "the records of
# that test"), not "that" opening a clause ("exemptions that apply", "requires that the firm")
_PRONOUN_SUBJECT = re.compile(r"\b(it|they|this|these|those|them|such\s+\w+|(?:must|should|shall|can|could|may|might|"
                              r"will|would|does|do|did|is|are|was|were|has|have|of|for|in|on|to|about|from|with|by|"
                              r"under|into|within|after|before)\s+that\s+(?!(?:the|a|an|we|i|you|they|it|he|she|our|"
                              r"their|its|this|these|those|there|such|any|all|each|every|no|some)\b)[a-z]\w*)\b",
                              re.IGNORECASE)
_ANSWER = AnswerSettings()  # the defaults; parts_node passes its settings' group
# A broad question asks for every duty on a matter, not one answer: "What must we do when an incident
# occurs?", "What are the obligations of a processor?", "What are all our obligations around backups?", what a
# document or programme must hold ("What must our training programme cover?", "What has to go into the letter
# ...?", "What must we have in place ...?", "What must a covered entity weigh ...?"), every rule or way ("What are
# all the rules on ...?", "What are the accepted ways of ...?") and the things to give ("What details must we give
# ...?"); asked in any sentence ("A statute prevents me from complying. What do I have to do?").
_WHO = r"(?:we|i|you|a|an|the|our|they|it|firms?|entit(?:y|ies)|\w+)"
_MODAL = r"(?:must|should|shall|has\s+to|have\s+to|needs?\s+to)"
# Nouns that name many things in the singular ("What security training must staff complete?")
_MASS = r"(?:training|information|documentation|evidence|data|reporting|paperwork)"
_ASKS_ALL = "|".join([
    r"(?:must|should|has\s+to|needs\s+to)\s+(?:be\s+done|happen)\b",
    rf"(?:must|should|shall|do|does|is|are)\s+(?:{_WHO}\b.{{0,80}}?\b(?:do|happen|take\s+place)\b|(?:all\s+)?"
    r"(?:the\s+|our\s+|my\s+)?(?:\w+\s+){0,2}(?:obligations|duties|requirements|responsibilities|steps)\b)",
    rf"{_MODAL}\b.{{0,80}}?\b(?:cover|contain|include|go\s+into|be\s+(?:written|put|included|set\s+out|stated)\s+"
    r"(?:in|into)|put\s+in|in\s+place|weigh|consider|take\s+into\s+account)\b",
    rf"(?:do|does)\s+{_WHO}(?:\s+\w+)?\s+(?:need|have)\s+(?:to\s+(?:have|consider|weigh|do)\b|in\s+place)",
    r"(?:are|is)\s+(?:all\s+)?(?:the\s+|our\s+|my\s+)?(?:\w+\s+)?(?:rules|ways)\b",
    rf"(?:\w+\s+)?(?:\w+s|{_MASS}|\w+\s+and\s+\w+)\s+(?:(?:must|should|shall)\s+{_WHO}(?:\s+\w+){{0,2}}|(?:do|does)\s+{_WHO}(?:\s+\w+)?\s+"
    r"(?:have|need)\s+to)\s+(?:give|provide|complete|submit|disclose|state)\b",
])
_BROAD = re.compile(rf"(?:^|[.!?]\s+)\W*what\s+(?:exactly\s+)?(?:{_ASKS_ALL})", re.IGNORECASE)
# ... unless it names the one provision it asks about ("as stated in Rule 17.1.5(f)", "under Article 5").
_NAMES_PROVISION = re.compile(r"\b(?:rule|article|section|regulation|paragraph|clause|§)\s*\d", re.IGNORECASE)


# Words of a broad question that ask for duties rather than name their subject.
_ASKING = frozenset(key_terms("done do does happen happens take place obligations duties requirements "
                              "responsibilities steps all our we us i you have need needs required exactly "
                              "cover contain include written put into weigh consider account rules ways give "
                              "provide complete submit disclose state"))


# ... as they are written: a stem they share with a word of the subject does not take it out ("response" beside
# "responsibilities", "provider" beside "provide", "accounts" beside "account").
_ASKING_FORMS = frozenset(("done do does happen happens take place obligation obligations duty duties requirement "
                           "requirements responsibility responsibilities step steps all our we us i you have need "
                           "needs needed required require requires exactly cover covers contain contains include "
                           "includes written write put into weigh consider account rule rules way ways give provide "
                           "complete submit disclose state").split())


def broad_topic(question: str) -> list[str]:
    """The subject terms of a broad question ("data", "breach", "discov" of "What must be done when a data
    breach is discovered?"): what a passage must speak of to state one of its duties; a stem of `_ASKING` stays
    where the question writes it as a word of its subject ("incident response plan", "ICT provider"). Pure."""
    subject = {t for w in re.findall(r"[A-Za-z][\w'-]*", question) if w.lower() not in _ASKING_FORMS
               for t in key_terms(w)}
    return [t for t in key_terms(question) if t not in _ASKING or t in subject]


def is_broad(question: str) -> bool:
    """The question asks for every duty on a matter (cited up to EvidenceSettings.broad_max_passages). Pure."""
    return bool(_BROAD.search(question)) and not _NAMES_PROVISION.search(question)


def question_parts(question: str, limits: AnswerSettings = _ANSWER) -> list[str]:
    """The parts of a question, in order, at most `limits.max_parts`; a one-part question gives `[question]`.
    A piece with fewer than `limits.min_part_terms` key terms stays attached to the part before it. Pure."""
    text = normalize_ws(question)
    pieces = [p.strip(" ,;") for p in _SPLIT.split(text) if p and p.strip(" ,;?")]
    if len(pieces) < 2:
        return [text]
    parts: list[str] = []
    completed: set[int] = set()  # parts already completed with the subject of the one before
    for piece in pieces:
        if parts and _ELLIPTICAL.match(piece):  # "..., and how often?": a question of its own about the same thing
            completed.add(len(parts))
            parts.append(_elliptical(piece, parts[-1]))
            continue
        if parts and len(key_terms(piece)) < limits.min_part_terms and not _REFERS_BACK.match(piece):
            parts[-1] = f"{parts[-1].rstrip('?')} and {piece}"  # too thin to stand alone: keep it attached
            continue
        parts.append(piece)
    parts = [(p if p.endswith("?") else f"{p}?") for p in parts]
    parts = [p[0].upper() + p[1:] for p in parts]
    if len(parts) < 2:
        return [text]
    return [_complete(part, parts[i - 1]) if i and i not in completed else part
            for i, part in enumerate(parts)][:limits.max_parts]


# A second question of a question word alone, about what the first asks of: "What security training must our staff
# complete, and how often?", "What must be reported, and when?".
_ELLIPTICAL = re.compile(r"^(?:(?:for\s+)?how\s+(?:often|frequently|long|soon|quickly|fast|promptly)|when|by\s+when|"
                         r"who|to\s+whom)\W*$", re.IGNORECASE)


# ... and one of function words alone that asks of what the first names by a pronoun: "Can a customer take back
# their agreement ..., and what do we have to tell them when they do?" (completed by `_complete`).
_REFERS_BACK = re.compile(rf"^{_QUESTION_WORD}.*?{_PRONOUN_SUBJECT.pattern}", re.IGNORECASE)


def _elliptical(piece: str, before: str) -> str:
    """A question word alone (`_ELLIPTICAL`) completed with the subject of the part before, as it writes it:
    "How often (security training staff)?" after "What security training do our staff have to complete?"."""
    asked = re.split(r"(?<=[.!?])\s+", before.strip())[-1]  # the question, not a sentence of context before it
    subject = _subject_words(asked, set())
    head = piece.strip(" ,;?")
    return f"{head[0].upper()}{head[1:]} ({' '.join(subject)})?" if subject else f"{head}?"


def _subject_words(text: str, leave: set[str]) -> list[str]:
    """The words of `text`, as it writes them and once each, whose key terms name its subject: not a word that
    asks for duties (`_ASKING`, as `_ASKING_FORMS` writes it: "accounts" names a subject) nor one of the key terms in
    `leave`. Pure."""
    wanted = [t for t in key_terms(text) if t not in leave]
    words = [w for w in re.findall(r"[A-Za-z][\w'-]*", text) if (t := tokenize(w)) and t[0] in wanted
             and (t[0] not in _ASKING or w.lower() not in _ASKING_FORMS)]
    return list(dict.fromkeys(words))


# Words that name what is asked of a subject, not a subject: "What is the deadline?", "And the penalty?"
_ASKED_FOR = frozenset(key_terms("deadline deadlines time limit limits timeframe timeline period frequency penalty "
                                 "penalties consequence consequences exception exceptions cost fee"))
_BARE_WORDS = 8  # subject words of the part before that complete a bare part
_FEW_TERMS = 2  # ... or one of this many terms of its own ("What is it for an important entity?")


# A part that asks the question before again of something else, or goes on from it, without naming what it asks
# of: "What about information a newspaper gathers?", "How big for AAA?", "If we go for AAA, how thick?", "How
# fast the customers who were affected?", "Do customers still have to be told?", "Do the affected customers have
# to be told too?", "What comes next?", "Is the deadline the same after an audit?", "What's the equivalent radius
# in Virginia?", "What happens if the account is suspended instead?", "Are we then allowed to ...?"
_AUX = r"(?:must|should|shall|do|does|did|is|are|was|were|can|could|may|might|will|would|has|have|had|need|needs)"
_GOES_ON = re.compile(
    r"^(?:what|how)\s+about\b"  # "What about ...?"
    r"|^how\s+(?:big|long|fast|much|many|often|soon|quickly|thick|large|small|high|low|strong|far|old|wide|tall)\b"
    rf"(?!(?:\s+\S+){{0,2}}\s+{_AUX}\b)"  # "How big for AAA?", "How fast the customers ...?": no verb of its own
    r"|\bhow\s+\w+\W*$"  # "..., how thick?"
    r"|\b(?:still|too|instead|afterwards|then|equivalent|next)\b(?!\s+(?:to|of|as|day|week|month|year)\b)"
    r"|\bthe\s+same\b(?=\s*(?:after|for|in|if|when|under|on|$))", re.IGNORECASE)  # not "the same duties as ..."
_GOES_ON_TERMS = 5  # ... in a part of at most this many terms of its own: a longer one says what it asks of
# ... or refers back by "one", a pro-verb or a pronoun that ends it: "What happens if we just never submit one?",
# "How do I ask for one?", "What about one that isn't serious?", "Will doing so ...?", "What do I owe the
# contributors if I do?", "Should we change that?", "Is the ICAAP a place to do that?", "What do we need to track
# about it?" (late as it comes)
_REFERS = re.compile(r"(?<!\bno\s)(?<!\bany\s)(?<!\beach\s)\bones?\b(?=\s*(?:[?,;]|that\b|which\b|who\b|$))|"
                     r"\b(?:do|did|doing)\s+so\b|\bif\s+(?:i|we|you|they|it|he|she)\s+(?:do|does|did|don't|doesn't)"
                     r"\s*(?:[?,]|$)|\b(?:it|them|that|this|these|those)\s*[?]?$", re.IGNORECASE)
# ... or by a possessive before any word of its own: "Do its members have to be trained?"
_POSSESSIVE = re.compile(r"\b(?:its|their|his|her)\s", re.IGNORECASE)


def _goes_on(part: str) -> bool:
    """The part goes on from the one before or refers back to it (`_GOES_ON`, `_REFERS`, `_POSSESSIVE`). Pure."""
    owner = _POSSESSIVE.search(part)
    return bool(_GOES_ON.search(part) or _REFERS.search(part) or owner and not key_terms(part[: owner.start()]))


def _complete(part: str, before: str) -> str:
    """'When must it be notified?' after 'What is a personal data breach?' names its subject, taken from the part
    before, where the pronoun opens the question (within its first `_PRONOUN_WITHIN` words: "when it comes to"
    late in a question with a subject of its own is no reference back); so does a part with no subject of its
    own ("What is the deadline?": `_ASKED_FOR`), and one that goes on from the part before (`_GOES_ON`) or
    refers back to it (`_REFERS`)."""
    found = _PRONOUN_SUBJECT.search(part)
    own = set(key_terms(part))
    subject_terms = len(own - _ASKING - _ASKED_FOR)  # the terms that name what it asks of
    goes_on = subject_terms <= _GOES_ON_TERMS and _goes_on(part.rstrip("?"))
    if subject_terms and not goes_on and (not found or len(part[: found.start()].split()) >= _PRONOUN_WITHIN):
        return part
    # what the pronoun stands for ends the first part more often than not; a bare part, one that goes on from the
    # part before or one of few terms asks of all of it
    subject = _subject_words(before, own)[-_BARE_WORDS if goes_on or subject_terms <= _FEW_TERMS else -4:]
    return f"{part.rstrip('?')} ({' '.join(subject)})?" if subject else part


def parts_node(state: EvidenceState, deps: Deps) -> dict[str, Any]:
    """Graph node: the parts of the question in the corpus's language (`translate_node`), each searched and
    selected for on its own (`agents.select.select_node`)."""
    return {"part_questions": question_parts(state["relevance_question"], deps.settings.answer)}
