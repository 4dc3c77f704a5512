"""What a question asks for, and whether a quote states it: the code rules of the gate that refuse a quote
which answers only with more than it says (`requires_inference`).

* A time: "how long", "how often", "by when", a deadline or a period (`asks_time`) is answered only by a
  quote that states a time (`states_time`: engine.text.TIME_PHRASE, or for a deadline the event it falls
  before or after); "From which date ...?" only by a date or the day a thing takes effect.
* A party: "who must ...", "to whom ...", "..., who approves ...?" (`asks_party`) is answered only by a quote
  that names someone (`names_party`): "Passwords must be at least twelve characters long" says nothing of who
  approves an exception to them; where it asks who does a duty of a known family, the quote must state that
  duty (`agents.duties.unasked_action`: who reviews access is not who approves it).
* An amount: a price, fee or cost (`money`), a fine or penalty (`penalty`), a rate or percentage
  (`share`) is answered only by a quote that states one: a figure of that kind, or the thing asked for
  in so many words ("no fee", "liable to a fine", "the spot rate"), as the source states it. A text that
  shares the question's subject but states no such thing is not its answer ("What fine can the
  Authority impose if we report late?" against the reporting deadline alone).
* A count or a length: "How many failed attempts ...?", "What is the minimum number of ...?", "How big must the
  modulus be?" (`asks_count`: "count") is answered only by a quote that states a number that counts (not
  "Section 19" nor "one of these sites") or the measure the rule sets instead ("the minimum set of permissions");
  "What minimum password length ...?", "How long must a PIN be?" ("length") only by a figure of a length's unit
  ("12 characters", "2048 bits", "six digits") or a measure of length ("sufficient length").

Each rule asks only where the thing is the one thing asked: "the fees and disclosures a firm must
make" and "the level and frequency of training" ask for more, and a quote that answers the rest
answers in part.
"""

from __future__ import annotations

import re

from agents.modality import party_words
from engine.terms import key_terms
from engine.text import (
    ASSIGNED_TIME,
    DATE_PHRASE,
    DURATION,
    FREQUENCY,
    FREQUENCY_ADVERBS,
    LEADING_LABELS,
    NEED_PHRASE,
    NUMBER_WORDS,
    SET_TIME,
    TIME_PHRASE,
)

# A question asks for a time only with a time phrase: "when" and "within" alone are mostly conditions,
# circumstances and places ("when assessing ..., what must ...", "within the ADGM": 527 of the 585 ObliQA dev
# questions that a bare when/within/period rule took as asking a time ask none).
_ASKSTIME_PHRASE = re.compile(r"\bhow\s+(?:long|soon|quickly|fast|promptly|often|frequently|regularly)\b|"
                        r"\bhow\s+many\s+(?:business\s+|calendar\s+|working\s+)?(?:days|hours|weeks|months|years)\b|"
                        # "When must / do / is ..." asks for circumstances as often as for a time ("When must a
                        # controller designate an officer?"): it asks a time only of when a thing falls due,
                        # starts or ends
                        r"^\W*when\s+(?:must|should|shall|is|are|does|do|will)\b[^?]{0,120}?\b(?:due|payable|"
                        r"expire[sd]?|lapse[sd]?|take\s+effect|come\s+into\s+force|begins?|ends?|starts?)\b|"
                        r"\b(?:by|until|till)\s+when\b|\bwithin\s+(?:what|which|how)\b|"
                        # a date: "From which date do we owe the notices?", "As of when ..."
                        r"\b(?:what|which)\s+date\b|\b(?:since|as\s+of|from)\s+when\b|"
                        r"\b(?:deadline|time\s*limits?|time\s*frames?|timeframes?|timelines?|frequency|intervals?)\b|"
                        r"\b(?:what|which|retention|notice|minimum|maximum|time|holding)\s+(?:\w+\s+)?periods?\b",
                        re.IGNORECASE)
# ... and not when the time is one of several things asked ("the level and frequency of training", "the
# frequency and circumstances under which ..."), nor for "when would it be necessary to ...", which asks for
# circumstances: a quote that answers the rest answers the question in part, and says so by its words.
_TIME_NOUN = r"(?:frequency|timing|timeframe|time\s*frame|deadline|period|intervals?)"
# "How long does a password have to be (at minimum)?" asks a length, not a time; but "How long must the notice period
# be?" asks one
_HOW_LONG_BE = (r"\bhow\s+long\s+(?:and\s+\w+\s+)?(?:must|should|shall|does|do|is|are|has|have|can|needs?)\b"
                r"(?:(?!\b(?:period|term|duration|notice|retention|interval|window|delay|timeout|session|suspension|"
                r"lockout|gap)s?\b)[^?.]){0,60}?\bbe(?:\s+at\s+(?:a\s+|the\s+)?(?:minimum|least|most))?\s*(?:\?|$)")
