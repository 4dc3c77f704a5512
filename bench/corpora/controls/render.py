"""Render a subset of the ISM OSCAL catalog as Markdown, and cut the small OSCAL fixture.

Usage:  python render.py SRC_DIR
SRC_DIR holds ISM_catalog.json, ISM_catalog.xml and ISM_catalog.yaml from
github.com/AustralianCyberSecurityCentre/ism-oscal (see SOURCE.md for the commit).

Writes docs/ism-controls.md and oscal/ism-subset_catalog.{json,xml,yaml} next to this file.
Standard library and PyYAML only.
"""
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent

# (guideline, section or None for all its sections), in catalogue order.
SUBSET = [
    ("Guidelines for cyber security incidents", None),
    ("Guidelines for procurement and outsourcing", "Managed services and cloud services"),
    ("Guidelines for cyber security documentation", None),
    ("Guidelines for personnel security", None),
    ("Guidelines for system management", "System patching"),
    ("Guidelines for system management", "Data backup and restoration"),
    ("Guidelines for system monitoring", None),
]
FIXTURE_GUIDELINES = ("Guidelines for cyber security documentation", "Guidelines for system monitoring")
NS = "http://csrc.nist.gov/ns/oscal/1.0"

_LINK = re.compile(r"\[([^\]]+)\]\(#[0-9a-f-]+\)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!&<>|'\"])")


def clean(prose: str) -> str:
    """OSCAL Markdown prose as plain Markdown: internal links to back-matter become their text."""
    prose = _LINK.sub(r"\1", prose)
    return _ESCAPE.sub(r"\1", prose).strip()


def overview(group: dict) -> str:
    """The group's overview prose without its 'Further information' blocks; inner headings become ###."""
    out = []
    for part in group.get("parts", []):
        if part.get("name") != "overview":
            continue
        blocks = re.split(r"(?m)^# ", clean(part["prose"]))
        for i, block in enumerate(blocks):
            if not block.strip():
                continue
            if i == 0 and not part["prose"].lstrip().startswith("# "):
                out.append(block.strip())
                continue
            title, _, body = block.partition("\n")
            if title.strip() == "Further information":
                continue
            out.append(f"### {title.strip()}\n\n{body.strip()}")
    return "\n\n".join(out)


def props(control: dict) -> str:
    values: dict[str, list[str]] = {}
    for p in control.get("props", []):
        values.setdefault(p["name"], []).append(p["value"])
    fields = [f"Revision: {values.get('revision', ['?'])[0]}", f"Updated: {values.get('updated', ['?'])[0]}",
              f"Applicability: {', '.join(values.get('applicability', []))}",
              f"Essential Eight: {', '.join(values.get('essential-eight-applicability', [])) or 'N/A'}"]
    return "; ".join(fields)


def render(catalog: dict) -> tuple[str, int]:
    meta = catalog["metadata"]
    lines = [f"# {meta['title']} (ISM), release {meta['version']}: selected guidelines",
             "",
             "Australian Signals Directorate, Information security manual, converted from the ISM OSCAL catalog. "
             "© Commonwealth of Australia, licensed under CC BY 4.0.",
             ""]
    count = 0
    by_title = {g["title"]: g for g in catalog["groups"]}
    for guideline, only in SUBSET:
        for section in by_title[guideline].get("groups", []):
            if only and section["title"] != only:
                continue
            lines += [f"# {guideline}: {section['title']}", ""]
            text = overview(section)
            if text:
                lines += [text, ""]
            for topic in section.get("groups", []):
                lines += [f"## {topic['title']}", ""]
                text = overview(topic)
                if text:
                    lines += [text, ""]
                for control in topic.get("controls", []):
                    count += 1
                    label = control["id"].upper()
                    statement = "\n\n".join(clean(p["prose"]) for p in control["parts"] if p["name"] == "statement")
                    lines += [f"## {label} {topic['title']}", "", props(control), "", statement, ""]
    return "\n".join(lines).rstrip() + "\n", count


def hrefs_json(node, found: set) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "href" and isinstance(v, str) and v.startswith("#"):
                found.add(v[1:])
            hrefs_json(v, found)
    elif isinstance(node, list):
        for v in node:
            hrefs_json(v, found)
    elif isinstance(node, str):
        found.update(m.group(1) for m in re.finditer(r"\]\(#([0-9a-f-]+)\)", node))


def cut_dict(doc: dict) -> dict:
    """The catalog with only the fixture guidelines' groups and the back-matter resources it links to."""
    cat = doc["catalog"]
    out = {k: v for k, v in cat.items() if k not in ("groups", "back-matter")}
    out["groups"] = [g for g in cat["groups"] if g["title"] in FIXTURE_GUIDELINES]
    found: set = set()
    hrefs_json({k: v for k, v in out.items()}, found)
    if "back-matter" in cat:
        out["back-matter"] = {"resources": [r for r in cat["back-matter"]["resources"] if r["uuid"] in found]}
    return {"catalog": out}


def cut_xml(src: Path, dst: Path) -> None:
    ET.register_namespace("", NS)
    tree = ET.parse(src)
    root = tree.getroot()

    def q(tag: str) -> str:
        return f"{{{NS}}}{tag}"

    for group in root.findall(q("group")):
        if group.findtext(q("title")) not in FIXTURE_GUIDELINES:
            root.remove(group)
    found = {el.get("href")[1:] for el in root.iter() if (el.get("href") or "").startswith("#")
             and el.tag != q("rlink")}
    back = root.find(q("back-matter"))
    if back is not None:
        for res in back.findall(q("resource")):
            if res.get("uuid") not in found:
                back.remove(res)
    ET.indent(tree, space="   ")
    tree.write(dst, encoding="UTF-8", xml_declaration=True)


class _NoTimestampLoader(yaml.SafeLoader):
    """Keeps OSCAL date-times as the strings they are."""


_NoTimestampLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def main(src_dir: str) -> None:
    src = Path(src_dir)
    doc = json.loads((src / "ISM_catalog.json").read_text(encoding="utf-8"))
    text, count = render(doc["catalog"])
    (HERE / "docs").mkdir(exist_ok=True)
    (HERE / "docs" / "ism-controls.md").write_text(text, encoding="utf-8")
    print(f"docs/ism-controls.md: {count} controls, {len(text.encode())} bytes")

    out = HERE / "oscal"
    out.mkdir(exist_ok=True)
    base = "ism-subset_catalog"
    small = cut_dict(doc)
    (out / f"{base}.json").write_text(json.dumps(small, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    cut_xml(src / "ISM_catalog.xml", out / f"{base}.xml")
    ydoc = yaml.load((src / "ISM_catalog.yaml").read_text(encoding="utf-8"), Loader=_NoTimestampLoader)
    (out / f"{base}.yaml").write_text("---\n" + yaml.safe_dump(cut_dict(ydoc), sort_keys=False, allow_unicode=True,
                                                             width=1 << 20), encoding="utf-8")
    n = sum(1 for _ in re.finditer(r'"class": "ISM-control"', (out / f"{base}.json").read_text()))
    print(f"oscal/{base}.*: {n} controls")


if __name__ == "__main__":
    main(sys.argv[1])
