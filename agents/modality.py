"""Modality: the deontic force of a sentence (obligation, prohibition, permission, recommendation, none).

Modal verbs and their periphrases ("must", "is required to", "has a duty to"), negation and scope ("is
not required to" imposes nothing), definitions that mention "must" without imposing it, and the forms
catalogues, standards and policies state duties in without a modal verb: an imperative ("Disable accounts
...", "Verify that ...", "Do not use ...") and a named party's duty in the present tense ("IT terminates
access within five business days", "* The COO is to notify ...", "- conducting scans at least fortnightly",
a list point "(e) identify key dependencies ..."). A requirement inside a restrictive relative clause ("services
that are not required to ...") and a passive inside a condition ("if payment is not made") are not the sentence's
rule; a duty coordinated with a restriction is an obligation. The verbs and parties are data
(agents/requirement_verbs.json).
Pure: no state, no I/O beyond reading that file once.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Any, TypedDict, cast

from engine.text import LEADING_LABELS, PERIOD, normalize_ws, withdrawn


class Modality(StrEnum):
    OBLIGATION = "obligation"
    PROHIBITION = "prohibition"
    PERMISSION = "permission"
    RECOMMENDATION = "recommendation"
    NONE = "none"


# The forces that state a duty: what a broad question asks for, what a conflict sets side by side
DUTIES = frozenset({Modality.OBLIGATION, Modality.PROHIBITION})


def rx(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


_DATA_FILE = Path(__file__).with_name("requirement_verbs.json")


@lru_cache(maxsize=1)
def _words_file() -> dict[str, Any]:
    """agents/requirement_verbs.json, read once."""
    return cast(dict[str, Any], json.loads(_DATA_FILE.read_text(encoding="utf-8")))


def _subject_pattern() -> str:
    """The persons laws and contracts lay duties on ('subjects' in the data file), singular or plural, the
    longest first ("authorised person" before "person")."""
    subjects = sorted(_words_file()["subjects"], key=lambda w: (-len(w), w))
    return "(?:" + "|".join(r"\s+".join(map(re.escape, s.split())) for s in subjects) + ")s?"


_SUBJECT = _subject_pattern()
# "... is to be regarded as", "... are to be interpreted as": how a text is read, not a duty
_NOT_READING = r"(?!be\s+(?:considered|regarded|treated|interpreted|construed|read|understood)\b)"
# Checked in this order: what imposes nothing, then prohibition, obligation, recommendation, permission.
_DEFINITION = rx(r'^\s*(?:\(\d{1,3}\)\s*)?(?:["\u201c\u2018][^"\u201d\u2019]{1,80}["\u201d\u2019]|the\s+term\s+\S+|'
                 r'[A-Z][\w-]*(?:\s+[\w-]+){0,5})\s+'
                  r"(?:means(?!\s+of\b)|includes|refers\s+to|has\s+the\s+meaning|shall\s+(?:mean|have\s+the\s+meaning)"
                  r"(?!\s+of\b))\b",  # "by means of" defines nothing; '"Work" shall mean' (licences) defines
                  r"^\s*(?:this|these)\s+(?:section|part|chapter|rules?|regulation|guidance|policy)\s+"
                  r"(?:describes?|explains?|summari[sz]es?|outlines?|sets\s+out\s+(?:the\s+)?background)\b",
                  # a legal effect, no one bound to act: "shall be deemed to have knowledge", "shall be construed as"
                  r"\bshall\s+(?:mean|be\s+(?:deemed|construed|interpreted|treated\s+as|regarded\s+as|"
                  r"considered\s+(?:as|to)))\b",
                  # ... what a thing is in law: "Penalty payments shall be of an administrative nature and shall be
                  # enforceable"
                  r"\bshall\s+be\s+of\s+(?:an?\s+)?[\w-]+\s+(?:nature|character)(?:\s+and\s+shall\s+be\s+"
                  r"enforceable)?\W*$",
                  # what a provision leaves untouched: "It shall not affect the validity of ...", "This Article shall be
                  # without prejudice to ..."
                  r"(?:^|[,;]\s+)(?:\(?\w{1,4}[.)]\s+)?(?:it|(?:this|that|such|the)\s+(?:[\w-]+\s+){0,3}?(?:article|"
                  r"paragraph|point|subparagraph|regulation|directive|decision|revocation|delegation|provisions?|section|"
                  r"chapter|agreement|act|rules?))\s+shall\s+(?:not\s+affect|be\s+without\s+prejudice\s+to)\b")
_NOT_REQUIRED = rx(r"\b(?:is|are|be)\s+not\s+(?:required|obliged|obligated|necessary)\s+to\b",
                    r"\bnothing\s+in\s+(?:this|these|the)\b.{0,60}?\b(?:requires?|obliges?|prevents?|shall\s+require)\b",
                    r"\bneed\s+not\b", r"\b(?:does|do)\s+not\s+(?:have|need)\s+to\b",
                    r"\bno\s+(?:requirement|obligation)\s+to\b", r"\bis\s+not\s+mandatory\b")
# A power conferred ("shall have all supervisory powers", "shall have the right to") permits; a restriction to one
# way ("may only be accessed from ...", "can only be used for ...") prohibits the others.
_POWER = rx(r"\bshall\s+(?:have|include)\s+(?:[\w,-]+\s+){0,5}?(?:powers?|rights?|authority)\b",
            # "The power to adopt delegated acts ... shall be conferred on the Commission"
            r"^(?:the\s+)?powers?\s+to\s+[^.;]*?\bshall\s+be\s+conferred\s+on\b")
# "may only be accessed", "may be brought only"
_ONLY = rx(r"\b(?:may|can)\s+(?:be\s+[a-z]+(?:ed|en|wn|pt|ght)\s+)?only\b")
# A requirement stated of the things a restrictive relative clause picks out ("services that are not required to
# achieve the business purpose", "disclosures that are required to be made by law"): no duty, or freedom from one,
# of the sentence's own subject.
_RELATIVE_REQUIREMENT = re.compile(r"(?<![,;])\s(?:that|which|who)\s+(?:is|are|was|were)\s+(?:not\s+)?"
                                   r"(?:required|obliged|obligated|necessary)\s+(?:to|by)\b", re.IGNORECASE)
# "(Required)" after a specification's name: how a rule marks a required implementation specification
_REQUIRED_MARK = rx(r"\(\s*required\s*\)\s*[.;:]?\s*$")
_PROHIBITION = rx(r"\b(?:must|shall|may|can)\s+not\b", r"\b(?:mustn't|shan't|cannot)\b",
                   r"\b(?:is|are)\s+(?:prohibited|forbidden|not\s+permitted|not\s+allowed)\b",
                   r"\bprohibited\s+from\b", rf"\bno\s+{_SUBJECT}\s+(?:shall|may|must)\b",
                   r"\bit\s+is\s+(?:an\s+offence|unlawful)\s+(?:to|for)\b")
_OBLIGATION = rx(r"\bmust\b", r"\bshall\b(?!\s+have\s+been\b)",  # "even if ... shall have been informed": a condition
                  # a rule text's own lead-in: "Corvid Labs policy requires that:", "These Rules require that ..."
                  r"\b(?:policy|policies|procedures?|standards?|rules?|regulations?)\s+(?:also\s+)?requires?\s+(?:that\b|:)",
r"\b(?:is|are|remains?)\s+(?:required|obliged|obligated|bound)\s+to\b",
                  r"\b(?:has|have)\s+a\s+(?:duty|legal\s+obligation|obligation)\s+to\b", r"\bis\s+under\s+a\s+duty\b",
                  r"\bit\s+is\s+(?:mandatory|compulsory|a\s+requirement)\s+(?:for|that|to)\b",
                  # a thing required outright: "TLS ... is mandatory for session management", "Training is compulsory"
                  # (not "is not mandatory", which imposes nothing, a relative clause's "that is mandatory", a question)
                  r"(?<!\bthat\s)(?<!\bwhich\s)\b(?:is|are)\s+(?:\w+ly\s+)?(?:mandatory|compulsory|obligatory)\b"
                  r"(?![^.;]*\?)",
                  rf"\b(?:the\s+)?{_SUBJECT}\s+(?:is|are)\s+to\s+{_NOT_READING}\w+",
                  # whatever its subject, "is to be" and a participle: "Production data is to be synchronized ...";
                  # not in a relative clause ("products that are to be used primarily for ...") nor a condition
                  # ("if patches are to be applied within two weeks then scanning should ...")
                  rf"^(?:(?!\b(?:that|which|who|whom|whose|if|unless|when|whenever)\b)[^;])*?\b(?:is|are)\s+to\s+"
                  rf"{_NOT_READING}be\s+"
                  r"(?:\w+ly\s+)?[a-z]+(?:ed|en|wn|pt|ght)\b",
                  r"\b(?:is|are)\s+responsible\s+for\s+ensuring\b", r"\bneeds?\s+to\s+ensure\b",
                  # a party that stays answerable for a duty it hands on: "the financial entity remains fully
                  # responsible for the fulfilment of ...", "the covered entity remains accountable for ..."
                  r"\bremains?\s+(?:\w+ly\s+)?(?:responsible|accountable)\s+for\b",
                  # ... or is answerable for it in the first place: "The board of a regulated firm is accountable for
                  # its operational resilience", "The management body is ultimately responsible for ICT risk"
                  r"\b(?:is|are)\s+(?:\w+ly\s+|solely\s+|fully\s+|jointly\s+)?(?:responsible|accountable)"
                  # ... and with a phrase between ("is responsible, within the framework of ..., for ...")
                  r"(?:\s*,[^,;]{1,120},)?\s+for\b",
                  # a named party's requirement of others: "Corvid Labs requires all employees to take ..."; not a
                  # condition's ("where the law requires a firm to ...")
                  rf"^(?:(?!\b(?:if|where|when|whenever|unless|that|which|who|whom)\b)[^;])*?\b[A-Z][\w&-]*"
                  rf"\s+(?:also\s+)?requires\s+(?:[\w-]+\s+){{1,5}}?to\s+{_NOT_READING}[a-z]+",
                  # A regulator's stated expectation binds the supervised ("The Regulator expects a firm to ...").
                  rf"\bexpects?\s+(?:\w+\s+){{0,8}}?to\s+{_NOT_READING}\w+",
                  r"\b(?:is|are)\s+expected\s+to\b",
                  r"\bit\s+is\s+(?:imperative|necessary|critical|vital)\s+(?:for\s+(?:\w+\s+){1,6}?)?"
                  r"(?:that|to)\b",
                  # "essential" for a named bearer binds ("It is essential for a Fund Manager to identify ..."); without
                  # one it is advice or an aim (RECOMMENDATION: "it is essential that all backups are retained")
                  r"\bit\s+is\s+essential\s+for\s+(?:\w+\s+){1,6}?to\b",
                  r"\b(?:is|are|be|remains?|becomes?)\s+(?:\w+ly\s+)?(?:made\s+)?subject\s+to\s+(?:[\w-]+\s+){0,8}?"
                  r"(?:obligations?|requirements?|duties|restrictions?|conditions?|prohibitions?)\b")
# A body's make-up, no one bound to act: "The Oversight Forum shall be composed of:", "The panel shall consist of"
_COMPOSED = rx(r"\bshall\s+(?:be\s+(?:composed|comprised|made\s+up)\s+of|consist\s+of|comprise)\b")
# "Should" opening a statement with its subject after it is a condition ("Should the Program prove
# defective, you assume the cost"), not advice; a question ("Should a firm ...?") is neither.
_CONDITIONAL_SHOULD = re.compile(r"^\s*should(?=\s+(?:the|a|an|any|such|it|you|there|this|that|your)\b[^?]*$)",
                                 re.IGNORECASE)
_RECOMMENDATION = rx(r"\bshould\b", r"\bought\s+to\b", r"\b(?:is|are)\s+(?:encouraged|advised|recommended)\s+to\b",
                      r"\bit\s+is\s+(?:recommended|good\s+practice|advisable)\b",
                      # guidance's advice: "it is important that patches are applied consistently"
                      r"\bit\s+is\s+(?:also\s+|therefore\s+)?important\s+(?:for\s+(?:\w+\s+){1,6}?)?(?:that|to)\b|"
                      r"\bit\s+is\s+(?:also\s+|therefore\s+)?essential\s+(?:that|to)\b",
                      # the writer's own advice and RFC 2119's passive: "We recommend that the DEBUG setting is set to
                      # False", "We strongly recommend deploying ...", "It is highly recommended that ...", "A maximum
                      # authorization code lifetime of 10 minutes is RECOMMENDED.", "Using a password manager ... is
                      # recommended." (not "as recommended by NIST", which reports another's advice, nor a relative
                      # clause's "a portfolio that is not recommended")
                      r"\b(?:we|I)\s+(?:\w+ly\s+|also\s+|would\s+|do\s+not\s+|don't\s+)?recommend\b",
                      r"(?<!\bthat\s)(?<!\bwhich\s)\b(?:is|are)\s+(?:\w+ly\s+|also\s+|not\s+)?recommended\b(?!\s+by\b)")
# A recital's "should" about what the act provides, not about anyone's conduct: "Member States should be able to
# designate ...", "The Commission should be empowered to adopt ...", "this Directive should not apply to ...",
# "The rules ... should be without prejudice to ...", "a minimum list ... should be laid down", "That criterion
# should consist of"
_SCOPE_SHOULD = rx(r"\bshould\s+(?:\w+ly\s+|also\s+|therefore\s+)?(?:be\s+able\s+to|be\s+empowered\s+to|have\s+the\s+"
                   r"right\s+to|be\s+without\s+prejudice\s+to|be\s+laid\s+down\b|not\s+apply\s+to|consist\s+of|be\s+"
                   r"(?:considered|understood|construed|regarded)\s+(?:as|to\s+be)\b)")
_PERMISSION = rx(r"\bmay\b", r"\b(?:is|are)\s+(?:permitted|allowed|entitled|authorised)\s+to\b", r"\bcan\b",
                 # a regulator's stated practice: "the Regulator would permit the firm to rely on ..."
                 r"\b(?:will|would)\s+(?:normally\s+|generally\s+|usually\s+)?(?:permit|allow)\b")


class _Words(TypedDict):
    """The data file's word lists as the rules read them."""

    verbs: frozenset[str]
    parties: frozenset[str]
    duties: frozenset[str]
    particles: dict[str, str]  # a verb -> the particle that makes it a phrasal verb of duty ("account" -> "for")
    nouns: frozenset[str]
    acronyms: frozenset[str]
    third_person: frozenset[str]


