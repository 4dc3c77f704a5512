"""Check questions.yaml against the OSCAL JSON catalog(s) under docs/.

Walks every control of each catalog (groups within groups, controls within controls, so enhancements or
sub-controls are covered too) and every group. A gold `section` must name exactly one of:

* a control, by its `label` prop if it has one (e.g. the ISM principles, "GOV-01"), else by its `id`
  (the ISM controls, "ism-1234", which carry no label prop); the gold `text` must then occur in the prose of
  one of the control's parts (recursively) - a `statement` part for `binding: true`, any other part
  (guidance, discussion, overview ...) for `binding: false`;
* a group, by its `title`, which must be unique in the catalog (or its `id`, where it has one); the text must
  then occur in one of the group's own parts (the ISM's topic `overview` guidance), and `binding` must be false.

Text matching is whitespace-normalised, and the text must lie inside one paragraph or one Markdown list item
of the prose (it may not span two list items). Also checks: 6-40 words, no `{{ insert: ... }}` parameter
inside a gold, unique ids, valid types, `part` 1 and 2 on every two-part question (and on no other),
out-of-scope iff no gold, every file under docs/ listed in `documents` and every listed file present,
the corpus name equal to the folder's, valid source types.

Usage: python check_gold.py      (needs PyYAML)
"""
import collections
import json
import pathlib
import re
import sys

import yaml

HERE = pathlib.Path(__file__).resolve().parent
TYPES = {"paraphrase", "broad", "two-part", "conflict", "out-of-scope", "provision"}
SOURCE_TYPES = {"statute", "regulation", "guidance", "policy", "standard", "contract"}


def norm(s):
    return re.sub(r"\s+", " ", str(s)).strip()


def segments(prose):
    """Paragraphs and list items of a Markdown prose string, each whitespace-normalised."""
    out = []
    for para in re.split(r"\n\s*\n", prose):
        item = []
        for line in para.split("\n"):
            if re.match(r"\s*(?:[-*+]|\d+\.)\s", line) and item:
                out.append(norm(" ".join(item)))
                item = []
            item.append(re.sub(r"^\s*(?:[-*+]|\d+\.)\s+", "", line))
        if item:
            out.append(norm(" ".join(item)))
    return out


def part_segments(parts, statement_only):
    """Segments of the parts' prose, (binding, segment) pairs; nested parts inherit the top part's kind."""
    out = []

    def rec(p, binding):
        if "prose" in p:
            out.extend((binding, s) for s in segments(p["prose"]))
        for sub in p.get("parts", []):
            rec(sub, binding)

    for p in parts:
        rec(p, p.get("name") == "statement" if statement_only else False)
    return out


def load_catalog(path):
    cat = json.loads(path.read_text(encoding="utf-8"))["catalog"]
    controls = {}          # section -> (binding, segment) list
    control_ids = {}       # control id -> label used (to catch a gold that uses the id of a labelled control)
    groups = collections.defaultdict(list)
    stats = collections.Counter()

    def walk_control(c):
        stats["controls"] += 1
        stats["class " + c.get("class", "-")] += 1
        label = next((p["value"] for p in c.get("props", []) if p["name"] == "label"), None)
        key = label or c["id"]
        if key in controls:
            sys.exit(f"duplicate control key {key} in {path.name}")
        controls[key] = part_segments(c.get("parts", []), statement_only=True)
        control_ids[c["id"]] = key
        for sub in c.get("controls", []):
            stats["nested controls"] += 1
            walk_control(sub)

    def walk_groups(gs):
        for g in gs:
            stats["groups"] += 1
            segs = part_segments(g.get("parts", []), statement_only=False)
            groups[g["title"]].append(segs)
            if g.get("id"):
                groups[g["id"]].append(segs)
            for c in g.get("controls", []):
                walk_control(c)
            walk_groups(g.get("groups", []))

    walk_groups(cat.get("groups", []))
    for c in cat.get("controls", []):
        walk_control(c)
    return cat["metadata"], controls, control_ids, groups, stats


