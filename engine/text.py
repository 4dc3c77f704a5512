"""Text patterns shared by several stages: whitespace, numbers, periods and deadlines, force words.

One home each. Where two stages read a similar thing differently on purpose, the two patterns are
named apart here and the comment says why. Pure: no state, no I/O.
"""

from __future__ import annotations

import re


def normalize_ws(text: str) -> str:
    """Whitespace runs read as one space, ends trimmed: the only normalization the verbatim check allows."""
    return " ".join(text.split())


# --- numbers, periods and deadlines -------------------------------------------------------------------

_UNIT_WORDS = "hours?|days?|weeks?|months?|years?"
UNITS = f"(?:{_UNIT_WORDS})"
# Number words a statement or quote may state a figure in: the counts, the tens with their compounds
# ("twenty-four", "seventy two"), before the bare tens so that the longer one is read.
_UNITS_WORDS = "one|two|three|four|five|six|seven|eight|nine"
NUMBER_WORDS = (f"(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:{_UNITS_WORDS})\\b)?|"
                f"{_UNITS_WORDS}|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|"
                "nineteen|hundred")
# A number, in digits ("72", "1.5", "3,000") or in words: a figure review and attribution check against quotes.
NUMBER = re.compile(rf"\b\d+(?:[.,]\d+)*\b|\b(?:{NUMBER_WORDS})\b", re.IGNORECASE)
_EVERY = r"(?:hour|day|business\s+day|week|month|quarter|year|calendar\s+year|financial\s+year|annum)s?"
# How often, in the words policies use: "once a year", "twice per quarter", "three times each month",
# "twice in each calendar year", "per annum"; "every 12 months", "every other week".
FREQUENCY = (rf"\b(?:once|twice|(?:\d+|{NUMBER_WORDS})\s+times)\s+(?:in\s+)?(?:a|an|per|each|every)\s+{_EVERY}\b|"
             rf"\bper\s+{_EVERY}\b|\bevery\s+(?:(?:\d+|{NUMBER_WORDS}|other)\s+)?{_EVERY}\b")
# How often in one word, as the gate's rules read it (TIME_PHRASE; agents.asks: a figure, a frequency). PERIOD
# keeps its own shorter list: it is what conflicts convert to days (agents.duties.periods).
FREQUENCY_ADVERBS = (r"(?:semi-annually|biannually|annually|yearly|quarterly|monthly|fortnightly|bi-?weekly|weekly|"
                     r"daily|hourly)")
# A period or deadline as attribution checks it and a direct answer keeps it: a number of units (decimals,
# "business"/"clear" days), a frequency ("annually", "once per quarter") or an urgency ("without undue delay").
PERIOD = re.compile(rf"\b(?:\d+(?:[.,]\d+)?|{NUMBER_WORDS})\s+(?:(?:business|working|calendar|clear|consecutive)\s+)?"
                    rf"{UNITS}\b|\b(?:annually|quarterly|monthly|weekly|daily|yearly|"
                    rf"immediately|promptly|without\s+(?:undue|unreasonable)\s+delay)\b|{FREQUENCY}",
                    re.IGNORECASE)
# A duration as the time rule of the gate reads it (TIME_PHRASE): a whole number in digits or words and
# its unit. Conflicts compare every PERIOD in days instead (agents.duties.periods).
DURATION = re.compile(rf"\b(\d+|{NUMBER_WORDS})(?:\s+|-)"
                      rf"(business\s+|calendar\s+|working\s+|consecutive\s+)?({_UNIT_WORDS})\b", re.IGNORECASE)
