"""Sentence boundaries with character offsets.

Used by chunking (chunks never split a sentence) and by requirement extraction (quotes are
whole sentences or contiguous spans of one). Rules, in order:

* a blank line always ends a sentence;
* a line break ends a sentence unless the line ends with `,` `;` `:` a dash or the words
  `and`/`or` (list items and wrapped clauses continue the sentence);
* `.`, `!` or `?` (optionally followed by a closing quote or bracket) ends a sentence when
  whitespace follows, unless the word before it is a known abbreviation or a single letter, or (for `.`)
  a lower-case word follows on the same line.
"""

from __future__ import annotations

import re
from typing import NamedTuple

ABBREVIATIONS = frozenset("e.g i.e etc cf v vs mr mrs ms dr st inc ltd co corp dept approx ibid al viz".split())
# Abbreviations that only abbreviate before a number ("No. 5", "Art. 12", "s. 4"): "said no." ends a sentence.
NUMBERED_ABBREVIATIONS = frozenset(
    "no nos art arts s ss reg regs sec secs para paras fig figs ch chap pt sch r rr cl cll".split()
)
_TERMINAL = re.compile(r"[.!?][\"')\]]*(?=\s)")
_CONTINUATION = re.compile(r"(?:[,;:\-\u2013\u2014]|\b(?:and|or))\s*$", re.IGNORECASE)


class Span(NamedTuple):
    start: int
    end: int


def _is_abbreviation(text: str, dot: int) -> bool:
    start = dot
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "."):
        start -= 1
    word = text[start:dot].lower()
    if not word:
        return False
    if word in NUMBERED_ABBREVIATIONS:
        following = text[dot + 1 :].lstrip()[:1]
        return following.isdigit()
    if len(word) == 1 and word.isalpha():
        return True
    return word in ABBREVIATIONS


def _line_breaks(text: str) -> list[int]:
    """Offsets of line breaks that end a sentence."""
    cuts = []
    for match in re.finditer(r"\n", text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        line = text[line_start : match.start()]
        if not line.strip():
            continue
        nxt = text[match.end() : match.end() + 1]
        if nxt == "\n" or not _CONTINUATION.search(line):
            cuts.append(match.start())
    return cuts


def _terminals(text: str) -> list[int]:
    cuts = []
    for match in _TERMINAL.finditer(text):
        if text[match.start()] == "." and (_is_abbreviation(text, match.start()) or _lower_follows(text, match.end())):
            continue
        cuts.append(match.end())
    return cuts


def _lower_follows(text: str, end: int) -> bool:
    """A lower-case word follows on the same line: a number or reference, not a sentence, ended ("the Person
    appointed under paragraph 33. values each property", "as defined in s.4. above")."""
    rest = text[end:end + 40].lstrip(" \t")
    return bool(rest) and rest[0].islower()


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """Sentence spans (absolute offsets, whitespace trimmed) within `text[start:end]`."""
    end = len(text) if end is None else end
    segment = text[start:end]
    cuts = sorted(set(_line_breaks(segment) + _terminals(segment)))
    spans: list[Span] = []
    prev = 0
    for cut in [*cuts, len(segment)]:
        piece = segment[prev:cut]
        stripped = piece.strip()
        if stripped:
            lead = len(piece) - len(piece.lstrip())
            s = start + prev + lead
            spans.append(Span(s, s + len(stripped)))
        prev = cut
    return spans


def word_count(text: str) -> int:
    return len(text.split())
