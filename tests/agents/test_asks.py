"""agents.asks: a question that asks for an amount is answered only by a quote that states one, and one that
asks who only by a quote that names someone.

Examples and counter-examples from several corpora: ObliQA (ADGM), the development corpora (an EU
regulation, a US regulation, licences, company policies with their regulation, a control catalogue).
"""

from __future__ import annotations

import pytest

from agents.asks import (
    asked_action,
    asks_amount,
    asks_count,
    asks_party,
    asks_time,
    asks_typed,
    names_party,
    states_amount,
    states_count,
    unstated,
)
from agents.duties import asked_family, states_family, unasked_action
from agents.verify import Rejection, decide


@pytest.mark.parametrize(("question", "kind"), [
    # an amount named by its currency (the FAR's "simplified acquisition threshold" is a dollar figure)
    ("What is the current dollar amount of the simplified acquisition threshold?", "money"),
    # licences
    ("How much does it cost to register a trademark for our project's name?", "money"),
    ("What is the filing fee for a patent application on a software invention?", "money"),
    ("May we charge a fee for distributing copies of the program?", None),  # asks a permission
    # company policies and their regulation
    ("What fine can the Authority impose if we file our incident notification late?", "penalty"),
    ("What uptime percentage do we promise customers in our service level agreement?", "share"),
    # an EU directive: "paid" names the leave, the amount asked is time off
    ("How much paid holiday must each employee get a year, and can we pay it out in cash instead?", None),
    ("How much is paid to a worker who is called in at night?", "money"),
    ("What must happen to the costs and approvals of a new vendor?", None),  # costs and more
    # US regulation
    ("What is the maximum civil money penalty per violation category each year?", "penalty"),
    ("What must a covered entity tell individuals after a breach?", None),
    # EU regulation
    ("How big can the daily penalty on a provider that ignores the overseer be?", "penalty"),
    ("What VAT rate applies to cloud services bought from another Member State?", "share"),
    ("What minimum own funds ratio must a credit institution hold?", "share"),
    ("Which rates and methods must the authority publish?", None),  # rates and more
    # ObliQA
    ("How much must a company pay the Regulator to apply for a Financial Services Permission?", "money"),
    ("What percentage of voting rights makes a person a controller?", "share"),
    ("What criteria must a Price Reporting Agency meet regarding its independence?", None),  # a name, not a price
    ("What details regarding charges must be disclosed to the Customer?", None),  # details, not an amount
    # control catalogue
    ("How often must the incident response plan be exercised?", None),  # a time, not an amount
])
def test_asks_amount(question: str, kind: str | None) -> None:
    assert asks_amount(question) == kind


@pytest.mark.parametrize(("quote", "kind", "states"), [
    ("The fee for filing an offer document is US$ 5,000.", "money", True),
    ("An application shall be accompanied by a fee of $2,000.", "money", True),
    ("This License does not grant permission to use the trade names of the Licensor.", "money", False),
    ("You may not impose a license fee, royalty, or other charge for exercise of rights.", "money", True),
    ("The periodic penalty payment shall be up to 1 % of the average daily worldwide turnover.", "penalty", True),
    ("A person who contravenes this section commits an offence.", "penalty", True),
    ("Violations of this policy may result in disciplinary action.", "penalty", True),
    ("A regulated entity must submit an initial notification within 4 hours of classifying it.", "penalty", False),
    ("The entity shall maintain a log of such breaches and submit it annually.", "penalty", False),
    ("Shares carrying 20% or more of the voting rights are presumed to confer an interest.", "share", True),
    ("The executed agreements are linked to the vendor on the approved vendors list.", "share", False),
    ("The Oversight Framework applies to cloud computing service providers.", "share", False),
    ("The framework applies to all critical ICT third-party service providers.", "share", False),
    ("Reports are made quarterly and half-yearly.", "share", False),
    ("A quorum is two thirds of the members.", "share", True),
    ("At least half of the board shall be independent.", "share", True),
    ("The conversion shall be made at the spot rate of exchange.", "share", True),
])
def test_states_amount(quote: str, kind: str, states: bool) -> None:
    assert states_amount(quote, kind) is states


