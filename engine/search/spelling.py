"""Spelling correction of query words from the corpus vocabulary (a lexical fallback for retrieval).

A query word whose stem no current chunk holds, and which is no English word either, is replaced by
the corpus word nearest to it by edit distance (optimal string alignment: insertions, deletions,
substitutions and swaps of neighbours), compared as written or by stems: at most 1 edit for words
under 8 letters and 2 for longer ones, a changed first letter counting half an edit more; ties go to
the more frequent stem. Stopwords and words under 4 letters are left alone. Cheap: two small queries
(store.vocabulary_near, store.term_frequencies).

An English word is never corrected: one of pyspellchecker's English dictionary (about 160,000 words,
from OpenSubtitles and SCOWL) or of the relevance encoder's WordPiece vocabulary, with plural and
-ed/-ing/-er/-ion endings taken off ('staking' is 'stake'), in British spelling ('synchronised' is
'synchronized'), or a compound of two dictionary words, the first of four letters or more or a particle
('offsite', 'backup'). Correcting a real word answers another question ('rehearse' -> 'require',
'login' -> 'logic').
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import psycopg
from spellchecker import SpellChecker

from engine.search import store
from engine.terms import MODALS, QUERY_STOPWORDS, STOPWORDS, stem

_WORD = re.compile(r"[A-Za-z]+")


class Correction(NamedTuple):
    text: str
    changes: list[tuple[str, str]]  # (word as written, the corpus word used instead)


def edit_distance(a: str, b: str, limit: int = 3) -> int:
    """Optimal string alignment distance of `a` and `b`; anything over `limit` is returned as limit + 1."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], prev2[j - 2] + 1)
        if min(row) > limit:
            return limit + 1
        prev2, prev = prev, row
    return prev[-1]


_ENDINGS = ("s", "es", "ed", "d", "ing", "er", "ers", "ion", "ions", "ly")


@lru_cache(maxsize=1)
def dictionary_words() -> frozenset[str]:
    """pyspellchecker's English word list (lower-case letters only), read on the first correction."""
    return frozenset(w for w in SpellChecker(language="en").word_frequency.dictionary if w.isalpha())


@lru_cache(maxsize=4)
def english_words(tokenizer_json: Path) -> frozenset[str]:
    """The English dictionary and the whole words of a WordPiece vocabulary (tokenizer.json; none of it
    when the file is missing or unreadable)."""
    try:
        vocab = json.loads(Path(tokenizer_json).read_text(encoding="utf-8"))["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError):
        vocab = {}
    return dictionary_words() | frozenset(w for w in vocab if w.isalpha() and w.islower())


_BRITISH = ((re.compile(r"is(e|ed|es|ing|er|ers|ation|ations|ational|ationally)$"), r"iz\1"),
            (re.compile(r"our$"), "or"), (re.compile(r"ours$"), "ors"), (re.compile(r"tre$"), "ter"),
            (re.compile(r"ence$"), "ense"),
            (re.compile(r"lled$"), "led"), (re.compile(r"lling$"), "ling"))


def _inflected(word: str, english: frozenset[str]) -> bool:
    """`word` or its base without a common ending is in `english`."""
    if word in english:
        return True
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            base = word[: -len(ending)]
            if base in english or base + "e" in english or (len(base) > 3 and base[-1] == base[-2]
                                                                and base[:-1] in english):
                return True
    return False


# Words that open English compounds although shorter than four letters ('offsite', 'backup', 'nonpublic').
_PARTICLES = frozenset("off on up out back over under down non pre sub self multi inter cross".split())


def is_word(word: str, english: frozenset[str], endings: bool = True) -> bool:
    """`word` is English as `english` spells it, or in British spelling ('organisations'), not a compound; with
    `endings`, also a word of it with a common ending (`_ENDINGS`; which a dictionary may not list)."""
    def listed(w: str) -> bool:
        return _inflected(w, english) if endings else w in english

    if listed(word):
        return True
    for pattern, american in _BRITISH:
        variant = pattern.sub(american, word)
        if variant != word and listed(variant):
            return True
    return False


def is_english(word: str, english: frozenset[str]) -> bool:
    """`word` is English as `english` spells it (`is_word`), or a compound of two of its words."""
    if is_word(word, english):
        return True
    return any((len(head := word[:i]) >= 4 or head in _PARTICLES) and head in english
               and _inflected(word[i:], english) for i in range(2, len(word) - 3))


def allowed_edits(word: str) -> int:
    """One edit below 8 letters ('oficer' -> 'officer'), two from 8 ('protecion' -> 'protection')."""
    return 1 if len(word) < 8 else 2


def _candidates(word: str) -> bool:
    return len(word) >= 4 and word not in STOPWORDS and word not in QUERY_STOPWORDS and word not in MODALS


def _surface(word: str, candidate: str, vocabulary: set[str]) -> str:
    """The corpus word in the form the user wrote: 'apointed' near 'appoint' -> 'appointed' when the corpus
    has it, else the corpus word itself."""
    root = stem(word)
    if word.startswith(root) and word != root:
        inflected = stem(candidate) + word[len(root):]
        if inflected in vocabulary or stem(inflected) == stem(candidate) and inflected.isalpha():
            return inflected
    return candidate


def correct(conn: psycopg.Connection, text: str, english: frozenset[str] = frozenset()) -> Correction:
    """`text` with each word unknown to the current corpus (and not in `english`) replaced by its nearest
    corpus word, if one is near enough."""
    words = {m.group(0).lower() for m in _WORD.finditer(text)}
    checked = sorted(w for w in words if _candidates(w))
    known = store.term_frequencies(conn, {stem(w) for w in checked})
    unknown = [w for w in checked if stem(w) not in known and not is_english(w, english)]
    if not unknown:
        return Correction(text, [])
    near = store.vocabulary_near(conn, unknown, slack=3)
    vocabulary = set(near)
    frequency = store.term_frequencies(conn, {stem(c) for c in near})
    best: dict[str, str] = {}
    for word in unknown:
        scored = []
        root = stem(word)
        for candidate in near:
            if stem(candidate) not in frequency or candidate == word:
                continue
            # as written ('oficer' -> 'officer'), or by stems ('apointed' -> 'apoint' ~ 'appoint')
            distance = min(edit_distance(word, candidate, allowed_edits(word)),
                           edit_distance(root, stem(candidate), allowed_edits(root)))
            if distance <= allowed_edits(word):
                first = 0.0 if candidate[0] == word[0] else 0.5  # a misspelling seldom changes the first letter
                scored.append((distance + first, -frequency[stem(candidate)], candidate))
        if scored:
            best[word] = _surface(word, min(scored)[2], vocabulary)
    if not best:
        return Correction(text, [])

    def replace(match: re.Match[str]) -> str:
        found = match.group(0)
        new = best.get(found.lower())
        if new is None:
            return found
        return new.capitalize() if found[0].isupper() else new

    return Correction(_WORD.sub(replace, text), [(w, best[w]) for w in sorted(best)])
