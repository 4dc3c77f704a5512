"""Check the gold of the adoc-policy corpus against the AsciiDoc files under docs/.

Usage: python check_gold.py            (from any directory; exits 1 on any error)
       python check_gold.py --outline  (also prints each file's headings and block counts)

Independent of the engine: a small line-based AsciiDoc reader written for these files (standard library
only), not Asciidoctor and not the engine's code.

What it does:

* reads each docs/*.adoc line by line and recognises section titles written with `=` markers
  (`= Title`, `== Section`, `=== Subsection`, up to six markers) and with the Markdown-style `#`
  markers that Asciidoctor also accepts (`# Title`, `## Section`); a symmetric closing run
  (`== Title ==`) is dropped. A title needs a space after its markers, so `====` (an example block
  delimiter) is never a title;
* skips what is not section text: `////` comment blocks and `//` comment lines, verbatim blocks
  (`----` listing, `....` literal, `++++` passthrough, and ``` fenced code), attribute entries
  (`:name: value`), preprocessor and block macros (`ifdef::`, `endif::`, `include::`, `toc::[]`,
  `image::`), block attribute lines (`[NOTE]`, `[[anchor]]`, `[#anchor]`, `[start=2]`,
  `[graphviz, ...]`) and block titles (`.Metadata`). Lines that look like titles inside skipped
  blocks (the PlantUML `== Initiate (internal) ==` dividers inside `----`, the commented-out
  `== Patents` inside `////`, the `# Substitute ...` shell comment inside ``` ) are therefore not
  titles;
* splits the remaining text into blocks: a paragraph (up to a blank line or a block delimiter), a list
  item (`*`, `**`, `-`, `.`, `..`, `1.` markers, with its unindented or indented continuation lines up
  to the next item, a blank line or a `+` list continuation), a description-list entry (`Term ::
  text` or `Term::` with its following lines), a table cell (`|`). A gold text must lie inside one
  block, so it cannot span two list items, two paragraphs, two cells, or a title and its text;
* labels each block with the nearest section title above it, as the file shows it after the
  markers (`4.7 Committers`, `Release Review`, `Materials for a TCK Release`); text before the first
  section takes the document title (`= ...` / `# ...`) as its label;
* marks blocks that are admonitions (`NOTE:`/`TIP:`/`IMPORTANT:`/`WARNING:`/`CAUTION:` paragraphs and
  `[NOTE]` ... `====` blocks) and checks that no gold text found in one is labelled binding: true;
* checks that each gold text occurs, whitespace-normalised (Python's str.split, which also splits on
  the no-break spaces of efsp-process.adoc; nothing else is normalised), inside one block of the named
  file with the named label, and that a gold text carries no AsciiDoc inline markup (attribute
  references, macros, cross references, `*strong*`, `_emphasis_`, backquoted text), so that it reads the
  same in the source and in the rendered page;
* and, through bench/corpus_gold.py, the rules of questions.yaml itself: ids unique, types valid, gold
  texts 6-40 words, two-part golds carry part 1 and part 2 (others no part), out-of-scope iff no gold,
  broad questions at least two golds, binding true/false, every file under docs/ listed in `documents`
  (and every listed file present), source_type valid, corpus name equals the folder name.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
sys.path.insert(0, str(HERE.parent.parent))  # bench/: the rules every corpus's file keeps
from corpus_gold import Tally, opened, placement_errors, report  # noqa: E402

TITLE = re.compile(r"^(={1,6}|#{1,6})[ \t]+(\S.*?)(?:[ \t]+\1)?[ \t]*$")
VERBATIM = re.compile(r"^(-{4,}|\.{4,}|\+{4,})$")      # listing, literal, passthrough
FENCE = re.compile(r"^```")
COMMENT_BLOCK = re.compile(r"^/{4,}$")
COMMENT_LINE = re.compile(r"^//(?!/)")
OTHER_DELIM = re.compile(r"^(={4,}|_{4,}|\*{4,}|--|\|===)$")  # example, quote, sidebar, open, table
ATTR_ENTRY = re.compile(r"^:!?[\w-]+!?:(\s.*)?$")
DIRECTIVE = re.compile(r"^(ifn?def|ifeval|endif|include|toc|image|video|audio)::")
BLOCK_ATTR = re.compile(r"^\[.*\]$")
BLOCK_TITLE = re.compile(r"^\.[^\s.]")
LIST_ITEM = re.compile(r"^[ \t]*(\*{1,5}|-|\.{1,5}|\d+\.)[ \t]+\S")
DLIST = re.compile(r"^\S.*?(::|;;)(\s|$)")
ADMONITION_PARA = re.compile(r"^(NOTE|TIP|IMPORTANT|WARNING|CAUTION):\s")
ADMONITION_STYLE = re.compile(r"^\[(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]$")
MARKUP = re.compile(
    r"\{[\w-]+\}|<<|>>|\b(link|xref|pass|footnote|footnoteref|kbd|image|mailto|https?):"
    r"|\[\[|`|\*\*|__|(^|[\s(])[*_][^\s*_]|[^\s*_][*_]($|[\s).,;:])"
)


def norm(text: str) -> str:
    return " ".join(text.split())


class Reader:
    """One file's (label, normalised text, is_admonition) blocks, and its titles in order."""

    def __init__(self, path: Path) -> None:
        self.blocks: list[tuple[str, str, bool]] = []
        self.titles: list[tuple[int, str]] = []
        self.label = "(untitled)"
        self.buf: list[str] = []
        self.buf_adm = False
        self.read(path.read_text(encoding="utf-8").splitlines())

    def flush(self) -> None:
        text = norm(" ".join(self.buf))
        if text:
            self.blocks.append((self.label, text, self.buf_adm))
        self.buf, self.buf_adm = [], False

    def read(self, lines: list[str]) -> None:
        skip_until = None            # closing delimiter of a skipped block
        adm_pending = False          # a [NOTE]-style attribute line was just seen
        adm_stack: list[tuple[str, bool]] = []   # open delimited blocks: (delimiter, is admonition)
        for raw in lines:
            line = raw.rstrip()
            if skip_until is not None:
                if line == skip_until or (skip_until == "```" and FENCE.match(line) and line.strip() == "```"):
                    skip_until = None
                continue
            stripped = line.strip()
            if COMMENT_BLOCK.match(stripped) or VERBATIM.match(stripped):
                self.flush()
                skip_until = stripped
                adm_pending = False
                continue
            if FENCE.match(stripped):
                self.flush()
                skip_until = "```"
                continue
            if COMMENT_LINE.match(line):
                continue
            if not stripped:
                self.flush()
                continue
            in_adm = any(a for _, a in adm_stack)
            if OTHER_DELIM.match(stripped):
                self.flush()
                if adm_stack and adm_stack[-1][0] == stripped:
                    adm_stack.pop()
                else:
                    adm_stack.append((stripped, adm_pending))
                adm_pending = False
                continue
            m = TITLE.match(line)
            if m and not self.buf and not in_adm:
                self.flush()
                level = len(m.group(1)) - 1
                self.label = m.group(2).strip()
                self.titles.append((level, self.label))
                adm_pending = False
                continue
            if ATTR_ENTRY.match(line) or DIRECTIVE.match(stripped):
                continue
            if BLOCK_ATTR.match(stripped) and not stripped.startswith("[[") or re.match(r"^\[\[[^\]]+\]\]$", stripped):
                self.flush()
                adm_pending = bool(ADMONITION_STYLE.match(stripped))
                continue
            if BLOCK_TITLE.match(stripped) and not self.buf:
                continue
            if stripped == "+":      # list continuation: what follows is a new block of the same item
                self.flush()
                continue
            if stripped.startswith("|"):   # table cells: each `|` starts a cell
                self.flush()
                for cell in stripped.split("|")[1:]:
                    self.buf, self.buf_adm = [cell], in_adm
                    self.flush()
                continue
            if LIST_ITEM.match(line) or (DLIST.match(line) and not self.buf) or ADMONITION_PARA.match(stripped):
                self.flush()
            if not self.buf:
                self.buf_adm = in_adm or adm_pending or bool(ADMONITION_PARA.match(stripped))
                adm_pending = False
            self.buf.append(stripped)
        self.flush()