_NOT_ONLY_TIME = re.compile(rf"\b{_TIME_NOUN}\s+(?:and|or)\s+(?!when\b|how\b)\w+|"
                            rf"\b\w+\s+(?:and|or)\s+{_TIME_NOUN}\b|"
                            r"^\W*when\s+(?:would|should|could|might|will|is|does)\s+(?:it|this|that)\s+be\s+"
                            r"(?:necessary|required|appropriate|needed|expected|considered|advisable)\b|"
                            # "When is a firm permitted to ...": the circumstances, not a time
                            r"^\W*when\s+(?:is|are)\s+(?:\w+\s+){1,8}?(?:permitted|allowed|entitled|eligible|exempt(?:ed)?)"
                            r"\b|"
                            # "How long does a password have to be (at minimum)?": a length, not a time
                            rf"{_HOW_LONG_BE}", re.IGNORECASE)


def asks_time(question: str) -> bool:
    """The question asks for a time or period, and for nothing else besides."""
    return bool(_ASKSTIME_PHRASE.search(question)) and not _NOT_ONLY_TIME.search(question)


# How often is answered by a frequency or a period; a deadline ("by when", "how soon", "timeframe") also by
# the event it falls before or after ("prior to the establishment of a business relationship", "before the
# CDD is completed"), which answers no "how often".
_ASKS_FREQUENCY = re.compile(r"\bhow\s+(?:often|frequently|regularly|many\s+times)\b|\b(?:frequency|intervals?)\b",
                             re.IGNORECASE)
_RELATIVE_TIME = re.compile(r"\b(?:before|after|prior\s+to|upon|following)\s+(?:the\s+|a\s+|an\s+|its\s+|their\s+)?"
                            r"[a-z]", re.IGNORECASE)


# Words of urgency: when a thing starts, not how often it recurs nor how long it lasts.
_URGENCY = r"timely|promptly|prompt|immediately|without\s+(?:(?:undue|unreasonable)\s+)?delay|as\s+soon\s+as"
# Words that fix a deadline but no frequency: no answer to "how often" ("the timely recovery of operations",
# "notify the authority without delay"); a period beside them ("within 30 days") still counts.
_DEADLINE_ONLY = re.compile(rf"(?:{_URGENCY}|within|until|no\s+later\s+than|not\s+later\s+than|{NEED_PHRASE}|"
                            rf"{SET_TIME})",
                            re.IGNORECASE)


# "How long must records be kept?" asks a period: words of urgency ("the prompt handling of client complaints",
# "store it immediately") fix when something starts, not how long it lasts; "until", "within" and an event ("until
# the end of the business relationship") still answer.
_ASKS_HOW_LONG_KEPT = re.compile(r"\bhow\s+long\b(?:\s+[\w'-]+){0,8}?\s+(?:keep|kept|retain|retained|store|stored|hold|"
                                 r"held|preserve|preserved|archive|archived|maintain|maintained)\b", re.IGNORECASE)
_URGENCY_ONLY = re.compile(rf"(?:{_URGENCY}|at\s+all\s+times)", re.IGNORECASE)  # continuity: no period


def asks_how_often(question: str) -> bool:
    """The question asks how often ("how often", "how frequently", "at what intervals"). Pure."""
    return _ASKS_FREQUENCY.search(question) is not None


# "How many days ...?", "Within how many hours ...?", "For how many years ...?" ask for a figure: words that fix
# when without one ("promptly", "in a timely manner", "without undue delay") do not give it; a figure the text
# leaves to another provision or act ("within the time limits laid down in accordance with Article 20", "within
# the period specified in paragraph 2") is its answer in its own terms.
_ASKS_COUNT = re.compile(r"\bhow\s+many\s+(?:business\s+|calendar\s+|working\s+|clear\s+)?(?:minutes|hours|days|weeks|"
                         r"months|years)\b", re.IGNORECASE)
