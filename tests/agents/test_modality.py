"""Modality of requirements stated without a modal verb: imperatives and present-tense duties, with
examples and counter-examples from several corpora (a control catalogue, company policies, an EU act,
ADGM rules, licences)."""

from __future__ import annotations

import pytest

from agents.extract import Modality, classify_modality

OBL, P, N, PERM = Modality.OBLIGATION, Modality.PROHIBITION, Modality.NONE, Modality.PERMISSION


@pytest.mark.parametrize(("sentence", "expected"), [
    # a control catalogue: imperatives, with item labels
    ("a. Disable accounts within 24 hours when the accounts have expired.", OBL),
    ("Employ automated mechanisms to support account management.", OBL),
    ("Verify that passwords are at least 12 characters.", OBL),
    ("Provide practical exercises in security awareness training.", OBL),
    # company policies: imperatives, prohibitions, present-tense duties of a named party
    ("Do not use the Remember Password feature.", P),
    ("IT terminates access within five business days of departure.", OBL),
    ("The Security Team reviews firewall rules quarterly.", OBL),
    ("Employees complete security training annually.", OBL),
    ("Ensure that backups are encrypted.", OBL),
    # ADGM rules: a form's instruction
    ("Notify the Regulator.", OBL),
    # an EU act and licences: modal verbs as before
    ("The Commission shall adopt delegated acts.", OBL),
    ("You may redistribute copies.", PERM),
], ids=lambda x: x if isinstance(x, Modality) else x[:30])
def test_requirements_without_a_modal_verb(sentence: str, expected: Modality) -> None:
    assert classify_modality(sentence) is expected


@pytest.mark.parametrize("sentence", [
    "Account Management",  # a catalogue's heading
    "Examples of system account types include individual, shared, and guest.",  # its discussion
    "Review is performed by the CISO.",  # policies: a verb-like noun, then the verb
    "Record retention schedules are reviewed.",
    "Log files record user activity.",
    "Transfer of data outside the EU requires approval.",
    "The Licensor grants you a licence.",  # a licence grants, it does not oblige
    "Each Contributor hereby grants to You a perpetual licence.",
    "Access to Foreign Funds and availability of Prospectus",  # ADGM headings and table cells
    "Participation in employee share schemes",
    "Back testing on actual changes in the portfolio's value should be based on a comparison.",
    "It requires that the person making a statement knows it to be false.",  # 'It', not 'IT'
    "(ii) do not feature as a significant proportion in the early mine plan.",  # a list item's continuation
    "Member States ensure that entities report incidents.",
])
def test_sentences_that_impose_no_duty_by_their_form(sentence: str) -> None:
    assert classify_modality(sentence) in (N, Modality.RECOMMENDATION)


@pytest.mark.parametrize(("sentence", "expected"), [
    # "<subject> is to ..." and "No <subject> shall ...", with the subjects of the data file (agents/
    # requirement_verbs.json), not one corpus's: ADGM rules, an EU act, a US rule, a policy set, a licence
    ("If this has been the case, the Reporting Entity is to ensure that the information is disclosed.", OBL),
    ("The processor is to notify the controller without undue delay.", OBL),
    ("A covered entity is to retain the documentation for six years.", OBL),
    ("Workforce members are to escalate issues to the security team.", OBL),
    ("The Licensee is to return all copies on termination.", OBL),
    ("No authorised person shall carry on a regulated activity without a licence.", P),
    ("No processor may engage another processor without authorisation.", P),
    # counter-examples: how a text is read, and a purpose, are not duties
    ("The requirements pertaining to a Reporting Entity are to be interpreted as applying to a Listed Fund.", N),
    ("The purpose of this policy is to protect customer data.", N),
    ("Such a firm is to be regarded as a market maker.", N),
], ids=lambda x: x if isinstance(x, Modality) else x[:30])
def test_duties_laid_on_a_named_subject(sentence: str, expected: Modality) -> None:
    assert classify_modality(sentence) is expected


