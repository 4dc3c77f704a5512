"""agents.asks: a question that asks for an amount is answered only by a quote that states one.

Examples and counter-examples from several corpora: ObliQA (ADGM), the development corpora (an EU
regulation, a US regulation, licences, company policies with their regulation, a control catalogue).
"""

from __future__ import annotations

import pytest

from agents.asks import asks_amount, asks_time, states_amount, unstated
from agents.verify import Rejection, decide


@pytest.mark.parametrize(("question", "kind"), [
    # licences
    ("How much does it cost to register a trademark for our project's name?", "money"),
    ("What is the filing fee for a patent application on a software invention?", "money"),
    ("May we charge a fee for distributing copies of the program?", None),  # asks a permission
    # company policies and their regulation
    ("What fine can the Authority impose if we file our incident notification late?", "penalty"),
    ("What uptime percentage do we promise customers in our service level agreement?", "share"),
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
], ids=["licence-fee-for-filing-fee", "rate-without-vat", "civil-money-penalty", "figure", "no-filing-fee",
        "no-kind-named", "qualifier", "daily-penalty"])
def test_an_amount_named_in_the_question_is_answered_by_that_amount(question: str, quote: str,
                                                                    answers: bool) -> None:
    assert (unstated(question, quote) is None) is answers