_STATES_COUNT = re.compile(rf"{DURATION.pattern}|{ASSIGNED_TIME}|\b(?:\d+|{NUMBER_WORDS})\s+(?:minutes?|seconds?)\b|"
                           rf"\b{FREQUENCY_ADVERBS}\b|"
                           r"\b(?:a|an|one)\s+(?:hour|day|week|month|year)\b|"
                           r"\b(?:time[\s-]+limits?|(?:time\s+)?periods?|deadlines?)\s+(?:\w+\s+){0,2}?(?:to\s+be\s+)?"
                           r"(?:laid\s+down|set\s+(?:out|down)?|specified|prescribed|established|determined|referred\s+to)\b",
                           re.IGNORECASE)


# "From which date ...?" is answered by a date or the day a thing takes effect ("is effective as of May 13, 2024",
# "shall apply from 17 January 2025", "on the twentieth day following that of its publication"), not by a period
# ("within 30 days of discovery" says when a notice is due, not from when the duty applies) nor by a delay counted
# from an event ("a delay of up to 30 days following the date when notice was provided").
# A deadline ("By what date ...?") is answered by the event it falls before or after as well.
_ASKS_DATE = re.compile(r"\b(?:from|since|as\s+of|on|with\s+effect\s+from)\s+(?:what|which)\s+date\b|"
                        r"\b(?:since|as\s+of|from)\s+when\b", re.IGNORECASE)
_STATES_DATE = re.compile(rf"\b(?:{DATE_PHRASE})\b|"
                          r"\b[a-z]+(?:th|st|nd|rd)\s+day\s+(?:following|after)\b|\bentry\s+into\s+force\b",
                          re.IGNORECASE)


def states_time(text: str, question: str = "") -> bool:
    """The quote states a time: a period, a frequency or words that fix when (TIME_PHRASE), but for a question
    that asks how often, not a deadline's words alone (`_DEADLINE_ONLY`); for one that asks how long a thing is
    kept, not words of urgency alone (`_URGENCY_ONLY`); for a question that asks how many
    days (hours, years ...), a figure (`_STATES_COUNT`); for a question that asks a deadline rather than how
    often, also the event it falls before or after."""
    if question and _ASKS_COUNT.search(question) and not _STATES_COUNT.search(text):
        return False
    if question and _ASKS_DATE.search(question):
        return _STATES_DATE.search(text) is not None
    frequency = asks_how_often(question)
    kept = bool(question) and _ASKS_HOW_LONG_KEPT.search(question) is not None
    if any(not (frequency and _DEADLINE_ONLY.fullmatch(m.group(0)) or kept and _URGENCY_ONLY.fullmatch(m.group(0)))
           for m in TIME_PHRASE.finditer(text)):
        return True
    # an event alone ("shredded before disposal", "upon request") says when a thing is done, not how long it is kept
    return bool(question) and not frequency and not kept and bool(_RELATIVE_TIME.search(text))


# How often in a quote: a frequency ("every quarter", "once a year", "annually"), a recurring timing in words
# ("periodically", "at regular intervals", "at planned intervals") or a parameter the text leaves to the
# organisation; not a deadline ("within 24 hours of leaving", "no later than 30 days after").
_STATES_FREQUENCY = re.compile(rf"{FREQUENCY}|{ASSIGNED_TIME}|"
                               rf"\b(?:{FREQUENCY_ADVERBS}|annual|periodic|periodically|regular|regularly|continuously|"
                               r"each\s+(?:day|week|month|quarter|year)|"
                               r"(?:planned|defined|scheduled|set|fixed|appropriate)\s+intervals?|"
                               r"intervals?\s+of|from\s+time\s+to\s+time|on\s+an?\s+(?:\w+[\s-]+)?(?:annual|yearly|"
                               r"quarterly|monthly|weekly|daily|regular|periodic|ongoing|continuous)\s+basis)\b",
                               re.IGNORECASE)


def states_frequency(text: str) -> bool:
    """The quote says how often, not only by when. Pure."""
    return _STATES_FREQUENCY.search(text) is not None


# --- amounts --------------------------------------------------------------------------------------------