@lru_cache(maxsize=1)
def _data() -> _Words:
    data = _words_file()
    duties = frozenset(data["verbs"]) - frozenset(data["stative"])
    return {"verbs": frozenset(data["verbs"]), "parties": frozenset(data["parties"]), "duties": duties,
            "particles": dict(data["particles"]),
            "nouns": frozenset(data["nouns"]),
            "acronyms": frozenset(data["acronyms"]),
            # only the third-person forms ("maintains", not "maintain"): a practice stated by its doer; not those
            # that are plural nouns more often ("Security measures encompass ...", "Antivirus alerts for ...")
            "third_person": frozenset(_third_person(v) for v in duties) - frozenset(data["verbs"])
            - frozenset(_third_person(v) for v in data["plural_nouns"])}


class PartyWords(TypedDict):
    lower: frozenset[str]  # matched in any case: role words, the subjects' last words and general persons
    upper: frozenset[str]  # matched as written: role acronyms ("IT", not "it")


@lru_cache(maxsize=1)
def party_words() -> PartyWords:
    """The words that name someone (agents/requirement_verbs.json's parties, the last word of each subject,
    persons), singular or plural, and the role acronyms."""
    data = _words_file()
    words = {*data["parties"], *(s.split()[-1] for s in data["subjects"]), *data["persons"]}
    plural = {_third_person(w) for w in words}  # a noun's plural takes the verb's -s, -es, -ies ("authorities")
    return {"lower": frozenset(words | plural), "upper": frozenset(data["acronyms"])}


