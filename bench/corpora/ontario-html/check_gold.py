"""Check the ontario-html gold against the page as Ontario e-Laws published it (see SOURCE.md).

Run from anywhere:  /work/main/.venv/bin/python bench/corpora/ontario-html/check_gold.py

The document is an HTML page of Ontario's e-Laws (ontario.ca/laws). The statute text is a flat run of
`<p class="...">` elements (Word-derived classes: `partnum`, `heading1`, `headnote`, `section`, `subsection`,
`paragraph`, `subclause`, `subpara`, `definition`, ..., `Pnote` for editorial notes, and a `Y` prefix
(`Ysection`, `Ysubsection`, ...) for text not yet in force). A section begins at a `<p class="section">` (or
`Ysection`) whose leading `<b>` holds the number ("12 ", "11.1", "61.1"). Every `<p>` is one text block; its
label is the nearest section start at or above it ("Section 12"), "Table of contents" for the page's own table
of contents, and "(front matter)" for anything else before the first section. Each gold text must stand,
whitespace-normalised, inside one block with the named label in the named file. The rules of questions.yaml
itself come from bench/corpus_gold.py.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
sys.path.insert(0, str(HERE.parent.parent))  # bench/

from corpus_gold import Tally, opened, placement_errors, report  # noqa: E402

SKIP = {"script", "style", "svg", "noscript", "template"}
SECTION_CLASSES = {"section", "Ysection"}


def norm(text: str) -> str:
    return " ".join(text.split())


class Blocks(HTMLParser):
    """Collects every <p> as (class, text of its first <b>, text)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.skip = 0
        self.cur: dict | None = None
        self.in_b = False
        self.out: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag in SKIP:
            self.skip += 1
            return
        if tag == "p" and not self.skip:
            if self.cur is not None:  # an unclosed <p> ends where the next one starts
                self._close()
            self.cur = {"cls": dict(attrs).get("class") or "", "b": None, "parts": []}
        elif tag == "b" and self.cur is not None and self.cur["b"] is None:
            self.in_b = True
            self.cur["b"] = ""

    def handle_endtag(self, tag):
        if tag in SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if tag == "b":
            self.in_b = False
        elif tag == "p" and self.cur is not None:
            self._close()

    def handle_data(self, data):
        if self.skip or self.cur is None:
            return
        self.cur["parts"].append(data)
        if self.in_b:
            self.cur["b"] += data

    def _close(self):
        c = self.cur
        self.out.append((c["cls"].strip(), norm(c["b"] or ""), norm("".join(c["parts"]))))
        self.cur = None
        self.in_b = False


def blocks_of(path: Path) -> list[tuple[str, str]]:
    """(label, normalised text) for every non-empty <p> of the page."""
    parser = Blocks()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    out: list[tuple[str, str]] = []
    current = None
    for cls, bold, text in parser.out:
        classes = set(cls.split())
        if classes & SECTION_CLASSES:
            num = bold or text.split(" ", 1)[0]
            current = f"Section {num.strip()}"
        if not text:
            continue
        if current is not None:
            label = current
        elif any(c.startswith(("TOC", "YTOC")) for c in classes) or cls in {"Ytable"}:
            label = "Table of contents"
        else:
            label = "(front matter)"
        out.append((label, text))
    return out


def main() -> int:
    data, errors, on_disk = opened(HERE)

    parsed = {f: blocks_of(DOCS / f) for f in on_disk}

    tally = Tally(data, parsed, lambda where, doc, sec, text, _gold: placement_errors(
        where, sec, norm(text), parsed[doc], "paragraphs, items or a heading"))
    errors += tally.errors
    per_doc = tally.per_doc
    print(tally.summary(len(parsed)))
    for f, bl in parsed.items():
        secs = [lab for lab in dict.fromkeys(lab for lab, _ in bl) if lab.startswith("Section")]
        print(f"{f}: {len(bl)} text blocks, {len(secs)} sections, asked about in {per_doc[f]} questions")
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