# The nouns of each kind of amount a question can ask for, as they are asked ...
_ASKED_NOUNS = {
    "money": r"fees?|prices?|costs?|charges?|levy|levies|tariffs?|royalt(?:y|ies)|"
             r"(?:dollar|euro|pound|monetary|cash)\s+(?:amounts?|values?|figures?|thresholds?|limits?|caps?)",
    "penalty": r"fines?|penalt(?:y|ies)|sanctions?",
    "share": r"rates?|percentages?|percent|per\s+cent|ratios?|proportions?",
}
# ... and what states one in a quote besides a figure: the thing itself in so many words ("no fee",
# "free of charge", "liable to a fine", "the applicable rate"), the words of a penalty's law ("commits an
# offence", "imprisonment", "disciplinary action").
_STATED_WORDS = {
    "money": r"fees?|prices?|costs?|charges?|charged|chargeable|levy|levies|tariffs?|royalt(?:y|ies)|free|gratis|"
             r"payable|remuneration",
    "penalty": r"fines?|fined|penalt(?:y|ies)|sanctions?|liable|offen[cs]es?|imprisonment|disciplinary|"
               r"punishable|infringement",
    # a fraction in words ("one third", "half of"), not "third-party" or "quarterly"
    "share": r"rates?|percentages?|percent|per\s+cent|ratios?|proportions?|majority|half\s+of|"
             r"(?:one|a|two|three)[\s-]+(?:half|thirds?|quarters?|fifths?|tenths?)",
}
_CURRENCY = (r"(?:[$€£¥]|\b(?:US\$|USD|EUR|GBP|AED|CHF|JPY|AUD|CAD|SGD|HKD|INR)\s?)\s?\d[\d,.]*"
             r"(?:\s?(?:thousand|million|billion|[mbk]n?)\b)?|\b\d[\d,.]*\s?(?:thousand\s+|million\s+|billion\s+)?(?:dollars|euros?|pounds|"
             r"dirhams|francs|yen|US\$|USD|EUR|GBP|AED|CHF)\b")
_PERCENTAGE = r"\d[\d.,]*\s?(?:%|percent\b|per\s+cent\b|basis\s+points?\b|bps\b)"
_FIGURES = {  # a fee or a fine may be a share of something ("up to 1 % of the average daily turnover")
    "money": rf"{_CURRENCY}|{_PERCENTAGE}",
    "penalty": rf"{_CURRENCY}|{_PERCENTAGE}",
    "share": _PERCENTAGE,
}
# "How much does it cost / do we pay / is charged ...": money, whatever noun follows; not "How much paid holiday
# must each employee get", where "paid" is the leave's kind and the amount asked is time off
_HOW_MUCH_MONEY = re.compile(r"\bhow\s+much\s+(?!paid\s)(?:\w+\s+){0,6}?(?:cost|costs|pay|paid|charge|charged|charges|"
                             r"spend|owe)\b", re.IGNORECASE)


# A word between "what" and the noun asked that modifies it ("the filing fee", "minimum own funds ratio"),
# not a verb that starts a clause ("What criteria must a Price Reporting Agency meet" asks for criteria).
_MODIFIER = (r"(?!(?:must|shall|should|do|does|did|can|could|may|might|will|would|has|have|had|is|are|was|were|"
             r"be|to|of|for|regarding|about|on|in)\b)\w+")


def _asking(nouns: str) -> re.Pattern[str]:
    """The question asks what / how much / how high the noun is: "What is the filing fee ...", "What fine
    can ...", "What VAT rate applies ...", "How much is the levy", "the maximum penalty"."""
    return re.compile(rf"^\W*(?:what|which)\s+(?:(?:is|are|was|were|will\s+be|would\s+be)\s+)?"
                      rf"(?:the\s+|a\s+|an\s+|our\s+)?"
                      rf"(?:{_MODIFIER}[\s-]+){{0,3}}?(?:{nouns})\b|"
                      rf"\bhow\s+(?:much|high|large|big)\s+(?:(?:is|are|was|were|will|would|can|could|may|might)\s+)?"
                      rf"(?:the\s+|a\s+|an\s+)?(?:\w+[\s-]+){{0,3}}?(?:{nouns})\b|"
                      rf"\b(?:maximum|minimum|highest|lowest|largest)\s+(?:\w+[\s-]+){{0,2}}?(?:{nouns})\b",
                      re.IGNORECASE)


_ASKS_AMOUNT = {kind: _asking(nouns) for kind, nouns in _ASKED_NOUNS.items()}
# A fine is money: a figure or a fine or penalty named states one; disciplinary action, imprisonment or "liable to
# proceedings" are sanctions but no fine
_STATES_FINE = re.compile(rf"{_CURRENCY}|{_PERCENTAGE}|\b(?:fines?|fined|penalt(?:y|ies))\b", re.IGNORECASE)
_STATES_AMOUNT = {kind: re.compile(rf"{_FIGURES[kind]}|\b(?:{_STATED_WORDS[kind]})\b", re.IGNORECASE)
                  for kind in _ASKED_NOUNS}