def duty_verbs() -> frozenset[str]:
    """The verbs that state a duty (agents/requirement_verbs.json's verbs less the stative ones), in their base
    form."""
    return _data()["duties"]


def _third_person(verb: str) -> str:
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "z", "o")) else "s")


# What may stand before an imperative: list labels ("a.", "(b)", "1.", "ii)", "-", "*"), "Please".
_LABEL = re.compile(rf"{LEADING_LABELS.pattern}(?:please\s+)?", re.IGNORECASE)
_WORDS = re.compile(r"[A-Za-z][\w'-]*")
# A sentence whose own verb comes early reads its first word as a noun: "Access to the room is restricted",
# "Record retention schedules are reviewed", "Review is performed annually".
_FINITE = re.compile(r"^(?:is|are|was|were|has|have|had|will|would|can|could|may|might|should|must|shall|does|do|"
                     r"did|means|includes?|refers)$", re.IGNORECASE)


_DETERMINERS = frozenset("the a an its their this these those any each every all our your his her".split())
# Manner adverbs before a list point's verb: "(b) quickly, appropriately and effectively respond to ...",
# "(ii) Periodically review ..."
_LEADING_ADVERBS = re.compile(r"^(?:(?!(?:comply|apply|supply|reply|rely|multiply)\b)[a-z]+ly\b"
                              r"(?:,\s*|\s+and\s+|\s+or\s+|\s+))+(?=[a-z])", re.IGNORECASE)
_WEAK_MODAL = re.compile(r"\b(?:should|may|can|could|might|would|will)\b", re.IGNORECASE)
# An aside in brackets that opens with a relative or conditional word: "(which may be electronic)"
_ASIDE = re.compile(r"\((?:which|that|who|where|when|if|as|e\.g\.|i\.e\.|such\s+as)\b[^()]*\)", re.IGNORECASE)
# "may not be" of a state, a possibility and not a bar: "your phone may not be [ready]", "it may not be possible to
# ...", "may not be able to", "may not be appropriate for some uses", "may not be required to respond" (not "may not
# be disclosed", a participle, which bars)
_MAY_NOT_BE_STATE = re.compile(r"\bmay\s+not\s+be\b((?:\s+(?:\w+ly\s+)?(?:available|ready|possible|able|enough|"
                               r"sufficient|accurate|complete|appropriate|suitable|feasible|necessary|relevant|known|"
                               r"clear|obvious|practical|practicable|present|aware|true|correct|reliable|"
                               r"representative|applicable|effective|adequate|needed|required)\b)|\s*[.,;:)]|\s*$)",
                               re.IGNORECASE)
# may / can of possibility: what a thing may bring about, not what someone may do (not "allow", "reduce",
# "increase": "the Regulator may allow offsets", "we may reduce the penalty" are powers)
_POSSIBILITY = re.compile(r"\b(?:may|can|could|might|will)\s+(?:also\s+)?(?:assist|help|enable|result|lead|cause|"
                          r"occur|affect|indicate|contribute|impact|arise|happen|exist)\b", re.IGNORECASE)
# "Implement:", "Establish and maintain:": a requirement verb alone before the list it governs
_BARE_LEAD_IN = re.compile(r"([A-Z][a-z]+)(?:\s+(?:and|or|and/or)\s+([a-z]+))?\s*:")
_CLAUSE_WORDS = frozenset("when if where whenever unless before after until within that which who whose and or but "
                          "because so in on at by for from with".split())


_SUBORDINATE = frozenset("why how what whether that which who when where if".split())


# A procedure step's title of one to four capitalised words and a colon, before the step's own imperative
_STEP_TITLE = re.compile(r"^(?:[A-Z][\w-]*\s+){0,3}[A-Z][\w-]*:\s+(?=[A-Z][a-z]+\s+[a-z])")


