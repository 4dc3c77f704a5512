"""Sentence boundaries with character offsets.

Used by chunking (chunks never split a sentence) and by requirement extraction (quotes are
whole sentences or contiguous spans of one). Rules, in order:

* a blank line always ends a sentence;
* a line break ends a sentence unless the line ends with `,` `;` `:` a dash or the words
  `and`/`or` (list items and wrapped clauses continue the sentence), or the text is hard-wrapped
  (licences, RFCs, plain-text statutes: most lines of a paragraph near one width) and the line breaks
  where the wrapping did: a line near that width, or one followed by a lower-case word, continues
  its sentence unless the next line opens a list item, a bullet or a table row; and a line of a list item
  ("1. ", "* ", "(a) ") continues on the next line indented under the item's text (Markdown's lists), whatever
  its width, unless it ends with `.`, `!` or `?`;
* `.`, `!` or `?` (optionally followed by a closing quote or bracket) ends a sentence when
  whitespace follows, unless the word before it is a known abbreviation or a single letter, or (for `.`)
  a lower-case word follows on the same line; and where a numbered item's label ("2.") that opens a line
  ends a sentence so, the line break before it ends the item before it, if that one ends with `,` `;` or
  the like.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from engine.text import in_table_row

ABBREVIATIONS = frozenset("e.g i.e etc cf v vs mr mrs ms dr st inc ltd co corp dept approx ibid al viz".split())
# Abbreviations that only abbreviate before a number ("No. 5", "Art. 12", "s. 4"): "said no." ends a sentence.
NUMBERED_ABBREVIATIONS = frozenset(
    "no nos art arts s ss reg regs sec secs para paras fig figs ch chap pt sch r rr cl cll".split()
)
_TERMINAL = re.compile(r"[.!?][\"')\]]*(?=\s)")
_CONTINUATION = re.compile(r"(?:[,;:\-\u2013\u2014]|\b(?:and|or))\s*$", re.IGNORECASE)
# ... and a line that stops on an article or a preposition, in lower case: no sentence ends there, whatever opens the
# next line ("You may reproduce and distribute copies of the" over "Work or Derivative Works ...", a licence's
# first line after its run-in heading, shorter than the wrapping)
_UNFINISHED_LINE = re.compile(r"(?<!['\u2019])\b(?:the|a|an|of|to|by|for|with|from|in|on|at|into|onto|through|via|upon|"
                              r"than)\s*$")
# A line that opens an item of its own: "(a)", "a)", "1.", "(iv)", "-", "*", a bullet, a table row.
_OPENS_ITEM = re.compile(r"^\s*(?:\(?[0-9]{1,3}[.)]|\([a-zA-Z]{1,5}\)|[a-z]{1,4}\)|[-*\u2022\u2013|>#])(?=\s|$)")
# ... and a catalogue's lettered item ("a. Disable accounts ..."), which opens an item only for list items' lines.
_OPENS_LETTERED = re.compile(r"^\s*[a-z]\.(?=\s)")
# Hard-wrapped text: lines of at most this width, and this share of a paragraph's lines near it.
WRAP_MAX, WRAP_MIN, WRAP_SHARE, WRAP_NEAR = 100, 40, 0.4, 0.75


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
    # an initialism ("U.S. Dollars", "U.A.E. Financial Services"): it ends a sentence less often than a name
    # goes on after it
    return word in ABBREVIATIONS or re.fullmatch(r"(?:[a-z]\.)+[a-z]", word) is not None


def wrap_width(lines: list[str]) -> int | None:
    """The width `lines` were hard-wrapped at, or None when they were not: the longest line, when it is
    of a wrapped width and enough lines come near it (a list of short items or a Markdown paragraph per
    line is not wrapped)."""
    lengths = [len(line.rstrip()) for line in lines if line.strip()]
    if len(lengths) < 3:
        return None
    width = max(lengths)
    near = sum(n >= WRAP_NEAR * width for n in lengths)
    if not WRAP_MIN <= width <= WRAP_MAX or near < 2 or near < WRAP_SHARE * len(lengths):
        return None
    return width


def wrapped_break(line: str, following: str, width: int | None) -> bool:
    """The break after `line` is the wrapping's, inside a sentence that `following` continues."""
    nxt = following.lstrip()
    if not nxt or _OPENS_ITEM.match(following) or line.rstrip().endswith((".", "!", "?", '."', ".)")):
        return False
    if nxt[0].islower():
        return True
    return width is not None and len(line.rstrip()) >= WRAP_NEAR * width