# Not the one thing asked: "the fees and disclosures", "costs or other consequences", "the rate and the
# method of calculation".
_ALL_NOUNS = "|".join(_ASKED_NOUNS.values())
_NOT_ONLY_AMOUNT = re.compile(rf"\b(?:{_ALL_NOUNS})\s+(?:and|or)\s+(?!(?:{_ALL_NOUNS})\b)(?:the\s+|other\s+)?\w+|"
                              rf"\b\w+\s+(?:and|or)\s+(?:the\s+)?(?:{_ALL_NOUNS})\b", re.IGNORECASE)
AMOUNT_KINDS = {"money": "a price, fee or cost", "penalty": "a fine or penalty", "share": "a rate or percentage",
                "quantity": "an amount"}
# "How much cyber insurance cover must a company take out?", "How much catastrophe reinsurance must a general
# insurer buy ...?", "How much ... coverage does a covered insurer have to carry ...?": how much of a thing to
# hold. A figure answers it, or the measure the rule sets instead ("adequate", "sufficient", "commensurate with");
# not "where appropriate", a condition.
_HELD = (r"(?:[\w-]+\s+){1,6}?(?:must|should|shall|do|does|did|have\s+to|has\s+to|need\s+to|needs\s+to)\s+"
         r"(?:[\w-]+\s+){0,7}?(?:buy|carry|hold|take\s+out|purchase|maintain|set\s+aside|put\s+aside|obtain|"
         r"keep\s+in\s+reserve)\b")
_HOW_MUCH_HELD = re.compile(rf"\bhow\s+much\s+{_HELD}", re.IGNORECASE)
# ... and "What minimum own funds or capital does a provider have to hold?", where no other kind of amount is asked
# ("What minimum capital ratio must a bank hold?" asks a share)
_LEVEL_HELD = re.compile(rf"\bwhat\s+(?:minimum|maximum|level\s+of|amount\s+of)\s+{_HELD}", re.IGNORECASE)
_STATES_AMOUNT["quantity"] = re.compile(
    rf"{_CURRENCY}|{_PERCENTAGE}|\b\d[\d,.]*\s*(?:times|x|multiples?)\b|\b(?:adequate|sufficient|commensurate|"
    rf"proportionate|at\s+least|not\s+less\s+than|no\s+less\s+than|equal\s+to)\b",
    re.IGNORECASE)
_FIGURES["quantity"] = rf"{_CURRENCY}|{_PERCENTAGE}"


def asks_amount(question: str) -> str | None:
    """The kind of amount the question asks for and nothing else besides (a key of AMOUNT_KINDS), or None."""
    if _NOT_ONLY_AMOUNT.search(question):
        return None
    if _HOW_MUCH_MONEY.search(question):
        return "money"
    if _HOW_MUCH_HELD.search(question):
        return "quantity"
    found = [(m.start(), kind) for kind, pattern in _ASKS_AMOUNT.items() if (m := pattern.search(question))]
    return min(found)[1] if found else "quantity" if _LEVEL_HELD.search(question) else None


def states_amount(text: str, kind: str) -> bool:
    """The quote states an amount of `kind`: a figure of it, or the thing in so many words."""
    return bool(_STATES_AMOUNT[kind].search(text))


# --- counts and lengths ---------------------------------------------------------------------------------

# "How many failed attempts ...?", "What minimum password length ...?", "How long must a PIN be?", "How big must the
# modulus be?": a count or a size, not a time, nor money (asked above), nor "how many times" (how often). A quote
# answers it with a figure; a length, with a figure of its unit ("12 characters", "2048 bits", "six digits") or the
# measure the rule sets instead ("sufficient length", "the minimum set of permissions").
_ASKS_LENGTH = re.compile(rf"{_HOW_LONG_BE}|^\W*(?:what|which)\s+(?:is\s+|are\s+)?(?:the\s+|a\s+)?"
                          r"(?:[\w'-]+\s+){0,3}?lengths?\b|\b(?:minimum|maximum|min|max|shortest|longest)\s+(?:[\w-]+\s+){0,2}?lengths?\b",
                          re.IGNORECASE)
# ... and a count or a size in any terms ("500,000 client IP addresses", "not less than five (5)")
_ASKS_COUNT = re.compile(r"\bhow\s+(?:many\b(?!\s+times\b)|big|large|small)\b|"
                         r"^\W*(?:what|which)\s+(?:is\s+|are\s+)?(?:the\s+|a\s+)?(?:[\w'-]+\s+){0,3}?"
                         r"(?:number\s+of|sizes?)\b", re.IGNORECASE)
