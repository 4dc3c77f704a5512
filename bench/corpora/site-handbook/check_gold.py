"""Check the gold of the site-handbook corpus against the Markdown pages under docs/.

Usage: python check_gold.py            (from any directory; exits 1 on any error)
       python check_gold.py --dump     (also print every block with its label, for reading)

Independent of the engine: it reads the Eleventy/Liquid Markdown source itself with the standard
library (regular expressions, line by line), the way the site generator's Markdown would print it.

What it does:

* strips the YAML front matter (the lines between the opening `---` and the next `---`) and keeps its
  `title:` value: the site's layout prints it as the page's <h1>, so text above the page's first
  Markdown heading is labelled with that title (e.g. "Security incidents");
* removes HTML comments (`<!-- prettier-ignore -->`) and the block-level Liquid tags that print no text
  of the page: `{% include ... %}` (also when it runs over several lines, as the step-indicator
  include of travel-guide-3-travel.md does), `{% alert %}` / `{% endalert %}` (the text between them is
  kept), `{% comment %}...{% endcomment %}` with what it encloses, `{% raw %}` / `{% endraw %}`; inline
  Liquid tags (`{% page "..." %}`, `{% slack_channel "..." %}`, `{% image ... %}`) stay in the text as
  the file has them;
* reads fenced code blocks (```) as text without looking for headings, quotes or list markers in them;
* drops the blockquote marker `>` at the start of a line, so a quoted passage (the OGC quotation in
  leaving-tts.md, with its own `###`/`####` headings, or the example request in equipment.md) is read
  like the rest of the page: its headings are headings;
* takes ATX headings (`#` to `######` followed by a space, up to three spaces of indent) as section
  labels, printed as the reader sees them: link markup `[text](url)` reduced to its text, emphasis
  markers and backslash escapes removed, a closing `#` run dropped ("## Reporting [Phishing](...)"
  gives "Reporting Phishing"; "...gathering\\*?" gives "...gathering*?"). There are no setext headings
  in these files (the only `---` lines are front-matter fences and one thematic break);
* splits the text under each heading into blocks: a paragraph (consecutive non-blank lines), each list
  item (`-`, `*`, `+` or `1.` at any indent, with its continuation lines; a nested item is a block of
  its own), each table cell (`|`-rows; the `| --- |` separator rows skipped). A gold text must lie
  inside one block, so it cannot span two list items, two paragraphs, two cells, or a heading and its
  text;
* checks that each gold text occurs inside one block carrying the named label in the named file, after
  both are normalised the same way: whitespace collapsed, Markdown backslash escapes resolved (`\\*`
  -> `*`, `\\-` -> `-`), emphasis markers removed (`*`/`_` runs at a word edge, so `**Lock your
  computer before leaving it.**` reads "Lock your computer before leaving it." while `step_indicator`
  keeps its underscore). Nothing else is normalised: link markup, inline Liquid tags, HTML, quotes
  and dashes are compared as they stand;
* checks the file itself through bench/corpus_gold.py: ids unique, types valid, gold texts 6-40 words,
  two-part golds carry part 1 and part 2 (others no part), out-of-scope iff no gold, broad questions at
  least two golds, binding is true/false, every file under docs/ listed in `documents` (and every
  listed file present), source_type valid, corpus name equals the folder name.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
sys.path.insert(0, str(HERE.parent.parent))  # bench/: the rules every corpus's file keeps
from corpus_gold import Tally, opened, placement_errors, read_each, report  # noqa: E402

FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*\n", re.S)
TITLE = re.compile(r"^title:[ \t]*(.*?)[ \t]*$", re.M)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
LIQUID_COMMENT = re.compile(r"\{%-?\s*comment\s*-?%\}.*?\{%-?\s*endcomment\s*-?%\}", re.S)
LIQUID_BLOCK_TAG = re.compile(r"\{%-?\s*(?:include|alert|endalert|raw|endraw)\b.*?-?%\}", re.S)
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
FENCE = re.compile(r"^\s*(```|~~~)")
QUOTE = re.compile(r"^\s*>[ ]?")
LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])[ \t]+(.*)$")
TABLE_ROW = re.compile(r"^\s*\|")
TABLE_RULE = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
EMPHASIS = re.compile(r"(?<![\w*])[*_]+|[*_]+(?![\w*])")


def norm(text: str) -> str:
    """Whitespace collapsed, backslash escapes resolved, emphasis markers at word edges removed."""
    parts = ESCAPE.split(text)  # escaped characters (odd positions) are literal, never emphasis
    text = "".join(p if i % 2 else EMPHASIS.sub("", p) for i, p in enumerate(parts))
    return " ".join(text.split())


def heading_label(raw: str) -> str:
    """A heading as the page prints it: link text without its URL, no emphasis markers or escapes."""
    return norm(LINK.sub(r"\1", raw))


def split_front_matter(source: str) -> tuple[str, str]:
    m = FRONT_MATTER.match(source)
    if not m:
        raise ValueError("no YAML front matter")
    t = TITLE.search(m.group(1))
    if not t:
        raise ValueError("front matter without title")
    return t.group(1).strip().strip("\"'"), source[m.end():]


def blocks_of(path: Path) -> list[tuple[str, str]]:
    """(label, normalised text) for every paragraph, list item and table cell, in document order."""
    title, body = split_front_matter(path.read_text(encoding="utf-8"))
    body = HTML_COMMENT.sub("", body)
    body = LIQUID_COMMENT.sub("\n", body)
    body = LIQUID_BLOCK_TAG.sub("\n", body)

    out: list[tuple[str, str]] = []
    label = norm(title)
    current: list[str] = []
    in_fence = False

    def flush() -> None:
        if current:
            text = norm(" ".join(current))
            if text:
                out.append((label, text))
            current.clear()

    for line in body.split("\n"):
        if in_fence:
            current.append(line)
            if FENCE.match(line):
                in_fence = False
            continue
        line = QUOTE.sub("", line)
        while QUOTE.match(line):  # nested quotes
            line = QUOTE.sub("", line)
        if FENCE.match(line):
            in_fence = True
            current.append(line)
            continue
        if not line.strip():
            flush()
            continue
        h = HEADING.match(line)
        if h:
            flush()
            label = heading_label(h.group(2))
            continue
        if TABLE_ROW.match(line):
            flush()
            if TABLE_RULE.match(line):
                continue
            for cell in line.strip().strip("|").split("|"):
                if norm(cell):
                    out.append((label, norm(cell)))
            continue
        item = LIST_ITEM.match(line)
        if item:
            flush()
            current.append(item.group(2))
            continue
        current.append(line)
    flush()
    return out


def main() -> int:
    data, errors, on_disk = opened(HERE)

    parsed = read_each(DOCS, on_disk, blocks_of, errors, (ValueError, UnicodeDecodeError))

    tally = Tally(data, parsed, lambda where, doc, sec, text, _gold: placement_errors(
        where, sec, norm(text), parsed[doc], spans="list items, paragraphs or table cells"))
    errors += tally.errors
    print(tally.summary(len(parsed)))
    for f, bl in parsed.items():
        secs = list(dict.fromkeys(lab for lab, _ in bl))
        print(f"{f}: {len(bl)} text blocks, {len(secs)} labelled sections, "
              f"asked about in {tally.per_doc[f]} questions")
    if "--dump" in sys.argv[1:]:
        for f, bl in parsed.items():
            print(f"\n===== {f}")
            for lab, text in bl:
                print(f"[{lab}] {text}")
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
