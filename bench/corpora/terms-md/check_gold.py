"""Check the gold of the terms-md corpus against the Markdown files under docs/.

Usage: python check_gold.py            (from any directory; exits 1 on any error)
       python check_gold.py --dump F   (print each text block of docs/F with its section label)

Independent of the engine: it parses the Markdown itself with markdown-it-py (CommonMark, plus the GFM
table rule), or, where markdown-it-py cannot be imported, with a small line-based reader of its own that
follows the same block rules for these files (ATX headings, list items, tables, fences, HTML blocks).

What it does:

* strips the Jekyll/Hugo front matter (the leading "---" ... "---" block) before parsing; CommonMark does not
  know front matter and would otherwise read "title: ...\nversions: ...\n---" as a setext heading. The
  front matter's `title:` is kept as the label of any text above the first heading (the page's H1 as the
  docs site renders it);
* splits the visible text into blocks: each paragraph (inside list items and block quotes too), each table
  cell, each heading. A gold text must lie inside one block, so it cannot span two list items, two
  paragraphs, a heading and its text, or two table cells. Inline markup is dropped to its text
  (**bold**, _italic_, `code`, link text without its URL, raw inline HTML such as <a name="..."></a>
  dropped); soft line breaks count as spaces. HTML comments (markdownlint pragmas), fenced code and
  Liquid tags are left as they stand (comments and fences are not text blocks; Liquid tags are plain text);
* labels each block with the nearest ATX heading above it, its text as the file shows it without the #'s
  ("B. Account Terms", "3. Account Requirements", "1. Account Controls." with the corporate terms' trailing
  dot, "What are your cookie choices and controls?"). Emphasised run-in lines such as "_Use for
  Development and Testing_" or "**Payment Based on Plan**" are not headings and do not change the label;
* checks that each gold text occurs, whitespace-normalised (nothing else is normalised: straight and curly
  quotes, dashes and "..." are compared as they are), inside one block of the named file that carries the
  named label;
* checks the file itself with bench/corpus_gold.py: ids unique, types valid, gold texts 6-40 words,
  two-part golds carry part 1 and part 2, out-of-scope iff no gold, broad questions at least two golds,
  binding true/false, every file under docs/ listed in `documents` with a source_type and title, corpus name
  equals the folder name.
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
from corpus_gold import Tally, opened, placement_errors, report  # noqa: E402

try:
    from markdown_it import MarkdownIt
except ImportError:  # pragma: no cover - the fallback reader below is used instead
    MarkdownIt = None


def norm(text: str) -> str:
    return " ".join(text.split())


def split_front_matter(source: str) -> tuple[dict, str]:
    """(front matter as a dict, the Markdown body). Only a block opened by '---' on line 1 counts."""
    if not source.startswith("---\n"):
        return {}, source
    end = source.find("\n---\n", 4)
    if end < 0:
        return {}, source
    meta = yaml.safe_load(source[4:end]) or {}
    return meta, source[end + 5:]


# --- markdown-it-py reader -------------------------------------------------------------------------

def inline_text(token) -> str:
    """Visible text of an inline token: markup dropped, link text kept, raw inline HTML dropped."""
    out = []
    for c in token.children or []:
        if c.type in ("text", "code_inline"):
            out.append(c.content)
        elif c.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif c.type == "image":
            out.append(c.content)
        # html_inline, *_open/*_close: no text of their own
    return norm("".join(out))


def blocks_markdown_it(body: str, title: str) -> list[tuple[str, str]]:
    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(body)
    label = title
    out: list[tuple[str, str]] = []
    for i, tok in enumerate(tokens):
        if tok.type != "inline":
            continue
        text = inline_text(tok)
        opener = tokens[i - 1].type if i else ""
        if opener == "heading_open":
            label = text
            out.append((label, text))
        elif text:
            out.append((label, text))  # paragraph, table cell (th/td) or list-item text
    return out


# --- fallback line reader (no markdown-it-py) -------------------------------------------------------

LIST_ITEM = re.compile(r"^\s*(?:[*+-]|\d+[.)])\s+")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def strip_inline(text: str) -> str:
    text = re.sub(r"<!--.*?-->", "", text)
    text = re.sub(r"<((?:https?|mailto):[^>\s]+)>", r"\1", text)  # autolinks: keep the address
    text = re.sub(r"</?[A-Za-z][^>]*>", "", text)  # inline HTML such as <a name="x"></a>
    # links and images: keep the text; a destination may hold balanced brackets: (...(fr).pdf)
    text = re.sub(r"!?\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*\)", r"\1", text)
    text = re.sub(r"(\*\*|__|\*|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|`)", "", text)
    return norm(text)


def blocks_fallback(body: str, title: str) -> list[tuple[str, str]]:
    label, out, para = title, [], []
    in_fence = in_comment = in_quote = False

    def flush():
        if para:
            t = strip_inline(" ".join(para))
            if t:
                out.append((label, t))
            para.clear()

    for raw in body.split("\n"):
        line = raw.rstrip()
        if in_fence:
            in_fence = not line.lstrip().startswith("```")
            continue
        if in_comment:
            in_comment = "-->" not in line
            continue
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            in_fence = True
            continue
        if stripped.startswith("<!--"):
            flush()
            in_comment = "-->" not in stripped
            continue
        m = HEADING.match(line)
        if m:
            flush()
            label = strip_inline(m.group(2))
            out.append((label, label))
            continue
        if not stripped or re.fullmatch(r"-{3,}|\*{3,}", stripped):
            flush()
            in_quote = False
            continue
        if stripped.startswith("|"):
            flush()
            if not re.fullmatch(r"\|?[\s:|-]+\|?", stripped):
                for cell in stripped.strip("|").split("|"):
                    if strip_inline(cell):
                        out.append((label, strip_inline(cell)))
            continue
        quoted = stripped.startswith(">")
        if quoted != in_quote:
            flush()  # a block quote (GitHub alert, or an example inside a list item) is a block of its own
            in_quote = quoted
        if quoted:
            stripped = stripped.lstrip("> ").strip()
        if LIST_ITEM.match(stripped):
            flush()
            stripped = LIST_ITEM.sub("", stripped, count=1)
        para.append(stripped)
    flush()
    return out


def blocks_of(path: Path) -> list[tuple[str, str]]:
    meta, body = split_front_matter(path.read_text(encoding="utf-8"))
    title = norm(str(meta.get("title", "")))
    reader = blocks_markdown_it if MarkdownIt is not None else blocks_fallback
    return reader(body, title)


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--dump":
        for lab, text in blocks_of(DOCS / sys.argv[2]):
            print(f"[{lab}] {text}")
        return 0

    data, errors, on_disk = opened(HERE)

    parsed = {f: blocks_of(DOCS / f) for f in on_disk}
    raw = {f: norm((DOCS / f).read_text(encoding="utf-8")) for f in on_disk}
    across_markup: list[str] = []  # golds that stand in the rendered text only (they cross **, _, [..](..))

    def place(where: str, doc: str, sec: str, text: str, _gold: dict) -> list[str]:
        placed = placement_errors(where, sec, norm(text), parsed[doc], "items, paragraphs, cells or a heading")
        if not placed and norm(text) not in raw[doc]:
            across_markup.append(where)
        return placed

    tally = Tally(data, parsed, place)
    errors += tally.errors
    per_doc = tally.per_doc
    reader = "markdown-it-py" if MarkdownIt is not None else "fallback line reader"
    print(tally.summary(len(parsed)))
    print(f"read with {reader}")
    print(f"{len(across_markup)} gold texts cross inline markup (they match the rendered text, not the raw bytes)")
    for f, bl in parsed.items():
        secs = list(dict.fromkeys(lab for lab, _ in bl))
        dup = sorted(lab for lab, n in Counter(lab for lab, t in bl if lab == t).items() if n > 1)
        extra = f", repeated headings {dup}" if dup else ""
        print(f"{f}: {len(bl)} text blocks, {len(secs)} headings, asked about in {per_doc[f]} questions{extra}")
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
