"""Check the gold of the rst-guide corpus against the reStructuredText files under docs/.

Usage: python check_gold.py            (from any directory; exits 1 on any error)
       python check_gold.py --outline  (also print every file's section labels and block counts)

Independent of the engine. docutils is not importable from the project's virtual environment, so the files
are read with plain Python by the reStructuredText rules that matter here (docutils' own behaviour is
followed where it decides what is a title, a paragraph or a list item):

* section titles: a title line at column 0 followed by an underline of one repeated punctuation character
  (as long as the title, or at least 4 characters: docutils accepts a short underline with a warning), with
  or without an identical overline above it ("=====\\nTokens\\n=====" is the document title, "~~~~" and
  "----" lines the sections and subsections), after a blank line; the text may follow the underline without
  a blank line (identity_tokens.rst's "Fernet tokens" and "JWT tokens" do). Indented lines (code blocks,
  list-table rows) are never titles;
* each block of text is labelled with the nearest title above it, as the file shows it (the raw title
  line, inline markup such as ``literal`` kept), except that a checklist title carrying its own identifier
  ("Check-Identity-01: Is user/group ownership ...?", "Check-Dashboard-05: Is ``SESSION_COOKIE_SECURE`` ...")
  is labelled by that identifier alone ("Check-Identity-01"); text before a file's first section is
  labelled with the document title;
* blocks: the text between blank lines, split further where reStructuredText starts a new element without
  a blank line: each item of a bullet or enumerated list ("- ", "* ", "1. ", "1) ") when the chunk itself
  starts with a list item (a "- " line inside a running paragraph stays part of the paragraph, as in
  docutils), and the term line of a definition list (a line followed by a more deeply indented line) apart
  from its definition. A gold text must lie inside one block, so it cannot span two list items, two
  paragraphs, a term and its definition, or a heading and its text;
* each gold text must occur, whitespace-normalised (nothing else: inline markup such as ``...`` and **...**,
  curly quotes and the no-break space are compared as they are), in one block of the named file that carries
  the named label;
* the rules of questions.yaml itself (ids unique, types, 6-40 words, parts, out-of-scope without gold, broad
  with two golds at least, binding true/false, every file under docs/ listed with a source type and a title,
  corpus name = folder name) are bench/corpus_gold.py's, imported here.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
sys.path.insert(0, str(HERE.parent.parent))  # bench/: the rules every corpus's file keeps
from corpus_gold import Tally, opened, placement_errors, report  # noqa: E402

ADORNMENT = re.compile(r"""^([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])\1*$""")
LIST_ITEM = re.compile(r"^(\s*)([-*+\u2022]|\d+[.)]|\(\d+\)|#\.|[a-zA-Z][.)])\s+\S")
CHECK_ID = re.compile(r"^(Check-[A-Za-z]+-\d+):")


def norm(text: str) -> str:
    return " ".join(text.split())


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def is_adornment(line: str) -> bool:
    return bool(ADORNMENT.match(line)) and len(line) >= 1 and not line[0].isspace()


def label_for(title: str) -> str:
    m = CHECK_ID.match(title)
    return m.group(1) if m else title


def find_titles(lines: list[str]) -> dict[int, tuple[int, str]]:
    """Map the index of each title's first adornment-or-text line to (number of lines it takes, title)."""
    titles: dict[int, tuple[int, str]] = {}
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        prev_blank = i == 0 or not lines[i - 1].strip()
        # overline + title + underline
        if (prev_blank and is_adornment(line) and len(line) >= 3 and i + 2 < n and lines[i + 1].strip()
                and lines[i + 2] == line):
            titles[i] = (3, lines[i + 1].strip())
            i += 3
            continue
        # title + underline
        if (prev_blank and line.strip() and not line[0].isspace() and i + 1 < n
                and is_adornment(lines[i + 1]) and not is_adornment(line)
                and (len(lines[i + 1]) >= len(line.rstrip()) or len(lines[i + 1]) >= 4)):
            titles[i] = (2, line.strip())
            i += 2
            continue
        i += 1
    return titles


def split_chunk(chunk: list[str]) -> list[list[str]]:
    """Split a blank-line-delimited chunk into blocks: list items and definition terms apart."""
    base = indent(chunk[0])
    m0 = LIST_ITEM.match(chunk[0])
    blocks: list[list[str]] = []
    cur: list[str] = []
    for k, line in enumerate(chunk):
        m = LIST_ITEM.match(line)
        starts_item = m0 is not None and m is not None and indent(line) == base and k > 0
        if starts_item and cur:
            blocks.append(cur)
            cur = []
        cur.append(line)
    if cur:
        blocks.append(cur)
    out: list[list[str]] = []
    for block in blocks:
        # a definition-list term: a line (not a list item) followed by a more deeply indented line
        if (len(block) >= 2 and not LIST_ITEM.match(block[0]) and indent(block[1]) > indent(block[0])
                and not block[0].lstrip().startswith("..")):
            out.append(block[:1])
            out.append(block[1:])
        else:
            out.append(block)
    return out


def blocks_of(path: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """(label, normalised text) for every block of the file, and the labels in order."""
    lines = path.read_text(encoding="utf-8").split("\n")
    titles = find_titles(lines)
    label = "(before the title)"
    labels: list[str] = []
    out: list[tuple[str, str]] = []
    chunk: list[str] = []

    def flush():
        if chunk:
            for block in split_chunk(chunk):
                text = norm(" ".join(block))
                if text:
                    out.append((label, text))
            chunk.clear()

    i = 0
    while i < len(lines):
        if i in titles:
            flush()
            size, title = titles[i]
            label = label_for(title)
            labels.append(label)
            i += size
            continue
        line = lines[i]
        if not line.strip():
            flush()
        else:
            chunk.append(line)
        i += 1
    flush()
    return out, labels


def main() -> int:
    data, errors, on_disk = opened(HERE)

    parsed: dict[str, list[tuple[str, str]]] = {}
    outline: dict[str, list[str]] = {}
    for f in on_disk:
        if not f.endswith(".rst"):
            errors.append(f"docs/{f}: not a .rst file")
            continue
        parsed[f], outline[f] = blocks_of(DOCS / f)
        if not outline[f]:
            errors.append(f"docs/{f}: no section title found")

    tally = Tally(data, parsed, lambda where, doc, sec, text, _gold: placement_errors(
        where, sec, norm(text), parsed[doc], "list items, paragraphs, term and definition"))
    errors += tally.errors
    per_doc = tally.per_doc
    print(tally.summary(len(parsed)))
    asked = sum(1 for f in parsed if per_doc[f])
    print(f"{asked} of {len(parsed)} documents asked about; "
          f"{sum(len(b) for b in parsed.values())} text blocks, {sum(len(o) for o in outline.values())} titles")
    if "--outline" in sys.argv:
        for f, bl in parsed.items():
            print(f"\n{f}: {len(bl)} blocks, asked about in {per_doc[f]} questions")
            for lab in outline[f]:
                print(f"    {lab}")
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