@pytest.mark.parametrize(("sentence", "expected"), [
    # legal effects bind no one to act: a US rule, a licence, a financial regulation
    ("A covered entity shall be deemed to have knowledge of a breach if the breach is known to any employee.", N),
    ("Nothing in this License shall be construed as excluding any implied license.", N),
    ("References to an insurer in these rules shall be construed to include a cell company.", N),
    ("The term 'client' shall mean any person to whom a firm provides a service.", N),
    # may / can of possibility permit nothing; a power or a grant still does
    ("A continuous monitoring plan can assist an organisation in identifying vulnerabilities.", N),  # a catalogue
    ("Continued violations may result in termination of the contract.", N),  # a policy
    ("Failure to register may lead to the regulator taking action.", N),  # a regulation
    ("The Regulator may waive a requirement of this chapter for an issuer.", PERM),
    ("We may reduce the amount of the penalty.", PERM),
    ("A clearing house may allow offsets across the products it clears.", PERM),
    ("A firm may wish to refer to typology reports, which may assist in identifying threats.", PERM),
    # imperatives with a coordinated verb, an aside or 'whether'; 'remain obligated'
    ("(g) Evaluate and adjust your information security program in light of the results.", OBL),  # a US rule
    ("Implement and/or review controls designed to protect production data.", OBL),  # a policy
    ("Maintain a written (which may be electronic) record of the assessment.", OBL),
    ("(i) Assess whether each implementation specification is a reasonable safeguard.", OBL),
    ("You remain obligated to ensure that the source is available.", OBL),  # a licence
    ("Review and approval of access requests", N),  # a title, not an imperative
], ids=lambda x: x if isinstance(x, Modality) else x[:30])
def test_legal_effects_possibility_and_coordinated_imperatives(sentence: str, expected: Modality) -> None:
    assert classify_modality(sentence) is expected


@pytest.mark.parametrize(("sentence", "source_type", "expected"), [
    # a policy's or a standard's statement of practice is its rule; the same words in a statute describe
    ("Event logs are captured and stored in a consistent format.", "standard", OBL),  # a catalogue
    ("Break clauses are documented in contractual arrangements with service providers.", "standard", OBL),
    ("This policy is maintained by the Security Officer.", "policy", OBL),
    ("IT is responsible for recovery of the hosted environment.", "policy", OBL),
    ("Event logs are captured and stored in a consistent format.", "regulation", N),
    ("Break clauses are documented in contractual arrangements with service providers.", "", N),
    # what a rule text describes is not a rule
    ("This policy applies to all employees and contractors.", "policy", N),
    ("Account types are described in Annex A.", "policy", N),
    ("The purpose of this standard is to protect data.", "standard", N),
    ("Are backups encrypted?", "policy", N),
], ids=lambda x: x if isinstance(x, Modality) else str(x)[:30])
def test_a_rule_texts_statements_of_practice(sentence: str, source_type: str, expected: Modality) -> None:
    assert classify_modality(sentence, source_type=source_type) is expected


@pytest.mark.parametrize(("sentence", "source_type", "expected"), [
    # a practice stated in the present active by its named doer, or as a point whose doer is in the lead-in
    ("Acme Labs maintains a minimum necessary approach to access to customer data.", "policy", OBL),
    ("The Security and Privacy Officer actively monitors the regulatory landscape.", "policy", OBL),
    ("* Reviews access rights every quarter.", "policy", OBL),
    ("Retaining records of account requests will assist in maintaining accountability.", "standard", N),
    ("The types of testing exercises include tabletop and technical testing.", "policy", N),
    ("* Important records (e.g. approval notes)", "policy", N),
    ("Acme Labs maintains a minimum necessary approach to access to customer data.", "regulation", N),
    # powers, restrictions, required specifications, a condition before an imperative
    ("Competent authorities shall have all supervisory, investigatory and sanctioning powers necessary.", "", PERM),
    ("Financial entities may only enter into arrangements with providers that comply.", "", P),
    ("Restricted data can only be accessed from systems under the sole control of the owner.", "", P),
    ("This also applies to accounts that may only have limited privileges.", "", PERM),
    ("(B) Disaster recovery plan (Required).", "", OBL),
    ("(ii) If an action, activity or assessment is required to be documented, maintain a written record.", "", OBL),
    ("(3) Protect against any uses or disclosures of such information that are not permitted.", "", OBL),
    ("The Program must not be used where uses that are not permitted occur.", "", P),
    ("Security requirements are reviewed to ensure they remain fit for purpose.", "standard", OBL),
], ids=lambda x: x if isinstance(x, Modality) else str(x)[:30])
def test_practice_powers_restrictions_and_conditions(sentence: str, source_type: str, expected: Modality) -> None:
    assert classify_modality(sentence, source_type=source_type) is expected


