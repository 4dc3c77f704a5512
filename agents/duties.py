"""Duties: what a requirement makes someone do, so that two requirements can be compared.

A duty is the verb after the modal ("must retain", "shall notify", "must be kept"), read in
families of synonyms (retain/keep/store, notify/report/inform, destroy/delete/dispose...), its
object (what is kept, notified...) and, for notifications and reports, its recipient. Two quotes
impose the same duty when family, object and recipient agree; only then can differing figures
("six years" vs "five years") or opposite force be a conflict.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agents.asks import asked_action, asks_time
from agents.modality import duty_verbs
from agents.quotes import opening_list
from engine.config import AnswerSettings
from engine.terms import key_terms, stem
from engine.text import LEADING_LABELS, NUMBER, NUMBER_WORDS, PERIOD, normalize_ws

_OVERLAP = AnswerSettings().same_duty_overlap  # the default; a run passes its settings' value

# Duties are compared by what they make someone do: the verb after the modal, in families of synonyms.
_DUTY = re.compile(r"\b(?:must|shall|should|will|(?:is|are)\s+(?:required|obliged)\s+to|(?:has|have)\s+a\s+duty\s+to|"
                   r"(?:is|are)\s+to)\s+(?:not\s+)?(?:\w+ly\s+)?(be\s+)?([a-z]+)|"
                   # a policy's duty in the present passive: "The incident response plan is tested annually"
                   r"\b(is|are)\s+(?:\w+ly\s+)?([a-z]+(?:ed|wn|en))\b", re.IGNORECASE)
# Since every requirement verb counts as a known duty (`other_duties`), the words one duty is stated in belong in
# one family, or two statements of it read as two duties.
_FAMILIES = {stem: family for family, words in {
    "retain": "retain keep kept store stored maintain preserv hold held archiv",
    "notify": "notifi report inform tell told alert submit communic escal",
    "destroy": "destroy delet dispos shred eras purg wipe sanitis sanit",
    "review": "review reassess re-assess updat check examin assess evalu audit inspect",
    "provide": "provid give given send sent deliv suppli produc",
    "approve": "approv author authoris authoriz consent",
    "acknowledge": "acknowledg confirm",
    "test": "test exercis rehears drill simul verifi valid",
    "revoke": "revok disabl deactiv remov suspend termin",
    "rotate": "rotat replac regener chang renew",
    "remediate": "remedi patch mitig fix resolv correct",
    "train": "train educ",
}.items() for stem in words.split()}
_OBJECT_END = re.compile(r"\b(?:for|within|in|to|by|from|at|after|before|without|where|when|unless|and|or|not|"
                         r"immediately|promptly|no|until)\b|[,;.]", re.IGNORECASE)
_RECIPIENT = re.compile(r"\b(?:notif(?:y|ied)|inform(?:ed)?|tell|report(?:ed)?\s+(?:\w+\s+){0,3}?to|submit(?:ted)?\s+"
                        r"(?:\w+\s+){0,3}?to|(?:notices?|notifications?)\s+(?:\w+\s+){0,4}?to)"
                        r"\s+(?:the\s+|its\s+|a\s+|an\s+)?((?:[A-Za-z-]+\s+){0,3}[A-Za-z-]+)",
                        re.IGNORECASE)


_DAYS = {"hour": 1 / 24, "day": 1, "week": 7, "month": 365 / 12, "quarter": 365 / 4, "year": 365, "annum": 365}
_ADVERBS = {"hourly": 1 / 24, "daily": 1, "weekly": 7, "monthly": 365 / 12, "quarterly": 365 / 4, "annually": 365,
            "yearly": 365}
_COUNTS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                      "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i > 1}
_UNIT = re.compile(r"\b(business\s+|working\s+)?(hour|day|week|month|quarter|year|annum)s?\b", re.IGNORECASE)


def _value(word: str) -> float:
    word = word.lower().replace(",", "")
    if word[0].isdigit():
        return float(word)
    if word == "hundred":
        return 100.0
    parts = re.split(r"[- ]+", word)
    if parts[0] in _TENS:  # "seventy-two", "twenty four"
        return float(_TENS[parts[0]] + (_COUNTS.get(parts[1], 0) if len(parts) > 1 else 0))
    return float(_COUNTS.get(word, 0))


def _days(phrase: str) -> float | None:
    """A period or frequency in days: "72 hours" 3, "five business days" 7, "every 12 months" 365, "twice a
    year" 182.5, "annually" 365; None for an urgency ("without undue delay", "promptly")."""
    text = phrase.lower()
    if text in _ADVERBS:
        return _ADVERBS[text]
    unit = _UNIT.search(text)
    if unit is None:
        return None
    days = _DAYS[unit.group(2).lower()] * (1.4 if unit.group(1) else 1.0)  # five business days: a calendar week
    number = NUMBER.search(text[: unit.start()])
    count = _value(number.group(0)) if number else (2.0 if "other" in text else 1.0)
    if re.match(r"(?:once|twice|.+\s+times)\b", text):  # "twice a year": a period of half a year
        times = 1.0 if text.startswith("once") else 2.0 if text.startswith("twice") else count
        return days / times
    return days * count


