"""agents/naming.py: the documents a question names, by the names their titles give them."""

from __future__ import annotations

import pytest

from agents.naming import (
    asked_under,
    foreign,
    named_documents,
    named_groups,
    shared,
    title_words,
    without_kind,
)

LICENCES = {"apache": "Apache License, Version 2.0", "gpl": "GNU General Public License, Version 3",
            "mpl": "Mozilla Public License, Version 2.0",
            "cc": "Creative Commons Attribution 4.0 International Public License"}
US = {"hipaa-sec": "45 CFR Part 164 Subpart C, HIPAA Security Rule (§§ 164.302-164.318)",
      "hipaa-breach": "45 CFR Part 164 Subpart D, HIPAA Breach Notification Rule (§§ 164.400-164.414)",
      "ftc": "16 CFR Part 314, FTC Standards for Safeguarding Customer Information (Safeguards Rule)"}
EU = {"dora": "Regulation (EU) 2022/2554 (DORA)", "nis2": "Directive (EU) 2022/2555 (NIS2 Directive)"}
POLICIES = {"access": "Access", "hr": "HR and Personnel Security", "ir": "Incident Response",
            "rules": "Cyber Resilience Rules 2026", "data": "Data Management Policy"}
OBLIQA = {str(i): f"ObliQA document {i}" for i in range(1, 5)}


@pytest.mark.parametrize(("titles", "question", "named"), [
    # licences: an acronym with its version, initials of a title's words, the title's words as it writes them
    (LICENCES, "What patent rights do the contributors to a GPLv3 project give me?", {"gpl"}),
    (LICENCES, "Am I allowed to sell copies of GPL-licensed software for money?", {"gpl"}),
    (LICENCES, "I want to reuse a CC BY 4.0 photo on our company blog.", {"cc"}),
    (LICENCES, "Can I combine MPL 2.0 code with a GPL project?", {"gpl", "mpl"}),
    (LICENCES, "Does the Mozilla Public License give me any rights to the logos?", {"mpl"}),
    (LICENCES, "What must I do when I hand out a modified version?", set()),
    # a dictionary word names nothing alone, but with its title's version it names that one document
    (LICENCES, "Can I put Apache 2.0 code into a closed-source product?", {"apache"}),
    (LICENCES, "We use an Apache-licensed library in our product.", set()),
    (LICENCES, "Is version 2.0 of the licence compatible with version 3?", set()),
    # US regulations: a name two titles share names both; naming every document restricts nothing
    (US, "Under HIPAA, how soon must we notify individuals of a breach?", {"hipaa-sec", "hipaa-breach"}),
    (US, "What details must we give the FTC when we report a security breach?", {"ftc"}),
    (US, "Does the Safeguards Rule require encryption of customer information?", {"ftc"}),
    (US, "HIPAA has us keep documentation for six years, but the Safeguards Rule says two. Which applies?", set()),
    (US, "What must a covered entity do when it lets an outside vendor handle ePHI?", set()),
    # EU: a bracketed alias
    (EU, "Does DORA oblige us to keep our data inside the EU?", {"dora"}),
    (EU, "Which entities does the NIS2 Directive cover?", {"nis2"}),
    # policies: a department, a capitalised team and the plain words of a title name nothing
    (POLICIES, "When must HR notify Security of a leaver?", set()),
    (POLICIES, "What must we do when a security incident occurs?", set()),
    (POLICIES, "What does the Incident Response policy require after an outage?", {"ir"}),
    (POLICIES, "What do the Cyber Resilience Rules say about backups?", {"rules"}),
    (OBLIQA, "What must an Authorised Person do under the AML Rules?", set()),  # titles that give no names
    # the title's words with its kind of document in the question's own case and spelling
    (LICENCES, "Does the Apache licence let me use the project's name and logo?", {"apache"}),
    (LICENCES, "Under the Mozilla Public licence, may I sell binaries?", {"mpl"}),
    (POLICIES, "What does the Data Management policy say about backups?", {"data"}),
    (POLICIES, "What does our data management policy say about backups?", set()),
], ids=["gplv3", "gpl-hyphen", "cc-by", "two-named", "title-words", "none", "word-and-version", "dictionary-word",
        "version-alone", "shared-name",
        "acronym", "alias", "all-named", "ephi", "eu-alias", "eu-alias-2", "department", "lower-case",
        "policy-title", "rules-title", "generic-titles", "kind-spelling", "kind-spelling-2", "kind-case",
        "plain-words"])
