"""Documents a question names: "GPLv3", "the MPL", "HIPAA", "the Safeguards Rule", "CC BY", "DORA".

A user who names a licence, an Act or a policy asks about that text; the passage of another document that
ranks above it answers another question ("What patent rights do the contributors to a GPLv3 project give me?"
answered from the MPL's). A title gives its document names: its acronyms of three letters or more ("HIPAA",
"FTC"; "HR" is a department as often as a title), the initials of a run of its capitalised words ("GPL":
General Public License, "CC": Creative Commons), an alias in brackets ("(DORA)", "(Safeguards Rule)"), and
such a run itself as the title writes it ("Mozilla Public License"), and a capitalised word of it with the title's
version ("Apache 2.0" of "Apache License, Version 2.0"). Not its capitalised words alone: a title's
"Security", "Access" or "Incident" is written capitalised in questions about the Security team or any
incident, and a dictionary knows "Apache" and "Mozilla" too. But a capitalised word of the title that the
document's own text never writes in lower case is a proper name ("an Apache-licensed library", "the Mozilla
licence"): the caller looks those up in the text (`title_words` asks which, `proper` gives them). A question
names a document when it writes one of these as a name (in capitals, or capitalised inside the sentence), so
the plain words of a title ("access", "incident response") name nothing. A name several titles share names
each of them ("HIPAA"); one every title has ("(EU)", "CFR") names none. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from engine.terms import key_terms
from engine.text import normalize_ws

# Words that name a kind of document or part of one, not one document: never a name on their own.
GENERIC = frozenset("""
act acts agreement amendment amendments annex appendix article articles bylaws chapter code commission conditions
contract council decision directive draft edition federal final general guidance guide guidelines handbook
instrument international law laws licence license licenses licences manual notice official order part
policies policy procedure procedures public regulation regulations release requirements rule rules schedule
section selected specification specifications standard standards statute subpart terms title version
""".split())
_SMALL = frozenset("of and the for on in to a an with by".split())
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9']*")
_ALIAS = re.compile(r"\(([A-Z][A-Za-z0-9 .-]{1,40})\)")
_VERSION = re.compile(r"(?<=[A-Za-z])(?:v|-)?\d[\d.]*$")
_TITLE_VERSION = re.compile(r"\bversion\s+(\d+(?:\.\d+)*)\b", re.IGNORECASE)
# A series' letters and the document's number in it: "CPG 229", "CPS 234", "SP 800-30", "ISO 27001"
_CODE = re.compile(r"\b([A-Z]{2,6})[ -]?(\d{2,5}(?:[.-]\d{1,4})*)\b")


def _codes(text: str) -> set[str]:
    """The series codes `text` writes ("CPG 229" -> "cpg 229"; "CPG229" too)."""
    return {f"{letters.lower()} {number}" for letters, number in _CODE.findall(text)}


def title_names(title: str) -> set[str]:
    """The names a title gives its document, lower-cased. A word in capitals of four letters or more is read as
    capitalised too ("GNU GENERAL PUBLIC LICENSE Version 3", a title taken from a licence's first line, gives "GPL"
    as "GNU General Public License, Version 3" does)."""
    words = _WORD.findall(title)
    names = {w.lower() for w in words if w.isupper() and len(w) >= 3 and w.lower() not in GENERIC}
    words = [w.title() if w.isupper() and len(w) >= 4 else w for w in words]
    run: list[str] = []
    for w in [*words, ""]:
        if w[:1].isupper() and not w.isupper():
            run.append(w)
            continue
        spans = [run[i:j] for i in range(len(run)) for j in range(i + 2, len(run) + 1)]
        names |= {"".join(x[0] for x in span).lower() for span in spans}
        names |= {" ".join(span) for span in spans if any(x.lower() not in GENERIC for x in span)}  # as written
        run = [] if w.lower() not in _SMALL else run
    names |= {a.strip().lower() for a in _ALIAS.findall(title)}
    names |= _codes(title)  # "CPG 229": the series ("CPG") names every guide in it, the number this one
    # a title's own word with its version, as a question writes the two together ("Apache 2.0" of "Apache License,
    # Version 2.0"): no other document has that pair
    if (version := _TITLE_VERSION.search(title)) is not None:
        names |= {f"{w} {version.group(1)}" for w in words
                  if w[:1].isupper() and not w.isupper() and w.lower() not in GENERIC | _SMALL}
    return names


def title_words(question: str, titles: dict[str, str]) -> dict[str, set[str]]:
    """Per document, the capitalised words of its title (as written, four letters or more, not a kind of document)
    that the question writes as names and that are not yet names of it: those to look up in the document's text,
    which tells a proper name ("Apache") from a title's common word ("Security")."""
    mentioned = question_names(question)
    names = {doc: title_names(title) for doc, title in titles.items()}
    found = {doc: {w for w in _WORD.findall(title) if len(w) >= 4 and w[:1].isupper() and not w.isupper()
                   and w.lower() in mentioned and w.lower() not in GENERIC | names[doc]}
             for doc, title in titles.items()}
    return {doc: words for doc, words in found.items() if words}