# ... and not when it is one of several things asked ("the minimum password length and complexity", "how many
# directors, and are they paid": a quote that answers the rest answers in part)
_NOT_ONLY_COUNT = re.compile(r"\b(?:length|size)s?\s+(?:and|or|\+|&)\s+\w+|\b\w+\s+(?:and|or)\s+(?:\w+\s+)?"
                             r"(?:length|size)s?\b|"
                             # "How long and detailed should the documents be?"
                             r"\bhow\s+(?:long|big|large|many)\s+(?:and|or)\s+\w+", re.IGNORECASE)
_COUNT_MEASURE = (r"both|none|majority|quorum|minimal|as\s+few\s+as|minimum\s+(?:set|number)|such\s+(?:a\s+)?number|"
                  r"(?:sufficient|adequate|appropriate)\s+number|no\s+more\s+than\s+(?:is\s+|are\s+)?"
                  r"(?:necessary|needed|required)")
_LENGTH_MEASURE = r"(?:sufficient|adequate|appropriate|minimum|maximum|required)\s+(?:[\w-]+\s+)?(?:length|size)"
_LENGTH_UNITS = (r"characters?|chars?|bits?|bytes?|digits?|letters?|symbols?|words?|numbers?|pages?|lines?|"
                 r"(?:milli|centi|kilo)?(?:metres?|meters?)|mm|cm|km|inch(?:es)?|feet|foot|ft|pixels?|px|points?|pt")
_STATES_LENGTH = re.compile(rf"(?:\b\d[\d,.]*|\b(?:{NUMBER_WORDS})\b)(?:\s*\(\d+\))?[\s-]*(?:[\w-]+\s+){{0,2}}?"
                            rf"(?:{_LENGTH_UNITS})\b|\b(?:\d[\d,.]*|{NUMBER_WORDS})\b[^.;]{{0,30}}\b(?:in\s+length|long)\b|"
                            rf"\b{_LENGTH_MEASURE}\b", re.IGNORECASE)
# A number that counts, not one that cites ("Section 19", "Article 5(2)", "Level 2", "§ 4", "MSTG-PLATFORM-1") nor
# "one of"
_NUMBER_STATED = re.compile(rf"(?<![-/.§\w])(?:\d[\d,.]*|\b(?:{NUMBER_WORDS})(?!\s+(?:of|another|or\s+other)\b))\b|"
                            rf"\b(?:twice|thrice|single|double|dozen|half|{_COUNT_MEASURE})\b",
                            re.IGNORECASE)
_CITES = re.compile(r"(?:\b(?:section|article|rule|regulation|paragraph|clause|part|chapter|schedule|annex|appendix|"
                    r"level|version|no|page|table|figure|item|point)\.?|§)\s*$", re.IGNORECASE)


def asks_count(question: str) -> str | None:
    """"length" where the question asks how long or large a thing must be ("What minimum password length ...?",
    "How long must a PIN be?"), "count" where it asks how many ("How many failed attempts ...?", "What is the
    minimum number of directors?"), each only where it is the one thing asked and no time or amount; else None.
    Pure."""
    if asks_time(question) or asks_amount(question) is not None or _NOT_ONLY_COUNT.search(question):
        return None
    if _ASKS_LENGTH.search(question):
        return "length"
    return "count" if _ASKS_COUNT.search(question) else None


def states_count(text: str, kind: str) -> bool:
    """The quote states the count or length (`asks_count`'s kind) asked: a figure (of a length's unit), or the
    measure the rule sets instead ("the minimum set", "such number ... as", "sufficient length"); not a number that
    cites ("Section 19", "Level 2") nor "one of". Pure."""
    if kind == "length":
        return _STATES_LENGTH.search(text) is not None
    return any(not _CITES.search(text[max(0, m.start() - 14):m.start()]) for m in _NUMBER_STATED.finditer(text))


# The words of an amount question that are not what kind of amount it is: "what is the", "how big can the",
# "maximum".
# Nor a qualifier that names no kind ("the prescribed penalties", "the applicable fee", "the total cost").
_ASKING_WORDS = frozenset("what which is are was were will would be the a an our how much high large big can could "
                          "may might maximum minimum highest lowest largest applicable relevant appropriate "
                          "statutory current standard usual normal typical total overall".split())


def _kind_words(question: str, kind: str) -> tuple[list[str], str]:
    """The words that say which amount of `kind` the question asks, as it writes them, and the noun asked
    (["filing"], "fee" of "What is the filing fee ..."; ["VAT"], "rate"; ["civil", "money"], "penalty" of "the
    maximum civil money penalty"; [] for "What fine ..."). Pure."""
    found = _ASKS_AMOUNT[kind].search(question)
    if found is None:
        return [], ""
    words = re.findall(r"[A-Za-z][\w-]*", found.group(0))
    return [w for w in words[:-1] if w.lower() not in _ASKING_WORDS and not w.lower().endswith("ed")
            and key_terms(w)], words[-1]