def main() -> int:
    data, errors, on_disk = opened(HERE)

    readers = {f: Reader(DOCS / f) for f in on_disk}
    parsed = {f: [(label, text) for label, text, _ in r.blocks] for f, r in readers.items()}

    def place(where, doc, sec, text, gold):
        found = placement_errors(where, sec, norm(text), parsed[doc])
        if MARKUP.search(text):
            found.append(f"{where}: gold text carries AsciiDoc inline markup")
        if not found and gold.get("binding") is True:
            needle = norm(text)
            if any(adm and label == sec and needle in block for label, block, adm in readers[doc].blocks):
                found.append(f"{where}: binding true, but the text stands in an admonition (NOTE/TIP/...)")
        return found

    tally = Tally(data, parsed, place)
    errors += tally.errors
    print(tally.summary(len(parsed)))
    for f, r in readers.items():
        labels = [t for _, t in r.titles]
        dupes = sorted({t for t in labels if labels.count(t) > 1})
        print(f"{f}: {len(r.blocks)} text blocks, {len(labels)} titles, asked about in {tally.per_doc[f]} questions"
              + (f"; titles used twice: {dupes}" if dupes else ""))
        # a gold's label must name one section only, or the check could not tell them apart
        for q in data.get("questions", []):
            for g in q.get("gold") or []:
                if g.get("doc") == f and str(g.get("section")) in dupes:
                    errors.append(f"{q.get('id')}: section {g.get('section')!r} names two titles in {f}")
        if "--outline" in sys.argv:
            for level, t in r.titles:
                print("    " + "  " * level + t)
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