def test_unstated_names_what_is_missing() -> None:
    question = "What fine can the Authority impose if we report an incident late?"
    assert unstated(question, "Incidents must be reported within 4 hours.") == \
        "the question asks for a fine or penalty; the quote states none"
    assert unstated(question, "A late report is liable to a fine of up to USD 10,000.") is None
    # the time rule is the same function's first question, as before
    assert asks_time("How soon must an incident be reported?")
    assert unstated("How soon must an incident be reported?", "Incidents must be reported.") == \
        "the question asks for a time or period; the quote states none"


def test_the_gate_refuses_an_amount_it_does_not_state() -> None:
    verified, reason, rationale = decide("What is the filing fee for a patent application?",
                                         "You may not convey a covered work under a patent arrangement.", 0.9, 0.5)
    assert (verified, reason) == (False, Rejection.INFERENCE)
    assert "price, fee or cost" in rationale
    verified, reason, _ = decide("What is the filing fee for a patent application?",
                                 "The filing fee is USD 350 for each application.", 0.9, 0.5)
    assert verified and reason is None


@pytest.mark.parametrize(("question", "quote", "answers"), [
    # the amount the question names, where the quote gives no figure: a licence, an EU act, a US rule
    ("What is the filing fee for a patent application?", "You may not impose a license fee or royalty for "
     "exercise of rights granted under this License.", False),
    ("What VAT rate applies to cloud services bought abroad?", "The applicable rate is set out in the Annex.", False),
    ("What is the maximum civil money penalty per violation?", "A civil money penalty may be imposed on a covered "
     "entity.", True),
    # a figure answers whatever it names; no named kind, any statement of the kind answers
    ("What is the filing fee for an application?", "An application must be accompanied by a fee of $500.", True),
    ("What is the filing fee for an application?", "No filing fee is payable for an application.", True),
    ("What fine can the Authority impose?", "The Authority may impose a fine.", True),
    ("What are the prescribed penalties for late filing?", "A person who fails to file is liable to a penalty.",
     True),  # ADGM-style: a qualifier names no kind
    ("How big can the daily penalty on a provider be?", "The periodic penalty payment shall be imposed on a daily "
     "basis.", True),
    # how long a thing is kept is a period: words of urgency do not give it (sample corpus: a duty to handle
    # complaints promptly is no retention period) ...
    ("How long do we keep records of client complaints?", "A firm must establish and maintain effective procedures "
     "for the prompt handling of client complaints.", False),
    ("How long do we keep records of client complaints?", "Complaint records must be kept for six years.", True),
    ("How long must security logs be retained?", "Security logs are forwarded immediately to the central log "
     "server.", False),  # company policies: urgency says when storage starts, not how long it lasts
    # ... an event that ends the period does (EU regulation), and urgency still answers a deadline (US regulation;
    # "How long do we have to notify ..." keeps nothing)
    ("How long may supervisors hold on to personal data?", "The personal data shall be retained until the discharge "
     "of the applicable supervisory duties.", True),
    ("How soon must individuals be notified?", "Notice shall be provided without undue delay.", True),
    ("How long do we have to notify the Commissioner?", "The controller shall notify the Commissioner without undue "
     "delay.", True),
    # HIPAA writes "unreasonable" where EU texts write "undue"; a policy "without delay"
    ("How soon must the Secretary be told?", "A covered entity shall notify the Secretary without unreasonable "
     "delay.", True),
    ("How quickly must a lost laptop be reported?", "Lost or stolen devices must be reported without delay.", True),
    ("How long must security logs be retained?", "Security logs are forwarded without unreasonable delay to the "
     "central log server.", False),
    # "at all times" says a rule holds without a break, not how long a thing is kept (an open-source foundation's
    # process); it still answers when (a catalogue's "protected at all times")
    ("How long must a project keep its IP logs?", "The IP Policy must be followed at all times.", False),
    ("When must the keys be protected?", "Private keys are protected at all times.", True),
    # a period set by need is the law's answer to how long (sample corpus's data protection act, ObliQA's data
    # protection regulations, a policy's access rule), and no answer to how often
    ("How long may personal data be kept?", "A controller must not keep personal data in a form which permits "
     "identification of data subjects for longer than is necessary for the purposes of the processing.", True),
    ("How long can we hold on to customer records?", "Customer records must not be retained longer than necessary.",
     True),
    ("How long does a contractor keep system access?", "Access is revoked when no longer needed.", True),
    ("How often must access be reviewed?", "Access is revoked when no longer needed.", False),
    # an event alone says when a thing is done, not how long it is kept (sample corpus's retention policy); for a
    # deadline it still answers (a US rule: "How soon ..." before the event)
    ("How long may personal data be kept?", "Paper records containing personal data must be shredded before "
     "disposal.", False),
    ("How soon must the notice be sent?", "The notice must be sent before the meeting.", True),
    # a fine is money: disciplinary action or imprisonment answer "what penalty", not "what fine" (a policy set's
    # breach reporting, a statute's offence, an EU directive's fines)
    ("What fine can the regulator impose if we report a breach late?", "Managers must ensure breaches are reported "
     "and, where appropriate, pursue disciplinary action and/or legal proceedings.", False),
    ("What fine can a court impose for the offence?", "A person who commits an offence is liable to imprisonment "
     "for a term not exceeding two years.", False),
    ("What is the highest fine an essential entity can face?", "Essential entities are subject to administrative "
     "fines of a maximum of at least EUR 10 000 000.", True),
    ("What penalty applies to staff who connect unapproved media?", "Connecting non-approved memory sticks could "
     "result in disciplinary action.", True),
], ids=["licence-fee-for-filing-fee", "rate-without-vat", "civil-money-penalty", "figure", "no-filing-fee",
        "no-kind-named", "qualifier", "daily-penalty", "prompt-handling", "six-years", "immediately", "until-event",
        "how-soon", "how-long-to-notify", "unreasonable-delay", "without-delay", "urgency-is-no-retention",
        "at-all-times-is-no-retention", "at-all-times-answers-when",
        "no-longer-than-necessary", "longer-than-necessary", "no-longer-needed", "need-is-no-frequency",
        "event-is-no-retention", "event-answers-a-deadline", "disciplinary-action-is-no-fine",
        "imprisonment-is-no-fine", "administrative-fines", "disciplinary-action-is-a-penalty"])