def _imperative(text: str) -> Modality | None:
    """Obligation for "Disable accounts ...", prohibition for "Do not use ..." / "Never share ...", None
    for a sentence that does not open with a requirement verb in its base form."""
    label = _LABEL.match(text)  # it matches the empty string at least
    body = text[label.end():] if label else text
    # a step's short title before it ("Technical Event: Assign the issue to a technical resource ...")
    body = _STEP_TITLE.sub("", body, count=1)
    if re.match(r"(?:Do\s+not|Don't|Never)\s+[a-z]", body):
        return Modality.PROHIBITION
    # "(g) test, on a regular basis, the plans ...": the verb's object after an inserted phrase
    body = re.sub(r"^([a-z]+),[^,;]{1,60},", r"\1", body, flags=re.IGNORECASE)
    if _list_point(text):
        body = _LEADING_ADVERBS.sub("", body)
    words = _WORDS.findall(body)[:9]
    # a bare verb that introduces its list ("(ii) Implementation specifications. Implement: (A) ... (B) ..."):
    # the duties are the points
    if (lead := _BARE_LEAD_IN.fullmatch(body.strip())) and all(
            w.lower() in _data()["verbs"] for w in lead.groups() if w):
        return Modality.OBLIGATION
    # a point of a list may open with its verb in lower case ("(e) identify key dependencies ..."), a duty verb
    # ("- support teams who operate ..." is the list's content)
    lower = _list_point(text) and body[:1].islower() and words[:1] != [] and words[0] in _data()["duties"]
    if len(words) < 3 or body.rstrip().endswith("?") or not (words[0][0].isupper() or lower):
        return None
    # a point of a list goes on into the next ("b. indicate if You modified the Licensed Material ...; and")
    ended = re.sub(r"[;,]\s*(?:and|or|and/or)$", ";", body.rstrip())
    if _list_point(text) and words[0] == "Be" and ended.endswith((";", ".")):
        return Modality.OBLIGATION  # "(A) Be in the form of either a conspicuous posting ...; and"
    if words[0].lower() not in _data()["verbs"] or re.match(r"[A-Z][a-z]", words[1]):
        return None  # not a requirement verb, or a heading in title case ("Account Management")
    particle = _data()["particles"].get(words[0].lower())
    if particle and words[1].lower() != particle:
        return None  # "Account for ...", but "(B) Account balance information, ...": a noun
    if not ended.endswith((".", ";", ":", ")", "]")) and (
            len(words) < 4 or sum(w[0].isupper() for w in words[1:]) * 3 >= len(words) - 1):
        return None  # a title, not a sentence ("Determine Residence", "Issue directions for OTC Contracts")
    if words[1].lower() in ("that", "whether"):
        return Modality.OBLIGATION  # "Verify that ...", "Ensure that ...", "Assess whether ..."
    # "Regularly test or otherwise monitor ...": a second verb after an adverb
    coordinated = [w.lower() for w in words[1:5] if w.lower() != "otherwise" and not (
        w.lower().endswith("ly") and w.lower() not in _data()["verbs"])][:3]
    if coordinated[:1] in (["and"], ["or"]) and (coordinated[1:2] == ["or"] and coordinated[2:3] or coordinated[1:2]
                                                 )[0] in _data()["verbs"]:
        return Modality.OBLIGATION  # "Evaluate and adjust ...", "Implement and/or review ..."
    if words[1].lower() == "of" or words[1].lower() in _CLAUSE_WORDS and words[0].lower() in _data()["nouns"] and (
            not particle):
        return None  # "Transfer of data ...", "Change in circumstances": a noun (not "Comply with", "Protect by")
    weak = next((i for i, w in enumerate(words[1:8], start=1) if _WEAK_MODAL.fullmatch(w)), None)
    if weak is not None and not any(w.lower() in _SUBORDINATE for w in words[1:weak]):
        return None  # "Back testing ... should be based on ...": the subject, then its own modal verb; not "Document
        # why it would not be reasonable ..." (the modal of the verb's own object clause)
    for i, word in enumerate(words[1:], start=1):
        if word.lower() in _CLAUSE_WORDS or word.lower() in _SUBORDINATE:
            break  # the rest is the imperative's own clause ("... when the accounts have expired", "... why it ...")
        if _FINITE.match(word) and words[i - 1].lower() not in _DETERMINERS:  # not "the means of transfer"
            return None
        # "Log files record user activity": a plural noun, then the sentence's own verb
        if i >= 2 and word.lower() in _data()["verbs"] and words[i - 1].endswith("s"):
            return None
    return Modality.OBLIGATION


def _list_point(text: str) -> bool:
    """The text opens with a list label ("(e) ", "a. ", "- "), not a bare lower-case continuation line."""
    label = _LABEL.match(text)
    return label is not None and re.search(r"[-*\u2022\u25aa).]", text[:label.end()]) is not None


# When a scheduled action is done: "at least fortnightly", "Periodically", "prior to deployment"
_WHEN = re.compile(rf"{PERIOD.pattern}|\b(?:periodically|regularly|routinely|continuously|at\s+least|prior\s+to)\b",
                   re.IGNORECASE)


def _gerund_point(text: str) -> bool:
    """A list point that is an action, opening with a duty verb's -ing form (after an adverb): with a time ("-
    conducting vulnerability scans for systems at least fortnightly", "(3) Periodically assessing your service
    providers based on the risk"), or on a determined object ("- maintaining a proper chain of custody"), or two
    actions joined ("(1) Implementing and periodically reviewing access controls"); not a noun ("- reporting of
    incidents", "(D) Testing and revision procedures") nor a list of things ("* Scanning tools and devices;"). Such
    a point takes its lead-in's force, which it does not carry: most lead-ins of such lists impose (on the
    development labels, 13 of 16 such points are duties; the others a licence's list of terms one may add, such as
    "c) Prohibiting misrepresentation of the origin of that material", which the determined-object test leaves
    out). Pure."""
    if not _list_point(text):
        return False
    label = _LABEL.match(text)
    words = _WORDS.findall(text[label.end() if label else 0:])[:5]
    if words and words[0].lower().endswith("ly"):
        words = words[1:]
    after = [w.lower() for w in words[2:] if not w.lower().endswith("ly")][:1]  # "Implementing and periodically ..."
    if len(words) < 3 or not words[0].lower().endswith("ing") or words[1].lower() == "of" or (
            words[1].lower() in ("and", "or") and not (after and after[0].endswith("ing"))):
        return False
    stem = words[0].lower()[:-3]
    # with no time, an action on a determined object ("- maintaining a proper chain of custody") or two actions
    # ("(1) Implementing and periodically reviewing ..."), not a list of things ("* Scanning tools and devices; ...")
    acts = _WHEN.search(text) is not None or words[1].lower() in _DETERMINERS | {"and", "or"}
    return acts and bool({stem, stem + "e", stem[:-1]} & _data()["duties"])


_COLLECTIVE = frozenset("staff personnel workforce".split())  # parties that take a plural verb
_ADVERBS = frozenset("also promptly immediately annually regularly then periodically formally".split())


# A policy's duty in the present passive with its period: "The incident response plan is tested annually",
# "Access rights are reviewed at least quarterly", "Logs are retained for one year".
# Not a consequence under a condition ("Your licence is reinstated if you cure the violation within 30 days").
_PERIODIC_PASSIVE = re.compile(rf"^(?!.*\b(?:if|unless|provided\s+(?:that|it|they|you|such)|in\s+the\s+event)\b)"
                               rf"(?:(?!\b(?:when|where)\b)[^,;:])*?\b(?:is|are)\s+(?:\w+ly\s+)?"
                               rf"[a-z]+(?:ed|wn|en|pt)\b[^.;]*?(?:{PERIOD.pattern})", re.IGNORECASE)


def _present_duty(text: str, future: bool = False) -> bool:
    """A named party's duty in the present tense: "IT terminates access within five business days",
    "The Security Team reviews firewall rules quarterly", "Managers approve access requests", "* The COO is to
    notify team members"; with `future` (a rule text's procedure), also "The IT Manager will check the drive"."""
    label = _LABEL.match(text)  # it matches the empty string at least
    words = text[label.end() if label else 0:].split()[:8]
    opened = bool(words) and words[0][0].isupper()
    if words and words[0].lower() in ("the", "all", "each", "every", "our", "any"):
        words = words[1:]  # "* the COO is to notify" after an opening condition, too
    else:
        opened = False
    # the party's name capitalised, or after a capitalised determiner ("The password manager locally encrypts ...")
    if not words or not (words[0][0].isupper() or opened) or words[0].lower() in _CLAUSE_WORDS:
        return False  # not "When personnel send files ..., they bypass controls"
    data = _data()
    for k in range(1, min(4, len(words) - 1) + 1):
        rest = [w for w in words[k:] if w.lower() not in _ADVERBS and not (
            w.lower().endswith("ly") and w.lower() not in data["verbs"])]
        party = words[k - 1].strip(",")
        plural = party.lower().endswith("s") or party.lower() in _COLLECTIVE
        if party.islower() and party.endswith("s") and not party.endswith(("ss", "us", "is")) and rest and (
                rest[0] in data["third_person"]):
            continue  # "users ensures": not the verb's subject ("Having uniquely identifiable users ensures ...")
        if (party.lower() in data["parties"] or party in data["acronyms"]) and rest and _party_duty(
                rest, future, plural, k == 1 and text.rstrip().endswith(".")):
            return True
    return False