def main():
    q = yaml.safe_load((HERE / "questions.yaml").read_text(encoding="utf-8"))
    bad = 0

    def fail(*a):
        nonlocal bad
        bad += 1
        print("FAIL", *a)

    if q.get("corpus") != HERE.name:
        fail("corpus name", q.get("corpus"), "!=", HERE.name)
    listed = [d["file"] for d in q["documents"]]
    on_disk = sorted(str(p.relative_to(HERE / "docs")) for p in (HERE / "docs").rglob("*") if p.is_file())
    if sorted(listed) != on_disk:
        fail("documents listed", sorted(listed), "!= files under docs/", on_disk)
    cats = {}
    for d in q["documents"]:
        if d.get("source_type") not in SOURCE_TYPES:
            fail(d["file"], "source_type", d.get("source_type"))
        if not d.get("title"):
            fail(d["file"], "no title")
        meta, controls, control_ids, groups, stats = load_catalog(HERE / "docs" / d["file"])
        cats[d["file"]] = (controls, control_ids, groups)
        print(f"{d['file']}: {meta['title']} {meta['version']} (OSCAL {meta['oscal-version']}), "
              + ", ".join(f"{k} {v}" for k, v in sorted(stats.items())))

    ids = collections.Counter(item["id"] for item in q["questions"])
    for i, n in ids.items():
        if n > 1:
            fail(i, f"id used {n} times")
    types = collections.Counter()
    golds = collections.Counter()
    for item in q["questions"]:
        t = item.get("type")
        types[t] += 1
        if t not in TYPES:
            fail(item["id"], "type", t)
        gl = item.get("gold") or []
        if (t == "out-of-scope") != (not gl):
            fail(item["id"], "out-of-scope must have no gold, and every other type some gold")
        if not norm(item.get("question", "")):
            fail(item["id"], "no question")
        parts = set()
        for g in gl:
            golds["binding" if g.get("binding") else "non-binding"] += 1
            where = f"{item['id']} [{g.get('section')}]"
            if g.get("doc") not in cats:
                fail(where, "doc not listed:", g.get("doc"))
                continue
            controls, control_ids, groups = cats[g["doc"]]
            text, sec = norm(g["text"]), str(g["section"])
            words = len(text.split())
            if not 6 <= words <= 40:
                fail(where, f"{words} words")
            if "{{" in text or "}}" in text:
                fail(where, "parameter insertion inside gold text")
            if not isinstance(g.get("binding"), bool):
                fail(where, "binding must be true or false")
            if sec in controls:
                segs = controls[sec]
            elif sec in control_ids and control_ids[sec] != sec:
                fail(where, f"control has a label prop; cite it as {control_ids[sec]}")
                continue
            elif sec in groups:
                if len(groups[sec]) > 1:
                    fail(where, "group title is not unique in the catalog")
                    continue
                segs = groups[sec][0]
            else:
                fail(where, "no control or group with this section")
                continue
            hits = {b for b, s in segs if text in s}
            if not hits:
                anywhere = any(text in norm(s) for _, s in segs) or text in " ".join(s for _, s in segs)
                fail(where, "text spans two list items/paragraphs" if anywhere else "text not found",
                     repr(g["text"][:70]))
            elif g.get("binding") not in hits:
                fail(where, f"binding {g.get('binding')} but text is in", "statement" if True in hits else "guidance")
            if t == "two-part":
                parts.add(g.get("part"))
                if g.get("part") not in (1, 2):
                    fail(where, "two-part gold needs part 1 or 2")
            elif "part" in g:
                fail(where, "part on a question that is not two-part")
        if t == "two-part" and parts != {1, 2}:
            fail(item["id"], "two-part question needs golds for part 1 and part 2, has", sorted(parts, key=str))

    print("questions:", len(q["questions"]), dict(sorted(types.items())))
    print("golds:", sum(golds.values()), dict(golds))
    if bad:
        print(f"{bad} problem(s)")
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
