"""Mechanical check of questions.yaml against the files in docs/ (independent of the engine).

HTML pages (the HonKit-built policy pages) are parsed with BeautifulSoup (html.parser). Their visible text
is cut into blocks: every p, li, td, th, dt, dd, pre, blockquote and figcaption element gives one block made
of its own text, without the text of block elements or headings nested in it (so a list item that holds a
nested list, or a heading swallowed into a list item, is still one item). Script, style, head, title,
noscript and template contents are not visible and are skipped. Each block belongs to the nearest h1-h6
heading that starts before it in document order.

The plain-text regulation is cut into paragraphs at blank lines; a paragraph that starts "N. " is the
heading "Section N" and every later paragraph up to the next one belongs to it.

Each gold text must occur, whitespace-normalised, inside one block under the heading named by `section`.
Also checked: ids unique, question and source types valid, 6-40 words, part 1 and 2 on two-part golds
(and no part elsewhere), binding present, out-of-scope iff the gold is empty, every docs/ file listed and
every listed file present, the corpus name equals the folder name.

Run: python check_gold.py            (needs PyYAML and beautifulsoup4)
     python check_gold.py --dump F   (print the heading and text of every block of docs/F)
"""
import collections
import os
import re
import sys

import yaml
from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import Comment, Doctype, ProcessingInstruction

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "docs")
TYPES = {"paraphrase", "broad", "two-part", "conflict", "out-of-scope", "provision"}
SOURCE_TYPES = {"statute", "regulation", "guidance", "policy", "standard", "contract"}
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
BLOCKS = {"p", "li", "td", "th", "dt", "dd", "pre", "blockquote", "figcaption"}
HIDDEN = {"script", "style", "head", "title", "noscript", "template"}
CONTAINERS = BLOCKS | HEADINGS | {"ul", "ol", "dl", "table", "div", "section", "nav"}


def norm(s):
    return " ".join(s.split())


def own_text(el):
    """Visible text of el without the text of nested blocks, lists or headings."""
    parts = []
    for child in el.children:
        if isinstance(child, (Comment, Doctype, ProcessingInstruction)):
            continue
        if isinstance(child, NavigableString):
            parts.append(str(child))
        elif isinstance(child, Tag) and child.name not in HIDDEN and child.name not in CONTAINERS:
            parts.append(own_text(child))
    return "".join(parts)


def visible_text(el):
    parts = []
    for child in el.children:
        if isinstance(child, (Comment, Doctype, ProcessingInstruction)):
            continue
        if isinstance(child, NavigableString):
            parts.append(str(child))
        elif isinstance(child, Tag) and child.name not in HIDDEN:
            parts.append(visible_text(child))
    return "".join(parts)


def html_blocks(path):
    """list of (heading text, block text) in document order."""
    soup = BeautifulSoup(open(path, encoding="utf-8").read(), "html.parser")
    out, heading = [], "(top)"

    def walk(el):
        nonlocal heading
        for child in el.children:
            if not isinstance(child, Tag) or child.name in HIDDEN:
                continue
            if child.name in HEADINGS:
                heading = norm(visible_text(child))
                continue
            if child.name in BLOCKS:
                text = norm(own_text(child))
                if text:
                    out.append((heading, text))
            walk(child)

    walk(soup)
    return out


def text_blocks(path):
    out, heading = [], "(top)"
    for para in re.split(r"\n\s*\n", open(path, encoding="utf-8").read()):
        text = norm(para)
        if not text:
            continue
        m = re.match(r"^(\d+)\. ", text)
        if m:
            heading = f"Section {m.group(1)}"
            continue
        out.append((heading, text))
    return out


def blocks_of(name):
    path = os.path.join(DOCS, name)
    return html_blocks(path) if name.endswith((".html", ".htm")) else text_blocks(path)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--dump":
        for heading, text in blocks_of(sys.argv[2]):
            print(f"[{heading}] {text}")
        return 0
    q = yaml.safe_load(open(os.path.join(HERE, "questions.yaml"), encoding="utf-8"))
    fails = []
    listed = [d["file"] for d in q["documents"]]
    on_disk = {os.path.relpath(os.path.join(r, f), DOCS) for r, _, fs in os.walk(DOCS) for f in fs}
    if len(listed) != len(set(listed)):
        fails.append("a document is listed twice")
    if set(listed) != on_disk:
        fails.append(f"documents listed {sorted(listed)} != files {sorted(on_disk)}")
    for d in q["documents"]:
        if d.get("source_type") not in SOURCE_TYPES or not d.get("title"):
            fails.append(f"document {d['file']}: bad source_type/title")
    if q.get("corpus") != os.path.basename(HERE):
        fails.append("corpus name != folder name")
    if not q.get("description"):
        fails.append("description missing")
    blocks = {f: blocks_of(f) for f in on_disk}
    ids = collections.Counter(x["id"] for x in q["questions"])
    for i, n in ids.items():
        if n > 1:
            fails.append(f"duplicate id {i}")
    types = collections.Counter()
    ngold = found = 0
    for x in q["questions"]:
        t = x.get("type")
        types[t] += 1
        if t not in TYPES:
            fails.append(f"{x['id']}: bad type {t}")
        if not str(x.get("question") or "").strip():
            fails.append(f"{x['id']}: no question text")
        gold = x.get("gold") or []
        if (t == "out-of-scope") != (len(gold) == 0):
            fails.append(f"{x['id']}: out-of-scope must have no gold, others some")
        if t == "two-part" and {g.get("part") for g in gold} != {1, 2}:
            fails.append(f"{x['id']}: two-part golds need part 1 and part 2")
        for g in gold:
            ngold += 1
            if g.get("doc") not in on_disk:
                fails.append(f"{x['id']}: unknown doc {g.get('doc')}")
                continue
            if not isinstance(g.get("binding"), bool):
                fails.append(f"{x['id']}: binding missing")
            if t != "two-part" and "part" in g:
                fails.append(f"{x['id']}: part on non-two-part gold")
            text = norm(g["text"])
            words = len(text.split())
            if not 6 <= words <= 40:
                fails.append(f"{x['id']}: {words} words")
            section = norm(str(g["section"]))
            under = [b for h, b in blocks[g["doc"]] if h == section]
            if not under:
                fails.append(f"{x['id']}: no heading {section!r} in {g['doc']}")
            elif not any(text in b for b in under):
                where = "under another heading" if any(text in b for _, b in blocks[g["doc"]]) else "in no block"
                fails.append(f"{x['id']}: text not in one block under {section!r} (found {where}): {text[:60]}")
            else:
                found += 1
    print("questions:", sum(types.values()), dict(sorted(types.items())))
    golds = [g for x in q["questions"] for g in x.get("gold") or []]
    print("documents:", len(listed), "golds:", ngold,
          "binding true/false:", sum(1 for g in golds if g.get("binding") is True),
          "/", sum(1 for g in golds if g.get("binding") is False))
    for f in fails:
        print("FAIL", f)
    if not fails:
        print(f"all {ngold} gold texts found, each in one block under its heading; "
              "ids unique, types valid, every doc listed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