def test_a_quote_answers_the_amount_or_period_it_states(question: str, quote: str, answers: bool) -> None:
    assert (unstated(question, quote) is None) is answers


@pytest.mark.parametrize(("question", "asks"), [
    # sample corpus and company policies
    ("Who approves exceptions to the password policy?", True),
    ("Who is allowed to switch on the contingency plan?", True),
    ("What must happen when an employee who leaves still has access?", False),  # "what" asks, "who" relates
    # control catalogue
    ("Inside the organisation, who has to be told when a cyber incident happens?", True),  # after a comma
    # US regulation
    ("If the regulator challenges us after an improper disclosure, who has to prove that notices went out?", True),
    ("To whom must a business associate report a breach?", True),
    # EU regulation and contracts
    ("Whose approval does the management body need for the ICT strategy?", True),
    ("Who owns the platform itself?", True),
    # ObliQA
    ("Is an Authorised Person who is permitted to advise on investments subject to Rule 1.1.1(2)?", False),
    ("When might an individual who plans to participate be required to comply?", False),
    ("According to the regulatory guidelines, who may the Regulator approach for discussions?", True),
    ("How long must records be kept?", False),
    # who counts as a term: a definition answers, naming no one (a baseline catalogue, a state Act, a contract)
    ("Who counts as a collaborator?", False),
    ("Who is considered a consumer under the Act?", False),
    ("Who qualifies as an affiliate for the assignment clause?", False),
    ("Who is responsible for the count of assets?", True),
])
def test_asks_party(question: str, asks: bool) -> None:
    assert asks_party(question) is asks


