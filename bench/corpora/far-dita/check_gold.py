"""Check the gold of the far-dita corpus against the DITA topic files under docs/.

Usage: python check_gold.py            (from any directory; exits 1 on any error)

Independent of the engine: it parses the XML itself with lxml (as a plain XML file: the DOCTYPE's
"ditabase.dtd" is not fetched or needed, and no DITA toolkit is used).

What it does:

* reads each docs/*.dita. Every file is one DITA topic (a <concept>, or for 32.900 a plain <topic>)
  wrapped in a <dita> root, in whichever of the publisher's serialisations that file has (some with the
  ditaarch namespace declaration or the long `domains` attribute, one with no trailing newline and tags
  run together, some with tab-indented text);
* the section label of a file is the FAR section number printed in its title, i.e. the text of the
  <ph props="autonumber"> inside the topic's <title> ("33.103", "32.607-2"): that is the only heading a
  FAR section file has (the paragraph designations "(a)", "(1)", "(i)" are list-item numbers inside <p>,
  not headings), so every text block of a file carries that one label;
* splits the visible text into blocks: each <p> and each table <entry> (the <title> is the heading, not
  a block a gold text may come from). A block's text is
  its own text and inline children (<ph>, <i>, <xref>, <cite> ...) but not nested block elements (<p>,
  <ol>, <ul>, <li>, <table> ...), which are blocks of their own: in 33.101 and 33.201 the definitions
  after the first are nested inside the list of the first definition, and each is still its own block.
  So a gold text cannot span two list items, two paragraphs, two table cells, or a heading and its text;
* drops processing instructions (the <?FM MARKER ...?> change markers in 33.102 carry editorial text
  such as "Amend section 33.102 by removing ...", which is not FAR text) and comments, keeping their tails;
* checks that each gold text occurs, whitespace-normalised (tabs, newlines and runs of spaces count as
  one space; nothing else is normalised: curly and straight quotes, "30 thday", "Public Law85-804" and
  the gaps left by empty cross-references such as "the clause at , Disputes" are compared as they are),
  inside one block of the named file whose label is the named section;
* checks the file itself with bench/corpus_gold.py: ids unique, types valid, gold texts 6-40 words,
  two-part golds carry part 1 and part 2 (others no part), out-of-scope iff no gold, broad questions at
  least two golds, binding is true/false, every file under docs/ listed in `documents` (and every listed
  file present), source_type valid, corpus name equals the folder name; and here also that every gold's
  `doc` is the file whose title carries the gold's section number.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from lxml import etree

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
sys.path.insert(0, str(HERE.parent.parent))  # bench/: the rules every corpus's file keeps
from corpus_gold import Tally, opened, read_each, report  # noqa: E402

BLOCKS = {"p", "entry"}
# elements whose content is laid out as blocks of their own, never run into the surrounding text
STRUCTURE = BLOCKS | {"title", "ol", "ul", "sl", "li", "sli", "dl", "dlentry", "dt", "dd", "table", "tgroup",
                      "thead", "tbody", "row", "simpletable", "strow", "stentry", "note", "section",
                      "body", "conbody", "topic", "concept"}


def local(el) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def norm(text: str) -> str:
    return " ".join(text.split())


def own_text(el) -> str:
    """The element's text with its inline children, without nested blocks, PIs or comments."""
    out = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str) and local(child) not in STRUCTURE:
            out.append(own_text(child))
        # nested blocks, processing instructions and comments contribute nothing but their tail
        out.append(child.tail or "")
    return "".join(out)


def section_of(root, name: str) -> str:
    titles = [el for el in root.iter() if local(el) == "title"]
    if not titles:
        raise ValueError(f"{name}: no <title>")
    for ph in titles[0].iter():
        if local(ph) == "ph" and "autonumber" in (ph.get("props") or "").split():
            return norm("".join(ph.itertext()))
    raise ValueError(f"{name}: the title has no <ph props=\"autonumber\"> section number")


def blocks_of(path: Path) -> tuple[str, list[str]]:
    """(section label, normalised text of every non-empty block) for one DITA topic file."""
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    root = etree.parse(str(path), parser).getroot()
    if local(root) not in ("dita", "concept", "topic", "reference", "task"):
        raise ValueError(f"{path.name}: not a DITA topic file (root <{local(root)}>)")
    label = section_of(root, path.name)
    out = []
    for el in root.iter():
        if local(el) in BLOCKS:
            text = norm(own_text(el))
            if text:
                out.append(text)
    return label, out


def main() -> int:
    data, errors, on_disk = opened(HERE)

    parsed: dict[str, tuple[str, list[str]]] = read_each(DOCS, on_disk, blocks_of, errors,
                                                         (etree.XMLSyntaxError, ValueError))
    by_label = Counter(label for label, _ in parsed.values())
    errors += [f"section {lab} is the title of {n} files" for lab, n in by_label.items() if n > 1]

    words = sum(len(b.split()) for _label, blocks in parsed.values() for b in blocks)

    def place(where: str, doc: str, sec: str, text: str, _gold: dict) -> list[str]:
        label, blocks = parsed[doc]
        if sec != label:
            return [f"{where}: {doc} is section {label!r}, not {sec!r}"]
        needle = norm(text)
        if any(needle in b for b in blocks):
            return []
        elsewhere = sorted(lab for f, (lab, bl) in parsed.items() if f != doc and any(needle in b for b in bl))
        if elsewhere:
            return [f"{where}: not in {doc}; found in section(s) {elsewhere}"]
        if needle in " ".join(blocks):
            return [f"{where}: spans two blocks (paragraphs, list items, cells or title)"]
        return [f"{where}: not found"]

    tally = Tally(data, parsed, place)
    errors += tally.errors
    per_doc = tally.per_doc
    print(f"{tally.summary(len(parsed))}\n{words} words in text blocks")
    unasked = [f for f in parsed if not per_doc[f]]
    print(f"documents asked about: {len(parsed) - len(unasked)} of {len(parsed)}"
          + (f" (not: {', '.join(unasked)})" if unasked else ""))
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
