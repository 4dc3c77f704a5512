"""Duties: what a requirement makes someone do, so that two requirements can be compared.

A duty is the verb after the modal ("must retain", "shall notify", "must be kept"), read in
families of synonyms (retain/keep/store, notify/report/inform, destroy/delete/dispose...), its
object (what is kept, notified...) and, for notifications and reports, its recipient. Two quotes
impose the same duty when family, object and recipient agree; only then can differing figures
("six years" vs "five years") or opposite force be a conflict.
"""

from __future__ import annotations

import re

from engine.config import AnswerSettings
from engine.search.lexical import key_terms
from engine.text import DURATION, normalize_ws

_OVERLAP = AnswerSettings().same_duty_overlap  # the default; a run passes its settings' value

# Duties are compared by what they make someone do: the verb after the modal, in families of synonyms.
_DUTY = re.compile(r"\b(?:must|shall|should|(?:is|are)\s+(?:required|obliged)\s+to|(?:has|have)\s+a\s+duty\s+to|"
                   r"(?:is|are)\s+to)\s+(?:not\s+)?(?:\w+ly\s+)?(be\s+)?([a-z]+)", re.IGNORECASE)
_FAMILIES = {stem: family for family, words in {
    "retain": "retain keep kept store stored maintain preserv hold held archiv",
    "notify": "notifi report inform tell alert",
    "destroy": "destroy delet dispos shred eras",
    "review": "review reassess re-assess updat",
    "provide": "provid give given send sent deliv suppli",
    "approve": "approv author consent",
    "acknowledge": "acknowledg confirm",
}.items() for stem in words.split()}
_OBJECT_END = re.compile(r"\b(?:for|within|in|to|by|from|at|after|before|without|where|when|unless|and|or|not|"
                         r"immediately|promptly|no|until)\b|[,;.]", re.IGNORECASE)
_RECIPIENT = re.compile(r"\b(?:notif(?:y|ied)|inform(?:ed)?|tell|report(?:ed)?\s+(?:\w+\s+){0,3}?to|submit(?:ted)?\s+"
                        r"(?:\w+\s+){0,3}?to)\s+(?:the\s+|its\s+|a\s+|an\s+)?((?:[A-Za-z-]+\s+){0,3}[A-Za-z-]+)",
                        re.IGNORECASE)


def figures(quote: str) -> set[str]:
    """The durations a quote states ("six years", "72 hours"), as conflicts compare them."""
    return {normalize_ws(m.group(0).lower()) for m in DURATION.finditer(quote)}


def duty(quote: str) -> tuple[str, set[str], set[str]] | None:
    """(verb family, object terms, recipient terms) of the duty a quote imposes, or None. Pure."""
    text = normalize_ws(quote)
    match = _DUTY.search(text)
    if match is None:
        return None
    verb = key_terms(match.group(2))
    family = _FAMILIES.get(verb[0], verb[0]) if verb else match.group(2).lower()
    if match.group(1):  # passive: "Transaction records must be kept" -> what stands before the modal
        obj = text[max(0, match.start() - 60):match.start()]
        obj = re.split(r"[,;.]", obj)[-1]
    else:
        rest = text[match.end():]
        end = _OBJECT_END.search(rest)
        obj = rest[: end.start()] if end else rest
    recipient = _RECIPIENT.search(text)
    return family, set(key_terms(obj)), set(key_terms(recipient.group(1))) if recipient else set()


def _contained(a: set[str], b: set[str]) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def same_duty(a: str, b: str, overlap: float = _OVERLAP) -> bool:
    """Both quotes impose the same duty on the same thing (to the same recipient, where named): their
    objects share at least `overlap` of the smaller one's terms (`AnswerSettings.same_duty_overlap`). Pure."""
    da, db = duty(a), duty(b)
    if da is None or db is None or da[0] != db[0]:
        return False
    if da[2] and db[2] and not da[2] & db[2]:
        return False  # "report it to the Security team" is not "notify the Commissioner"
    objects = (da[1], db[1]) if da[1] and db[1] else (set(key_terms(a)), set(key_terms(b)))
    return _contained(*objects) >= overlap or bool(da[2] & db[2])




def conflicting_figures(a: str, b: str, overlap: float = _OVERLAP) -> bool:
    """The same duty, stated with different periods. Pure."""
    fa, fb = figures(a), figures(b)
    return bool(fa and fb and fa != fb) and same_duty(a, b, overlap)