def _chunk(text: str, path: str) -> dict:
    return {"chunk_id": "c", "document_id": "d", "document_version": 1, "document_title": "T",
            "source_type": "regulation", "section_path": path, "section_heading": path, "text": text}


@pytest.mark.parametrize(("text", "path", "binding"), [
    # a control catalogue: the statement binds, its Discussion paragraph explains (every sentence of it)
    ("a. Disable accounts within 24 hours when the accounts have expired or are no longer needed.\n\n"
     "Discussion: Examples of account types include individual and guest. Organizations may choose to "
     "define access privileges for each account type.", "AC-2 Account Management", [True, False]),
    # an EU act: a recital explains, an article binds
    ("(12) Member States should be encouraged to report incidents without delay to the authority.",
     "Recitals > Recital 12", [False]),
    ("Financial entities shall report major incidents to the competent authority without delay.",
     "Article 19 Reporting", [True]),
    # policies: a note explains
    ("Note: managers may grant temporary access for up to seven days in an emergency situation.",
     "Access Control", [False]),
], ids=["catalogue-discussion", "eu-recital", "eu-article", "policy-note"])
def test_commentary_is_non_binding_context(text: str, path: str, binding: list[bool]) -> None:
    from agents.extract import extract_from_chunks

    assert [r.binding for r in extract_from_chunks([_chunk(text, path)])] == binding


@pytest.mark.parametrize(("a", "b", "conflict"), [
    # policies beside a regulation: the same duty in other units
    ("Encryption keys must be rotated every six months.", "Encryption keys must be rotated at least once every "
     "12 months.", True),
    ("Access must be removed within 24 hours of termination.", "Access must be removed within five business days "
     "of termination.", True),
    ("Audit logs must be reviewed weekly.", "Audit logs must be reviewed at least monthly.", True),
    ("The recovery plan must be tested twice a year.", "The recovery plan must be tested annually.", True),
    # the same figure in other words is no conflict
    ("Encryption keys must be rotated annually.", "Encryption keys must be rotated at least once every 12 months.",
     False),
    ("The recovery plan must be tested twice a year.", "The recovery plan must be tested every six months.", False),
    # an EU act and the sample corpus: different duties are no conflict whatever their figures
    ("Financial entities shall notify the authority within 24 hours.", "Financial entities shall keep records "
     "for five years.", False),
], ids=["months-vs-once-every", "hours-vs-business-days", "weekly-vs-monthly", "twice-vs-annually",
        "annually-vs-12-months", "twice-vs-six-months", "different-duties"])
def test_conflicting_figures_whatever_the_wording(a: str, b: str, conflict: bool) -> None:
    from agents.duties import conflicting_figures

    assert conflicting_figures(a, b) is conflict


@pytest.mark.parametrize(("a", "b", "conflict"), [
    # answers to one question in other words: a policy beside its regulation, a US rule, an EU act
    ("A regulated entity shall review the access rights of every user at least once every six months.",
     "All system access must be reviewed at least annually and whenever a user's job role changes.", True),
    ("Security logs shall be retained for not less than two years.",
     "Log data is encrypted and moved to warm storage, where security logs are kept for one year.", True),
    ("Firewall rule sets shall be reviewed at least once every month.",
     "The IT manager reviews the firewall rules and their configuration every quarter.", True),
    # duties known to differ, other recipients, or nothing in common: no conflict even for one question
    ("Financial entities shall notify the authority within 24 hours.",
     "Financial entities shall keep records for five years.", False),
    ("Any employee who discovers a breach must report it to the Security team within 4 hours.",
     "The controller shall notify the Commissioner not later than 72 hours after becoming aware of it.", False),
    ("High severity alerts are reviewed within 24 hours.",
     "A critical vulnerability must be remediated within 48 hours of its identification.", False),
    # one document abbreviates what the other spells out, behind a list label; a label is no subject term
    ("The business continuity and disaster recovery plan, including a full restoration from backup, must be "
     "tested at least twice in each calendar year.", "(b) BCDR shall be simulated and tested at least once a year.",
     True),
    ("Corvid Labs IT manager is responsible for configuring the firewall and IDS/IPS rules every month.",
     "The incident response plan is tested annually.", False),
    ("Any user account that has not been used for 45 consecutive days shall be disabled.",
     "User accounts that have not been used for 90 days are disabled.", True),
], ids=["review-access", "retain-logs", "review-firewall", "notify-vs-keep", "other-recipients", "other-topics",
        "acronym-and-label", "acronym-not-in-other", "consecutive-days"])