def test_named_documents(titles: dict[str, str], question: str, named: set[str]) -> None:
    assert named_documents(question, titles) == named


# what engine.search.store.proper_words finds in each corpus's text: "Apache" and "Mozilla" are never written in
# lower case there, "Security", "Breach", "Access", "Incident" are (bench/corpora, measured)
PROPER = {"apache": {"Apache"}, "mpl": {"Mozilla"}, "rules": {"Cyber", "Resilience"}}


@pytest.mark.parametrize(("titles", "question", "asked", "named"), [
    # a title's word the document writes only as a name names it, however the question goes on ("-licensed")
    (LICENCES, "We use an Apache-licensed library. What happens to our patent rights?", {"apache": {"Apache"}},
     {"apache"}),
    (LICENCES, "Can we claim compensation from the contributors of an Apache project?", {"apache": {"Apache"}},
     {"apache"}),
    (LICENCES, "What happens to my rights under the Mozilla licence if I sue?", {"mpl": {"Mozilla"}}, {"mpl"}),
    (POLICIES, "Does the Cyber team own the backup schedule?", {"rules": {"Cyber"}}, {"rules"}),
    # a title's common word, capitalised in the question, is asked about but is not a name of it
    (US, "What must we tell the state when Social Security numbers are exposed?", {"hipaa-sec": {"Security"}},
     set()),
    (POLICIES, "What must the Incident team do first?", {"ir": {"Incident"}}, set()),
    # named by the title's run of words either way; nothing asked where the question writes no title word as a
    # name, or the word is already a name
    (LICENCES, "Is software under the Apache License provided with a warranty?", {"apache": {"Apache"}},
     {"apache"}),
    (LICENCES, "Apache code: may I sell it?", {}, set()),  # sentence-initial capitals name nothing
    (EU, "Does DORA oblige us to keep our data inside the EU?", {}, {"dora"}),
], ids=["apache-licensed", "apache-project", "mozilla-licence", "policy-rules", "common-word", "team",
        "title-run", "sentence-start", "acronym"])
def test_a_title_word_written_only_as_a_name_names_its_document(titles: dict[str, str], question: str,
                                                               asked: dict[str, set[str]], named: set[str]) -> None:
    assert title_words(question, titles) == asked
    proper = {doc: words & PROPER.get(doc, set()) for doc, words in asked.items()}
    assert named_documents(question, titles, proper) == named


@pytest.mark.parametrize(("titles", "question", "named"), [
    # a second sentence's first word is capitalised for that alone: "Is" is no "Information Systems" (the NIS
    # Regulations) nor "Information Safeguards" (the FTC rule's title)
    ({"osh": "Occupational Safety and Health Act of 1970",
      "nis": "The Network and Information Systems Regulations 2018"},
     "Inspectors will see our proprietary process during the visit. Is that information protected?", set()),
    (US, "A laptop with patient files was stolen but the disk was fully encrypted. Is this even the kind of breach "
         "we must notify about?", set()),
    # a name after a sentence's end is a name still, and an abbreviation's stop ends no sentence
    (LICENCES, "We ship a binary. Does the Mozilla Public License let us keep our files closed?", {"mpl"}),
    ({"sec": "Securities Exchange Act of 1934", "bank": "Bank Secrecy Act"},
     "Under the U.S. Securities Exchange Act, what must we file?", {"sec"}),
], ids=["nis-is", "ftc-is", "name-after-a-stop", "abbreviation"])
def test_a_word_that_opens_a_sentence_names_nothing(titles: dict[str, str], question: str, named: set[str]) -> None:
    assert named_documents(question, titles) == named