# A count of something that is not a time, in digits or words before its plural noun ("14 characters", "five failed
# login attempts", "two backup copies"); the noun names what is counted.
_QUANTITY = re.compile(rf"(?<![-/.§\w])\b(\d+(?:[.,]\d+)?|{NUMBER_WORDS})\s+(?:\((?:\d+|{NUMBER_WORDS})\)\s+)?"
                       r"(?:(?:[a-z]+-)?[a-z]+\s+){0,2}?([a-z]{3,}s)\b", re.IGNORECASE)  # "10 (ten) attempts" too


# ... and a count written as a measure, its noun singular: "a 15 character minimum", "at least a 12-character
# password", "8-digit PIN" (not "24-hour", a period; not "2-factor", which counts no thing of the rule's)
_MEASURES = (re.compile(rf"(?<![-/.§\w])\b(\d+|{NUMBER_WORDS})\s+([a-z]{{3,}})(?=\s+(?:minimum|maximum|limit)\b)",
                        re.IGNORECASE),
             re.compile(r"(?<![-/.§\w])\b(\d+)-([a-z]{3,})\b(?=\s+[a-z])", re.IGNORECASE))
_NOT_MEASURED = frozenset({"factor", "step", "way", "tier", "level", "year", "month", "week", "day", "hour", "minute",
                           "second", "time", "party", "person", "point"})


# Words before a number that make it a reference, not a count ("Section 4 applies", "Article 28 requires").
_REFERENCE = re.compile(r"(?:section|article|rule|regulation|paragraph|clause|part|chapter|schedule|annex|appendix|"
                        r"point|item|subparagraph|version|no|page|table|figure|§)\.?\s*$", re.IGNORECASE)


def _counts(quote: str) -> list[re.Match[str]]:
    """The counts a quote states (not its periods, nor a reference's number)."""
    text = PERIOD.sub(" ", quote)
    found = [*_QUANTITY.finditer(text), *(m for measure in _MEASURES for m in measure.finditer(text)
                                          if m.group(2).lower() not in _NOT_MEASURED)]
    return [m for m in found if key_terms(m.group(2)) and not _UNIT.fullmatch(m.group(2))
            and not _REFERENCE.search(text[max(0, m.start() - 14):m.start()])]


def quantities(quote: str) -> dict[str, set[float]]:
    """The counts a quote states, by what they count ("not less than 14 characters" -> {"charact": {14.0}}); no
    period ("five business days" is a time, `periods`). Pure."""
    out: dict[str, set[float]] = {}
    for m in _counts(quote):
        out.setdefault(key_terms(m.group(2))[0], set()).add(_value(m.group(1)))
    return out


def _counts_differ(a: str, b: str) -> bool:
    """Both quotes count the same thing, and none of the counts agree ("14 characters" beside "12 characters")."""
    qa, qb = quantities(a), quantities(b)
    return any(not qa[n] & qb[n] for n in qa.keys() & qb.keys())


def figures(quote: str) -> set[str]:
    """The periods and frequencies a quote states ("six years", "72 hours", "annually", "every 12 months"), and
    its counts ("14 characters"), as conflicts name them."""
    return {normalize_ws(m.group(0).lower()) for m in PERIOD.finditer(quote) if _days(m.group(0)) is not None} | {
        normalize_ws(f"{m.group(1)} {m.group(2)}".lower()) for m in _counts(quote)}


