"""Check the gold of the eu-formex corpus against the Formex 4 XML files under docs/.

Usage: python check_gold.py            (from any directory; exits 1 on any error)

Independent of the engine: it parses the XML itself with lxml (no regular expressions over the bytes).

What it does:

* reads each docs/*.xml as Formex 4 (the Official Journal's XML, no namespace): the root must be <ACT>
  (the Regulation's main file) or <ANNEX> (one annex file of it), with a Formex xsi:noNamespaceSchemaLocation;
* skips <BIB.INSTANCE> (the bibliographic head: OJ number, pages, dates);
* splits the visible text into blocks: every text container (<P>, <TXT>, <ALINEA>, <NO.P>, <NO.PARAG>, <TI.ART>,
  <STI.ART>, <TI>, <STI>, <VISA>, ...) and every structural element (<ARTICLE>, <PARAG>, <LIST>, <ITEM>, <NP>,
  <CONSID>, <DIVISION>, ...) starts a new block, so a block is the run of text between two such boundaries.
  A gold text must lie inside one block, so it cannot span two points of a list, two subparagraphs (two
  <ALINEA>s), a list's lead-in and its first point, a paragraph number and its text, or a heading and its text;
* renders inline elements as the Official Journal prints them: <HT> (bold, italic, small caps, superscript),
  <DATE>, <FT> (numbers), <REF.DOC.OJ> and <REF.DOC> keep their text in place; the empty <QUOT.START CODE="2018"/>
  and <QUOT.END CODE="2019"/> become the characters U+2018 and U+2019 their CODE names; a footnote <NOTE> is
  taken out of the running text and forms blocks of its own; <?PAGE NO="..."?> processing instructions
  (page breaks) are dropped, their tails kept;
* gives each block the label of the unit it stands in, as the Regulation cites its own units: inside an
  <ARTICLE> the whitespace-normalised <TI.ART> ("Article 26"; the file writes Article<U+00A0>26); inside a
  recital <CONSID> "Recital N" from its <NO.P>(N)</NO.P>; a chapter or section heading (<DIVISION><TITLE>) its
  <TI> text ("CHAPTER III", "SECTION 2"); the rest of the preamble "Preamble"; the act's title "Title"; the
  signature block "Final"; in an <ANNEX> file, everything "Annex III" (from its <TI>ANNEX III</TI>);
* checks that each gold text occurs, whitespace-normalised (str.split, so U+00A0 counts as a space; nothing
  else is normalised), inside one block of the named file that carries the named label, and that gold in a
  recital is binding: false and gold in an article or annex binding: true;
* checks the file itself through bench/corpus_gold.py: ids unique, types valid, gold texts 6-40 words,
  two-part golds carry part 1 and part 2 (others no part), out-of-scope iff no gold, broad questions at least
  two golds, binding is true/false, every file under docs/ listed in `documents` (and every listed file
  present), source_type valid, corpus name equals the folder name.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lxml import etree

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
sys.path.insert(0, str(HERE.parent.parent))  # bench/: the rules every corpus's file keeps
from corpus_gold import Tally, opened, placement_errors, read_each, report  # noqa: E402

XSI = "{http://www.w3.org/2001/XMLSchema-instance}noNamespaceSchemaLocation"
# Elements whose start and end close the running block (text containers and structure).
BOUNDARIES = {
    "P", "TXT", "ALINEA", "NO.P", "NO.PARAG", "TI.ART", "STI.ART", "TI", "STI", "VISA", "PREAMBLE.INIT",
    "GR.CONSID.INIT", "PREAMBLE.FINAL", "PL.DATE", "SIGNATORY",
    "ARTICLE", "PARAG", "LIST", "ITEM", "NP", "CONSID", "DIVISION", "TITLE", "GR.SEQ", "CONTENTS",
    "TBL", "ROW", "CELL", "PREAMBLE", "GR.VISA", "GR.CONSID", "ENACTING.TERMS", "FINAL", "SIGNATURE",
}
SKIP = {"BIB.INSTANCE"}


def norm(text: str) -> str:
    return " ".join(text.split())


def annex_label(root) -> str:
    ti = root.find("TITLE/TI")
    words = norm("".join(ti.itertext())).split() if ti is not None else []
    if len(words) >= 2 and words[0].upper() == "ANNEX":
        return f"Annex {words[1]}"
    raise ValueError("ANNEX file without an 'ANNEX <n>' title")


def unit_label(el, current: str) -> str:
    """The label an element gives the blocks inside it (else the one it inherits)."""
    if el.tag == "ARTICLE":
        return norm(el.findtext("TI.ART") or "")
    if el.tag == "CONSID":
        num = el.find("NP/NO.P")
        return f"Recital {norm(num.text or '').strip('()')}" if num is not None else "Recital ?"
    if el.tag == "DIVISION":
        return current  # its own heading is labelled below; its articles label themselves
    if el.tag == "TITLE" and el.getparent() is not None and el.getparent().tag == "DIVISION":
        ti = el.find("TI")
        return norm("".join(ti.itertext())) if ti is not None else current
    if el.tag == "TITLE" and el.getparent() is not None and el.getparent().tag == "ACT":
        return "Title"
    if el.tag == "PREAMBLE":
        return "Preamble"
    if el.tag == "FINAL":
        return "Final"
    return current


def blocks_of(path: Path) -> list[tuple[str, str]]:
    """(label, normalised text) for every block of a Formex file, in document order."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    root = etree.parse(str(path), parser).getroot()
    if root.tag not in ("ACT", "ANNEX") or "formex" not in (root.get(XSI) or ""):
        raise ValueError(f"{path.name}: not a Formex ACT or ANNEX ({root.tag})")
    out: list[tuple[str, str]] = []

    def flush(buf: list[str], label: str) -> None:
        text = norm("".join(buf))
        if text:
            out.append((label, text))
        buf.clear()

    def walk(el, buf: list[str], label: str) -> None:
        for ch in el:
            if not isinstance(ch.tag, str):  # processing instruction (<?PAGE?>) or comment
                pass
            elif ch.tag in SKIP:
                pass
            elif ch.tag in ("QUOT.START", "QUOT.END"):
                buf.append(chr(int(ch.get("CODE", "2018" if ch.tag == "QUOT.START" else "2019"), 16)))
            elif ch.tag == "NOTE":  # footnote: out of the running text, blocks of its own
                inner = [ch.text or ""]
                walk(ch, inner, label)
                flush(inner, label)
            elif ch.tag in BOUNDARIES:
                flush(buf, label)
                inner_label = unit_label(ch, label)
                inner = [ch.text or ""]
                walk(ch, inner, inner_label)
                flush(inner, inner_label)
            else:  # inline: HT, DATE, FT, REF.DOC.OJ, REF.DOC, ...
                buf.append(ch.text or "")
                walk(ch, buf, label)
            if ch.tail:
                buf.append(ch.tail)

    top = annex_label(root) if root.tag == "ANNEX" else "Act"
    buf = [root.text or ""]
    walk(root, buf, top)
    flush(buf, top)
    return out


