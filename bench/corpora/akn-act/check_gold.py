"""Check the gold of the akn-act corpus against the Akoma Ntoso XML files under docs/.

Usage: python check_gold.py            (from any directory; exits 1 on any error)

Independent of the engine: it parses the XML itself with lxml.

What it does:

* reads each docs/*.xml and works with local element names, so it reads the Akoma Ntoso 2.0
  namespace of these files (http://www.akomantoso.org/2.0) as well as the OASIS 3.0 one;
* skips <meta> blocks (FRBR identification, TLCTerm references, lifecycle) everywhere;
* splits the visible text into blocks: the innermost <p>, <listIntroduction>, <listWrapUp>,
  <heading>, <subheading>, <td>, <th> elements. A gold text must lie inside one block, so it cannot
  span two list items, two subsections, two definitions, a heading and its text, or two table cells;
* gives each block the label of the nearest numbered unit above it, in the form the by-laws cite
  their own units: the nearest ancestor <section> gives "Section <num>" (the trailing dot of
  <num>1.</num> dropped: "Section 12", "Section 4A"); text in a schedule (a <component> outside the
  <act>, titled by its FRBRalias "Schedule 1") gives "Schedule 1"; the <preamble> gives "Preamble";
  a chapter or part heading gives "Chapter II" / "Part 1";
* checks that each gold text occurs, whitespace-normalised (nothing else is normalised: quotes,
  dashes and the PDF line-break hyphens such as "qual- ity" are compared as they are), inside one
  block of the named file that carries the named label;
* checks the file itself: ids unique, types valid, gold texts 6-40 words, two-part golds carry part 1
  and part 2 (others no part), out-of-scope iff no gold, broad questions at least two golds, binding
  is true/false, every file under docs/ listed in `documents` (and every listed file present),
  source_type valid, corpus name equals the folder name.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from lxml import etree

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
sys.path.insert(0, str(HERE.parent.parent))  # bench/: the rules every corpus's file keeps
from corpus_gold import Tally, opened, placement_errors, read_each, report  # noqa: E402

BLOCKS = {"p", "listIntroduction", "listWrapUp", "heading", "subheading", "td", "th"}
AKN_NAMESPACES = (
    "http://www.akomantoso.org/2.0",
    "http://docs.oasis-open.org/legaldocml/ns/akn/3.0",
)


def local(el) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def norm(text: str) -> str:
    return " ".join(text.split())


def child(el, name):
    for c in el:
        if local(c) == name:
            return c
    return None


def schedule_label(component) -> str:
    for el in component.iter():
        if local(el) == "FRBRalias" and el.get("value"):
            return el.get("value").strip()
    m = re.search(r"(\d+)$", component.get("id") or component.get("eId") or "")
    return f"Schedule {m.group(1)}" if m else "Schedule"


def label_of(block) -> str:
    """Nearest numbered unit above the block, as the by-law cites it."""
    for anc in block.iterancestors():
        name = local(anc)
        if name == "section":
            num = child(anc, "num")
            n = norm("".join(num.itertext())).rstrip(".") if num is not None else "?"
            return f"Section {n}"
        if name in ("chapter", "part") and local(block) == "heading" and block.getparent() is anc:
            num = child(anc, "num")
            n = norm("".join(num.itertext())) if num is not None else "?"
            return f"{name.capitalize()} {n}"
        if name == "component":
            return schedule_label(anc)
        if name == "preamble":
            return "Preamble"
        if name == "preface":
            return "Preface"
    return "(unplaced)"


def in_meta(el) -> bool:
    return any(local(a) == "meta" for a in el.iterancestors())


def blocks_of(path: Path):
    """List of (label, normalised text) for every innermost text block outside <meta>."""
    root = etree.parse(str(path)).getroot()
    ns = etree.QName(root).namespace
    if local(root) != "akomaNtoso" or ns not in AKN_NAMESPACES:
        raise ValueError(f"{path.name}: not an Akoma Ntoso document ({root.tag})")
    out = []
    for el in root.iter():
        if local(el) not in BLOCKS or in_meta(el):
            continue
        if any(local(d) in BLOCKS for d in el.iterdescendants()):
            continue  # a container of blocks (e.g. a <td> holding <p>s): use the inner ones
        text = norm("".join(el.itertext()))
        if text:
            out.append((label_of(el), text))
    return out


def main() -> int:
    data, errors, on_disk = opened(HERE)

    parsed = read_each(DOCS, on_disk, blocks_of, errors, (etree.XMLSyntaxError, ValueError))

    tally = Tally(data, parsed, lambda where, doc, sec, text, _gold: placement_errors(
        where, sec, norm(text), parsed[doc]))
    errors += tally.errors
    per_doc = tally.per_doc
    print(tally.summary(len(parsed)))
    for f, bl in parsed.items():
        secs = [lab for lab in dict.fromkeys(lab for lab, _ in bl)]
        print(f"{f}: {len(bl)} text blocks, {len(secs)} labelled units, asked about in {per_doc[f]} questions")
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