@pytest.mark.parametrize(("quote", "names"), [
    # sample corpus: nobody named, the rule alone
    ("Passwords must be at least twelve characters long and must not be reused across systems.", False),
    ("Shared or generic user accounts are prohibited except where approved in writing by the Chief Information "
     "Security Officer.", True),
    # company policies: a role acronym, a capitalised name
    ("the Contingency Plan may be activated by either the COO or Head of Engineering.", True),
    ("Access must be reviewed quarterly.", False),
    # control catalogue: a role in lower case
    ("Cyber security incidents are reported to the chief information security officer.", True),
    # EU regulation: a subject of the act's vocabulary; a provision or a date is no one
    ("bear the ultimate responsibility for managing the financial entity's ICT risk;", True),
    ("(a) Reports must be filed by 31 January under Article 5.", False),
    # US regulation and licences: a subject in two words, "you"
    ("The covered entity shall have the burden of demonstrating that all notifications were made.", True),
    ("You must give any other recipients of the Work a copy of this License.", True),
    # ObliQA: a defined term
    ("Notices shall be sent to the Regulator in writing.", True),
    ("1. Records must be stored in approved systems.", False),  # a list label is not a name
    # a capitalised thing is no one (company policies, licences, contracts); a capitalised role still names someone
    ("At a minimum the Contingency Plan shall be tested annually (within 365 days).", False),
    ("Each time You distribute the Covered Software, it must be under this License.", True),  # "You"
    ("Distribution of the Covered Software must be under the terms of this License.", False),
    ("Exceptions are approved by the Chief Information Security Officer.", True),
])
def test_names_party(quote: str, names: bool) -> None:
    assert names_party(quote) is names


def test_the_gate_refuses_a_quote_that_names_no_one_to_who() -> None:
    question = "Who approves exceptions to the password policy?"
    verified, reason, rationale = decide(question, "Passwords must be at least twelve characters long.", 0.9, 0.5)
    assert (verified, reason) == (False, Rejection.INFERENCE)
    assert rationale == "the question asks who; the quote names no one"
    assert decide(question, "Exceptions must be approved by the Chief Information Security Officer.", 0.9, 0.5)[0]


@pytest.mark.parametrize(("question", "action"), [
    ("Who is responsible for approving access to production systems?", "approving"),  # sample corpus
    ("Inside the organisation, who has to be told when a cyber incident happens?", "told"),  # control catalogue
    ("Who is allowed to switch on the contingency plan?", "switch"),  # company policies
    ("To whom must a business associate report a breach?", None),  # US regulation: the action follows its subject
    ("Whose sign-off do I need before someone gets access to production?", None),
    ("What must be approved before access is granted?", None),  # asks no party
])
def test_asked_action(question: str, action: str | None) -> None:
    assert asked_action(question) == action


@pytest.mark.parametrize(("question", "quote", "answers"), [
    # sample corpus: who reviews is not who approves
    ("Who is responsible for approving access to production systems?", "System owners must review user access "
     "rights every quarter and remove access that is no longer needed.", False),
    ("Who is responsible for approving access to production systems?", "Shared or generic user accounts are "
     "prohibited except where approved in writing by the Chief Information Security Officer.", True),
    # company policies: approved by the security team; who tests is not who approves
    ("Who must approve access to the production environment?", "Access to critical resources, such as production "
     "environments, must be approved by the security team in addition to the requestor's manager.", True),
    ("Who must test the contingency plan?", "The Contingency Plan shall be approved by the COO.", False),
    # control catalogue: told and reported are one duty
    ("Inside the organisation, who has to be told when a cyber incident happens?", "Cyber security incidents are "
     "reported to the chief information security officer as soon as possible after they occur.", True),
    # contracts and EU regulation: keeping and an unknown verb ask nothing of the quote's verb
    ("Who keeps ownership of the content we put into the platform?", "As between the parties, Customer owns all "
     "Customer Content.", True),
    ("Who carries the final accountability for ICT risk?", "The management body shall bear the ultimate "
     "responsibility for managing the financial entity's ICT risk.", True),
])
def test_a_who_question_is_answered_by_who_does_what_it_asks(question: str, quote: str, answers: bool) -> None:
    assert (unasked_action(question, quote) is None) is answers


