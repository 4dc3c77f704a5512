"""The rules every corpus's questions.yaml keeps (bench/corpora/README.md), checked the same way for each.

A corpus's own `check_gold.py` reads its documents as their format prints them and checks that each gold text
stands in its named section; the rules of the file itself live here, so that each checker states them once:

    data, errors, on_disk = opened(HERE)        # questions.yaml read, its head's rules checked
    tally = Tally(data, parsed, place)          # every question and gold; place(where, doc, section, text, gold)
    errors += tally.errors                      # placement_errors is the usual `place` over (label, text) blocks
    print(tally.summary(len(parsed)))
    return report(errors)

(each checker puts `bench/` on its path: it runs from any directory.) Pure, apart from reading questions.yaml and
listing `docs/`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

TYPES = {"paraphrase", "broad", "two-part", "conflict", "out-of-scope", "provision"}
SOURCE_TYPES = {"statute", "regulation", "guidance", "policy", "standard", "contract"}


def documents_errors(folder: Path, data: dict[str, Any], *, titled: bool = False) -> tuple[list[str], list[str]]:
    """The file's `corpus` is its folder's name and its `documents` are the files under `docs/`, each listed once
    with a known source type (and, `titled`, a title). Returns (errors, the files under docs/ by name)."""
    errors: list[str] = []
    if data.get("corpus") != folder.name:
        errors.append(f"corpus is {data.get('corpus')!r}, folder is {folder.name!r}")
    docs = data.get("documents", [])
    listed = [d["file"] for d in docs]
    on_disk = sorted(p.name for p in (folder / "docs").iterdir() if p.is_file())
    errors += [f"docs/{f} not listed in documents" for f in on_disk if f not in listed]
    errors += [f"documents lists {f}, not under docs/" for f in listed if f not in on_disk]
    if len(listed) != len(set(listed)):
        errors.append("a document is listed twice")
    if titled:
        for d in docs:
            if d.get("source_type") not in SOURCE_TYPES:
                errors.append(f"{d.get('file')}: bad source_type {d.get('source_type')!r}")
            if not str(d.get("title", "")).strip():
                errors.append(f"{d.get('file')}: no title")
    return errors, on_disk


def question_errors(q: dict[str, Any]) -> list[str]:
    """A question's own rules: a known type and some words; an out-of-scope question has no gold and every other
    one has some, a broad one two at least; a two-part one golds for part 1 and part 2, and no other a part."""
    qid, qtype, gold = q.get("id", "?"), q.get("type"), q.get("gold") or []
    errors = []
    if qtype not in TYPES:
        errors.append(f"{qid}: bad type {qtype!r}")
    if not str(q.get("question", "")).strip():
        errors.append(f"{qid}: empty question")
    if (qtype == "out-of-scope") != (len(gold) == 0):
        errors.append(f"{qid}: out-of-scope must have no gold, others at least one")
    if qtype == "broad" and len(gold) < 2:
        errors.append(f"{qid}: broad question with fewer than two golds")
    parts = {g.get("part") for g in gold}
    if qtype == "two-part" and parts != {1, 2}:
        errors.append(f"{qid}: two-part question needs golds for part 1 and part 2 (has {sorted(parts, key=str)})")
    return errors


def gold_errors(g: dict[str, Any], qtype: str | None, where: str) -> list[str]:
    """One gold's own rules (`where` names it in each message): binding true or false, 6-40 words, a part 1 or 2
    on a two-part question's gold and on no other."""
    errors = []
    if not isinstance(g.get("binding"), bool):
        errors.append(f"{where}: binding must be true or false")
    words = len(str(g.get("text", "")).split())
    if not 6 <= words <= 40:
        errors.append(f"{where}: {words} words (6-40)")
    if qtype == "two-part":
        if g.get("part") not in (1, 2):
            errors.append(f"{where}: two-part gold without part 1/2")
    elif "part" in g:
        errors.append(f"{where}: part given on a {qtype} question")
    return errors


def id_errors(questions: list[dict[str, Any]]) -> list[str]:
    """Each id names one question."""
    ids = Counter(q.get("id", "?") for q in questions)
    return [f"{qid}: id used {n} times" for qid, n in ids.items() if n > 1]