def _party_duty(rest: list[str], future: bool, plural: bool, compound: bool) -> bool:
    """What follows a named party states its duty: a duty verb ("reviews"), "is to" + a verb ("is to notify"), or
    with `future` "will" + a duty verb ("will check"); with `compound` (the party opens a statement), a second word
    of its role, then the verb ("Vendor contact sends ...")."""
    data = _data()
    if rest[0] in data["third_person"] or rest[0] in data["duties"] and plural:
        return True  # "IT terminates", "Managers approve"; not "Security audit logs" (a noun after a noun)
    if compound and rest[1:2] and rest[1] in data["third_person"] and rest[0].islower() and (
            rest[0] not in _CLAUSE_WORDS):
        return True  # the party's role in two words: "Vendor contact sends the answers file back to reviewer."
    if rest[0] in ("is", "are") and rest[1:2] == ["to"] and len(rest) > 2:
        return rest[2] in data["verbs"]
    return future and rest[0] == "will" and len(rest) > 1 and rest[1] in data["duties"]


# Freedom from a duty stated outright: "is not required to", "need not", "is exempt from", "does not apply to"
_EXEMPT = rx(r"\b(?:is|are|be|shall\s+be)\s+exempt(?:ed)?\s+from\b",
             r"\b(?:does|do|shall)\s+not\s+apply\s+(?:to|where|if|when)\b")


def exempts(sentence: str) -> bool:
    """The sentence frees its subject from a duty ("A controller is not required to communicate a breach to data
    subjects if the personal data was encrypted ..."; "need not"; "is exempt from"; "This Part does not apply
    to ..."): modality none, but the answer to "When is a firm not required to ...?". Pure."""
    text = normalize_ws(sentence)
    return bool(_NOT_REQUIRED.search(_RELATIVE_REQUIREMENT.sub(" that", text)) or _EXEMPT.search(text))


@lru_cache(maxsize=1)
def _time_column() -> re.Pattern[str]:
    words = sorted(_words_file()["time_columns"], key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(r"\s+".join(map(re.escape, w.split())) for w in words) + r")\b",
                      re.IGNORECASE)


def sets_time(pairs: list[tuple[str, str]]) -> bool:
    """A table row that sets a time limit or a frequency: a cell stating a period under a column its header names
    for one ("Sev Rating: P0; SLA: 3 days", "Record: Payroll; Retention period: 7 years", "Review frequency:
    Annually"; agents/requirement_verbs.json's time_columns), which the row's words alone never say is a rule.
    `pairs`: the row's (column header, cell) pairs (engine.text.table_pairs). Pure."""
    return any(header and _time_column().search(header) and PERIOD.search(cell) for header, cell in pairs)


_LIMIT_PREDICATE = re.compile(rf"\s(?:is|are|shall\s+be|will\s+be)\s+(?:(?:at\s+(?:most|least)|no\s+(?:more|later|"
                              rf"longer)\s+than|up\s+to|within|not\s+to\s+exceed)\s+)?(?:{PERIOD.pattern})",
                              re.IGNORECASE)


def sets_time_limit(text: str) -> bool:
    """A rule text's sentence whose subject is a time limit or a frequency and whose predicate is a period: "The
    expected timeline for remediation, from when a patch is available to when it is applied, is 90 days.", "The
    retention period for audit logs is 12 months.": it sets the limit, as a table's SLA column does (`sets_time`).
    Not "The period is described in Appendix A", nor a sentence that opens with a condition. Pure."""
    predicate = _LIMIT_PREDICATE.search(text)
    if predicate is None or _CONDITION_CLAUSE.match(text):
        return False
    subject = text[:predicate.start()].split(",")[0]  # its head, before any clause set off by a comma
    return _time_column().search(subject) is not None


def defines(sentence: str) -> bool:
    """The sentence defines a term or says what a text describes ("(3) 'legacy ICT system' means ..."): it binds
    no one, whatever the lead-in of its list says. Pure."""
    return _DEFINITION.search(normalize_ws(sentence)) is not None


def classify_modality(sentence: str, *, source_type: str = "") -> Modality:
    """The deontic force of a sentence (`source_type`: the kind of document it stands in, where known).

    Handles negation and scope ("is not required to", "nothing in this rule requires" -> none),
    definitions that mention "must" without imposing it (none), conditional and passive forms
    ("where ..., the firm is to notify", "it is mandatory for" -> obligation), obligations with no
    modal verb ("has a duty to"), and "may not"/"must not"/"is prohibited" (prohibition); imperatives
    ("Disable ...": obligation, "Do not ...": prohibition) and a named party's present-tense duty ("IT
    terminates access ..."): obligation.
    """
    # what may not be so, not what may not be done
    text = _MAY_NOT_BE_STATE.sub(r"might not be\1", normalize_ws(sentence))
    scoped = _RELATIVE_REQUIREMENT.sub(" that", text)  # not "services that are not required to ..."
    if not text or _DEFINITION.search(text) or _NOT_REQUIRED.search(scoped) or withdrawn(text):
        return Modality.NONE  # a withdrawn control's notice is none, whatever it says was incorporated
    if _COMPOSED.search(text) and not _OBLIGATION.search(_COMPOSED.sub(" ", text)):
        return Modality.NONE  # what a body is made of: "The Oversight Forum shall be composed of:"
    text = _CONDITIONAL_SHOULD.sub("If", text)  # "Should the Program prove defective, you assume ..."
    if _POWER.search(text):
        return Modality.PERMISSION
    # Neither an aside ("maintain a written (which may be electronic) record") nor a possibility ("can assist",
    # "may result in": what may happen, not what may be done) permits or recommends anything
    aside = _ASIDE.sub(" ", text)
    only = _ONLY.search(aside)
    if only and not _in_relative_clause(aside, only.start()):  # not "accounts that may only have ..."
        return _duty_before(aside, only.start(), source_type) or Modality.PROHIBITION
    if _REQUIRED_MARK.search(text):
        return Modality.OBLIGATION
    imperative = _imperative(aside)
    for pattern, modality in ((_PROHIBITION, Modality.PROHIBITION), (_OBLIGATION, Modality.OBLIGATION)):
        match = pattern.search(scoped)
        # "Protect against uses that are not permitted": the negation is the relative clause's, the duty the verb's
        if match and not (imperative and _in_relative_clause(scoped, match.start())):
            return (modality is Modality.PROHIBITION and _duty_before(scoped, match.start(), source_type)) or modality
    if imperative is not None:
        return imperative
    if _gerund_point(aside):
        return Modality.OBLIGATION
    plain = _POSSIBILITY.sub(" ", aside)
    for pattern, modality in ((_RECOMMENDATION, Modality.RECOMMENDATION), (_PERMISSION, Modality.PERMISSION)):
        if pattern.search(_SCOPE_SHOULD.sub(" ", plain) if modality is Modality.RECOMMENDATION else plain):
            return modality
    if source_type == "contract" and (party := _contract_party_duty(text)) is not None:
        return party
    rule_text = source_type in RULE_TEXT
    main = _main_clause(text)
    if _present_duty(text, future=rule_text) or _present_duty(main, future=rule_text) or _PERIODIC_PASSIVE.search(text):
        return Modality.OBLIGATION
    # with no modal verb anywhere, an imperative after an opening condition: "If an action ... is required to be
    # documented, maintain a written record"
    if any(_imperative(main) is Modality.OBLIGATION for main in _after_condition(plain)):
        return Modality.OBLIGATION
    if _GERUND_SUBJECT.match(main):
        return Modality.NONE  # what doing something achieves: "Having uniquely identifiable users ensures ..."
    if rule_text and _NEGATED_PRACTICE.search(_PURPOSE.sub(" ", _CONDITION_CLAUSE.sub(" ", main))) and (
            not _DESCRIBES.search(main)):
        return Modality.PROHIBITION  # "Temporary access is not granted to systems that ...", "... are not accessed"
    if rule_text and _CONTENT_CONTROL.match(text):
        return Modality.OBLIGATION  # "A cyber security incident register contains the following for each ...:"
    if rule_text and sets_time_limit(main):
        return Modality.OBLIGATION  # "The expected timeline for remediation ... is 90 days."
    practice = (_states_practice(main) or _practice_active(main, future=source_type == "policy")
                or (rest := _after_opening(main)) is not None and _practice_active(rest, future=source_type == "policy")
                or _plural_practice(main) or _party_inside(text)
                or _has_practice(main)
                or source_type == "policy" and _FUTURE_PASSIVE.search(_CONDITION_CLAUSE.sub(" ", main)) is not None)
    return Modality.OBLIGATION if rule_text and practice else Modality.NONE


