"""Mechanical check of questions.yaml against the Markdown files in docs/.

Each gold text must occur, after the page text is rendered roughly as a browser shows it (reference and
inline links reduced to their text, emphasis and backticks removed, HTML entities decoded, whitespace
collapsed), inside the block of the heading named by `section` (from that heading to the next heading of
any level). A `section` that is a control id matches a heading whose text is the id or starts with
"id " ("### OSPS-AC-01 - Use MFA ..."); any other section must equal the rendered heading text.
Also checked: ids unique, types valid, 6-40 words, parts on two-part golds, every docs/ file listed,
out-of-scope iff no gold.  Run: python check_gold.py  (needs PyYAML)
"""
import collections
import html
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {"paraphrase", "broad", "two-part", "conflict", "out-of-scope", "provision"}
SOURCE_TYPES = {"statute", "regulation", "guidance", "policy", "standard", "contract"}


def render(s):
    s = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", s)          # [text][ref]
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)           # [text](url)
    s = s.replace("**", "").replace("`", "")
    s = re.sub(r"(?<![\w*])[*_]([^*_\n]+)[*_](?![\w*])", r"\1", s)  # *em* / _em_
    s = html.unescape(s)
    return " ".join(s.split())


def norm(s):
    return " ".join(html.unescape(s).split())


def sections(path):
    """list of (heading label, rendered block text) for every Markdown heading."""
    out, label, buf, fence = [], "(top)", [], False
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m:
            out.append((label, render("\n".join(buf))))
            label, buf = render(m.group(2)), []
        else:
            buf.append(line)
    out.append((label, render("\n".join(buf))))
    return out


def heading_matches(label, section):
    return label == section or label.startswith(section + " ")


def main():
    q = yaml.safe_load(open(os.path.join(HERE, "questions.yaml"), encoding="utf-8"))
    fails = []
    docs_dir = os.path.join(HERE, "docs")
    listed = {d["file"] for d in q["documents"]}
    on_disk = {os.path.relpath(os.path.join(r, f), docs_dir)
               for r, _, fs in os.walk(docs_dir) for f in fs}
    if listed != on_disk:
        fails.append(f"documents listed {sorted(listed)} != files {sorted(on_disk)}")
    for d in q["documents"]:
        if d.get("source_type") not in SOURCE_TYPES or not d.get("title"):
            fails.append(f"document {d['file']}: bad source_type/title")
    if q.get("corpus") != os.path.basename(HERE):
        fails.append("corpus name != folder name")
    secs = {f: sections(os.path.join(docs_dir, f)) for f in on_disk}
    whole = {f: render(open(os.path.join(docs_dir, f), encoding="utf-8").read()) for f in on_disk}
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
            blocks = [b for lab, b in secs[g["doc"]] if heading_matches(lab, str(g["section"]))]
            if not blocks:
                fails.append(f"{x['id']}: no heading for section {g['section']!r}")
            elif not any(text in b for b in blocks):
                where = "elsewhere in the file" if text in whole[g["doc"]] else "nowhere"
                fails.append(f"{x['id']}: text not under {g['section']} (found {where}): {text[:60]}")
            else:
                found += 1
    print("questions:", sum(types.values()), dict(sorted(types.items())))
    print("documents:", len(listed), "golds:", ngold,
          "binding true/false:", sum(1 for x in q["questions"] for g in x.get("gold") or [] if g.get("binding")),
          "/", sum(1 for x in q["questions"] for g in x.get("gold") or [] if g.get("binding") is False))
    for f in fails:
        print("FAIL", f)
    if not fails:
        print(f"all {ngold} gold texts found (each under its section); ids unique, types valid, every doc listed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