def unstated(question: str, quote: str) -> str | None:
    """Why `quote` cannot answer `question` by what it says (the rationale of `requires_inference`), or None.
    A quote that names the kind of amount asked but gives no figure of it answers only the amount the question
    names ("What is the filing fee ...?" is not answered by "you may not impose a license fee")."""
    if asks_time(question) and not states_time(quote, question):
        return "the question asks for a time or period; the quote states none"
    kind = asks_amount(question)
    if kind is not None and not states_amount(quote, kind):
        return f"the question asks for {AMOUNT_KINDS[kind]}; the quote states none"
    if kind == "penalty" and _kind_words(question, kind)[1].lower() in ("fine", "fines") and not _STATES_FINE.search(
            quote):
        return "the question asks for a fine; the quote states none"
    if kind in _ASKS_AMOUNT and not re.search(_FIGURES[kind], quote, re.IGNORECASE):
        named, noun = _kind_words(question, kind)
        if named and not set(key_terms(" ".join(named))) & set(key_terms(quote)):
            return f"the question asks for the {' '.join(named)} {noun}; the quote gives no figure and names another"
    if (counted := asks_count(question)) is not None and not states_count(quote, counted):
        return f"the question asks for a {'length or size' if counted == 'length' else 'number'}; the quote states none"
    if asks_party(question) and not names_party(quote):
        return "the question asks who; the quote names no one"
    return None


# The question's first wh-word, where it asks who: at its start or after a comma, alone or after a preposition
# ("Who approves ...", "To whom must ...", "If the regulator challenges us ..., who has to prove ...?"); a
# relative "who" follows its noun ("Is an Authorised Person who is permitted to ...") and asks nothing.
_WH_WORD = re.compile(r"\b(?:who|whom|whose|what|which|how|when|where|why)\b", re.IGNORECASE)
_BEFORE_WHO = re.compile(r"(?:^|,)\s*(?:(?:to|by|from|with|for)\s+)?$", re.IGNORECASE)
# Capitalised words that name no one: months, days and the words that cite a provision ("by 31 January",
# "under Article 5").
_NOT_NAMES = frozenset("january february march april may june july august september october november december "
                       "monday tuesday wednesday thursday friday saturday sunday article articles section sections "
                       "rule rules part chapter schedule annex appendix paragraph regulation regulations act "
                       "directive table figure i".split())


_LINE_LABELS = re.compile(LEADING_LABELS.pattern, re.IGNORECASE | re.MULTILINE)  # at each line's start


_ASKS_EXEMPTION = re.compile(r"\b(?:not\s+(?:required|obliged|needed)|need\s+not|(?:don't|do\s+not|does\s+not|"
                             r"doesn't)\s+(?:have|need)\s+to|exempt\w*|exceptions?|excused?)\b", re.IGNORECASE)


def asks_exemption(question: str) -> bool:
    """The question asks when a duty does not apply ("When is a firm not required to tell data subjects about a
    breach?", "Are small firms exempt?", "Are there exceptions?"). Pure."""
    return bool(_ASKS_EXEMPTION.search(question))


# "... apply to" asked of a text ("Do the requirements apply to us?", "Which firms do the rules apply to?"), not of
# a thing ("What limits apply to the variable remuneration ...?")
_TEXTS = (r"(?:rules?|regulations?|acts?|polic(?:y|ies)|directives?|requirements?|laws?|standards?|provisions?|"
          r"articles?|sections?|chapters?|parts?|guidance|it|this|these)")
_ASKS_SCOPE = re.compile(rf"\b(?:(?:do|does|did)\b[^.?!]{{0,80}}?|{_TEXTS}\s+|is\s+(?:it|this)\s+)"
                         r"(?:appl(?:y|ies)|applicable)\s+to\b|\b(?:covered|bound)\s+by\b|"
                         r"\b(?:in|within|out\s+of)\s+(?:the\s+)?scope\b", re.IGNORECASE)
# What a document's text says of whom or what it covers: the answer to "Who does the policy apply to?"
_STATES_SCOPE = re.compile(r"\b(?:appl(?:y|ies)|is\s+addressed)\s+to\b|\bcovers\b", re.IGNORECASE)


