"""engine/text.py: the shared text patterns, and that the stages use them rather than their own copies."""

from __future__ import annotations

import re

import pytest

from engine.text import (
    ATTRIBUTED_FORCE,
    DURATION,
    MODAL_ANCHOR,
    NUMBER,
    PERIOD,
    STATEMENT_FORCE,
    TIME_PHRASE,
    normalize_ws,
    withdrawn,
)
from engine.trail import standalone_build
from tests.conftest import ROOT


@pytest.mark.parametrize(("text", "expected"), [
    ("  a\tb\n\nc  ", "a b c"), ("\u00a0word\u2003word\u00a0", "word word"), ("", ""), (" \n\t ", ""),
], ids=["runs", "unicode-spaces", "empty", "only-space"])
def test_normalize_ws(text: str, expected: str) -> None:
    assert normalize_ws(text) == expected


@pytest.mark.parametrize(("pattern", "text", "found"), [
    (DURATION, "retain them for six years", ["six years"]),
    (DURATION, "within 72 business hours", ["72 business hours"]),
    (DURATION, "within twenty days or twenty-four hours", ["twenty days", "twenty-four hours"]),
    (DURATION, "annually", []),
    (PERIOD, "within twenty days", ["twenty days"]),
    (PERIOD, "for 1.5 years, reviewed annually", ["1.5 years", "annually"]),
    (PERIOD, "without undue delay and every quarter", ["without undue delay", "every quarter"]),
    (PERIOD, "the firm must keep records", []),
    (TIME_PHRASE, "no later than the end of the day", ["no later than"]),
    (TIME_PHRASE, "six months after the event", ["six months"]),
    (TIME_PHRASE, "every employee, after discovering a breach, before processing", []),  # bare every/after/before
    (TIME_PHRASE, "Review the list [Assignment: organization-defined frequency].",
     ["[Assignment: organization-defined frequency]"]),  # a control catalogue's parameter
    (TIME_PHRASE, "Backups are tested once per quarter and before the end of the year",
     ["once per quarter", "before the end"]),  # company policies
    (PERIOD, "rotated at least once every 12 months, reviewed twice a year", ["every 12 months", "twice a year"]),
    (TIME_PHRASE, "records must be kept securely", []),
    (TIME_PHRASE, "kept for no longer than is necessary; revoked when no longer needed",
     ["no longer than is necessary", "no longer needed"]),  # a period set by need
    (TIME_PHRASE, "the market is no longer jeopardised", []),
    (NUMBER, "3,000 euros for seventy-two hours", ["3,000", "seventy-two"]),
    (NUMBER, "a number: none", []),
], ids=["duration-words", "duration-business", "duration-tens", "duration-no-frequency", "period-twenty",
        "period-decimal-frequency", "period-urgency", "period-none", "time-deadline", "time-duration-and-word",
        "time-bare-words", "time-assigned", "time-policy", "period-once-every", "time-none", "time-need",
        "time-no-longer-otherwise",
        "number-digits-words", "number-none"])
def test_patterns(pattern: re.Pattern[str], text: str, found: list[str]) -> None:
    assert [m.group(0) for m in pattern.finditer(text)] == found


def test_force_words_differ_only_where_documented() -> None:
    """Review's and attribution's lists share their core; the difference is named in engine/text.py."""
    def words(pattern: re.Pattern[str]) -> set[str]:
        return set(pattern.pattern.removeprefix(r"\b(").removesuffix(r")\b").split("|"))

    assert words(STATEMENT_FORCE) - words(ATTRIBUTED_FORCE) == {"no", "unless", "except"}
    assert words(ATTRIBUTED_FORCE) - words(STATEMENT_FORCE) == {"forbidden", "obliged"}
    assert MODAL_ANCHOR.search("the firm is under a duty to report").group(0) == "duty"


# Hand-written copies of what engine/text.py holds: whitespace normalization and number-word lists.
COPIES = [r'" "\.join\([^()]*(?:\([^()]*\))?[^()]*\.split\(\)\)', r"one\|two\|three", r"hours\?\|days\?"]


@pytest.mark.parametrize("pattern", COPIES, ids=["whitespace", "number-words", "units"])
def test_no_stage_keeps_its_own_copy(pattern: str) -> None:
    home = ROOT / "engine" / "text.py"
    # the one-file verifier ships alone (stdlib + cryptography): it may not import the engine
    alone = [ROOT / "engine" / "trail" / f"{part}.py" for part in standalone_build.PARTS]
    copies = [f"{p.relative_to(ROOT)}: {m.group(0)}" for folder in ("engine", "agents")
              for p in sorted((ROOT / folder).rglob("*.py")) if p != home and p not in alone
              for m in re.finditer(pattern, p.read_text())]
    assert copies == []
    assert re.search(pattern, home.read_text())


TABLE = ("Timelines are set out below.\n\n| Sev Rating | Priority Level | SLA |\n"
         "| ---------- |:--------------:| ---:|\n| **P0**     | Highest        | 3 days |\n| P1 | High | |")


@pytest.mark.parametrize(("row", "header"), [
    ("| **P0**", "| Sev Rating | Priority Level | SLA |"),
    ("| P1", "| Sev Rating | Priority Level | SLA |"),
    ("| Sev Rating", None),  # the header row itself
    ("| ----", None),  # the separator
    ("Timelines", None),  # not a row
], ids=["first-row", "last-row", "header", "separator", "text"])
def test_a_table_rows_header_is_found_in_its_chunk(row: str, header: str | None) -> None:
    from engine.text import table_header

    found = table_header(TABLE, TABLE.index(row))
    assert (TABLE[found[0]:found[1]] if found else None) == header


def test_a_headerless_run_of_rows_has_no_header() -> None:
    from engine.text import table_header

    rows = "| P2 | Medium | 30 days |\n| P3 | Low | Best effort |"
    assert table_header(rows, rows.index("| P3")) is None


def test_a_row_reads_cell_by_cell_under_its_header() -> None:
    from engine.text import table_cells, table_reading

    assert table_cells("| **P0**     | Highest        | 3 days |") == ["P0", "Highest", "3 days"]
    reading = table_reading("| Sev Rating | Priority Level | SLA |", "| P1 | High | |")
    assert reading == "Sev Rating: P1; Priority Level: High"


@pytest.mark.parametrize(("sentence", "says"), [
    ("[Withdrawn: Incorporated into FS-1.]", True),      # a control catalogue in Markdown
    ("This control is withdrawn.", True),                 # an OSCAL catalogue as ingest renders it
    ("This section has been repealed by the 2024 Act.", True),
    ("[Reserved]", True),                                 # a US code's reserved section
    ("Repealed.", True),                                  # an EU act's article
    ("Withdrawn consent must be honoured within a month.", False),  # the words as words of a rule
    ("Reserved words are listed in Annex II.", False),
    ("Deleted records must be purged within 30 days.", False),
    ("The firm may not rely on a withdrawn control.", False),
], ids=["catalogue", "oscal", "repealed-by", "reserved", "repealed", "consent", "words", "records", "rule"])
def test_a_provision_that_says_it_no_longer_applies(sentence: str, says: bool) -> None:
    assert withdrawn(sentence) is says
