"""Check the gold of the pdf-standard corpus against ETSI EN 303 645 V3.1.3 as ETSI publishes it (PDF).

Usage:
    python check_gold.py                 check questions.yaml (exits 1 on any error)
    python check_gold.py --dump FILE     print FILE's text in reading order, one line per printed
                                         line: page, paragraph kind, section, a pilcrow where a
                                         paragraph starts, the text

Independent of the engine: it reads the PDF with poppler's `pdftotext -bbox` (every word with its
box) and rebuilds the reading order itself:

* the running head (page number and "ETSI EN 303 645 V3.1.3 (2024-09)", above y = 62 pt) and the
  footer ("ETSI", below y = 805 pt) are dropped;
* words are grouped into printed rows by the vertical centre of their box (within 3 pt), so the
  bullet glyph and the NOTE / EXAMPLE labels, which poppler puts in blocks of their own, come back on
  the row of the text they introduce ("NOTE 1: There are many ...", "• contact information ...");
  the page is one column, so rows are read top to bottom, words left to right;
* a row whose words are set at 14 pt or more and starts at the left margin is a heading: a clause
  ("5.1 No universal default passwords" gives the section "5.1"; "Annex B (informative):" gives
  "Annex B"; "A.2 Device states" gives "A.2"; unnumbered ones keep their title: "Introduction"), a
  second heading row right under the first continues its title. Pages 1-3 (title page, notices,
  contents) are the section "(front)";
* in clauses 5 and 6 a row opening with "Provision <id>" at the left margin starts the section
  "Provision <id>" ("Provision 5.1-1", "Provision 6-3A"): the provision, its NOTEs and EXAMPLEs and the
  explanatory text after it, up to the next provision or heading. Text of a clause before its first
  provision belongs to the clause ("5.2"). The "Provision 5.0-1 M" rows of table B.1 (Annex B) are
  table cells, not provisions;
* a paragraph ends at a page break, at a vertical gap of more than 5 pt, at a heading, and a new one
  starts at a row opening with a NOTE / EXAMPLE label, a bullet or "Provision <id>". Each paragraph
  has a kind: "provision" (the provision's own text, and the bullets that directly continue it, as in
  provision 5.2-1), "note", "example", "definition" (clause 3.1), "item" (other bullets) or "text"
  (explanatory text, annexes, tables). A paragraph cut by a page break keeps its kind on the next page.

A gold text must occur, whitespace-normalised, in the named section, inside one run of consecutive
rows of one paragraph on one page (so not across a page break, a paragraph, a list item, a heading or
from a provision into its NOTE). `binding: true` must sit in a "provision" paragraph (or a definition),
`binding: false` in any other kind (NOTE, EXAMPLE, explanatory text, annex).

File-level checks: ids unique, types valid, gold texts 6-40 words, two-part golds carry part 1 and
part 2 (others no part), out-of-scope iff no gold, broad questions with two or more golds, binding is
true/false, every file under docs/ listed in `documents` and every listed file present.
"""

from __future__ import annotations

import html
import re
import statistics
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
sys.path.insert(0, str(HERE.parent.parent))  # bench/: the rules every corpus's file keeps
from corpus_gold import documents_errors, gold_errors, id_errors, question_errors, report  # noqa: E402

WORD_RE = re.compile(
    r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>')

HEAD_LIMIT = 62.0        # running head above this y (pt)
FOOT_LIMIT = 805.0       # footer ("ETSI") below this y (pt)
LEFT_MARGIN = 60.0       # headings and provisions start left of this x (pt)
HEADING_SIZE = 14.0      # heading words are at least this tall (body text is about 9 pt)
PARA_GAP = 5.0           # a vertical gap wider than this ends a paragraph (line gap is about 2.6 pt)
FRONT_PAGES = 3          # title page, notices, table of contents

PROVISION_ID = re.compile(r"^\d+(?:\.\d+)?-\d+[A-Z]?$")
LABEL = re.compile(r"^(NOTE|EXAMPLE)(?: \d+)?:")
CLAUSE = re.compile(r"^([A-Z]\.\d+(?:\.\d+)*|\d+(?:\.\d+)*)\s")
ANNEX = re.compile(r"^Annex ([A-Z])\b")
BULLET = "\u2022"
PUNCT_BEFORE = set(" \"'(")
PUNCT_AFTER = set(" .,;:)\"'")


@dataclass
class Line:
    page: int
    y0: float
    y1: float
    x0: float
    words: list = field(default_factory=list)
    xs: list = field(default_factory=list)
    height: float = 0.0
    heading: bool = False
    section: str = "(front)"
    kind: str = "text"
    para_start: bool = False

    @property
    def text(self) -> str:
        return " ".join(self.words)


def read_pages(pdf: Path):
    out = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True,
                         check=True).stdout
    pages = []
    for chunk in out.split("<page ")[1:]:
        words = []
        for w in WORD_RE.finditer(chunk):
            x0, y0, x1, y1 = (float(w.group(i)) for i in range(1, 5))
            words.append((x0, y0, x1, y1, html.unescape(w.group(5))))
        pages.append(words)
    return pages