@pytest.mark.parametrize(("question", "family"), [
    ("How quickly must complaints be acknowledged?", "acknowledge"),  # sample corpus
    ("Do we have to tell customers when their data is breached?", "notify"),
    ("When must a suitability assessment be reviewed?", "review"),  # the noun and the verb: one family
    ("How often do we need to test our disaster recovery plan?", "test"),  # company policies
    ("How long do we have to fix a critical vulnerability once we've found it?", "remediate"),
    ("How long can an account sit unused before we have to disable it?", "revoke"),  # control catalogue
    ("What are the requirements for reviewing event logs to pick up security events?", "review"),
    ("How long do we have to notify patients about a breach?", "notify"),  # US regulation
    ("Are we obliged to tell the supervisor about cyber threats?", "notify"),  # EU regulation
    # nouns name no action: information (inform), provider (provide), the author (authorise), a risk assessment
    ("What information has each log entry got to contain?", None),
    ("If an ICT provider asks to be treated as critical, how long can the ESAs take to decide?", None),
    ("How many years after the author's death does copyright protection last in the EU?", None),
    ("In which situations are we obliged to run a fresh ICT risk assessment?", None),
    # two actions, or "tell me" (asks the engine): none
    ("How long must we keep the records of each test?", None),
    ("Can you tell me what the breach register must contain?", None),
    ("Can employees trade shares on their own account?", None),
])
def test_asked_family_is_the_action_a_question_asks_about(question: str, family: str | None) -> None:
    assert asked_family(question) == family


@pytest.mark.parametrize(("quote", "family", "states"), [
    ("Where a personal data breach is likely to result in a high risk ..., the controller shall communicate the "
     "breach to the affected data subjects without undue delay.", "notify", True),
    ("The controller must take immediate steps to contain a personal data breach and to limit its effects.",
     "notify", False),
    ("A firm must acknowledge a complaint in writing within five business days of receiving it.", "acknowledge",
     True),
    ("All Exceptions are reviewed every six months to re-assess its validity.", "review", True),
])
def test_states_family(quote: str, family: str, states: bool) -> None:
    assert states_family(quote, family) is states


@pytest.mark.parametrize(("question", "scope"), [
    ("Which firms do the client assessment rules apply to?", True),  # sample corpus
    ("We are a small, non-interconnected investment firm. Do the full ICT risk management requirements apply to "
     "us?", True),  # EU regulation
    ("We run a car dealership that also leases cars long term. Are we covered by the Safeguards Rule?", True),  # US
    ("Is a domain registrar within the scope of the directive?", True),  # EU directive
    ("What limits apply to the variable remuneration of management body members?", False),  # "apply to" a thing
    ("Does the admin console need more than a password to get in?", False),  # standard
])
def test_asks_scope(question: str, scope: bool) -> None:
    from agents.asks import asks_scope

    assert asks_scope(question) is scope


@pytest.mark.parametrize(("text", "scope"), [
    ("These Rules are issued by the Northbridge Financial Services Authority and apply to every firm that provides "
     "investment advice or portfolio management to clients in Northbridge.", True),  # sample corpus
    ("This policy applies to all information systems operated by Harbor Point Capital.", True),  # sample corpus
    ("This Regulation applies to the following financial entities:", True),  # EU regulation
    ("This Directive is addressed to the Member States.", True),  # EU directive
    ("A firm must retain transaction records for at least six years.", False),
])
def test_states_scope(text: str, scope: bool) -> None:
    from agents.asks import states_scope

    assert states_scope(text) is scope