# A catalogue states a time it leaves to the organisation as a parameter: "[Assignment: organization-defined
# frequency]", "[Selection: weekly; monthly]", "organisation-defined time period".
ASSIGNED_TIME = (r"\[(?:assignment|selection)[^\]]{0,200}?(?:frequenc|time|period|interval|hour|day|week|month|"
                 r"year|annual)[^\]]{0,200}\]|\borgani[sz]ation[- ]defined\s+(?:frequency|time\s+period|period|"
                 r"interval)")
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_DATE = rf"\d{{1,2}}\s+{_MONTH}\s+\d{{4}}|{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}"
# A date, or the day a thing takes effect ("on the date the Contributor first distributes", "as of the day ..."): one
# of the ways a text states a time (TIME_PHRASE), and what answers "From which date ...?" (agents.asks)
DATE_PHRASE = rf"{_DATE}|(?:on|from|as\s+of|with\s+effect\s+from)\s+the\s+(?:date|day)"
# A period or a point in time set by need rather than by a figure: "for no longer than is necessary for the
# purposes", "not retained longer than necessary", "revoked when no longer needed". Data protection laws and retention
# policies answer "how long may it be kept" in these words (TIME_PHRASE); no answer to "how often" (agents.asks).
NEED_PHRASE = (r"(?:(?:no|not)\s+)?longer\s+than\s+(?:(?:is|are|it\s+is|they\s+are)\s+)?(?:strictly\s+|reasonably\s+)?"
               r"(?:necessary|needed|required)|no\s+longer\s+(?:necessary|needed|required)|"
               # "retained only as long as necessary for ...", "kept as long as the account is active", "retained
               # long enough to allow access": a period the need or an event sets (not "as long as you comply ...",
               # a condition, which no keeping verb goes before)
               r"as\s+long\s+as\s+(?:(?:is|it\s+is|they\s+are)\s+)?(?:strictly\s+|reasonably\s+)?(?:necessary|needed|"
               r"required)|(?:retain|keep|kept|store|hold|held|preserve|maintain|archive)(?:s|ed|ing)?\b[^.;:,]{0,60}?"
               r"\b(?:as\s+long\s+as|long\s+enough\s+to)")
# The time a text requires be set without giving it ("with a clear timeframe for response", "the retention duration
# depends on the purpose"); not a timeline or a deadline named in passing ("the endpoint of the timelines for
# implementation"). It states a time (TIME_PHRASE), but no answer to "how often" (agents.asks).
SET_TIME = (r"(?:clear|specific|defined|set|agreed|reasonable|maximum|minimum|statutory|strict)\s+"
            r"(?:time\s*frames?|time\s+limits?|deadlines?)|retention\s+(?:periods?|durations?)")
# What the gate counts as stating a time: a duration, a frequency, a parameter the text assigns it, or a
# word that fixes when ("annually", "within", "no later than"...). Broader than PERIOD: "within the period"
# states when without a figure. A quote states a time when it names a period or a point in time ("before
# the end of", "after the date of"), or when the rule sets its timing in words ("regular review", "in
# sufficient time", "on an ongoing basis", "as soon as practicable"): that is the answer the source gives
# to "how often" or "when", and the answer quotes it as it stands. Bare "before", "after" and "every"
# state none ("after discovering a breach", "every employee").
TIME_PHRASE = re.compile(rf"{DURATION.pattern}|{FREQUENCY}|{ASSIGNED_TIME}|"
                         rf"\b({FREQUENCY_ADVERBS}|each\s+(?:day|week|month|quarter|year)|immediately|"
                         r"without\s+(?:(?:undue|unreasonable)\s+)?delay|promptly|prompt|timely|within|until|"
                         r"(?:before|after|prior\s+to|by|up\s+to)\s+(?:the\s+)?(?:date|end|start|beginning|expiry|"
                         r"expiration|"
                         r"commencement|close|completion|termination|first|last|next|day|deadline|time)|"
                         r"at\s+least|no\s+later\s+than|not\s+later\s+than|as\s+soon\s+as|"
                         # "removed the same day personnel leave", "by the next business day"
                         r"(?:the\s+)?(?:same|next|following)\s+(?:business\s+|working\s+|calendar\s+)?day|"
                         # a date ("prior to 28 March 2007", "by 17 January 2024"), the day a thing takes effect
                         # ("on the date the Contributor first distributes"), a term ("for the term of copyright")
                         rf"{DATE_PHRASE}|"
                         r"for\s+the\s+(?:term|duration|life(?:time)?)\s+of|"
                         # a period the text leaves to another rule or to need ("retain the data for such duration
                         # as they are required to under ... record keeping", "archived for the time required by
                         # law", "kept for as long as necessary")
                         r"for\s+(?:such|the)\s+(?:duration|period|time|length\s+of\s+time)\s+(?:as|that|which|"
                         r"(?:is\s+|are\s+)?(?:required|prescribed|specified|necessary|needed))\b|"
                         r"for\s+(?:only\s+)?as\s+long\s+as|"
                         # a period set by need ("kept ... for no longer than is necessary for the purposes",
                         # "not retained longer than necessary") or the point it ends ("revoked when no longer needed")
                         rf"{NEED_PHRASE}|"
                         # minutes and seconds ("after 2 minutes or less of inactivity"), a frequency named as
                         # such ("with a frequency appropriate to the risk"), "annual" and its kin as adjectives
                         rf"(?:\d+|{NUMBER_WORDS})(?:\s+|-)(?:minutes?|seconds?)|frequenc(?:y|ies)|"
                         rf"{SET_TIME}|"
                         r"annual|biennial|triennial|semi-annual|half-yearly|"
                         r"regular|regularly|routinely|periodic|periodically|ongoing|continuous|continuously|continually|"
                         r"from\s+time\s+to\s+time|at\s+all\s+times|on\s+an?\s+(?:\w+[\s-]+)?(?:annual|yearly|quarterly|monthly|weekly|"
                         r"daily|regular|periodic|ongoing|continuous|continuing|timely|biennial|semi-annual|half-yearly)"
                         r"\s+basis|in\s+(?:sufficient|good|adequate|reasonable)\s+"
                         r"time|(?:reasonable|appropriate|sufficient)\s+(?:time|period|notice|intervals?|frequency)|"
                         # a single unit with an article ("kept for a year", "deleted after a month")
                         r"(?:for|after)\s+(?:a|an)\s+(?:further\s+|additional\s+|minimum\s+|maximum\s+)?"
                         r"(?:hour|day|week|month|quarter|year)|"
                         # an interval the organisation sets ("reviewed at planned intervals", a standard's words)
                         r"(?:planned|defined|predefined|pre-defined|predetermined|scheduled|specified)\s+intervals?)\b",
                         re.IGNORECASE)