def page_rows(pno: int, words) -> list[Line]:
    """Group a page's words into printed rows by the vertical centre of their boxes."""
    body = [w for w in words if w[1] >= HEAD_LIMIT and w[1] <= FOOT_LIMIT]
    rows: list[list] = []
    for w in sorted(body, key=lambda w: ((w[1] + w[3]) / 2, w[0])):
        c = (w[1] + w[3]) / 2
        if rows and abs(rows[-1][0] - c) <= 3.0:
            rows[-1][1].append(w)
        else:
            rows.append([c, [w]])
    lines = []
    for _, ws in rows:
        ws.sort(key=lambda w: w[0])
        text_ws = [w for w in ws if w[4] != BULLET] or ws
        ln = Line(pno, min(w[1] for w in text_ws), max(w[3] for w in text_ws), ws[0][0])
        ln.words = [w[4] for w in ws]
        ln.xs = [w[0] for w in ws]
        ln.height = statistics.median(w[3] - w[1] for w in text_ws)
        lines.append(ln)
    return lines


def heading_label(text: str) -> str:
    a = ANNEX.match(text)
    if a:
        return f"Annex {a.group(1)}"
    c = CLAUSE.match(text + " ")
    if c:
        return c.group(1)
    return text.strip()


def text_indent(ln: Line, is_label: bool, is_bullet: bool) -> float:
    """Where the text of a paragraph starts (after a NOTE / EXAMPLE label or a bullet)."""
    if is_bullet and len(ln.xs) > 1:
        return ln.xs[1]
    if is_label:
        for i, w in enumerate(ln.words):
            if w.endswith(":") and i + 1 < len(ln.xs):
                return ln.xs[i + 1]
    return ln.x0


def parse(pdf: Path) -> list[Line]:
    lines: list[Line] = []
    for pno, words in enumerate(read_pages(pdf), start=1):
        lines.extend(page_rows(pno, words))

    section = "(front)"
    in_annex = False
    prev: Line | None = None
    para_kind = "text"
    para_indent = 0.0
    for ln in lines:
        t = ln.text
        if ln.page <= FRONT_PAGES:
            ln.section, ln.kind = "(front)", "text"
            ln.para_start = prev is None or prev.page != ln.page or ln.y0 - prev.y1 > PARA_GAP
            prev = ln
            continue
        if ln.height >= HEADING_SIZE and ln.x0 < LEFT_MARGIN:
            ln.heading = True
            ln.kind = "heading"
            continued = prev is not None and prev.heading and prev.page == ln.page \
                and ln.y0 - prev.y1 < 8.0
            if not continued:
                section = heading_label(t)
                if section.startswith("Annex"):
                    in_annex = True
            ln.section = section
            ln.para_start = True
            prev = ln
            continue
        new_page = prev is None or prev.page != ln.page
        is_provision = (not in_annex and len(ln.words) >= 2 and ln.words[0] == "Provision"
                        and PROVISION_ID.match(ln.words[1]) is not None and ln.x0 < LEFT_MARGIN)
        is_label = LABEL.match(t) is not None
        is_bullet = ln.words[0] == BULLET
        if is_provision:
            section = f"Provision {ln.words[1]}"
        ln.section = section
        starter = is_provision or is_label or is_bullet
        gap = (not new_page) and (prev.heading or ln.y0 - prev.y1 > PARA_GAP)
        if starter or gap or new_page:
            ln.para_start = True
            goes_on = (new_page and not starter and prev is not None and not prev.heading
                       and abs(ln.x0 - para_indent) < 2.0 and re.search(r"[.:;]$", prev.text) is None)
            if goes_on:
                pass  # a paragraph cut by the page break: it keeps its kind
            elif is_provision:
                para_kind = "provision"
            elif is_label:
                para_kind = "note" if t.startswith("NOTE") else "example"
            elif is_bullet:
                follows = prev is not None and not prev.heading and prev.kind == "provision" \
                    and prev.section == section and not new_page
                para_kind = "provision" if follows else "item"
            else:
                para_kind = "definition" if section == "3.1" else "text"
            if not goes_on:
                para_indent = text_indent(ln, is_label, is_bullet)
        ln.kind = para_kind
        prev = ln
    return lines