def periods(quote: str) -> set[float]:
    """The same, in days, as conflicts compare them: "annually" and "once a year" agree, "at least once
    every 12 months" and "six months" differ, "24 hours" and "five business days" differ."""
    return {round(d, 1) for m in PERIOD.finditer(quote) if (d := _days(m.group(0))) is not None}


# A duty in a light verb and a noun: "notice shall be made to the customers", "shall give notice to the Authority",
# "a notification is provided to ..." notify.
_LIGHT_VERBS = frozenset(key_terms("made make given give provided provide served serve sent send issued issue "
                                   "delivered deliver"))
_NOMINALS = {stem: "notify" for stem in key_terms("notice notification")}


def duty(quote: str) -> tuple[str, set[str], set[str]] | None:
    """(verb family, object terms, recipient terms) of the duty a quote imposes, or None. Pure."""
    text = normalize_ws(quote)
    match = _DUTY.search(text)
    if match is None:
        return None
    word = match.group(2) or match.group(4)
    verb = key_terms(word)
    family = _FAMILIES.get(verb[0], verb[0]) if verb else word.lower()
    if match.group(4) and (not verb or verb[0] not in _FAMILIES):
        return None  # a present passive states a duty only in a known family ("is tested"), not "is required"
    obj = _object(text, match)
    if family in _LIGHT_VERBS or family == "provide":
        family = next((_NOMINALS[t] for t in key_terms(obj) if t in _NOMINALS), family)
    recipient = _RECIPIENT.search(text)
    return family, set(key_terms(obj)), set(key_terms(recipient.group(1))) if recipient else set()


def _object(text: str, match: re.Match[str]) -> str:
    """The words a duty falls on: in the passive what stands before the modal ("Transaction records must be
    kept"), else what follows the verb up to its first preposition, conjunction or stop."""
    if match.group(1) or match.group(3):
        return re.split(r"[,;.]", text[max(0, match.start() - 60):match.start()])[-1]
    rest = text[match.end():]
    end = _OBJECT_END.search(rest)
    return rest[: end.start()] if end else rest


def kind(quote: str) -> tuple[str, str] | None:
    """(modifier, head) of the thing a duty falls on where its last two words name a kind of thing ("Complaint
    records must be kept ..." -> ("complaint", "record")), or None. Pure."""
    text = normalize_ws(quote)
    match = _DUTY.search(text)
    terms = key_terms(_object(text, match)) if match else []
    return (terms[-2], terms[-1]) if len(terms) >= 2 else None


Kind = tuple[str, str] | None


def kinds_held(quotes: list[tuple[str, Kind]]) -> dict[str, set[Kind]]:
    """The kinds each document's quotes fall on, from (document id, `kind`) pairs. Pure."""
    held: dict[str, set[Kind]] = {}
    for document, k in quotes:
        held.setdefault(document, set()).add(k)
    return held


def other_kinds(ka: Kind, kb: Kind, held_a: set[Kind], held_b: set[Kind]) -> bool:
    """Two duties fall on other kinds of one thing ("transaction records", "complaint records") and either
    quote's document has a quote on the other's own kind (`held_a`, `held_b`: the kinds each one's document holds),
    its counterpart: the law's "transaction records" are weighed against the policy's transaction records, not its
    "Complaint records". Two wordings of one kind ("Cryptographic keys", "Encryption keys") have no counterpart and
    are still weighed. Pure."""
    return (ka is not None and kb is not None and ka[1] == kb[1] and ka[0] != kb[0]
            and (ka in held_b or kb in held_a))


# The duties whose doer a who-question can be held to: keeping and providing are said of too much else ("Who keeps
# ownership of the content?", "Who provides the service?").
_ACTIONS = frozenset(_FAMILIES.values()) - {"retain", "provide"}