# --- modal verbs and force words ----------------------------------------------------------------------

# Words that set the force of a requirement: modal verbs, negation, and the adjectives of duty.
_FORCE_CORE = ("must|shall|may|should|can|cannot|not|never|need|required|prohibited|optional|permitted|"
               "mandatory")
# Review reads a statement's own words against all the quotes it cites, together: besides the core, a
# bare "no" ("no firm may ...") and the conditions "unless" and "except" must come from the quotes.
STATEMENT_FORCE = re.compile(rf"\b({_FORCE_CORE}|no|unless|except)\b", re.IGNORECASE)
# Attribution reads each segment against each quote its bracket names, one by one: besides the core,
# "forbidden" and "obliged". The two lists were written apart (review's first) and are kept as they
# are: one list for both would change review verdicts, which is a decision of its own.
ATTRIBUTED_FORCE = re.compile(rf"\b({_FORCE_CORE}|forbidden|obliged)\b", re.IGNORECASE)
# Where a long sentence's requirement sits, so that an excerpt is cut around it (extraction).
MODAL_ANCHOR = re.compile(r"\b(must|shall|may|should|required|prohibited|duty|mandatory)\b", re.IGNORECASE)


# A requirement's own id as a table row's first cell states it: "2.1.1", "V5.2.3", "A.5.1", "AC-2", "AC-2(1)",
# "CC6.1", "ISM-0123", "A&A-01"; not "P1", "2024", "2023-01-15" (a number or a date), ".5"
REQUIREMENT_ID = r"(?:[A-Za-z][A-Za-z&]{0,3}\d*|\d{1,3})(?:[.\-]\d+)+(?:\(\d+\))?"


# The list labels that open a sentence, one or stacked: "a.", "(b)", "1.", "ii)", "(1)(a)", "-", "*", "•".
LEADING_LABELS = re.compile(r"^\s*(?:(?:[-*\u2022\u25aa]|\(?[a-z]{1,4}[.)]|\(?\d{1,3}[.)]|\([a-z]{1,4}\)|\(\d{1,3}\))"
                            r"(?:\s+|(?=\([a-z\d]{1,4}\)\s)))*", re.IGNORECASE)


# Tables (Markdown pipe tables, as ingest keeps them): a row's cells mean what its table's header row says.
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")