# In a rule text, what a record or a plan of a kind holds, over the list of it: "A cyber security incident register
# contains the following for each cyber security incident:", "An outsourced cloud service register contains the
# following ..." (a control setting its content; "This section contains the following" describes, and has no "A")
_CONTENT_CONTROL = re.compile(r"^(?:\W*\w{1,4}[.)]\s+)?(?:An?|Each|Every)\s+(?:[\w'-]+\s+){0,6}?(?:contains|"
                              r"includes|covers|records|lists|specifies)\s+(?:at\s+(?:a\s+)?minimum\s+|at\s+least\s+)?"
                              r"the\s+following\b[^.]*:\s*$")


# A contract's party and what it "will" do: "Provider will delete Customer Content within 60 days", "each party
# will comply with ...", "However, Provider will try to inform Customer ...", "Customer will not (and will not allow
# anyone else to) submit ...", "Neither party will take any action ...". The party is a defined name with no
# determiner ("Provider", "Customer", "Recipient"), "each / either / neither / the other party" or "the parties";
# not a thing ("The Governing Law will govern", "This MNDA will bind", "No terms ... will apply") nor a legal
# effect ("will be", "will survive").
_CONTRACT_PARTY = re.compile(
    r"(?:^(?:[-*]\s+|\(?\w{1,4}[.)]\s+)?|[,;:]\s+|\band\s+|\)\s+)"
    r"(?P<party>(?i:(?:each|either|neither|the\s+other|a|that)\s+party|the\s+parties|"
    r"(?:the\s+)?(?:receiving|disclosing)\s+party)|(?:[Ee]ach|[Ee]ither|[Nn]either)\s+[A-Z][a-z]+|"
    r"(?!(?:This|That|These|Those|It|Its|Such|Any|No|All|Each|The|Nothing|There|Neither|Either|We|You|If|When|"
    r"Where|Unless|However|Upon|During|Within|In|For|Notwithstanding)\b)[A-Z][a-z]+)"
    r"\s+(?:\w+ly\s+)?will\s+(?P<not>not\s+(?:\([^)]*\)\s+)?)?"
    r"(?!not\b|no\s+longer\b|be\b|have\b|survive|control|govern|apply|terminate|expire|continue|remain|prevail|"
    r"constitute|bind|inure)[a-z]+")
# A contract's own duty words: "Customer represents and warrants that ...", "Customer is responsible for the
# accuracy ...", "Neither party is authorized to bind the other ..."
_CONTRACT_DUTY = re.compile(r"\b(?:represents\s+and\s+warrants|warrants\s+that|(?:is|are)\s+(?:solely\s+)?"
                            r"responsible\s+for)\b")
_CONTRACT_BAR = re.compile(r"^(?:\W*\w{1,3}[.)]\s+)?Neither\s+party\s+(?:is|are)\s+(?:authori[sz]ed|entitled|"
                           r"permitted)\s+to\b", re.IGNORECASE)


def _contract_party_duty(text: str) -> Modality | None:
    """A contract's duty or bar on a named party with no modal verb (see _CONTRACT_PARTY); None otherwise."""
    if _CONTRACT_BAR.search(text):
        return Modality.PROHIBITION
    match = _CONTRACT_PARTY.search(text)
    if match and not _in_relative_clause(text, match.start("party")):
        negative = match.group("not") or match.group("party").lower().startswith("neither")
        return Modality.PROHIBITION if negative else Modality.OBLIGATION
    if _CONTRACT_DUTY.search(text):
        return Modality.OBLIGATION
    return None


def _duty_before(text: str, at: int, source_type: str) -> Modality | None:
    """Obligation when a clause coordinated before the restriction at `at` states a duty ("Key materials are
    protected with access controls, and may only be accessed by privileged accounts": a duty and a prohibition
    together are an obligation); else None."""
    cut = max(text.rfind(" and ", 0, at), text.rfind(";", 0, at))
    if cut <= 0:
        return None
    head = text[:cut].rstrip(" ,;")
    return Modality.OBLIGATION if classify_modality(head, source_type=source_type) is Modality.OBLIGATION else None


def _main_clause(text: str) -> str:
    """The text without an opening condition ("If X is not communicated, they will be unaware ..." -> "they will
    be unaware ..."); the whole text where the comma cut a list of the main clause's verbs instead ("If an incident
    is discovered the SIRT completes the investigation, implements ...")."""
    main = _OPENING_CONDITION.sub(" ", text).strip()
    first = _WORDS.findall(main)[:1]
    if first and first[0].lower() in _data()["third_person"] | _data()["verbs"]:
        return text
    return main[:1].upper() + main[1:]


# An opening condition, at the start or after a list label or a comma ("Subsequently, if the patch is approved,
# ASD will ..."): what it says happens is not the rule the sentence states.
_OPENING_CONDITION = re.compile(r"(?:^|(?<=[,)*.\u2022-])\s+)(?:if|when|where|whenever|unless|once|in\s+the\s+event\s+"
                                r"(?:of|that)|in\s+case\s+of|depending\s+on)\b[^,;:]*,\s*",
                                re.IGNORECASE)