def unasked_action(question: str, quote: str) -> str | None:
    """Why `quote` does not say who does what a who-question asks, or None: the question asks who does a duty of
    a known family ("Who is responsible for approving access ...?") and the quote states none of that family
    ("System owners must review user access rights ...": who reviews, not who approves). Pure."""
    action = asked_action(question)
    stems = key_terms(action) if action else []
    family = _FAMILIES.get(stems[0]) if stems else None
    if family not in _ACTIONS or any(_FAMILIES.get(t) == family for t in key_terms(quote)):
        return None
    return f"the question asks who is to {family}; the quote says only who does something else"


# A question's verbs, not its nouns ("information", "provider", "risk assessment", "the author's death"): a word
# after a modal, "to" or a subject pronoun ("must we notify", "have to tell", "do we review"), a participle after a
# form of "be" or "get" ("be acknowledged", "is approved"), a gerund not after a determiner ("for approving").
_VERB = re.compile(r"\b(?:must|shall|should|can|could|may|might|will|would|do|does|did|to|we|i|you|they|he|she|"
                   r"it)\s+(?:\w+ly\s+|not\s+|still\s+|also\s+|first\s+)?([a-z]+)\b|"
                   r"\b(?:be|been|being|is|are|was|were|get|gets|got)\s+(?:\w+ly\s+)?([a-z]+(?:ed|en|wn|t))\b|"
                   r"(?<!\bthe\s)(?<!\ban\s)(?<!\ba\s)(?<!\bour\s)(?<!\bits\s)(?<!\bany\s)(?<!\btheir\s)"
                   r"\b([a-z]+ing)\b", re.IGNORECASE)
# "Can you tell me ...?" asks the engine, not about telling anyone
_ASKS_US = re.compile(r"\btell\s+(?:me|us)\b", re.IGNORECASE)


def asked_family(question: str) -> str | None:
    """The one duty family a question's words name ("How quickly must complaints be acknowledged?" ->
    acknowledge; "Do we have to tell customers when their data is breached?" -> notify; "When must a suitability
    assessment be reviewed?" -> review), or None where they name none or more than one ("How long must we keep
    incident reports?"). Pure."""
    found = {_FAMILIES[s] for m in _VERB.finditer(_ASKS_US.sub(" ", question))
             if (s := stem(m.group(1) or m.group(2) or m.group(3))) in _FAMILIES}
    return found.pop() if len(found) == 1 else None


def states_family(quote: str, family: str) -> bool:
    """`quote` names an action of `family` ("communicate the breach to the affected data subjects": notify). Pure."""
    return any(_FAMILIES.get(stem(w)) == family for w in re.findall(r"[A-Za-z][\w'-]*", quote))


def _contained(a: set[str], b: set[str]) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def same_duty(a: str, b: str, overlap: float = _OVERLAP) -> bool:
    """Both quotes impose the same duty on the same thing (to the same recipient, where named): their
    objects share at least `overlap` of the smaller one's terms (`AnswerSettings.same_duty_overlap`). Pure."""
    da, db = duty(a), duty(b)
    if da is None or db is None or da[0] != db[0]:
        return False
    if da[2] and db[2] and not da[2] & db[2]:
        return False  # "report it to the Security team" is not "notify the Commissioner"
    objects = (da[1], db[1]) if da[1] and db[1] else (set(key_terms(a)), set(key_terms(b)))
    return _contained(*objects) >= overlap or bool(da[2] & db[2])




# Two quotes that answer one part of one question and share this much of their subject terms (the smaller
# one's, figures and quantifiers left out) state the same duty in other words, unless their duties are known
# to differ. Measured on the development sets' 17 gold conflict pairs: the same duty verb and object find 3;
# with this, 6 (10 at 0.25, but a third more unrelated pairs of gold texts called conflicts). On the 28 pairs of
# 2026-11-27, with notices as notifications and the duty's bearer left out of its topic: 11, and 39 of 27,229
# pairs of unrelated gold texts of one corpus (36 with the bearer in).
TOPIC_OVERLAP = 0.34
# ... and a quote the selection cut set aside that gives a law's or a policy's other time in answer to a part that
# asks only for one shares this much (the development sets' gold pairs 0.25-0.67; an exception's re-assessment
# "every six months" beside the 48-hour remediation duty, 0.20).
ANCHORED_TOPIC_OVERLAP = 0.25
# ... and for two counts of one thing (a password's "14 characters" beside "12 characters"), where a policy counts
# the same noun for another duty ("modifying at least 6 characters when changing passwords", 0.33 of the rule's
# terms): half.
COUNT_TOPIC_OVERLAP = 0.5
_FIGURE_WORDS = frozenset(key_terms("least most every each any all within later less more must shall day days week "
                                    "weeks month months year years hour hours quarter time times once twice"))