@pytest.mark.parametrize(("question", "time"), [
    # a thing's length is no time: the sample corpus, the application security standard, a catalogue's wording
    ("How long must passwords be?", False),
    ("How long does a password have to be at minimum?", False),
    ("How long should an encryption key be?", False),
    # ... but a period's, a term's, a timeout's length is, and so is how long a thing is kept or may stay so
    ("How long must the notice period be?", True),
    ("How long must the session timeout be?", True),
    ("How long must records be kept?", True),
    ("How long can an account be inactive before it is disabled?", True),
    ("How long is the retention period?", True),
    # a length asked with another measure (an implementation guide's documents): no time either
    ("How long and detailed should the implementation documents for each department be?", False),
])
def test_how_long_a_thing_is_no_time(question: str, time: bool) -> None:
    assert asks_time(question) is time


@pytest.mark.parametrize(("question", "quote", "answers"), [
    # a period the need or an event sets, in the text's own terms (a privacy statute, a site's privacy statement)
    ("For how long are we allowed to keep customers' personal data?",
     "Personal information shall be retained only as long as necessary for the fulfilment of those purposes.", True),
    ("For how long are we allowed to keep customers' personal data?",
     "Personal information that has been used to make a decision about an individual shall be retained long enough "
     "to allow the individual access to the information after the decision has been made.", True),
    ("How long does GitHub hang on to a user's personal data?",
     "We'll retain your Personal Data as long as your account is active and as needed to fulfill contractual "
     "obligations.", True),
    ("How long does GitHub hang on to a user's personal data?",
     "The retention duration depends on the purpose of data collection and any legal obligations.", True),
    # a time the text requires to be set, without giving it (an open-source security baseline)
    ("Within how long do we have to answer someone who reports a vulnerability to us?",
     "While active, the project documentation MUST include a policy for coordinated vulnerability disclosure (CVD), "
     "with a clear timeframe for response.", True),
    # a period written with a hyphen (a web accessibility standard; an RFC's registry review)
    ("How often may something on screen flash per second before it becomes a seizure risk?",
     "there are no more than three general flashes and / or no more than three red flashes within any one-second "
     "period; or", True),
    ("How long is the review of a new response type?",
     "Additional response types are registered after a two-week review period on the mailing list.", True),
    # a frequency in words (a supervisor's climate guide)
    ("How often does climate risk information need to go up to the board?",
     "APRA expects that a prudent institution would establish procedures to routinely provide relevant information "
     "on its material climate risk exposures to the board and senior management.", True),
    # a length asked with another measure is answered in part by what answers the other (OpenChain's guide)
    ("How long and detailed should the implementation documents for each department be?",
     "NOTE: It is recommended that these documents be as short and as simple as possible.", True),
    # counter-examples: "as long as" of a condition (a licence; ObliQA's netting rule, a comma before it), a keeping
    # duty with no period (a privacy regulation), a timeframe that answers no "how often"
    ("How long may I use the software?", "You may use the software as long as you comply with the terms of this "
                                         "licence.", False),
    ("How long may positions be netted?", "Netting is permitted between positions held by the Authorised Person, as "
                                          "long as the Authorised Person can demonstrate the offset.", False),
    ("How long do we need to hang on to our internal log of security incidents?",
     "An organization shall keep and maintain a record of every breach of security safeguards involving personal "
     "information under its control.", False),
    ("How often must access be reviewed?", "Access reviews must be completed within the timeframe set by the "
                                           "policy.", False),
])
def test_a_time_stated_in_the_texts_own_terms(question: str, quote: str, answers: bool) -> None:
    """A time rule that refuses an answer reads the text's own ways of stating a time: a period set by need or by an
    event, a timeframe the text requires to be set, a hyphenated period, "routinely"; not a condition's "as long
    as", nor a keeping duty that gives no period."""
    assert (unstated(question, quote) is None) is answers


