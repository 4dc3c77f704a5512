"""Check the gold of the w3c-spec corpus against the files under docs/.

Usage: python check_gold.py            (from any directory; exits 1 on any error)
       python check_gold.py --dump F   (print every labelled text block of docs/F, for reading)

Independent of the engine: it reads the documents itself.

* wcag22.html (the ReSpec-built WCAG 2.2 page) is parsed with lxml.html. <head>, <script>, <style> and
  <template> are skipped. The visible text is split into blocks at every block-level element (p, li, dt,
  dd, td, th, caption, figcaption, h1-h6, pre, blockquote, div, section, aside, ol, ul, dl, table, ...):
  a block's text is its own text and that of its inline children (a, em, strong, bdi, span, code, dfn,
  abbr, ...), not the text of nested blocks. So a gold text cannot span two list items, a <dt> and its
  <dd>, a note's "Note 1" marker and its paragraph, or a heading and the text under it.
* Each block is labelled by the nearest heading above it: the heading of the innermost enclosing
  <section> (its h2-h6, directly or in <div class="header-wrapper">). The label is the heading's
  number as the page prints it in <bdi class="secno"> (whitespace-normalised, a trailing "." dropped):
  "Success Criterion 1.4.3", "Guideline 1.4", "5.2.1", "6" (the Glossary), "1" (Principle 1,
  Perceivable), "A" (Change Log); an unnumbered heading gives its whole text ("Abstract",
  "Background on WCAG 2", "New Features in WCAG 2.2"). As a cross-check, the gold's block must get the
  same label from the nearest preceding heading in document order.
* A gold marked binding: true must not lie in a note (<div class="note">), an example
  (<aside class="example">), the "Understanding ... | How to Meet ..." links (<div class="doclinks">),
  or a section marked informative/introductory/appendix (Abstract, Status, Introduction, 5.6, 5.7,
  appendices).
* gsa-request-accessibility-information.md (a Jekyll page: YAML front matter, then Markdown with raw HTML
  headings and lists) loses its front matter and is rendered with markdown-it-py (CommonMark, raw HTML
  passed through), then read like the HTML above. Its labels are the text of the nearest heading above
  (h2/h3, Markdown or raw HTML); text before the first heading takes the front matter's title. A gold
  text must also stand, whitespace-normalised, in the raw Markdown itself (with its HTML character
  references such as &rsquo; read as the characters they stand for), so it never crosses **bold**,
  _italic_ or a [link][n].
* Gold texts are compared whitespace-normalised; nothing else is normalised (quotes, dashes, case).
* The rules of questions.yaml itself (ids, types, 6-40 words, parts, out-of-scope without gold, broad with
  two golds at least, binding a boolean, every file under docs/ listed) are bench/corpus_gold.py's.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import yaml
from lxml import etree
from lxml import html as lhtml

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
sys.path.insert(0, str(HERE.parent.parent))  # bench/: the rules every corpus's file keeps
from corpus_gold import Tally, opened, report  # noqa: E402

BLOCK_TAGS = {
    "html", "body", "p", "li", "dt", "dd", "td", "th", "caption", "figcaption", "figure", "h1", "h2", "h3",
    "h4", "h5", "h6", "pre", "blockquote", "div", "section", "aside", "nav", "header", "footer", "main",
    "article", "ol", "ul", "dl", "table", "thead", "tbody", "tfoot", "tr", "details", "summary", "hr", "br",
    "form", "fieldset", "address",
}
SKIP_TAGS = {"head", "script", "style", "template", "noscript"}
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
NON_BINDING_CLASSES = {"note", "example", "doclinks"}
NON_BINDING_SECTION_CLASSES = {"informative", "introductory", "appendix"}


def norm(text: str) -> str:
    return " ".join(text.split())


def tag(el) -> str:
    return el.tag.lower() if isinstance(el.tag, str) else ""


def classes(el) -> set[str]:
    return set((el.get("class") or "").split())


def own_text(block) -> str:
    """The block's text and its inline descendants', without nested blocks' text."""
    parts = [block.text or ""]

    def walk(el):
        for c in el:
            t = tag(c)
            if t in SKIP_TAGS or not t:  # comments, processing instructions
                parts.append(c.tail or "")
                continue
            if t in BLOCK_TAGS:
                parts.append(" ")  # a nested block ends a run of text
                parts.append(c.tail or "")
                continue
            parts.append(c.text or "")
            walk(c)
            parts.append(c.tail or "")

    walk(block)
    return norm("".join(parts))