def asks_scope(question: str) -> bool:
    """The question asks whom or what a text applies to ("Which firms do the client assessment rules apply to?",
    "Are we covered by the Safeguards Rule?", "Is a domain registrar in scope?"). Pure."""
    return bool(_ASKS_SCOPE.search(question))


def states_scope(text: str) -> bool:
    """`text` says whom or what something applies to ("These Rules ... apply to every firm that provides investment
    advice ..."; "This policy covers ..."). Pure."""
    return bool(_STATES_SCOPE.search(text))


_ASKS_POLICY = re.compile(r"\b(?:polic(?:y|ies)|procedures?|handbook|guidelines?)\b", re.IGNORECASE)


def asks_policy(question: str) -> bool:
    """The question asks about the firm's own documents ("What does our records policy say about ...?"). Pure."""
    return bool(_ASKS_POLICY.search(question))


def asks_party(question: str) -> bool:
    """The question asks who (a person, a role, a body): its first wh-word is "who", "whom" or "whose", at its
    start or after a comma, alone or after a preposition, and not "who counts as" a term (`_WHO_COUNTS`). Pure."""
    first = _WH_WORD.search(question)
    return bool(first and first.group(0).lower().startswith("who") and _BEFORE_WHO.search(question[:first.start()])
                and not _WHO_COUNTS.match(question, first.end()))


# "Who counts as a collaborator?", "Who is considered a consumer?" ask what a term means, which a definition answers
# without naming anyone.
_WHO_COUNTS = re.compile(r"\s+(?:(?:counts?|qualif(?:y|ies))\s+as|(?:is|are)\s+(?:considered|regarded|deemed|treated|"
                         r"classed|classified)\s+(?:as|to\s+be|an?))\b", re.IGNORECASE)


_ASKED_ACTION = re.compile(r"(?:\s+(?:is|are)\s+(?:responsible|accountable)\s+for|\s+(?:must|shall|should|will|can|may|"
                           r"(?:has|have|needs?|is\s+(?:allowed|required|permitted))\s+to))?(?:\s+be)?\s+([a-z]+)",
                           re.IGNORECASE)


def asked_action(question: str) -> str | None:
    """What a who-question asks someone does: the verb after "who" and its modal ("Who is responsible for
    approving access ...?" -> "approving"; "Who must be told ...?" -> "told"), or None. Pure."""
    first = _WH_WORD.search(question)
    if not asks_party(question) or first is None or first.group(0).lower() != "who":
        return None  # "To whom must a business associate report ...": the action follows its subject
    found = _ASKED_ACTION.match(question, first.end())
    return found.group(1).lower() if found else None


def names_party(text: str) -> bool:
    """`text` names someone who could be the answer to "who": a role or a person the rules lay duties on
    (agents.modality.party_words), or a name written with a capital inside a sentence ("the Regulator",
    "Corvid Labs"). Lenient by design: it sets aside only a quote that names no one. Pure."""
    words = party_words()
    # a list label ends what was before it: the word after it opens a sentence
    unlabelled = _LINE_LABELS.sub(lambda m: " . " if m.group(0).strip() else m.group(0), text)
    tokens = re.findall(r"[A-Za-z][\w-]*|[.!?:;]", unlabelled)
    for i, token in enumerate(tokens):
        if token.lower() in words["lower"] or token in words["upper"]:
            return True
        if (i and token[0].isupper() and tokens[i - 1] not in ".!?:;" and token.lower() not in _NOT_NAMES
                and not token.isupper() and not _names_a_thing(tokens, i)):
            return True
    return False


# The last word of a capitalised name that names a thing, not someone: "the Contingency Plan shall be tested",
# "Covered Software", "Customer Content", "this Agreement".
_THINGS = frozenset("plan plans policy policies procedure procedures agreement agreements license licence software "
                    "work works content service services data information system systems document documents "
                    "documentation program programme standard framework form notice report register".split())


def _names_a_thing(tokens: list[str], i: int) -> bool:
    """The capitalised words from `tokens[i]` on end in a thing's noun ("Contingency Plan"). Pure."""
    end = i
    while end + 1 < len(tokens) and tokens[end + 1][:1].isupper():
        end += 1
    return tokens[end].lower() in _THINGS


def asks_typed(question: str) -> bool:
    """The question asks only for a time, an amount or a count (what `unstated` holds a quote to)."""
    return asks_time(question) or asks_amount(question) is not None or asks_count(question) is not None


def states_what_is_asked(questions: list[str], text: str) -> bool:
    """`text` states the time or the amount that one of `questions` asks for alone."""
    return any(asks_typed(q) and unstated(q, text) is None for q in questions)