def _split_bearer(quote: str) -> tuple[str, str]:
    """(the party a duty in the active voice falls on, the rest): ("A regulated entity ", "shall commission an
    independent penetration test ..."); ("", the quote) where the duty is passive ("Security logs shall be
    reviewed") or its party is not named in a few words. No list label opens either."""
    text = re.sub(r"^\s*(?:\(?[a-z0-9]{1,4}[.)]\s+|[-*\u2022]\s+)+", " ", PERIOD.sub(" ", quote))
    found = _DUTY.search(text)
    if found and found.group(2) and not found.group(1) and len(text[:found.start()].split()) <= _BEARER_WORDS:
        return text[:found.start()], text[found.start():]
    return "", text


def _topic(quote: str) -> set[str]:
    """The quote's subject terms: no list label ("(b)"), figure or quantifier, nor the party a duty in the active
    voice falls on ("A regulated entity shall commission an independent penetration test ...": the test is the
    matter, the regulated entity whoever bears it; in "Security logs shall be reviewed" the words before the modal
    are the matter)."""
    text = _split_bearer(quote)[1]
    return {t for t in key_terms(text) if len(t) > 1 and not t[0].isdigit()} - _FIGURE_WORDS  # nor a count


def other_bearers(a: str, b: str) -> bool:
    """Each quote's duty falls on a party it names, and the two parties share no word ("A provider shall keep a
    log ..." and "A manufacturer shall keep a record ..."): two rules for two parties, not one rule stated twice.
    Pure."""
    parties = [{t for t in key_terms(_split_bearer(q)[0]) if not t[0].isdigit()} for q in (a, b)]
    return all(parties) and not parties[0] & parties[1]


_BEARER_WORDS = 6  # the longest duty bearer left out of a topic ("Each member of the management body")


_JOINERS = frozenset("and of & for the".split())


def _expanded(text: str, other: str) -> str:
    """`text` with each acronym of 3-6 capitals spelled out as `other` writes it in content words ("BCDR" ->
    "business continuity and disaster recovery" where `other` has those words): one document abbreviates what
    another writes in full. Pure."""
    words = re.findall(r"[A-Za-z&]+", other)

    def spelled(found: re.Match[str]) -> str:
        letters = found.group(0).lower()
        for start in range(len(words)):
            i, j, out = start, 0, list[str]()
            while i < len(words) and j < len(letters):
                if words[i].lower() in _JOINERS and out:
                    out.append(words[i])
                elif words[i][0].lower() == letters[j] and len(words[i]) > 2 and key_terms(words[i]):
                    out.append(words[i])
                    j += 1
                else:
                    break
                i += 1
            if j == len(letters) and out[0][0].lower() == letters[0]:
                return " ".join(out)
        return found.group(0)

    return re.sub(r"\b[A-Z]{3,6}\b", spelled, text)


def shared_topic(a: str, b: str) -> float:
    """The share of the smaller quote's subject terms the other holds, acronyms spelled out both ways. Pure."""
    return _contained(_topic(_expanded(a, b)), _topic(_expanded(b, a)))


@lru_cache(maxsize=1)
def _known_duties() -> frozenset[str]:
    """The duty verbs whose meaning is known (stems, read in families): the families, and every requirement verb
    (agents/requirement_verbs.json) that stands in none."""
    return frozenset(_FAMILIES.values()) | {_FAMILIES.get(t[0], t[0]) for v in duty_verbs() if (t := key_terms(v))}