def shared(proper: Mapping[str, set[str]], asked: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """`proper` (id -> the words of its title its text writes only as names, of those `asked`: `title_words`) with
    each such word given to every document whose title writes it too: one name is one name ("OAuth" in the titles of
    three RFCs names all three, though one of them also writes "oauth" in lower case), so a question that writes it
    names each title that does, not the one whose text happens never to write it otherwise. Pure."""
    names = {w for found in proper.values() for w in found}
    out = {doc: {w for w in words if w in names} for doc, words in asked.items()}
    return {doc: found for doc, found in out.items() if found}


def question_names(question: str) -> set[str]:
    """What a question writes as a name, lower-cased: words in capitals (a version suffix dropped: "GPLv3" ->
    "gpl"), capitalised words inside a sentence, pairs of them ("Safeguards Rule"), and a series' letters with a
    number ("CPG 229"). A word that opens a sentence is capitalised for that alone: the question's first, and one
    after a sentence's end ("The laptop was stolen. Is this a breach?": "Is" names no "Information Systems"
    Regulations), where a word in lower case ends the sentence before ("U.S. Securities" goes on)."""
    found = list(_WORD.finditer(question))
    words = [m.group(0) for m in found]
    opens = [i == 0 or _SENTENCE_END.search(question[:m.start()]) is not None for i, m in enumerate(found)]
    out: set[str] = set()
    for i, w in enumerate(words):
        stem = _VERSION.sub("", w)
        if stem.isupper() and len(stem) >= 2 or (w[0].isupper() and not opens[i]):
            out |= {w.lower(), stem.lower()}
    out |= {f"{a} {b}".lower() for i, (a, b) in enumerate(zip(words, words[1:], strict=False))
            if not opens[i] and a[0].isupper() and b[0].isupper()}
    return out | _codes(question)


# The end of a sentence before a word: a word in lower case (two letters or more), its stop, blanks
_SENTENCE_END = re.compile(r"\b[a-z][a-z'-]+[.?!][\"'\u201d\u2019)]?\s+$")


# The spellings of a kind of document a question may write after a title's own words ("the Apache licence").
_KIND_SPELLINGS = {"license": "licen[cs]es?", "licence": "licen[cs]es?"}


def _as_written(name: str) -> str:
    """The pattern of a title's run of capitalised words in a question: as the title writes it, but a closing word
    that names the kind of document (`GENERIC`: "License", "Act", "Policy") in either case and, for a licence, either
    spelling ("the Apache licence", "the Mozilla Public license")."""
    *head, last = name.split(" ")
    if not head or last.lower() not in GENERIC:
        return rf"\b{re.escape(name)}\b"
    kind = _KIND_SPELLINGS.get(last.lower(), re.escape(last.lower()) + "s?")
    return rf"\b{re.escape(' '.join(head))}\s+(?i:{kind})\b"


def named_documents(question: str, titles: dict[str, str], proper: Mapping[str, set[str]] | None = None) -> set[str]:
    """The ids of the documents (`titles`: id -> title) the question names; empty when it names none, or all.
    A run of a title's capitalised words names it where the question writes it so ("the Mozilla Public
    License", "Creative Commons"); so does a word of its title that its text writes only as a name (`proper`: id ->
    such words, of those `title_words` asked about)."""
    distinct = _distinctive(titles, proper)
    mentioned = _mentioned(question, distinct)
    written = {doc: {n for n in found if _writes(question, mentioned, n)} for doc, found in distinct.items()}
    named = {doc for doc, names in written.items() if names}
    # the most specific names the question writes: a document named only by names that name another too, or that run
    # inside a longer one of another's, is not named where that other is named by more ("the OpenChain Security
    # Assurance Specification 1.1" names the specification, not the reference guide whose title shares "OpenChain
    # Security Assurance"; "the HIPAA Breach Notification Rule" that rule, not the Security Rule); "HIPAA" alone
    # still names both HIPAA rules
    named = {doc for doc in named if not any(
        other != doc and written[other] - written[doc]
        and all(n in written[other] or any(_within(n, m) for m in written[other]) for n in written[doc])
        for other in named)}
    return set() if len(named) == len(titles) else named


def _within(name: str, longer: str) -> bool:
    """`name`'s words run in order inside `longer`'s, which has more ("OpenChain Security Assurance" in "OpenChain
    Security Assurance Specification"). Pure."""
    a, b = name.lower().split(), longer.lower().split()
    return len(a) < len(b) and any(b[i:i + len(a)] == a for i in range(len(b) - len(a) + 1))


def _mentioned(question: str, names: Mapping[str, set[str]]) -> set[str]:
    """`question_names`, less a series' letters where the question writes them with the number of a document
    (`names`: each document's names): "CPG 229" names that guide, not every guide of the series "CPG"."""
    mentioned = question_names(question)
    codes = {code for code in _codes(question) if any(code in found for found in names.values())}
    return mentioned - {code.split(" ")[0] for code in codes}


def _writes(question: str, mentioned: set[str], name: str) -> bool:
    """The question writes `name` as a name: an acronym, initials or alias among its `question_names`, a run of a
    title's capitalised words as the title writes it."""
    return name in mentioned if name.islower() else re.search(_as_written(name), question) is not None


def named_groups(question: str, titles: dict[str, str],
                 proper: Mapping[str, set[str]] | None = None) -> list[set[str]]:
    """The documents the question names, one set per name, where it names two or more texts apart ("HIPAA has
    us keep documentation for six years, but the Safeguards Rule says ...": HIPAA's two subparts, and the FTC
    rule): each is to be searched on its own, so that one text's best passages do not crowd out the other's
    answer. Sets in document order of their ids; [] where it names fewer than two, or names that overlap
    ("HIPAA" beside "the Security Rule", one of HIPAA's subparts). Pure."""
    distinct = _distinctive(titles, proper)
    mentioned = _mentioned(question, distinct)
    by_name: dict[str, set[str]] = {}
    for doc, found in distinct.items():
        for n in found:
            if _writes(question, mentioned, n):
                by_name.setdefault(n.lower(), set()).add(doc)
    sets = [set(g) for g in sorted({frozenset(docs) for docs in by_name.values()}, key=sorted)]
    if len(sets) < 2 or any(a & b for i, a in enumerate(sets) for b in sets[i + 1:]):
        return []
    return sets


def _distinctive(titles: dict[str, str], proper: Mapping[str, set[str]] | None = None) -> dict[str, set[str]]:
    """Each document's names (`title_names`, and its `proper` words) but those every title gives ("(EU)", "CFR":
    they tell none apart)."""
    names = {doc: title_names(title) | {w.lower() for w in (proper or {}).get(doc, ())}
             for doc, title in titles.items()}
    everywhere = set.intersection(*names.values()) if names else set()
    return {doc: found - everywhere for doc, found in names.items()}


def without_names(question: str, titles: dict[str, str], named: set[str],
                  proper: Mapping[str, set[str]] | None = None) -> str:
    """The question without the names it gives the `named` documents ("Under the MPL, can I ship a proprietary
    application that includes some MPL files?" -> "Under the, can I ship a proprietary application that includes
    some files?"): once a search keeps to those documents, the name tells its passages nothing apart, and a
    document's own notice templates, which repeat its name, would outrank the terms asked about. The question as
    written where too little is left (fewer than two key terms). Pure."""
    names = {n for doc, found in _distinctive(titles, proper).items() if doc in named for n in found}
    version = r"(?:\s*,?\s*(?:v(?:ersion)?\.?\s*)?\d+(?:\.\d+)*)?"
    text = question
    for n in sorted(names, key=len, reverse=True):
        if n.islower():  # an acronym, initials or an alias: written in capitals or capitalised, a version after
            text = re.sub(rf"(?<![\w-])(?i:{re.escape(n)})(?:v|-)?{version}(?![\w-])", " ", text)
        else:
            text = re.sub(_as_written(n) + version, " ", text)
    left = re.sub(r"\s+([,.?;:])", r"\1", normalize_ws(text))
    return left if len(key_terms(left)) >= 2 else question


# A text a question asks under by name: "Under PSD2, ...", "under the Open Data Directive", "according to the Federal
# Mine Safety and Health Act": a run of capitalised words (with the small words between) closed by a kind of legal
# text, or a versioned name on its own ("PSD2", "NIS2", "MiFID II", "CPS 234"), not one that qualifies the noun after
# it ("under the NYDFS cybersecurity regulation", which names its text otherwise). A plain acronym ("under DORA",
# "under GDPR") is not read: a text seldom writes its own nickname, and a title may not either.
_TEXT_KINDS = (r"(?:Act|Directive|Regulations?|Rules?|Code|Law|Standard|Convention|Ordinance|Decree|Framework|"
               r"Guidelines?|Agreement|Treaty|Licen[cs]e)")
_UNDER = re.compile(
    r"\b(?i:under|according\s+to|pursuant\s+to|in\s+accordance\s+with|as\s+required\s+by)\s+(?:(?i:the)\s+)?"
    rf"(?P<name>[A-Z][\w'-]*(?:\s+(?:[A-Z0-9][\w'-]*|and|of|for|on|the|to|in))*?\s+{_TEXT_KINDS}\b"
    r"|(?:[A-Z][A-Za-z]*\d[A-Za-z0-9]*|[A-Z][a-z]*[A-Z][A-Za-z]*\s+(?:II|III|IV|V|VI|\d{1,5}))"
    r"(?=\s*(?:[,.;:?!)]|$)|\s+(?:and|or|to|for|when|if|where|as|in|on|about|do|does|is|are|must|shall|should|can|"
    r"may)\b))")
# A provision of a text named with it ("Section 5 of the Act", "Part 2 of the Rules"): the text is what follows "of"
_PROVISION_OF = re.compile(r"^(?i:sections?|articles?|parts?|chapters?|rules?|regulations?|paragraphs?|schedules?|"
                           r"annex(?:es)?|titles?|appendix|subparts?|clauses?)\s+[\dIVXLC][\w.()-]*"
                           r"(?:\s+(?:of|to)\s+(?:the\s+)?(?P<text>.+))?$")


# Where a text applies, which many titles write ("(EU)") and a question adds ("the EU NIS2 Directive"): no name of one
_PLACES = frozenset("eu uk us usa ec eea un european union united kingdom states federal".split())


def asked_under(question: str) -> list[str]:
    """The texts `question` asks under by name (`_UNDER`), as it writes them: each of two joined by "and the"
    ("under FATCA and the Common Reporting Standard"), without an owner before it ("the FSRA's Spot Commodities
    Framework": its framework is the Spot Commodities Framework), the text a provision is of ("Section 5 of the
    Data Act": the Data Act); not one of only a kind's words ("the Act", "Part 2 of the Rules"). Pure."""
    names = []
    for m in _UNDER.finditer(question):
        for name in re.split(r"\s+and\s+the\s+", m.group("name")):
            name = re.sub(r"^[\w-]+['\u2019]s\s+", "", name)
            if (provision := _PROVISION_OF.match(name)) is not None:
                name = provision.group("text") or ""
            if any(w.lower() not in GENERIC | _SMALL for w in _WORD.findall(name)):
                names.append(name)
    return list(dict.fromkeys(names))


def _name_words(name: str) -> list[str]:
    """The words of a text's name less the kind word that closes it ("Open Data" of "Open Data Directive"). Pure."""
    *head, last = name.split()
    return head if re.fullmatch(_TEXT_KINDS, last) else [*head, last]


def without_kind(name: str) -> str | None:
    """A text's name less the kind word that closes it, where two words or more are left ("Digital Operational
    Resilience" of "the Digital Operational Resilience Act", which its text writes though not with "Act"); None
    otherwise ("Data" of "the Data Act" names nothing). Pure."""
    words = _name_words(name)
    return " ".join(words) if 2 <= len(words) < len(name.split()) else None


def foreign(question: str, titles: dict[str, str]) -> list[str]:
    """The texts `question` asks under (`asked_under`) that no title (`titles`: id -> title) names: neither the
    title writes the name (its kind word in either spelling) nor is one of the names it gives (`title_names`) one
    the name writes ("the NIS Regulations" of "The Network and Information Systems Regulations 2018", "the MPL").
    The caller still looks for each in the documents' text, which may name it ("the Atomic Energy Act of 1954").
    Pure."""
    names = {doc: title_names(title) for doc, title in titles.items()}
    lowered = [normalize_ws(t).lower() for t in titles.values()]
    out = []
    for name in asked_under(question):
        words = _name_words(name)
        # its acronyms, with and without a version ("NIS2": "nis2", "nis"), not a place's ("EU"); each after a word,
        # as question_names reads no name in a question's first word
        acronyms = {n for w in words if sum(c.isupper() for c in w) >= 2
                    for n in question_names(f"x {w}") if n not in _PLACES}
        if any(re.search(_as_written(name).replace("\\ ", "\\s+"), t, re.IGNORECASE) for t in lowered) or any(
                len(words) > 1 and re.search(rf"\b{re.escape(' '.join(words).lower())}\b", t) for t in lowered) or any(
                acronyms & found for found in names.values()):
            continue
        out.append(name)
    return out