def in_table_row(text: str, at: int) -> bool:
    """`at` is on a line that is a pipe table's row ("| 2.1.7 | Verify that ... . If ..., ... | \u2713 |"). Pure."""
    return text.startswith("|", text.rfind("\n", 0, at) + 1)


def is_table_separator(line: str) -> bool:
    """A pipe table's separator row ("|---|:---:|"), which holds no text."""
    return _TABLE_SEPARATOR.match(line) is not None


def table_cells(row: str) -> list[str]:
    """The cells of a pipe-table row, trimmed, emphasis marks dropped ("| **P0** | 3 days |" -> ["P0", "3 days"])."""
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [c.strip().strip("*_").strip() for c in inner.split("|")]


def table_header(text: str, start: int) -> tuple[int, int] | None:
    """Where the header row of the table whose row opens at `start` in `text` stands, or None: the row is not a
    table's body row, or its table's header is not in `text` (a header is the first line of a run of "|" lines
    when the second is a separator, "|---|:---:|")."""
    if not text[start:start + 1] == "|" or (start and text[start - 1] != "\n"):
        return None
    line_end = text.find("\n", start)
    if _TABLE_SEPARATOR.match(text[start:line_end if line_end >= 0 else len(text)]):
        return None
    first = start
    while first > 0:
        previous = text.rfind("\n", 0, first - 1) + 1
        if not text[previous:first - 1].lstrip().startswith("|"):
            break
        first = previous
    header_end = text.find("\n", first)
    if header_end < 0 or first == start:
        return None
    separator_end = text.find("\n", header_end + 1)
    separator = text[header_end + 1:separator_end if separator_end >= 0 else len(text)]
    if not _TABLE_SEPARATOR.match(separator) or header_end + 1 == start:
        return None
    return first, header_end


def table_pairs(header: str, row: str) -> list[tuple[str, str]]:
    """A row's (column header, cell) pairs, empty cells left out."""
    return [(h, c) for h, c in zip(table_cells(header), table_cells(row), strict=False) if c]


def read_pairs(pairs: list[tuple[str, str]]) -> str:
    """Cells named by their headers: "Sev Rating: P0; SLA: 3 days" (a cell without a header as it is)."""
    return "; ".join(f"{h}: {c}" if h else c for h, c in pairs)


def table_reading(header: str, row: str) -> str:
    """A row read with its header, cell by cell: "Sev Rating: P0; SLA: 3 days; ..." (empty cells left out)."""
    return read_pairs(table_pairs(header, row))


# --- provisions that state nothing now ------------------------------------------------------------

# A provision kept only as a notice that it no longer applies: a catalogue's withdrawn control ("[Withdrawn:
# Incorporated into FS-1.]", "This control is withdrawn."), a code's reserved or repealed section ("[Reserved]",
# "Repealed."). Short, and no requirement, yet the answer to "What does FS-1(2) require?".
_WITHDRAWN = re.compile(r"^\s*(?:\[\s*(?:withdrawn|repealed|revoked|deleted|reserved)\b[^\]]*\]|"
                        r"(?:withdrawn|repealed|revoked|deleted|reserved)\s*[.:]|"
                        r"this\s+(?:control|enhancement|section|article|rule|paragraph|provision|requirement)\s+"
                        r"(?:is|was|has\s+been)\s+(?:withdrawn|repealed|revoked|deleted)\b)", re.I)


def withdrawn(sentence: str) -> bool:
    """The sentence says its provision is withdrawn, repealed, revoked, deleted or reserved. Pure."""
    return _WITHDRAWN.match(sentence) is not None


# --- text that points back ------------------------------------------------------------------------

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
                             r"standard|licen[cs]e|agreement|act|law|directive|code|notice|control|"
                             r"enhancement)\b", re.I)


def leans_on_context(quote: str) -> bool:
    """The quote starts with a word that points back at text before it ("Such records", "They must");
    "IT" in capitals is information technology, not the pronoun; "It is expected that" and "This Chapter"
    point at nothing before them."""
    match = _LEANS_ON_CONTEXT.search(quote)
    if match is None or _EXPLETIVE_IT.search(quote) or _SELF_REFERENCE.search(quote):
        return False
    return match.group(1) != "IT" or quote.isupper()