def binding_errors(where: str, section: str, gold: dict) -> list[str]:
    """Recitals explain (binding: false); articles and annexes are the enacting terms (binding: true)."""
    want = not section.startswith("Recital")
    if gold.get("binding") is not want:
        return [f"{where}: binding should be {str(want).lower()} in {section!r}"]
    return []


def main() -> int:
    data, errors, on_disk = opened(HERE)

    parsed = read_each(DOCS, on_disk, blocks_of, errors, (etree.XMLSyntaxError, ValueError))

    def place(where, doc, sec, text, gold):
        return placement_errors(where, sec, norm(text), parsed[doc],
                                "points, subparagraphs, numbers or headings") + binding_errors(where, sec, gold)

    tally = Tally(data, parsed, place)
    errors += tally.errors
    print(tally.summary(len(parsed)))
    for f, bl in parsed.items():
        labels = list(dict.fromkeys(lab for lab, _ in bl))
        arts = sum(1 for lab in labels if lab.startswith("Article "))
        recs = sum(1 for lab in labels if lab.startswith("Recital "))
        words = sum(len(t.split()) for _, t in bl)
        print(f"{f}: {len(bl)} text blocks, {arts} articles, {recs} recitals, {len(labels)} labelled units, "
              f"{words} words, asked about in {tally.per_doc[f]} questions")
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
