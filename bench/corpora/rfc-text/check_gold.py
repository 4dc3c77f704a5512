"""Check the gold of the rfc-text corpus against the RFC Editor plain-text files under docs/.

Usage: python check_gold.py            (from any directory; exits 1 on any error)

What it does:

* reads each docs/*.txt, splits it into pages at the form feeds, drops the running page
  header ("RFC 6749   OAuth 2.0   October 2012") and footer ("Hardt   Standards Track   [Page 12]");
* splits the body into sections at the headings set at column 0: "N." / "N.N." ... followed by two
  spaces and a title, "Appendix A.  Title", "A.1.  Title"; any other text at column 0 (Abstract,
  Status of This Memo, Copyright Notice, Acknowledgements, Author's Address, the header block) ends
  the section before it and is kept under its own name. A heading whose title wraps onto an indented
  second line (RFC 6749 10.16) is read as one heading. The label is the number without its final dot
  ("4.1.2.1", "A.4", "Appendix B");
* checks that each gold text occurs, whitespace-normalised, in the named section of the named file,
  on a single page (not across a footer/header), not across a blank line (paragraph) and not across
  the start of a second list item ("o  ", "(A)  ", or a line indented less than the one before it);
* checks the file itself: ids unique, types valid, gold texts 6-40 words, two-part golds carry
  part 1 and part 2 (others no part), out-of-scope iff no gold, binding is true/false, every file
  under docs/ listed in `documents` and every listed file present.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
sys.path.insert(0, str(HERE.parent.parent))  # bench/: the rules every corpus's file keeps
from corpus_gold import documents_errors, gold_errors, id_errors, question_errors, report  # noqa: E402

FOOTER = re.compile(r"^\S.*\s\[Page \d+\]\s*$")
HEADER = re.compile(r"^RFC \d{4}  .*\S\s*$")
NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.  \S")
APPENDIX = re.compile(r"^Appendix ([A-Z])\.  \S")
APPENDIX_SUB = re.compile(r"^([A-Z](?:\.\d+)+)\.  \S")
BULLET = re.compile(r"^\s+(?:o|\([A-Za-z0-9]+\))  \S")


def heading_label(line: str) -> str | None:
    if not line or line[0].isspace():
        return None
    m = NUMBERED.match(line)
    if m:
        return m.group(1)
    m = APPENDIX.match(line)
    if m:
        return f"Appendix {m.group(1)}"
    m = APPENDIX_SUB.match(line)
    if m:
        return m.group(1)
    return line.strip()  # unnumbered heading or front matter at column 0


def parse(path: Path):
    """Return a list of body lines: (section, page, text); blank lines kept with text ''."""
    out = []
    section = "(front)"
    pages = path.read_text(encoding="ascii").split("\f")
    prev_heading = False
    for pno, page in enumerate(pages, start=1):
        for line in page.split("\n"):
            line = line.rstrip("\r")
            if FOOTER.match(line) or HEADER.match(line):
                prev_heading = False
                continue
            label = heading_label(line)
            if label is not None:
                section = label
                prev_heading = True
                continue
            if prev_heading and line.strip() and line[0].isspace() and NUMBERED.match(section + ".  x"):
                # wrapped heading title ("10.16.  Misuse of ... in Implicit" / "        Flow")
                continue
            prev_heading = False
            out.append((section, pno, line))
    return out


def segments(lines):
    """Group consecutive lines with the same (section, page)."""
    segs = []
    for sec, pno, text in lines:
        if segs and segs[-1][0] == sec and segs[-1][1] == pno:
            segs[-1][2].append(text)
        else:
            segs.append((sec, pno, [text]))
    return segs


def tokens_of(seg_lines):
    toks = []
    for i, text in enumerate(seg_lines):
        for w in text.split():
            toks.append((w, i))
    return toks


def find(gold_words, toks):
    """Start indexes where gold_words occur in toks (first/last gold word may be a partial word)."""
    n = len(gold_words)
    hits = []
    for s in range(len(toks) - n + 1):
        ok = True
        for k, gw in enumerate(gold_words):
            w = toks[s + k][0]
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


def span_problem(seg_lines, first_line, last_line):
    for i in range(first_line + 1, last_line + 1):
        text = seg_lines[i]
        if not text.strip():
            return "crosses a blank line (two paragraphs or items)"
        if BULLET.match(text):
            return "crosses into a second list item"
        prev = seg_lines[i - 1]
        indent = len(text) - len(text.lstrip())
        prev_indent = len(prev) - len(prev.lstrip())
        if indent < prev_indent:
            return "crosses into a second list item (outdented line)"
    return None


def main() -> int:
    data = yaml.safe_load((HERE / "questions.yaml").read_text(encoding="utf-8"))
    errors: list[str] = []

    found, on_disk = documents_errors(HERE, data)
    errors += found

    parsed = {f: parse(DOCS / f) for f in on_disk if f.endswith(".txt")}
    segs = {f: segments(lines) for f, lines in parsed.items()}
    sections = {f: {s for s, _, _ in lines} for f, lines in parsed.items()}

    ids = Counter()
    types = Counter()
    n_gold = 0
    for q in data.get("questions", []):
        qid = q.get("id", "?")
        ids[qid] += 1
        qtype = q.get("type")
        types[qtype] += 1
        errors += question_errors(q)
        gold = q.get("gold") or []
        for g in gold:
            n_gold += 1
            doc, sec, text = g.get("doc"), str(g.get("section")), str(g.get("text", ""))
            where = f"{qid} [{doc} {sec}] {text[:50]!r}"
            if doc not in parsed:
                errors.append(f"{where}: unknown doc")
                continue
            errors += gold_errors(g, qtype, where)
            if sec not in sections[doc]:
                errors.append(f"{where}: no section {sec!r} in {doc}")
                continue
            words = text.split()
            found_ok = False
            problems = []
            for s_sec, pno, seg_lines in segs[doc]:
                if s_sec != sec:
                    continue
                toks = tokens_of(seg_lines)
                for start in find(words, toks):
                    first_line = toks[start][1]
                    last_line = toks[start + len(words) - 1][1]
                    prob = span_problem(seg_lines, first_line, last_line)
                    if prob:
                        problems.append(f"page {pno}: {prob}")
                    else:
                        found_ok = True
            if not found_ok:
                if problems:
                    errors.append(f"{where}: found but {'; '.join(problems)}")
                else:
                    # is it there at all (other section, or across a page break)?
                    others = sorted({s for s, _, sl in segs[doc] if find(words, tokens_of(sl))})
                    whole = " ".join(t for s, _, t in parsed[doc] if s == sec).split()
                    across = bool(find(words, [(w, 0) for w in whole]))
                    hint = (f"found in section(s) {others}" if others else
                            "crosses a page break" if across else "not found")
                    errors.append(f"{where}: not in section {sec}: {hint}")

    errors += id_errors(data.get("questions", []))

    print(f"{sum(ids.values())} questions, {n_gold} gold texts, {len(parsed)} documents")
    print("by type: " + ", ".join(f"{t} {n}" for t, n in sorted(types.items())))
    for f, lines in parsed.items():
        secs = [s for s in dict.fromkeys(s for s, _, _ in lines)]
        footers = sum(1 for ln in (DOCS / f).read_text(encoding="ascii").split("\n") if FOOTER.match(ln))
        print(f"{f}: {footers} pages, {len(secs)} section blocks")
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