def other_duties(a: str, b: str) -> bool:
    """Duties known to differ: two known duty verbs of different families ("notify" and "retain"; "remediate" a
    vulnerability and "review" an alert) or two named recipients that share nothing ("the Security team", "the
    Commissioner"). Measured on the development sets' gold conflict pairs: the requirement verbs keep all 20 of
    the 28 found and call 16% fewer pairs of unrelated gold texts apart. Pure."""
    da, db = duty(a), duty(b)
    if da is None or db is None:
        return False
    known = _known_duties()
    return (da[0] != db[0] and da[0] in known and db[0] in known) or bool(da[2] and db[2] and not da[2] & db[2])


# Two quotes of different documents that share this much of their subject terms state one matter (the law's "A
# controller must require multi-factor authentication for any remote access ..." beside the policy's
# "Multi-factor authentication must be used for all remote access ...", 0.62; client assessment records kept
# after the relationship ends, 0.83; transaction records beside client assessment records, 0.25).
SAME_MATTER = 0.5


def same_matter(a: str, b: str) -> bool:
    """`a` and `b` state a duty on one matter: they share `SAME_MATTER` of their subject terms and their duties
    are not known to differ. Pure."""
    return shared_topic(a, b) >= SAME_MATTER and not other_duties(a, b)


def _each_point(quote: str) -> list[str]:
    """A list quote ("Managers must:\n(a) review access every quarter;\n(b) remove access within 24 hours") as its
    lead-in with each of its points, each a duty of its own; any other quote whole. Pure."""
    listed = opening_list(quote, (":", "\u2014", "-"))
    if listed is None or len(listed[1]) < 2:
        return [quote]
    lead_end, points = listed
    # each read as one sentence, its label and the lead-in's colon aside ("Managers must remove access ..."): only
    # weighed, never quoted
    return [f"{quote[:lead_end - 1].rstrip()} {LEADING_LABELS.sub('', quote[start:end])}" for start, end in points]


def conflicting_figures(a: str, b: str, overlap: float = _OVERLAP, *, same_question: bool = False) -> bool:
    """The same duty, stated with different periods. `same_question`: both quotes answer one part of one
    question, so the same duty in other words counts too ("All system access must be reviewed at least
    annually" beside "shall review the access rights of every user at least once every six months") when they
    share TOPIC_OVERLAP of their subject terms and their duties are not known to differ. A list is weighed point by
    point (`_each_point`): "review access every quarter; remove access within 24 hours" does not differ from
    "Access must be reviewed every quarter" by the other point's 24 hours. Pure."""
    each_a, each_b = _each_point(a), _each_point(b)
    if len(each_a) > 1 or len(each_b) > 1:
        return any(conflicting_figures(x, y, overlap, same_question=same_question) for x in each_a for y in each_b)
    fa, fb = periods(a), periods(b)
    apart = bool(fa and fb and fa != fb)
    if not apart and not _counts_differ(a, b):
        return False
    if same_duty(a, b, overlap):
        return True
    if not same_question or other_duties(a, b):
        return False
    return shared_topic(a, b) >= (TOPIC_OVERLAP if apart else COUNT_TOPIC_OVERLAP)


def answers_apart(a: str, b: str, question: str | None, *, families_differ: bool, topic: float = 0.0) -> bool:
    """A law and a policy (`families_differ`) give different times in answer to one question that asks only for
    a time ("How often must the recovery plan be tested?": "at least twice in each calendar year" beside "at
    least once a year"), or different counts of one thing to one that asks how many ("How many wrong password
    attempts are allowed ...?": "five consecutive sign-in attempts" beside "at most 10 (ten) consecutive failed
    attempts"): whatever their wording, each states its answer to the same thing, unless their duties are known to
    differ (a report to the Security team, a notification to the regulator). `topic`: the share of subject terms
    they must share besides (for a quote the selection set aside). Pure."""
    if question is None or not families_differ:
        return False
    if asks_time(question):
        pa, pb = periods(a), periods(b)
        if not (pa and pb) or pa & pb:
            return False
    elif _HOW_MANY.search(question):
        qa, qb = quantities(a), quantities(b)
        counted = qa.keys() & qb.keys()
        if not counted or any(qa[n] & qb[n] for n in counted):
            return False
    else:
        return False
    return not other_duties(a, b) and (not topic or shared_topic(a, b) >= topic)


_HOW_MANY = re.compile(r"\bhow\s+many\b", re.IGNORECASE)