def test_a_name_of_one_title_names_every_title_that_writes_it() -> None:
    titles = {"6749": "RFC 6749 The OAuth 2.0 Authorization Framework",
              "6750": "RFC 6750 The OAuth 2.0 Authorization Framework: Bearer Token Usage",
              "7662": "RFC 7662 OAuth 2.0 Token Introspection", "pol": "Token Handling Policy"}
    question = "Which character encoding has to be used for names and values in form-encoded OAuth requests?"
    asked = title_words(question, titles)
    assert asked == {"6749": {"OAuth"}, "6750": {"OAuth"}, "7662": {"OAuth"}}
    # only RFC 6750's text never writes "oauth" in lower case; the name is the three titles' all the same
    assert shared({"6750": {"OAuth"}}, asked) == asked
    assert named_documents(question, titles, shared({"6750": {"OAuth"}}, asked)) == {"6749", "6750", "7662"}
    assert named_documents(question, titles, {"6750": {"OAuth"}}) == {"6750"}  # as it was: one RFC searched alone
    assert shared({}, asked) == {}


@pytest.mark.parametrize(("titles", "question", "searched"), [
    # the name a search kept to is taken out of what it ranks for: a licence's notice template repeats it
    (LICENCES, "Under the MPL, can I ship a proprietary application that includes some MPL files?",
     "Under the, can I ship a proprietary application that includes some files?"),
    (LICENCES, "Can I put Apache 2.0 code into a closed-source commercial product?",
     "Can I put code into a closed-source commercial product?"),
    (LICENCES, "What patent rights do the contributors to a GPLv3 project give me?",
     "What patent rights do the contributors to a project give me?"),
    (US, "What details must we give the FTC when we report a security breach to them?",
     "What details must we give the when we report a security breach to them?"),
    (EU, "Does DORA oblige us to keep our data inside the EU?", "Does oblige us to keep our data inside the EU?"),
    # too little left: the question as written
    (LICENCES, "What does the MPL say?", "What does the MPL say?"),
], ids=["acronym-twice", "word-and-version", "acronym-with-version", "us-acronym", "eu-alias", "too-little-left"])
def test_a_search_kept_to_named_documents_ranks_without_their_names(titles: dict[str, str], question: str,
                                                                     searched: str) -> None:
    from agents.naming import without_names

    assert without_names(question, titles, named_documents(question, titles)) == searched


@pytest.mark.parametrize(("titles", "question", "groups"), [
    # two texts named apart, each searched on its own (US regulations, licences, an EU act beside a directive)
    (US, "HIPAA has us keep documentation for six years, but the Safeguards Rule says two. Which applies?",
     [{"ftc"}, {"hipaa-breach", "hipaa-sec"}]),
    (US, "HIPAA and the FTC rule seem to allow different delays. How long can each one be postponed?",
     [{"ftc"}, {"hipaa-breach", "hipaa-sec"}]),
    (LICENCES, "Can I combine MPL 2.0 code with a GPL project?", [{"gpl"}, {"mpl"}]),
    (EU, "Do DORA and the NIS2 Directive both require incident reporting?", [{"dora"}, {"nis2"}]),
    # one name, or none, or names that overlap (HIPAA holds the Security Rule), or one name written twice
    (US, "Under HIPAA, how soon must we notify individuals of a breach?", []),
    (US, "Does HIPAA's Security Rule go further than HIPAA's breach rule?", []),
    (US, "Does the Safeguards Rule require encryption, and what does the Safeguards Rule say of MFA?", []),
    (POLICIES, "What must we do when a security incident occurs?", []),
], ids=["hipaa-ftc", "hipaa-ftc-acronym", "mpl-gpl", "dora-nis2", "one-name", "overlapping", "same-name-twice",
        "none"])
def test_texts_named_apart(titles: dict[str, str], question: str, groups: list[set[str]]) -> None:
    assert named_groups(question, titles) == groups