def _unfinished(line: str, following: str) -> bool:
    """`line` stops on a word no sentence ends with (`_UNFINISHED_LINE`) and `following` opens no item of a list
    (the lead-in "... is performed by" ends at its list: "1. Automated security agent ...")."""
    return (_UNFINISHED_LINE.search(line) is not None and not _OPENS_ITEM.match(following)
            and not _OPENS_LETTERED.match(following))


def _item_column(line: str, column: int | None) -> int | None:
    """Where the text of the list item `line` belongs to starts: its own (after "1. ", "* ", "(a) ") when it
    opens one, `column` (the open item's) when it is indented that far, else None."""
    opens = _OPENS_ITEM.match(line) or _OPENS_LETTERED.match(line)
    if opens:
        if line.lstrip().startswith(("|", "#", ">")):
            return None
        return opens.end() + len(line[opens.end():]) - len(line[opens.end():].lstrip(" \t"))
    indent = len(line) - len(line.lstrip(" \t"))
    return column if column is not None and indent >= column else None


def item_continues(line: str, following: str, column: int | None) -> bool:
    """`following` is the next line of the list item whose text starts at `column` (a Markdown item's lines
    are indented under its text: "1. ... may be conducted by" / "   Corvid Labs or the Customer ..."), and
    `line` does not end its sentence."""
    if column is None or not following.strip() or _OPENS_ITEM.match(following) or _OPENS_LETTERED.match(following):
        return False
    indent = len(following) - len(following.lstrip(" \t"))
    return indent >= column and not line.rstrip().endswith((".", "!", "?", '."', ".)"))


def _line_breaks(text: str) -> list[int]:
    """Offsets of line breaks that end a sentence."""
    cuts = []
    lines = text.split("\n")
    width = wrap_width(lines)
    offset = 0
    column: int | None = None
    for i, line in enumerate(lines[:-1]):
        end = offset + len(line)
        offset = end + 1
        if not line.strip():
            column = None
            continue
        column = _item_column(line, column)
        following = lines[i + 1]
        if not following.strip():
            cuts.append(end)
        elif not (_CONTINUATION.search(line) or wrapped_break(line, following, width) or _unfinished(line, following)
                  or item_continues(line, following, column)):
            cuts.append(end)
    return cuts


# What stands before a numbered item's label's period on its line: "     2" of "     2. Existing workforce ..."
_NUMBER_LABEL = re.compile(r"[ \t]*\(?[0-9]{1,3}")


def _terminals(text: str) -> list[int]:
    """Sentence ends within lines; a pipe table's row is one sentence however many its cells hold. Where the
    period of a numbered item's label that opens a line ends a sentence, and the line before ends as an item
    that goes on (`;`, `,`, `and`: "New workforce members within their first month of employment;" over "2.
    Existing workforce members annually;"), the line break ends that item: it never takes the next item's label
    as its end. Not a wrapped sentence's number ("conditions added under section" over "7.  This requirement
    ...": the line before ends with a word)."""
    cuts = []
    for match in _TERMINAL.finditer(text):
        if text[match.start()] == "." and (_is_abbreviation(text, match.start()) or _lower_follows(text, match.end())):
            continue
        if in_table_row(text, match.start()):
            continue
        line = text.rfind("\n", 0, match.start()) + 1
        if (line and match.end() - match.start() == 1 and _NUMBER_LABEL.fullmatch(text, line, match.start())
                and _CONTINUATION.search(text, text.rfind("\n", 0, line - 1) + 1, line - 1)):
            cuts.append(line - 1)
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