def heading_label(h) -> str:
    secno = [b for b in h.iter() if tag(b) == "bdi" and "secno" in classes(b)]
    if secno:
        return norm("".join(secno[0].itertext())).rstrip(".").strip()
    return norm("".join(h.itertext()))


def section_heading(sec):
    for c in sec:
        if tag(c) in HEADINGS:
            return c
        if tag(c) == "div" and "header-wrapper" in classes(c):
            for cc in c:
                if tag(cc) in HEADINGS:
                    return cc
    return None


def read_html(root, first_label: str, by_section: bool):
    """List of dicts (label, label_by_order, text, nonbinding) for every non-empty block."""
    out = []
    last_heading = first_label
    for el in root.iter():
        t = tag(el)
        if t not in BLOCK_TAGS:
            continue
        if any(tag(a) in SKIP_TAGS for a in el.iterancestors()):
            continue
        if t in HEADINGS:
            last_heading = heading_label(el)
        text = own_text(el)
        if not text:
            continue
        label = None
        nonbinding = False
        for anc in [el, *el.iterancestors()]:
            if classes(anc) & NON_BINDING_CLASSES:
                nonbinding = True
            if tag(anc) == "section":
                if classes(anc) & NON_BINDING_SECTION_CLASSES:
                    nonbinding = True
                h = section_heading(anc)
                if label is None and h is not None and by_section:
                    label = heading_label(h)
        if label is None:
            label = last_heading if not by_section else first_label
        out.append({"label": label, "order": last_heading, "text": text, "nonbinding": nonbinding})
    return out


def blocks_html(path: Path):
    root = lhtml.fromstring(path.read_bytes())
    return read_html(root, "(head)", by_section=True), None


def blocks_md(path: Path):
    from markdown_it import MarkdownIt

    raw = path.read_text(encoding="utf-8")
    m = re.match(r"---\n(.*?)\n---\n", raw, flags=re.S)
    if not m:
        raise ValueError(f"{path.name}: no front matter")
    front = yaml.safe_load(m.group(1))
    body = raw[m.end():]
    rendered = MarkdownIt("commonmark", {"html": True}).render(body)
    root = lhtml.fromstring(f"<html><body>{rendered}</body></html>")
    blocks = read_html(root, norm(str(front.get("title", "(front matter)"))), by_section=False)
    return blocks, norm(html.unescape(body))


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--dump":
        p = DOCS / sys.argv[2]
        blocks, _ = blocks_md(p) if p.suffix == ".md" else blocks_html(p)
        for b in blocks:
            flag = "n" if b["nonbinding"] else "B"
            print(f"[{b['label']}]{'' if b['label'] == b['order'] else ' {' + b['order'] + '}'} {flag} | {b['text']}")
        return 0

    data, errors, on_disk = opened(HERE)

    parsed, raw = {}, {}
    for f in on_disk:
        try:
            if f.endswith(".md"):
                parsed[f], raw[f] = blocks_md(DOCS / f)
            else:
                parsed[f], raw[f] = blocks_html(DOCS / f)
        except (etree.ParserError, ValueError) as exc:
            errors.append(f"{f}: {exc}")
    labels = {f: {b["label"] for b in bl} for f, bl in parsed.items()}

    def place(where: str, doc: str, sec: str, text: str, gold: dict) -> list[str]:
        if sec not in labels[doc]:
            return [f"{where}: no unit labelled {sec!r} in {doc}"]
        needle = norm(text)
        found: list[str] = []
        if raw[doc] is not None and needle not in raw[doc]:
            found.append(f"{where}: not verbatim in the raw Markdown (crosses **, _, [link] or other markup)")
        hits = [b for b in parsed[doc] if needle in b["text"]]
        good = [b for b in hits if b["label"] == sec]
        if not good:
            if hits:
                return [*found, f"{where}: not in {sec}; found in {sorted({b['label'] for b in hits})}"]
            whole = norm(" ".join(b["text"] for b in parsed[doc] if b["label"] == sec))
            hint = "spans two blocks (items, paragraphs, cells, note marker)" if needle in whole else "not found"
            return [*found, f"{where}: {hint}"]
        if not any(b["order"] == sec for b in good):
            found.append(f"{where}: the nearest heading above in document order is {good[0]['order']!r}")
        if gold.get("binding") is True and all(b["nonbinding"] for b in good):
            found.append(f"{where}: binding: true but the text is in a note, example or informative section")
        return found

    tally = Tally(data, parsed, place)
    errors += tally.errors
    per_doc = tally.per_doc
    print(tally.summary(len(parsed)))
    for f, bl in parsed.items():
        print(f"{f}: {len(bl)} text blocks, {len(labels[f])} labelled units, asked about in {per_doc[f]} questions")
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
