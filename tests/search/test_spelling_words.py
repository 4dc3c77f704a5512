"""Which query words count as English and are never corrected: examples and counter-examples from
several corpora (a control catalogue, company policies, licences, an EU act, the sample corpus)."""

from __future__ import annotations

import pytest

from engine.config import Settings
from engine.search.spelling import english_words, is_english

ENGLISH = english_words(Settings().relevance_dir / "tokenizer.json")


@pytest.mark.parametrize("word", [
    "rehearse", "login", "logins", "offsite", "synchronised", "redone",  # a control catalogue's questions
    "offboarding", "onboarding", "backups", "cybersecurity",  # company policies
    "sublicense", "relicensing", "redistributing",  # licences
    "subprocessor", "nonpublic", "authorised", "organisational",  # EU and US regulations
    "staking", "apportioned",
])
def test_english_words_are_never_corrected(word: str) -> None:
    assert is_english(word, ENGLISH)


@pytest.mark.parametrize("word", [
    "oficer", "protecion", "apointed", "recrods", "retension", "custmer", "notifiy", "complience",
    "sanctons", "encrytion",
])
def test_misspellings_are_not_english(word: str) -> None:
    assert not is_english(word, ENGLISH)