# What may open a sentence before its imperative: a condition, or a phrase of reference or scope ("(B) In
# accordance with § 164.308(b)(2), ensure that ...")
_OPENER = re.compile(r"(?:if|where|when|whenever|unless|once|before|after|in\s+accordance\s+with|subject\s+to|"
                     r"in\s+the\s+event\s+(?:of|that)|in\s+case\s+of|depending\s+on|"
                     r"for\s+the\s+purposes?\s+of|to\s+the\s+extent|in\s+addition|as\s+part\s+of)\b", re.IGNORECASE)


def _after_condition(text: str) -> list[str]:
    """The clauses that may follow an opening condition ("If an action, activity or assessment is required ...,
    maintain a written record" -> ["Activity or assessment ...", "Maintain a written record"]), each capitalised;
    [] when the sentence does not open with one."""
    label = _LABEL.match(text)  # it matches the empty string at least
    if not _OPENER.match(text[label.end() if label else 0:]):
        return []
    out = []
    for comma in [m.end() for m in re.finditer(r",\s*", text)][:6]:
        main = text[comma:]
        if main[:1].islower():
            out.append(main[:1].upper() + main[1:])
    return out


def _in_relative_clause(text: str, at: int) -> bool:
    """The match at `at` stands in a relative clause ("... uses that are not permitted", "which may not")."""
    return re.search(r"\b(?:that|which|who|whom)\s+(?:\w+\s+){0,2}$", text[:at], re.IGNORECASE) is not None


# Documents whose statements of practice are their rules: a policy's "Backups are retained for 90 days" or a
# standard's "Event logs are captured and stored in a consistent format" states what must be done, where a
# statute's present tense describes. (Source types: engine.config.SOURCE_TYPES.)
RULE_TEXT = frozenset({"policy", "standard"})
# What a rule text's present tense states when it is not a rule: definitions, scope, purpose, description.
_DESCRIBES = re.compile(r"\b(?:is|are)\s+(?:\w+ly\s+)?(?:defined|described|based|designed|intended|meant|located|"
                        r"available|considered|known|called|referred|listed|shown|included|provided\s+in|set\s+out|"
                        r"outlined|explained|summari[sz]ed|derived|expected|likely|able|subject)\b|"
                        r"\bappl(?:y|ies)\s+(?:only\s+|also\s+|equally\s+)?(?:to|in|for|where|when)\b|"
                        r"(?<!\bthat\s)(?<!\bwhich\s)(?<!\bwho\s)\b(?:scope|means|refers|describes|outlines|contains|"
                        r"consists)\b|"
                        # a pointer to more: "Additional details are documented on the [Development Wiki]"
                        r"^\W*(?:additional|more|further)\s+(?:details|information|guidance)\b|"
                        # a document describing itself: "This section provides procedures for recovering ..."
                        r"^\s*(?:this|the)\s+(?:section|policy|document|chapter|part|procedure|plan|guideline)s?\s+"
                        r"(?:\w+ly\s+)?(?!(?:is|was|has|does)\b)[a-z]+s\b|"
                        # not "fit for purpose", nor a rule's own aim ("... for the purpose of collecting evidence")
                        r"(?<!for\sthe\s)\bpurposes?\s+(?:of|is)\b",
                        re.IGNORECASE)
# A past participle, regular or one of the irregular ones rule texts use
_PARTICIPLE = (r"(?:[a-z]+(?:ed|wn|en|pt|ne)|put|set|made|kept|held|sent|built|run|read|paid|sought|taught|brought|"
               r"bought|caught|met|led|withheld|bound)")
_PASSIVE = re.compile(rf"\b(?:is|are)\s+(?:\w+ly\s+|always\s+)?(?:not\s+)?{_PARTICIPLE}\b|"
                      r"\b(?:is|are)\s+(?:solely\s+|fully\s+|jointly\s+)?responsible\s+for\b|"
                      r"\bis\s+(?:\w+ly\s+)?the\s+responsibility\s+of\b", re.IGNORECASE)


def _states_practice(text: str) -> bool:
    """In a rule text (a policy, a standard): a statement of practice in the present passive ("are documented
    in contractual arrangements", "is maintained by the Security Officer") or of responsibility ("IT is
    responsible for recovery"), and not a definition, scope or description, nor a passive inside a condition
    ("threats of serious consequences if payment is not made"). Pure."""
    unconditioned = _CONDITION_CLAUSE.sub(" ", text)
    return bool(_PASSIVE.search(unconditioned)) and not _DESCRIBES.search(text) and not text.rstrip().endswith("?")


# A rule text's practice negated: "Special access is not granted until approval", "systems are not accessed or
# administered by a service provider unless ...": what is not done (not "is not limited to")
_NEGATED_PRACTICE = re.compile(rf"\b(?:is|are)\s+(?:\w+ly\s+)?not\s+(?!limited\b){_PARTICIPLE}\b", re.IGNORECASE)
# A policy's procedure in the future passive: "Critical data will be tagged upon creation"
_FUTURE_PASSIVE = re.compile(r"\bwill\s+(?:\w+ly\s+)?be\s+(?:\w+ly\s+)?[a-z]+(?:ed|wn|en|pt)\b", re.IGNORECASE)
_CONDITION_CLAUSE = re.compile(r"\b(?:if|unless|when|whenever|once)\b[^,;.]*", re.IGNORECASE)
# A purpose, whose negation is what the practice prevents ("A tool is implemented to ensure compromised passwords
# are not used"), not a practice negated
_PURPOSE = re.compile(r"\b(?:to\s+(?:ensure|guarantee|make\s+sure|verify|confirm)|so\s+that|in\s+order\s+(?:to|that)|"
                      r"such\s+that)\b.*", re.IGNORECASE)
# A gerund as the subject, with what it achieves: "Having uniquely identifiable users ensures accountability",
# "As such, ensuring that privileged accounts ... minimises opportunities ...", "Patching reduces risk"; not a
# preposition ("Following an incident, ...") nor a gerund that names a practice ("Logging is enabled")
_GERUND_SUBJECT = re.compile(
    r"^\W*(?:(?:as\s+such|therefore|however|in\s+addition|additionally|furthermore|moreover|similarly|"
    r"in\s+particular),\s+)?(?!(?:during|following|including|according|regarding|concerning|notwithstanding|"
    r"pending|excluding|considering|depending|starting|beginning|bring|string|thing|nothing|something|anything|"
    r"everything)\b)[a-z]+ing\s+(?!of\b)[^;:]*?\b(?:ensures|minimi[sz]es|reduces|helps|assists|allows|enables|"
    r"prevents|protects|supports|increases|improves|limits|mitigates|lowers|decreases|strengthens|provides|gives|"
    r"makes)\b", re.IGNORECASE)


_PRONOUNS = frozenset("this that these those it they".split())  # "This will reduce the cost": no party

# An opening phrase of a few words before the doer: "By default, the MoJ retains raw logs ... for at least 90 days",
# "At a minimum, the Security Team reviews ..."; not an example ("For example, the company keeps ...").
_OPENING = re.compile(r"^(?!for\s+(?:example|instance)\b)(?:by|at|in|as|for|on|under|with|after|before|during|within|"
                      r"per|across|outside|from)\s+(?:[\w'-]+\s+){0,3}?[\w'-]+,\s+(?=\S)", re.IGNORECASE)


def _after_opening(text: str) -> str | None:
    """The statement after its opening phrase (`_OPENING`), capitalised as a statement opens; None where it has
    none. Pure."""
    opening = _OPENING.match(text)
    if opening is None:
        return None
    rest = text[opening.end():]
    return rest[:1].upper() + rest[1:]


