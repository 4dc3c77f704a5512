"""Provisions a question asks about whole: "What does Article 11 require?", "What is required by AC-2?",
"Summarise section 6.1 of the access policy", "What does § 164.312 say?", "What is required by 23 NYCRR
500.11?".

A reader who names a provision and asks nothing else of it wants that provision's text, whatever the relevance
model reads in so few words: the ranking and the gate see "article", "require" and a number, and set the article
aside as off the question (DORA's "What does Article 11 require?" was refused). A provision is named as
cross-references name one ("Article 11(6)", "section 4.2", "§ 164.312", "Rule 3.1(b)": agents.crossref), by a
control's id ("AC-2", "AC-2(1)", "ISM-1784"), the section numbers ingest stores for such headings, or by a
standard's clause number alone, three levels deep ("What does 3.4.2 say?"). A question that
asks something of the provision ("Under Article 11, how often must plans be tested?") is searched as any other.
Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from agents.crossref import REFERENCE
from agents.naming import GENERIC
from agents.parts import is_broad
from engine.ingest.structure import CHECK_ID, LETTER_LABEL
from engine.terms import key_terms

# A control's or requirement's id: letters, a hyphen, a number, an enhancement in brackets ("AC-2(1)", "ISM-1784"),
# letters in several pieces ("MSTG-STORAGE-14", "A&A-01") and a sub-number ("OSPS-AC-01.01"), or capitalised words
# joined before the number ("Check-Identity-01", as OpenStack's checklists number their checks)
CONTROL_ID = re.compile(rf"(?<![\w-])((?:[A-Z][A-Z&]{{1,11}}-)+\d{{1,5}}(?:\.\d{{1,3}})?|{CHECK_ID})"
                        r"(?:\s*\((\d{1,3})\))?(?![\w-])")
# A section of a code cited by its title and section, as US law is: "45 CFR 164.308", "23 NYCRR 500.11", "15 U.S.C.
# 6801", "12 C.F.R. § 1026.19(e)": the section number its heading carries
CODE_SECTION = re.compile(r"\b\d{1,3}\s+(?:C\.?\s?F\.?\s?R|U\.?\s?S\.?\s?C(?:\.?\s?A)?|N\.?\s?Y\.?\s?C\.?\s?R\.?\s?R|"
                          r"C\.?\s?C\.?\s?R)\.?\s+(?:§{1,2}\s*)?(?P<num>\d+(?:\.\d+)*)(?:\((?P<sub>[a-z0-9]{1,4})\))?"
                          r"(?![\w.]*\d)", re.IGNORECASE)
# A section of a state code numbered by title, chapter and section, as Virginia's and other codes are ("§ 59.1-577",
# "§ 2-105(b)"): agents.crossref.REFERENCE reads its number to the hyphen
CODE_HYPHENATED = re.compile(r"§{1,2}\s*(?P<num>\d+(?:\.\d+)*-\d+(?:\.\d+)*[A-Z]?)(?![\w.-]|\.\d)"
                             r"(?:\s*\((?P<sub>[a-zA-Z0-9]{1,4})\))*")
# A provision numbered in Roman numerals, as bylaws, annexes and chapters are ("Article XI of the OSGeo bylaws",
# "Annex II", "Chapter IV"), with the text it is of, as agents.crossref.REFERENCE reads a numbered one
ROMAN = re.compile(r"\b(?i:articles?|parts?|chapters?|titles?|schedules?|annex(?:es)?|appendix)\s+"
                   r"(?P<num>[IVXLC]{1,7})(?![\w(])"
                   r"(?:\s+(?i:of)\s+(?:(?i:the)\s+)?(?P<doc>[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,7}))?")
# A subdivision named by its kind, as Commonwealth statutes and contracts cite them ("subsection 8(4)", "paragraph
# 7(2)(c)" is a REFERENCE already, "subparagraph 7(3)(d)(i)", "clause 4.7.3"): the section number with its subdivisions
SUBDIVISION = re.compile(r"\b(?i:sub-?sections?|sub-?paragraphs?|clauses?)\s+(?P<num>\d+(?:\.\d+)*[A-Z]{0,3})(?![\w.])"
                         r"(?:\s*\((?P<sub>[a-zA-Z0-9]{1,4})\))*")
# A part of a text that holds the provision asked about, named before it ("Schedule 1, clause 4.7.3", "Part 2,
# section 12"): it asks nothing of its own
_HOLDER = re.compile(r"\b(?i:schedules?|annex(?:es)?|appendix|appendices|parts?|chapters?|divisions?|titles?)\s+"
                     r"(?:\d{1,3}[A-Z]?|[IVXLC]{1,7}|[A-Z])\b")
# A clause number written alone, three levels deep or more, as standards number clauses ("What does 3.4.2 of the 1.1
# specification say?"); two levels ("1.1") are as often a version
BARE_CLAUSE = re.compile(r"(?<![\w.§(])\d{1,3}(?:\.\d{1,3}){2,}(?![\w.(]|\.\d)")
# ... or a code's section number, part and section, five digits or more ("33.212", "164.308", "500.11", "52.204-21"),
# written alone or after its act's initials ("FAR 33.209", "DFARS 252.204-7012"), as US regulations are cited: no
# version is numbered so
CODE_NUMBER = re.compile(r"(?:\b(?-i:[A-Z]{2,6})\s+(?:§{1,2}\s*)?)?(?<![\w.§(-])(?P<num>\d{2,3}\.\d{2,4}(?:-\d{1,4})?)"
                         r"(?![\w.(-]|\.\d)")
# A provision named by the kind a standard gives it ("Success Criterion 1.4.3", "SC 2.4.7", "Guideline 1.1",
# "conformance requirement 5.2.4"): its number
KIND_NUMBER = re.compile(r"\b(?:(?i:success\s+criteri(?:on|a)|criteri(?:on|a)|guidelines?|(?:conformance\s+)?"
                         r"requirements?|provisions?|principles?)|(?-i:SC))\s+(?P<num>\d+(?:\.\d+)*)(?![\w.(]|\.\d)")
# A section labelled by a capital letter or a Roman numeral, as agreements letter theirs, with any numbers within it
# ("Section O.2", "Section P", "section II.1"): ingest numbers such headings so (engine.ingest.sections)
LETTERED = re.compile(rf"\b(?i:sections?)\s+(?P<num>(?:{LETTER_LABEL})(?:\.\d{{1,3}})*)(?![\w.(]|\.\d)")
# What a question says around a provision it asks about whole: asking for its text, not for something in it
_ASKING = frozenset(key_terms(
    "what which does do did is are say says said state states stated require requires required requirement "
    "requirements provide provides provided provision provisions set out lay down mean means cover covers contain "
    "contains oblige obliges obligation obligations duty duties text content contents summarise summarize ask asks "
    "asking expect expects expected summary explain describe tell exactly full whole all under according us me we our "
    "clause clauses control controls about allow allows permit permits prohibit prohibits call calls"))
# A year, which names the text a provision is of ("clause 3.1.4 of the 2021 reference guide", "the 2018 Regulations")
_YEAR = re.compile(r"(?:19|20)\d\d")


def named_provisions(question: str) -> list[tuple[str, str]]:
    """The provisions `question` names, as (the words that name it, its section number): "Article 11(6)" ->
    "11(6)", "AC-2(1)" -> "AC-2(1)". Pure."""
    def named(m: re.Match[str]) -> tuple[str, str]:
        # every subdivision written, not the last alone: "§ 64.2011(a)(3)" is 64.2011(a)(3), not 64.2011(3)
        subs = re.findall(r"\(([a-zA-Z0-9]{1,4})\)", m.string[m.end("num"):m.end("sub") + 1]) if m.group("sub") else []
        return m.group(0), m.group("num") + "".join(f"({sub})" for sub in subs)

    def a_year(m: re.Match[str]) -> bool:
        """"the ... Regulations 2018": a text's year after its kind in the plural, no provision"""
        return not m.group("sub") and bool(_YEAR.fullmatch(m.group("num"))) and re.match(
            r"(?i)[a-z]+s\s", m.group(0)) is not None

    codes = [named(m) for m in (*CODE_SECTION.finditer(question), *CODE_HYPHENATED.finditer(question))]
    found = codes + [named(m) for m in REFERENCE.finditer(question)
                     if not any(m.group(0) in w for w, _ in codes) and not a_year(m)]
    found += [named(m) for m in SUBDIVISION.finditer(question) if not any(m.group(0) in w for w, _ in found)]
    found += [(m.group(0), m.group(1) + (f"({m.group(2)})" if m.group(2) else ""))
              for m in CONTROL_ID.finditer(question)]
    found += [(m.group(0), m.group("num")) for m in ROMAN.finditer(question)]
    found += [(m.group(0), m.group("num")) for m in LETTERED.finditer(question)
              if not re.match(r"I\s+(?:should|need|must|can|could|would|will|have|am|think|want|do|may|might)\b",
                              question[m.start("num"):])]  # "the section I should read"
    found += [(m.group(0), m.group("num")) for m in KIND_NUMBER.finditer(question)
              if not any(m.group("num") in words for words, _ in found)]
    found += [(m.group(0), m.group("num")) for m in CODE_NUMBER.finditer(question)
              if sum(c.isdigit() for c in m.group("num")) >= 5 and not any(m.group("num") in w for w, _ in found)]
    found += [(m.group(0), m.group(0)) for m in BARE_CLAUSE.finditer(question)
              if not any(m.group(0) in words for words, _ in found)]
    return found