@pytest.mark.parametrize(("question", "quote", "answers"), [
    # from which date a rule applies: a US rule's effective date, an EU act's date of application and its entry into
    # force, a regulator's commencement
    ("From which date do we owe the FTC breach notices?", "Section 314.4(j) is effective as of May 13, 2024.", True),
    ("From which date do we owe the FTC breach notices?", "The notice shall be provided as soon as possible, and no "
     "later than 30 days after discovery of the event.", False),
    ("From what date do we actually have to comply?", "It shall apply from 17 January 2025.", True),
    ("From what date do we actually have to comply?", "This Regulation shall enter into force on the twentieth day "
     "following that of its publication in the Official Journal of the European Union.", True),
    ("As of which date are the Rules in force?", "These Rules come into force on 1 March 2024.", True),
    ("Since when must firms keep these records?", "A firm must keep these records for six years.", False),
    # a deadline's date may be the event it falls before, as any deadline's
    ("By what date must the annual return be filed?", "The annual return must be filed within four months after the "
     "end of the financial year.", True),
    ("By what date did small health plans have to comply?", "A small health plan must comply with the applicable "
     "requirements of this subpart no later than April 20, 2006.", True),
])
def test_a_date_question_is_answered_by_a_date(question: str, quote: str, answers: bool) -> None:
    assert asks_time(question)
    assert (unstated(question, quote) is None) is answers


@pytest.mark.parametrize("question", ["What data must we date-stamp?", "Which dates appear on the notice?",
                                      "When is the notice sent?"])
def test_no_date_is_asked(question: str) -> None:
    assert not asks_time(question)


def test_a_delay_counted_from_an_event_is_no_date() -> None:
    question = "From which date do we owe the FTC breach notices?"
    assert unstated(question, "A law enforcement official may request an initial delay of up to 30 days following "
                              "the date when notice was provided to the Federal Trade Commission.") is not None


@pytest.mark.parametrize(("question", "kind"), [
    # how much of a thing to hold: the control catalogue's, New York DFS's and APRA's out-of-scope near misses
    ("How much cyber insurance cover for ransomware losses must a company take out?", "quantity"),
    ("How much cyber insurance coverage does a covered insurer have to carry for ransomware losses?", "quantity"),
    ("How much catastrophe reinsurance must a general insurer buy to cover a one-in-200-year pandemic claims event?",
     "quantity"),
    ("How much capital must a firm hold against operational risk?", "quantity"),
    # ... asked as what minimum or what level of it (a data governance act's and a bank regulator's near misses), but
    # a ratio asked is a share
    ("What minimum own funds or capital does a data intermediation services provider have to hold?", "quantity"),
    ("What minimum capital and liquidity ratios must a New York chartered bank maintain?", "quantity"),
    ("What level of professional indemnity cover must an adviser carry?", "quantity"),
    ("What minimum capital ratio must a bank hold against its risk-weighted assets?", "share"),
    ("What minimum password length must we set?", None),
    # not so: how much notice, warning or time (policies, contracts, New York DFS), how much it costs (licences)
    ("How much notice does an employee have to give us before resigning?", None),
    ("How much warning must a supplier give us before it discontinues a service we rely on?", None),
    ("How much time do we get to become fully compliant?", None),
    ("How much does it cost to register a trademark for our open-source project's name?", "money"),
])
def test_how_much_of_a_thing_to_hold_asks_an_amount(question: str, kind: str | None) -> None:
    assert asks_amount(question) == kind


@pytest.mark.parametrize(("quote", "answers"), [
    ("Insurers may find it prudent to assess matters such as: the gross exposure from pandemic-related claims", False),
    ("Where appropriate, insurers need to review exclusions and limitations on underwriting standards.", False),
    ("(g) Cybersecurity incident means a cybersecurity event that has occurred at the covered entity", False),
    ("A firm must hold capital of at least 15% of its average gross income.", True),
    ("A firm must maintain adequate professional indemnity insurance.", True),
    ("The insurer shall hold reinsurance cover of USD 5 million for each event.", True),
])
def test_an_amount_to_hold_is_answered_by_a_figure_or_a_measure(quote: str, answers: bool) -> None:
    missing = unstated("How much reinsurance cover must an insurer hold?", quote)
    assert (missing is None) is answers
    if not answers:
        assert missing == "the question asks for an amount; the quote states none"