def test_conflicts_between_answers_to_one_question(a: str, b: str, conflict: bool) -> None:
    from agents.duties import conflicting_figures

    assert conflicting_figures(a, b, same_question=True) is conflict


def test_a_list_is_quoted_point_by_point_never_ending_at_a_label() -> None:
    from agents.extract import extract_from_chunks

    text = ("The controller and the processor shall designate a data protection officer in any case where:\n"
            "(a) the processing is carried out by a public authority or body, except for courts acting in their "
            "judicial capacity;\n(b) the core activities of the controller or the processor consist of processing "
            "operations which, by their nature, require regular and systematic monitoring of data subjects on a "
            "large scale; or\n(c) the core activities of the controller or the processor consist of processing on "
            "a large scale of special categories of data.")
    quotes = [r.exact_quote for r in extract_from_chunks([_chunk(text, "Article 37")])]
    assert quotes[0].endswith("acting in their judicial capacity;")  # the lead-in and its first point
    assert [q[:3] for q in quotes[1:]] == ["(b)", "(c)"]  # each further point, whole
    assert all(not q.rstrip().endswith(("(b)", "(c)", "(b) the core activities of")) for q in quotes)


@pytest.mark.parametrize(("question", "broad"), [
    ("What must happen when an employee leaves the company?", True),  # policies
    ("What must we do when a security incident occurs?", True),
    ("What must a financial entity do when a major ICT-related incident happens?", True),  # an EU act
    ("What are the requirements for managing administrator (privileged) access?", True),  # a catalogue
    ("What do I have to do when I redistribute Apache 2.0 software?", True),  # licences
    ("What are the obligations of a Fund Administrator regarding records, as stated in Rule 17.1.5(f)?", False),
    ("How long must transaction records be kept?", False),  # the sample corpus
    ("What is the minimum capital ratio?", False),
], ids=lambda x: str(x)[:40])
def test_broad_questions_ask_for_every_duty(question: str, broad: bool) -> None:
    from agents.parts import is_broad

    assert is_broad(question) is broad


@pytest.mark.parametrize(("a", "b"), [
    ("The incident response plan must be exercised at least twice in each calendar year.",
     "The incident response plan is tested annually."),  # a regulation and a policy's present passive
    ("Encryption keys must be replaced every six months.", "Encryption keys must be rotated annually."),
], ids=["exercise-vs-test", "replace-vs-rotate"])
def test_the_same_duty_in_other_verbs_conflicts(a: str, b: str) -> None:
    from agents.duties import conflicting_figures

    assert conflicting_figures(a, b)


@pytest.mark.parametrize("sentence", [
    "The incident response plan is tested annually.",  # policies: a duty in the present passive with its period
    "Access rights are reviewed at least quarterly.",
    "Log data is retained for a minimum of one year.",
    "Review is performed annually by the CISO.",
])
def test_a_periodic_present_passive_is_a_duty(sentence: str) -> None:
    assert classify_modality(sentence) is OBL


@pytest.mark.parametrize("sentence", [
    "Data is encrypted at rest.",  # no period
    "Your licence is reinstated if you cure the violation within 30 days after the notice.",  # a consequence
])
def test_a_present_passive_without_a_period_or_under_a_condition_is_no_duty(sentence: str) -> None:
    assert classify_modality(sentence) is N


@pytest.mark.parametrize(("question", "quote", "states"), [
    # a deadline is answered by the event it falls before (ADGM rules, a control catalogue)
    ("What is the expected timeframe for reflecting the change in the level of CDD?",
     "This process must be completed before the CDD is completed for the customer.", True),
    ("How soon must a new starter's access be approved?",
     "Access is approved prior to the creation of the account.", True),
    # how often is not: it needs a frequency or a period (policies, an EU act)
    ("How often must access rights be reviewed?", "Access rights must be reviewed before granting access.", False),
    ("How often must access rights be reviewed?", "Access rights must be reviewed every six months.", True),
    ("How frequently must the plan be tested?", "Every employee must know the plan.", False),
], ids=["deadline-before-event", "deadline-prior-to", "frequency-before-event", "frequency-period",
        "every-employee"])
def test_what_states_a_time_depends_on_what_is_asked(question: str, quote: str, states: bool) -> None:
    from agents.verify import states_time

    assert states_time(quote, question) is states