def asked_provisions(question: str, names: frozenset[str] = frozenset()) -> list[str]:
    """The section numbers of the provisions `question` asks about whole: those it names, where its other words
    only ask for their text or name their documents (`names`: the key terms of the titles it may name). [] where
    it names none or asks something of them. Pure."""
    provisions = named_provisions(question)
    if not provisions:
        return []
    rest = question
    for words, _ in provisions:
        rest = rest.replace(words, " ")
    rest = _HOLDER.sub(" ", rest)
    # nor the words that name a kind of text ("section 3.8 of the packages specification", "of the bylaws"), as
    # written: "the regulator" is someone asked about, "the regulation" a text
    rest = " ".join(w for w in rest.split() if w.strip(".,;:?!()'\"").lower() not in GENERIC)
    if any(t not in _ASKING and t not in names and not _YEAR.fullmatch(t) for t in key_terms(rest)):
        return []
    return list(dict.fromkeys(number for _, number in provisions))


def asks_all(question: str, provision: bool | None = None) -> bool:
    """The answer states everything found, with how many: a broad question (every duty on a matter:
    agents.parts.is_broad) or one that asks what a provision says (`provision`: as the selection found, where
    known; else read from the question alone). Pure."""
    return is_broad(question) or (bool(asked_provisions(question)) if provision is None else provision)


def provision_parts(parts: Sequence[Mapping[str, Any]] | None) -> frozenset[int] | None:
    """The indexes of the parts (agents.state.PartRow) whose passages the selection chose as the provision
    the part asks about whole (agents.select.with_provisions): the selection also reads the titles a question
    names its document by ("What does DORA's Article 11 require?"), which the question's words alone do not
    tell. None where there are no parts (no selection ran: each question's words decide). Pure."""
    if not parts:
        return None
    return frozenset(p["index"] for p in parts if any(r.get("provision") for r in p.get("ranked") or []))