# --- counts and lengths: questions and quotes from policies (policies-3, policies-4), a standard (OWASP ASVS), a US
# state statute (html-gov), an association's bylaws (odt-published), a control catalogue (oscal-catalog), a mobile
# checklist (sheet-controls) and ObliQA
@pytest.mark.parametrize(("question", "kind"), [
    ("How many wrong password attempts are allowed before an account gets locked?", "count"),
    ("How many directors may the board have?", "count"),
    ("How many permissions may the app ask the user for?", "count"),
    ("What is the minimum number of years of security updates the standard says we must offer?", "count"),
    ("If we use classic Diffie-Hellman for session keys, how big must the modulus be?", "count"),
    ("We run a public DNS resolver. At what size does that make us an essential service in the UK?", None),
    ("What minimum password length must maintainers use for their accounts?", "length"),
    ("How long does a password for a service account have to be?", "length"),
    ("What's the minimum length for a random password that I keep in the password manager?", "length"),
    # a time, money or how often is asked by its own rule
    ("How many days do we have to reply to an access request?", None),
    ("How many times a year do we have to rehearse our incident response plan?", None),
    ("How much does it cost to register a trademark?", None),
    # one of several things asked, or a yes/no question that mentions a number
    ("What minimum password length and complexity must an important entity enforce?", None),
    ("Is there a regulatory requirement for a minimum number of Board members to be physically present?", None),
    ("How long must the notice period be?", None),
])
def test_asks_count(question: str, kind: str | None) -> None:
    assert asks_count(question) == kind
    assert asks_typed(question) is (kind is not None or asks_time(question) or asks_amount(question) is not None)


@pytest.mark.parametrize(("quote", "kind", "states"), [
    ("A system shall lock an account once five consecutive sign-in attempts have been made against it.", "count", True),
    ("The Board of Directors shall be composed of not less than five (5) nor more than nine (9) members.", "count",
     True),
    ("The app only requests the minimum set of permissions necessary.", "count", True),
    ("The Persons providing the oversight function should hold such number of meetings during every annual "
     "accounting period as are considered appropriate.", "count", True),
    ("Consider the event that one of these sites has its security compromised.", "count", False),
    ("Under Section 19 the City may collect the refuse.", "count", False),
    ("Verify that user set passwords are at least 12 characters in length.", "length", True),
    ("A mobile device shall be protected by a numeric PIN of at least six digits.", "length", True),
    ("When using DH, a modulus of at least 2048 bits is used.", "length", True),
    ("Passwords must be of sufficient length to resist guessing.", "length", True),
    ("* Level 2: for any code project that has at least 2 maintainers and a small number of users", "length", False),
    ("c) privileged access rights: undertakings should implement strong controls over privileged access", "length",
     False),
])
def test_states_count(quote: str, kind: str, states: bool) -> None:
    assert states_count(quote, kind) is states


def test_the_gate_refuses_a_quote_that_states_no_count() -> None:
    question = "How many wrong password attempts are allowed before an account gets locked out?"
    verified, reason, rationale = decide(question, "It is important not to use the same password for multiple "
                                                   "services or accounts.", 0.9, 0.5)
    assert (verified, reason) == (False, Rejection.INFERENCE)
    assert rationale == "the question asks for a number; the quote states none"
    assert decide(question, "Accounts are locked after at most 10 (ten) consecutive failed attempts.", 0.9, 0.5)[0]
    assert unstated("What minimum password length must maintainers use?", "Maintainers must enable MFA.") == \
        "the question asks for a length or size; the quote states none"


def test_an_identifier_states_no_count() -> None:
    assert not states_count("Testing Procedure(s): Testing App Permissions (MSTG-PLATFORM-1)", "count")
    assert states_count("at most 10 (ten) consecutive failed attempts", "count")