def segments(lines: list[Line]):
    """Runs of rows of one section, page and paragraph (headings excluded)."""
    segs = []
    for ln in lines:
        if ln.heading:
            continue
        if segs and not ln.para_start and segs[-1]["section"] == ln.section \
                and segs[-1]["page"] == ln.page:
            segs[-1]["lines"].append(ln)
        else:
            segs.append({"section": ln.section, "page": ln.page, "kind": ln.kind, "lines": [ln]})
    for s in segs:
        s["text"] = " ".join(w for ln in s["lines"] for w in ln.words if w != BULLET)
    return segs


def occurs(gold: str, text: str) -> bool:
    """Gold occurs in text, on word boundaries (punctuation may follow or precede it)."""
    start = 0
    while True:
        i = text.find(gold, start)
        if i < 0:
            return False
        before = text[i - 1] if i > 0 else " "
        j = i + len(gold)
        after = text[j] if j < len(text) else " "
        if (before in PUNCT_BEFORE or not before.isalnum()) and (after in PUNCT_AFTER or not after.isalnum()):
            return True
        start = i + 1


def dump(name: str) -> None:
    for ln in parse(DOCS / name):
        mark = "¶" if ln.para_start else " "
        print(f"p{ln.page:<2} {ln.kind[:4]:4} {ln.section:18} {mark} {ln.text}")


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--dump":
        dump(sys.argv[2])
        return 0
    data = yaml.safe_load((HERE / "questions.yaml").read_text(encoding="utf-8"))
    errors: list[str] = []
    if not str(data.get("description", "")).strip():
        errors.append("no description")
    found, on_disk = documents_errors(HERE, data, titled=True)
    errors += found

    parsed = {f: parse(DOCS / f) for f in on_disk if f.endswith(".pdf")}
    segs = {f: segments(lines) for f, lines in parsed.items()}
    sections = {f: {ln.section for ln in lines} for f, lines in parsed.items()}

    ids: Counter = Counter()
    types: Counter = Counter()
    n_gold = 0
    n_binding = 0
    for q in data.get("questions", []):
        qid = q.get("id", "?")
        ids[qid] += 1
        qtype = q.get("type")
        types[qtype] += 1
        errors += question_errors(q)
        gold = q.get("gold") or []
        seen = set()
        for g in gold:
            n_gold += 1
            doc, sec = g.get("doc"), str(g.get("section"))
            text = " ".join(str(g.get("text", "")).split())
            where = f"{qid} [{sec}] {text[:50]!r}"
            if (doc, text) in seen:
                errors.append(f"{where}: gold listed twice")
            seen.add((doc, text))
            if doc not in parsed:
                errors.append(f"{where}: unknown doc {doc!r}")
                continue
            binding = g.get("binding")
            errors += gold_errors(g, qtype, where)
            if binding is True:
                n_binding += 1
            if sec not in sections[doc]:
                errors.append(f"{where}: no section {sec!r} in {doc}")
                continue
            hits = [s for s in segs[doc] if occurs(text, s["text"])]
            in_sec = [s for s in hits if s["section"] == sec]
            if in_sec:
                kinds = {s["kind"] for s in in_sec}
                if isinstance(binding, bool):
                    ok = kinds & ({"provision", "definition"} if binding
                                  else {"note", "example", "text", "item", "definition"})
                    if not ok:
                        errors.append(f"{where}: binding {binding} but found in a {sorted(kinds)} paragraph")
                continue
            if hits:
                errors.append(f"{where}: found in section(s) {sorted({s['section'] for s in hits})}, not {sec}")
                continue
            sec_text = " ".join(w for ln in parsed[doc] if ln.section == sec and not ln.heading
                                for w in ln.words if w != BULLET)
            all_text = " ".join(w for ln in parsed[doc] for w in ln.words if w != BULLET)
            if occurs(text, sec_text):
                errors.append(f"{where}: crosses a paragraph, item, label or page break")
            elif occurs(text, all_text):
                errors.append(f"{where}: crosses a section or heading")
            else:
                errors.append(f"{where}: not found")

    errors += id_errors(data.get("questions", []))

    print(f"{sum(ids.values())} questions, {n_gold} gold texts ({n_binding} binding), "
          f"{len(parsed)} document(s)")
    print("by type: " + ", ".join(f"{t} {n}" for t, n in sorted(types.items())))
    for f, lines in parsed.items():
        secs = list(dict.fromkeys(ln.section for ln in lines))
        provs = [s for s in secs if s.startswith("Provision ")]
        pages = max(ln.page for ln in lines)
        print(f"{f}: {pages} pages, {len(secs)} sections ({len(provs)} provisions), {len(lines)} rows")
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