def _practice_active(text: str, future: bool = False) -> bool:
    """In a rule text: a practice stated in the present active by its doer ("Corvid Labs maintains a minimum
    necessary approach", "The Security Officer actively monitors ...") or as a list point whose party is in the
    lead-in ("* Maintains a program that ..."): a requirement verb in its third-person form opens the point or
    follows a capitalised subject of at most five words (adverbs in -ly skipped), or with `future` (a policy's
    procedure, not a standard's account of what its publisher will do) "will" and a duty verb. Pure."""
    forms = _data()["third_person"]
    label = _LABEL.match(text)  # it matches the empty string at least
    labelled = label is not None and label.end() > 0
    words = _WORDS.findall(text[label.end():] if label else text)[:9]
    if not words or _DESCRIBES.search(text) or text.rstrip().endswith("?"):
        return False
    if labelled and words[0][0].isupper() and words[0].lower() in forms:
        return True
    if not words[0][0].isupper() or not text.rstrip().endswith((".", ";")):
        return False  # a fragment or a title, not a statement
    start = 1 if words[0].lower() in ("the", "all", "each", "every", "our", "any") else 0
    for i in range(start + 1, min(start + 6, len(words))):
        subject = words[start:i]
        # the doer by its name ("Corvid Labs", "The Security and Privacy Officer", "IT"), not a gerund or a
        # common noun ("Retaining records ...", "The types of exercises include ...")
        if not all(w[0].isupper() and not w.endswith("ing") or w == "and" for w in subject):
            return False
        rest = [w for w in words[i:] if not w.lower().endswith("ly")]
        if rest and rest[0].lower() in forms and rest[0][0].islower():
            return True
        if future and rest[:1] == ["will"] and rest[1:2] and rest[1] in _data()["duties"] and (
                subject[-1].lower() not in _PRONOUNS):
            return True  # a policy's procedure: "Corvid Labs will maintain a list of ..."
    return False


# What opens a clause whose subject is not the sentence's doer: a condition, a relative or a complement ("If the
# Security Officer approves ...", "... that the Security team reviews ...", "... who reports ...").
_SUBORDINATORS = frozenset("if when where whenever unless once that which who whom whose while because although "
                           "whether".split())


def _party_inside(text: str) -> bool:
    """In a rule text: a named party's duty stated inside the sentence, after an opening phrase or condition
    that has no comma ("If the issue is a security incident the Security Officer activates the team", "Immediately
    upon observation Acme members report ...", "In the event of a suspected fraud, the Finance Team will inform the
    auditors"): a role word or acronym, capitalised or after a capitalised word, then its duty (as
    `_party_duty` reads it, a rule text's "will" too). Not a party inside a condition, relative or complement
    clause that has no verb of its own before it ("If the Security Officer approves ...", "This ensures that the
    Security team reviews ..."). Pure."""
    if _DESCRIBES.search(text) or text.rstrip().endswith("?"):
        return False
    label = _LABEL.match(text)  # it matches the empty string at least
    body = text[label.end() if label else 0:]
    found = list(_WORDS.finditer(body))[:30]
    words = [m.group() for m in found]
    data = _data()
    open_clause = False  # a subordinate clause opened and its verb not yet seen
    for k, word in enumerate(words):
        lower = word.lower()
        if k and "," in body[found[k - 1].end():found[k].start()]:
            open_clause = False  # "In the event of an attack that involves ..., the team will inform ..."
        if lower in _SUBORDINATORS:
            open_clause = True
            continue
        if open_clause and (_FINITE.match(word) or lower in data["third_person"]):
            open_clause = False  # "If the issue is a security incident": its verb seen, the main clause may follow
            continue
        named = word in data["acronyms"] or lower in data["parties"] and (
            word[0].isupper() or k > 0 and words[k - 1][0].isupper() and words[k - 1].lower() not in _DETERMINERS
            and body[found[k - 1].end():found[k].start()].isspace())  # not "Audit/compliance reports, ..."
        if k == 0 or not named or open_clause:
            continue
        rest = [w for w in words[k + 1:] if w.lower() not in _ADVERBS]
        plural = lower.endswith("s") or lower in _COLLECTIVE
        if rest and _party_duty(rest, True, plural, False):
            return True
    return False


# What a rule text's "X has a ..." holds when it states no duty: a power, a right or the document itself.
_HAS_NOT_DUTY = frozenset("authority right rights ability option discretion power powers choice number total".split())
_DOCUMENT_WORDS = frozenset("policy policies document documents section sections standard standards chapter chapters "
                            "part parts annex appendix table figure list".split())
_HAS = re.compile(r"^((?:[A-Za-z][\w&'/-]*\s+){1,5}?)(?:has|have)\s+(?:(?:a|an)\s+|(?:dedicated|documented|designated|"
                  r"established|approved|written|formal|defined|appointed)\s+)(?:[\w-]+\s+){0,2}?([\w-]+)")


def _has_practice(text: str) -> bool:
    """In a rule text: what its subject must have, stated as what it has ("Systems have a continuous monitoring
    plan that includes:", "Acme has dedicated personnel assigned to security"): a capitalised subject of at most
    five words, "has"/"have", then "a"/"an" or an adjective of a set arrangement ("dedicated", "documented").
    Not a power or a right ("The Security Officer has the authority to ...", "... has a right to ..."), not the
    document describing itself ("This policy has a section on ..."), not advice or a question. Pure."""
    label = _LABEL.match(text)  # it matches the empty string at least
    body = text[label.end() if label else 0:]
    found = _HAS.match(body)
    if not found or not body[:1].isupper() or _DESCRIBES.search(text) or not text.rstrip().endswith((".", ":", ";")):
        return False
    subject = [w.lower() for w in found.group(1).split()]
    if any(_FINITE.match(w) or w in _CLAUSE_WORDS or w in _DOCUMENT_WORDS for w in subject):
        return False
    return not {w.lower() for w in found.group(0).split()[len(subject) + 1:]} & _HAS_NOT_DUTY


def _plural_practice(text: str) -> bool:
    """In a rule text: a practice stated in the present by a plural subject of at most six words, an aside
    between commas allowed ("Service providers, including any subcontractors, provide an appropriate level of
    protection ...", "Privileged users complete training annually"): the subject's last word a plural noun,
    then a duty verb's base form. Not a definition, scope or description, and no modal or finite verb in the
    subject ("Malicious actors will ..."). Pure."""
    label = _LABEL.match(text)  # it matches the empty string at least
    body = text[label.end() if label else 0:]
    words = _WORDS.findall(body)[:10]
    if not words or not words[0][0].isupper() or _DESCRIBES.search(text) or not text.rstrip().endswith((".", ";")):
        return False
    for i in range(1, min(7, len(words))):
        noun = words[i - 1].lower()
        if _FINITE.match(noun) or noun in _CLAUSE_WORDS - {"and", "or"}:
            return False  # the subject has its own verb, or a clause opens before any verb
        if (noun.endswith("s") and not noun.endswith(("ss", "us", "is", "ous")) and words[i] in _data()["duties"]
                and words[i][0].islower()):
            return True
    return False