@pytest.mark.parametrize(("titles", "question", "named"), [
    # titles taken from a text's first line, in capitals (a licence, a statute, a policy): the same names
    ({"gpl": "GNU GENERAL PUBLIC LICENSE Version 3", "mpl": "Mozilla Public License Version 2.0"},
     "Once I stop violating the GPL, when do I get my licence back?", {"gpl"}),
    ({"dora": "DIGITAL OPERATIONAL RESILIENCE ACT", "nis2": "NIS2 DIRECTIVE"},
     "Does the Digital Operational Resilience Act cover insurers?", {"dora"}),
    ({"ir": "INCIDENT RESPONSE POLICY", "acc": "ACCESS CONTROL POLICY"}, "What does the IRP require?", {"ir"}),
    # counter-examples: an acronym stays one, and a title's plain words still name nothing
    ({"gpl": "GNU GENERAL PUBLIC LICENSE Version 3", "mpl": "Mozilla Public License Version 2.0"},
     "What must I do when I hand out a modified version?", set()),
    ({"ir": "INCIDENT RESPONSE POLICY", "acc": "ACCESS CONTROL POLICY"},
     "What must we do when an incident occurs?", set()),
], ids=["licence", "statute", "policy-initials", "plain-words", "plain-words-policy"])
def test_a_title_in_capitals_gives_the_names_a_capitalised_one_does(titles: dict[str, str], question: str,
                                                                   named: set[str]) -> None:
    assert named_documents(question, titles) == named


_GUIDES = {"cpg229": "APRA Prudential Practice Guide CPG 229 Climate Change Financial Risks (November 2021)",
           "cpg233": "APRA Prudential Practice Guide CPG 233 Pandemic Planning (May 2013)",
           "sp80030": "NIST SP 800-30 Guide for Conducting Risk Assessments"}


@pytest.mark.parametrize(("question", "named"), [
    ("What does paragraph 36 of CPG 229 say?", {"cpg229"}),
    ("What does CPG229 say about scenario analysis?", {"cpg229"}),
    ("What does paragraph 34 of CPG 233 require of insurers?", {"cpg233"}),
    ("How must risk be assessed under SP 800-30?", {"sp80030"}),
    # the series names every guide in it; a question that names none names none
    ("What do the CPG guides say about boards?", {"cpg229", "cpg233"}),
    ("Does APRA expect the board to review climate risk?", {"cpg229", "cpg233"}),
    ("What must the board do about climate risk?", set()),
])
def test_a_series_code_and_number_name_one_document(question: str, named: set[str]) -> None:
    assert named_documents(question, _GUIDES) == named


DATA = {"dga": "Regulation (EU) 2022/868 on European data governance (Data Governance Act)",
        "eprivacy": "Directive 2002/58/EC on privacy and electronic communications (ePrivacy Directive)"}
UK = {"nis": "The Network and Information Systems Regulations 2018",
      "osh": "OCCUPATIONAL SAFETY AND HEALTH ACT OF 1970"}