def placement_errors(where: str, section: str, needle: str, blocks: list[tuple[str, str]],
                     spans: str = "items, paragraphs or cells") -> list[str]:
    """A gold text (`needle`, normalised as `blocks` are) stands whole in one of its document's blocks ((label,
    normalised text), in document order) labelled `section`: else where it stands instead, or whether it spans two
    blocks of its section (`spans` names what a block is in that format) or is not there at all."""
    if section not in {label for label, _ in blocks}:
        return [f"{where}: no unit labelled {section!r}"]
    hits = [label for label, block in blocks if needle in block]
    if section in hits:
        return []
    if hits:
        return [f"{where}: not in {section!r}; found in {sorted(set(hits))}"]
    whole = " ".join(block for label, block in blocks if label == section)
    return [f"{where}: {f'spans two blocks ({spans})' if needle in whole else 'not found'}"]


def report(errors: list[str]) -> int:
    """Print the errors (or OK) after a checker's summary lines; the checker's exit status."""
    if errors:
        print(f"\n{len(errors)} error(s):")
        for e in errors:
            print("  " + e)
        return 1
    print("OK")
    return 0


class Tally:
    """Every question of a questions.yaml checked against its documents: the file's own rules
    (`question_errors`, `gold_errors`, `id_errors`) and, for each gold whose document was read, `place(where, doc,
    section, text, gold)`'s errors (whether the text stands in its section, as the format prints it). Counts what the
    checkers print: questions by type, gold texts, binding ones, and the questions that ask about each document."""

    def __init__(self, data: dict[str, Any], documents: Any, place: Any) -> None:
        self.errors: list[str] = []
        self.types: Counter[Any] = Counter()
        self.binding: Counter[bool] = Counter()
        self.per_doc: Counter[str] = Counter()
        self.golds = 0
        self.questions = data.get("questions", [])
        for q in self.questions:
            qid, qtype = q.get("id", "?"), q.get("type")
            self.types[qtype] += 1
            self.errors += question_errors(q)
            docs_here = set()
            for g in q.get("gold") or []:
                self.golds += 1
                doc, sec, text = g.get("doc"), str(g.get("section")), str(g.get("text", ""))
                where = f"{qid} [{doc} {sec}] {text[:50]!r}"
                docs_here.add(doc)
                if doc not in documents:
                    self.errors.append(f"{where}: unknown doc")
                    continue
                self.errors += gold_errors(g, qtype, where)
                if isinstance(g.get("binding"), bool):
                    self.binding[g["binding"]] += 1
                self.errors += place(where, doc, sec, text, g)
            self.per_doc.update(docs_here)
        self.errors += id_errors(self.questions)

    def summary(self, documents: int) -> str:
        """The checkers' first two lines: questions, gold texts (binding or not), documents; questions by type."""
        by_type = ", ".join(f"{t} {n}" for t, n in sorted(self.types.items(), key=lambda kv: str(kv[0])))
        return (f"{len(self.questions)} questions, {self.golds} gold texts ({self.binding[True]} binding, "
                f"{self.binding[False]} not), {documents} documents\nby type: {by_type}")


def opened(folder: Path) -> tuple[dict[str, Any], list[str], list[str]]:
    """A corpus's questions.yaml read, and the rules of its head: a description, every document under docs/ listed
    once with a source type and a title. Returns (the file's data, errors, the files under docs/ by name)."""
    data = yaml.safe_load((folder / "questions.yaml").read_text(encoding="utf-8"))
    errors = [] if str(data.get("description", "")).strip() else ["description is empty"]
    found, on_disk = documents_errors(folder, data, titled=True)
    return data, errors + found, on_disk


def read_each(docs: Path, names: list[str], read: Callable[[Path], Any], errors: list[str],
              unreadable: tuple[type[Exception], ...] = (ValueError,)) -> dict[str, Any]:
    """Each file of `names` under `docs` as `read` parses it; a file it cannot parse (`unreadable`) is an error in
    `errors` (appended), not a crash, and has no entry."""
    parsed: dict[str, Any] = {}
    for name in names:
        try:
            parsed[name] = read(docs / name)
        except unreadable as exc:
            errors.append(str(exc))
    return parsed
