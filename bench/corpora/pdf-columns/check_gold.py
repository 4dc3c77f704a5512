"""Check the gold of the pdf-columns corpus against the two-column Official Journal PDFs under docs/.

Usage:
    python check_gold.py                 check questions.yaml (exits 1 on any error)
    python check_gold.py --dump FILE     print FILE's text in reading order, one line per printed
                                         line, prefixed with page, column, section and line kind

Independent of the engine: it reads the PDFs with poppler's `pdftotext -bbox` (every word with its
box) and rebuilds the reading order itself:

* words are grouped into printed rows by their baseline; a row whose words run across the gutter
  (the middle of the page) with no gap of 12 pt or more there is full width (the title block on the
  first page, some annex tables); every other row is split into its left-column and right-column
  parts. Full-width rows cut the page into bands; inside a band the left column is read top to
  bottom, then the right column. A page where at least half the rows are full width (the one-column
  annex pages) is read as one column;
* the running head (top 70 pt of the page: date, "EN", "Official Journal of the European Union",
  "L 304/64") is dropped;
* footnotes (lines set smaller than the body, below the body text of their column, starting with
  "(1)" ...) are kept apart as kind "footnote" under the section "footnotes";
* sections: a line "Article N" starts section "Article N"; "ANNEX I" starts "Annex I"; in the
  preamble, after "Whereas:", a line opening with "(N)" starts "Recital N"; "HAVE ADOPTED THIS
  DIRECTIVE:" ends the recitals (section "(enacting formula)"); lines before are "(front)";
* a paragraph ends at a vertical gap larger than half a line, at a heading line, and a new list item
  starts at a line opening with "(a)", "(i)", "(12)", "1." or a dash.

A gold text must occur, whitespace-normalised, in the named section of the named file, inside one
run of consecutive lines of one column on one page (so not across a column or page break), not across
a paragraph gap, a heading or the start of a second list item. Words are compared as printed, so a
gold text cannot cross a word broken at a line end ("informa-" / "tion", or a soft hyphen U+00AD).

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
PAGE_RE = re.compile(r'<page width="([\d.]+)" height="([\d.]+)">')

HEAD_LIMIT = 70.0          # running head above this y (pt)
GUTTER_GAP = 12.0          # a gap this wide at the middle of the page separates the two columns
ARTICLE = re.compile(r"^Article (\d+[a-z]?)$")
ANNEX = re.compile(r"^ANNEX ([IVX]+)$")
RECITAL = re.compile(r"^\((\d+)\)(\s|$)")
ITEM = re.compile(r"^(\((?:[a-z]{1,2}|[ivx]+|\d+)\)|\d+\.|—|–|-)(\s|$)")


@dataclass
class Line:
    page: int
    col: str                  # L, R or F (full width)
    y0: float
    y1: float
    x0: float
    x1: float = 0.0
    words: list = field(default_factory=list)
    height: float = 0.0
    kind: str = "body"        # body, heading, footnote
    section: str = "(front)"
    para_start: bool = False  # first line of a paragraph or list item

    @property
    def text(self) -> str:
        return " ".join(self.words)


def read_words(pdf: Path):
    out = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True,
                         check=True).stdout
    pages = []
    for chunk in out.split("<page ")[1:]:
        m = PAGE_RE.match("<page " + chunk)
        width = float(m.group(1))
        words = []
        for w in WORD_RE.finditer(chunk):
            x0, y0, x1, y1 = (float(w.group(i)) for i in range(1, 5))
            words.append((x0, y0, x1, y1, html.unescape(w.group(5))))
        pages.append((width, words))
    return pages


def rows_of(words):
    """Group words into printed rows by baseline (yMax within 2 pt)."""
    rows = []
    for w in sorted(words, key=lambda w: (w[3], w[0])):
        if rows and abs(rows[-1][-1][3] - w[3]) <= 2.0:
            rows[-1].append(w)
        else:
            rows.append([w])
    return [sorted(r, key=lambda w: w[0]) for r in rows]


def page_lines(pno: int, width: float, words) -> list[Line]:
    mid = width / 2
    body = [w for w in words if w[1] >= HEAD_LIMIT]
    bands: list[list[Line]] = []      # each band: list of lines in reading order
    cur_left: list[Line] = []
    cur_right: list[Line] = []

    def make(col, ws):
        ws = sorted(ws, key=lambda w: w[0])
        ln = Line(pno, col, min(w[1] for w in ws), max(w[3] for w in ws), ws[0][0],
                  max(w[2] for w in ws))
        ln.words = [w[4] for w in ws]
        ln.height = statistics.median(w[3] - w[1] for w in ws)
        return ln

    def flush():
        nonlocal cur_left, cur_right
        if cur_left or cur_right:
            bands.append(cur_left + cur_right)
        cur_left, cur_right = [], []

    rows = rows_of(body)
    kinds = []
    for row in rows:
        left = [w for w in row if w[2] <= mid + 2]
        right = [w for w in row if w[0] >= mid - 2]
        crossing = [w for w in row if w[0] < mid - 2 and w[2] > mid + 2]
        full = bool(crossing)
        if not full and left and right:
            gap = min(w[0] for w in right) - max(w[2] for w in left)
            full = gap < GUTTER_GAP
        kinds.append((full, left, right))
    # a page set in one column (the annexes) is read as one column throughout
    single = sum(1 for k in kinds if k[0]) >= 0.5 * max(1, len(kinds))
    for row, (full, left, right) in zip(rows, kinds, strict=True):
        if full or single:
            flush()
            bands.append([make("F", row)])
            continue
        if left:
            cur_left.append(make("L", left))
        if right:
            cur_right.append(make("R", right))
    flush()
    return [ln for band in bands for ln in band]


def mark_footnotes(lines: list[Line], body_h: float) -> None:
    """Lines set smaller than the body, at the foot of their column, opening with (n) or n."""
    for col in ("L", "R", "F"):
        col_lines = [ln for ln in lines if ln.col == col]
        # walk up from the bottom while lines are small
        start = None
        for i in range(len(col_lines) - 1, -1, -1):
            ln = col_lines[i]
            if ln.height < body_h * 0.93:
                if re.match(r"^\(\s*\d+\s*\)|^\d+$", ln.text):
                    start = i
                continue
            break
        if start is not None:
            for ln in col_lines[start:]:
                ln.kind = "footnote"


def parse(pdf: Path) -> list[Line]:
    pages = read_words(pdf)
    allh = Counter(round(w[3] - w[1], 1) for _, ws in pages for w in ws)
    body_h = allh.most_common(1)[0][0]
    lines: list[Line] = []
    for pno, (width, words) in enumerate(pages, start=1):
        pl = page_lines(pno, width, words)
        page_h = statistics.median(ln.height for ln in pl) if pl else body_h
        mark_footnotes(pl, min(body_h, page_h))
        lines.extend(pl)

    section = "(front)"
    in_recitals = False
    prev = None
    for ln in lines:
        t = ln.text.strip()
        if ln.kind == "footnote":
            ln.section = "footnotes"
            ln.para_start = RECITAL.match(t) is not None or prev is None or prev.kind != "footnote"
            prev = ln
            continue
        m = ARTICLE.match(t)
        a = ANNEX.match(t)
        if m and not section.startswith("Annex"):
            section, in_recitals = f"Article {m.group(1)}", False
            ln.kind = "heading"
        elif a:
            section, in_recitals = f"Annex {a.group(1)}", False
            ln.kind = "heading"
        elif t == "Whereas:":
            in_recitals = True
            ln.kind = "heading"
        elif t.startswith("HAVE ADOPTED THIS DIRECTIVE"):
            section, in_recitals = "(enacting formula)", False
            ln.kind = "heading"
        elif re.match(r"^(CHAPTER|PART) [A-Z\d]+$", t) or (t.isupper() and len(re.findall(r"[A-Z]{3,}", t)) >= 2):
            ln.kind = "heading"
        elif in_recitals:
            r = RECITAL.match(t)
            if r and ln.x0 < (200 if ln.col == "L" else 330):
                section = f"Recital {r.group(1)}"
        ln.section = section
        # paragraph starts
        if prev is None or prev.page != ln.page or prev.col != ln.col or prev.kind != ln.kind:
            ln.para_start = True
        elif prev.kind == "heading" or ln.kind == "heading":
            ln.para_start = True
        elif ln.y0 - prev.y1 > 0.5 * ln.height:
            ln.para_start = True
        elif ITEM.match(t) or RECITAL.match(t):
            ln.para_start = True
        prev = ln
    # the title under "Article N" (one or two lines, set centred in the column) is a heading too
    bounds = {}
    for ln in lines:
        if ln.col in "LR" and ln.kind == "body":
            lo, hi = bounds.get((ln.page, ln.col), (ln.x0, ln.x1))
            bounds[(ln.page, ln.col)] = (min(lo, ln.x0), max(hi, ln.x1))
    for i, ln in enumerate(lines):
        if ln.kind == "heading" and ARTICLE.match(ln.text.strip()) and ln.section.startswith("Article"):
            j = i + 1
            while j < len(lines) and lines[j].kind == "body" and lines[j].page == ln.page \
                    and lines[j].col == ln.col and _centred(lines[j], bounds):
                lines[j].kind = "heading"
                lines[j].para_start = True
                j += 1
            if j < len(lines):
                lines[j].para_start = True
    return lines


def _centred(line: Line, bounds) -> bool:
    """A line set centred in its column (not flush left, both margins about equal)."""
    lo, hi = bounds.get((line.page, line.col), (line.x0, line.x1))
    left, right = line.x0 - lo, hi - line.x1
    return left > 3 and right > 3 and abs(left - right) < 10


def segments(lines: list[Line]):
    """Runs of lines of one section, page and column with no paragraph/item start inside."""
    segs = []
    for ln in lines:
        if ln.kind == "heading":
            continue
        if segs and not ln.para_start and segs[-1][0] == ln.section and segs[-1][1] == ln.page \
                and segs[-1][2] == ln.col:
            segs[-1][3].append(ln)
        else:
            segs.append((ln.section, ln.page, ln.col, [ln]))
    return segs


def find(gold_words, toks):
    n = len(gold_words)
    hits = []
    for s in range(len(toks) - n + 1):
        ok = True
        for k, gw in enumerate(gold_words):
            w = toks[s + k]
            if k == 0 and n > 1:
                good = w.endswith(gw)
            elif k == n - 1 and n > 1:
                good = w.startswith(gw)
            else:
                good = w == gw
            if not good:
                ok = False
                break
        if ok:
            hits.append(s)
    return hits


def dump(name: str) -> None:
    for ln in parse(DOCS / name):
        mark = "¶" if ln.para_start else " "
        print(f"p{ln.page:<2} {ln.col} {ln.kind[:4]:4} {ln.section:18} {mark} {ln.text}")


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--dump":
        dump(sys.argv[2])
        return 0
    data = yaml.safe_load((HERE / "questions.yaml").read_text(encoding="utf-8"))
    errors: list[str] = []
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
            doc, sec, text = g.get("doc"), str(g.get("section")), str(g.get("text", ""))
            where = f"{qid} [{doc} {sec}] {text[:50]!r}"
            if (doc, text) in seen:
                errors.append(f"{where}: gold listed twice")
            seen.add((doc, text))
            if doc not in parsed:
                errors.append(f"{where}: unknown doc")
                continue
            errors += gold_errors(g, qtype, where)
            if g.get("binding") is True:
                n_binding += 1
            if sec not in sections[doc]:
                errors.append(f"{where}: no section {sec!r} in {doc}")
                continue
            words = text.split()
            hits = [(s_sec, pno, col) for s_sec, pno, col, lns in segs[doc]
                    if find(words, [w for ln in lns for w in ln.words])]
            if any(h[0] == sec for h in hits):
                continue
            if hits:
                errors.append(f"{where}: found in section(s) {sorted({h[0] for h in hits})}, not {sec}")
                continue
            # diagnose: in the section's text at all (across a break)?
            sec_words = [w for ln in parsed[doc] if ln.section == sec and ln.kind != "heading"
                         for w in ln.words]
            all_words = [w for ln in parsed[doc] for w in ln.words]
            if find(words, sec_words):
                errors.append(f"{where}: crosses a paragraph, item, column or page break")
            elif find(words, all_words):
                errors.append(f"{where}: crosses a section or heading")
            else:
                errors.append(f"{where}: not found")

    errors += id_errors(data.get("questions", []))

    print(f"{sum(ids.values())} questions, {n_gold} gold texts ({n_binding} binding), "
          f"{len(parsed)} documents")
    print("by type: " + ", ".join(f"{t} {n}" for t, n in sorted(types.items())))
    for f, lines in parsed.items():
        secs = list(dict.fromkeys(ln.section for ln in lines))
        pages = max(ln.page for ln in lines)
        foot = sum(1 for ln in lines if ln.kind == "footnote")
        print(f"{f}: {pages} pages, {len(secs)} sections, {len(lines)} lines, {foot} footnote lines")
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