@pytest.mark.parametrize(("titles", "question", "away"), [
    # a text asked under by name that no title names: an acronym, a run of capitalised words closed by its kind
    (DATA, "Under PSD2, when does a bank have to apply strong customer authentication?", ["PSD2"]),
    (DATA, "Which datasets must public bodies publish under the Open Data Directive?", ["Open Data Directive"]),
    (DATA, "Under the Data Act, can a car owner demand the data?", ["Data Act"]),
    (DATA, "How many years must a firm keep call recordings under MiFID II?", ["MiFID II"]),
    (UK, "Under the EU NIS2 Directive, when is the early warning due?", []),  # "NIS": the held text's name
    (UK, "Under the Federal Mine Safety and Health Act, how often must a mine be inspected?",
     ["Federal Mine Safety and Health Act"]),
    (EU, "Under the NIS2 Directive, which size thresholds make an energy company essential?", []),
    (POLICIES, "Within how many days must we report a breach under the Privacy Act?", ["Privacy Act"]),
    # a held text, by its acronym, its alias or its title's words; the place a text applies is no name of it
    (DATA, "What do we owe under the DGA?", []),
    (DATA, "Does the Data Governance Act force a body to let us re-use data?", []),
    (UK, "What must we do when the regulator inspects us under the UK NIS Regulations?", []),
    (UK, "Do workers have duties under the OSH Act?", []),
    (LICENCES, "Under GPLv3, by when must a patent deal have been made?", []),
    (US, "Under HIPAA, how soon must we notify individuals of a breach?", []),
    # (titles that name nothing: the caller looks the name up in the documents' text)
    (OBLIQA, "Under COBS Rule 15.9.1, how often must custody be reconciled?", ["COBS Rule"]),
    # a name that qualifies the noun after it, and words not asked under, name no text asked under
    (US, "What are our obligations under the NYDFS cybersecurity regulation?", []),
    (DATA, "Does the Data Act change what the DGA requires?", []),
    # a provision of the text in scope ("Section 5 of the Act") names no other text; one of a named text names it
    (DATA, "What is required under Section 5 of the Act?", []),
    (DATA, "Under Article 28 of the Regulation, what must we do?", []),
    (DATA, "Under Title II, what must a bank do?", []),
    (DATA, "Under Section 5 of the Data Act, what applies?", ["Data Act"]),
    # a plain acronym is not read: a text seldom writes its own nickname ("DORA"), nor need its title
    (DATA, "What is the fine under GDPR?", []),
    (DATA, "Under DORA, what must we report?", []),
], ids=["acronym", "directive", "act", "roman-version", "place-and-version", "long-act", "alias-version", "act-policy",
        "initials", "title-words", "held-regulations", "held-act", "held-licence", "held-acronym", "rule-number",
        "qualifier", "not-under", "provision-of-the-act", "article-of", "title-roman", "provision-of-a-named-text",
        "plain-acronym", "nickname"])
def test_texts_asked_under_that_no_title_names(titles: dict[str, str], question: str, away: list[str]) -> None:
    assert foreign(question, titles) == away


def test_two_texts_asked_under_together_and_an_owner_before_one() -> None:
    assert asked_under("What must an operator report under FATCA and the Common Reporting Standard?") == [
        "FATCA", "Common Reporting Standard"]
    assert asked_under("What sourcing standards apply under the FSRA's Spot Commodities Framework?") == [
        "Spot Commodities Framework"]


def test_a_name_less_its_kind_word_is_looked_up_where_two_words_are_left() -> None:
    # (the text writes "digital operational resilience", not with "Act"; "Data" alone names nothing)
    assert without_kind("Digital Operational Resilience Act") == "Digital Operational Resilience"
    assert without_kind("Data Act") is None and without_kind("PSD2") is None


OPENCHAIN = {"spec": "OpenChain Security Assurance Specification 1.1 (2022)",
             "guide": "OpenChain Security Assurance Reference Guide Version 1.0 (2021a, superseded)",
             "playbook": "The OpenChain PlayBooks, Medium Company"}


@pytest.mark.parametrize(("titles", "question", "named"), [
    # the most specific name written names its document alone, not every title that shares its first words
    (OPENCHAIN, "What is required by section 3.2.1 of the OpenChain Security Assurance Specification 1.1?", {"spec"}),
    (OPENCHAIN, "What does clause 3.1.4 of the 2021 Security Assurance Reference Guide require?", {"guide"}),
    (OPENCHAIN, "Does OpenChain Security Assurance ask for a policy?", {"spec", "guide"}),
    (US, "Under the HIPAA Breach Notification Rule, how soon must we notify individuals?", {"hipaa-breach"}),
    (US, "Under HIPAA, how soon must we notify individuals of a breach?", {"hipaa-sec", "hipaa-breach"}),
    (LICENCES, "Can I combine MPL 2.0 code with a GPL project?", {"gpl", "mpl"}),  # two names, neither within
], ids=["specification", "reference-guide", "shared-words-name-both", "hipaa-rule", "hipaa-both", "two-names"])
def test_the_most_specific_name_written_names_its_document(titles: dict[str, str], question: str,
                                                           named: set[str]) -> None:
    assert named_documents(question, titles) == named

