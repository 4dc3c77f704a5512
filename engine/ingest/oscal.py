"""OSCAL catalogs (and resolved profiles, which are catalogs) as a document, from JSON, YAML or XML (`from_xml`
reads the XML form into the JSON form's shape). Pure: no I/O.

A catalog is rendered to Markdown and read like any Markdown document, so a control is a section cited
by its id: groups are headings, each control and enhancement a heading "<label> <title>" (the `label`
prop, else the id in capitals: "AC-2", "AC-2(1)", "ISM-0039"), its statement parts with their item
labels ("a.", "1.") as paragraphs, its guidance as a "Discussion:" paragraph and a group's overview under a
heading "Overview (commentary)" (both non-binding context; a title that only restates the id, "Control: ism-1639",
left out), parameters shown as the catalog defines them ("[Assignment: organization-defined frequency]",
"[Selection: daily; weekly]"), withdrawn controls marked "(withdrawn)" and said to be withdrawn, with the
controls their links say they were incorporated into or moved to ("This control is withdrawn: incorporated into
AC-6.").
"""

from __future__ import annotations

import re
from typing import Any

from engine.text import normalize_ws

_INSERT = re.compile(r"\{\{\s*insert:\s*param,\s*([\w.-]+)\s*\}\}")
_LINK = re.compile(r"\[([^\]]*)\]\(#[^)]*\)")


def is_catalog(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("catalog"), dict)


def is_profile(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("profile"), dict)


def _props(item: dict[str, Any], name: str) -> list[str]:
    return [str(p.get("value", "")) for p in item.get("props") or [] if p.get("name") == name]


def _param_text(param: dict[str, Any]) -> str:
    """How a catalog shows a parameter it leaves to the organisation."""
    if param.get("values"):
        return ", ".join(map(str, param["values"]))
    select = param.get("select")
    if isinstance(select, dict):
        how = " (one or more)" if select.get("how-many") == "one-or-more" else ""
        return f"[Selection{how}: {'; '.join(map(str, select.get('choice') or []))}]"
    return f"[Assignment: {param.get('label') or param.get('id', 'value')}]"


# OSCAL's JSON and YAML prose is Markdown: a heading inside a part ("# Further information") is a line of its
# part, not a heading of the document, and an escaped mark ("Cybersecurity \\& Infrastructure") is the mark itself
_PROSE_HEADING = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]+")
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!&|<>~])")


def _prose(text: str, params: dict[str, str]) -> str:
    for _ in range(3):  # a parameter's choice may itself insert a parameter ("[Selection: {{ insert: ... }}]")
        if not _INSERT.search(text):
            break
        text = _INSERT.sub(lambda m: params.get(m.group(1), f"[Assignment: {m.group(1)}]"), text)
    text = _PROSE_HEADING.sub("", _LINK.sub(r"\1", text))
    return _ESCAPED.sub(r"\1", text).strip()


def _part(part: dict[str, Any], params: dict[str, str], out: list[str]) -> None:
    """A statement part and its items, each on its own paragraph with its label."""
    label = next(iter(_props(part, "label")), "")
    prose = _prose(part.get("prose") or "", params)
    if prose:
        out.append(f"{label} {prose}".strip())
    for sub in part.get("parts") or []:
        _part(sub, params, out)


def _label(control: dict[str, Any]) -> str:
    return next(iter(_props(control, "label")), "") or str(control.get("id", "")).upper()


def _labels(node: dict[str, Any], out: dict[str, str]) -> dict[str, str]:
    """Every control's id -> its label, in a catalog or group and the controls under it."""
    for control in node.get("controls") or []:
        if "id" in control:
            out[str(control["id"])] = _label(control)
        _labels(control, out)
    for group in node.get("groups") or []:
        _labels(group, out)
    return out


# What a withdrawn control's links say became of it
_WHERE = {"incorporated-into": "incorporated into", "moved-to": "moved to"}


def _withdrawal(control: dict[str, Any], labels: dict[str, str]) -> str:
    """"This control is withdrawn", with where its text went ("incorporated into AC-6, AC-2(1)"; "incorporated into
    AC-6 and moved to AC-3": joined in words, for a ";" would end the clause that a direct answer quotes)."""
    where: dict[str, list[str]] = {}
    for link in control.get("links") or []:
        if (rel := _WHERE.get(str(link.get("rel", "")))) and str(link.get("href", "")).startswith("#"):
            target = str(link["href"])[1:]
            where.setdefault(rel, []).append(labels.get(target, target.upper()))
    said = " and ".join(f"{rel} {', '.join(targets)}" for rel, targets in where.items())
    return f"This control is withdrawn: {said}." if said else "This control is withdrawn."


def _control(control: dict[str, Any], depth: int, params: dict[str, str], out: list[str],
             labels: dict[str, str]) -> None:
    params = {**params, **{p["id"]: _param_text(p) for p in control.get("params") or [] if "id" in p}}
    label = _label(control)
    withdrawn = "withdrawn" in [v.lower() for v in _props(control, "status")]
    title = str(control.get("title", "")).strip()
    if re.fullmatch(rf"(?:\w+\s*:\s*)?{re.escape(str(control.get('id', '')))}", title, re.IGNORECASE):
        title = ""  # a title that only restates the id ("Control: ism-1639", the ISM's): the label says it
    title += " (withdrawn)" if withdrawn else ""
    out.append(f"{'#' * min(depth, 6)} {label} {title}".rstrip())
    if withdrawn:
        out.append(_withdrawal(control, labels))
    for part in control.get("parts") or []:
        name = part.get("name")
        if name == "statement":
            _part(part, params, out)
        elif name == "guidance":
            texts: list[str] = []
            _part(part, params, texts)
            if texts:
                out.append("Discussion: " + " ".join(texts))
    for sub in control.get("controls") or []:
        _control(sub, depth + 1, params, out, labels)


def _group(group: dict[str, Any], depth: int, params: dict[str, str], out: list[str], labels: dict[str, str]
           ) -> None:
    params = {**params, **{p["id"]: _param_text(p) for p in group.get("params") or [] if "id" in p}}
    label = next(iter(_props(group, "label")), "")
    out.append(f"{'#' * min(depth, 6)} {label} {group.get('title', '')}".replace("  ", " ").rstrip())
    for part in group.get("parts") or []:
        if part.get("name") == "statement":
            _part(part, params, out)
            continue
        # a group's overview is the catalogue's commentary on its topic, not a control: under a heading of its own
        # that says so, beside the group's controls ("Cable colours > Overview (commentary)"), read as a control's
        # discussion is (where a control states the matter, the control answers)
        name = str(part.get("title") or str(part.get("name") or "overview").replace("-", " ").capitalize())
        out.append(f"{'#' * min(depth + 1, 6)} {name} (commentary)")
        _part(part, params, out)
    for control in group.get("controls") or []:
        _control(control, depth + 1, params, out, labels)
    for sub in group.get("groups") or []:
        _group(sub, depth + 1, params, out, labels)


# --- OSCAL XML: the same model, read from its XML form ------------------------------------------------------------

def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _markup(el: Any) -> str:
    """OSCAL's markup (p, ul/ol/li, em, strong, a, insert, ...) as the prose string the JSON form holds: block
    elements paragraphs of their own, a parameter's insert as "{{ insert: param, id }}", a link as its text."""
    lines = [line for line in (normalize_ws(x) for x in _inline(el).split(_BREAK)) if line]
    out = ""
    for i, line in enumerate(lines):  # a list's items one a line, as the JSON form's Markdown has them
        out += ("" if i == 0 else "\n" if line.startswith("- ") and lines[i - 1].startswith("- ") else "\n\n") + line
    return out


_BREAK = "\x00"  # where a block element ends a line (the source's own line breaks are spaces)
_BLOCKS = ("p", "ul", "ol", "table", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote")


def _inline(el: Any) -> str:
    pieces: list[str] = [el.text or ""]
    for child in el:
        name = _local(child.tag)
        if name == "insert":
            pieces.append(f"{{{{ insert: {child.get('type', 'param')}, {child.get('id-ref', '')} }}}}")
        elif name == "li":
            pieces.append(_BREAK + "- " + _inline(child) + _BREAK)
        elif name in _BLOCKS:
            pieces.append(_BREAK + _inline(child) + _BREAK)
        elif name in ("td", "th"):
            pieces.append(" " + _inline(child) + " ")
        elif name:
            pieces.append(_inline(child))
        pieces.append(child.tail or "")
    return "".join(pieces)


def _xml_node(el: Any) -> dict[str, Any]:
    """A catalog, group, control, part or parameter element as the dict its JSON form would be."""
    node: dict[str, Any] = {k: v for k, v in el.attrib.items() if k in ("id", "class", "name", "ns")}
    prose = []
    for child in el:
        name = _local(child.tag)
        if name in ("title", "label"):
            node[name] = _markup(child)
        elif name == "prop":
            node.setdefault("props", []).append({"name": child.get("name", ""), "value": child.get("value", "")})
        elif name == "link":
            node.setdefault("links", []).append({"href": child.get("href", ""), "rel": child.get("rel", "")})
        elif name == "param":
            node.setdefault("params", []).append(_xml_node(child))
        elif name == "select":
            node["select"] = {"how-many": child.get("how-many", "one"),
                              "choice": [_markup(c) for c in child if _local(c.tag) == "choice"]}
        elif name == "value":
            node.setdefault("values", []).append(_markup(child))
        elif name in ("part", "control", "group"):
            node.setdefault(f"{name}s", []).append(_xml_node(child))
        elif name == "metadata":
            title = next((c for c in child if _local(c.tag) == "title"), None)
            node["metadata"] = {"title": _markup(title) if title is not None else ""}
        elif name not in ("back-matter", "guideline", "constraint", "remarks"):
            prose.append(child)
    if prose and _local(el.tag) == "part":
        node["prose"] = "\n\n".join(_markup(p) for p in prose)
    return node


def from_xml(root: Any) -> dict[str, Any]:
    """An OSCAL catalog (or profile) in its XML form as the dict of its JSON form: {"catalog": {...}}."""
    return {_local(root.tag): _xml_node(root)}


def to_markdown(data: dict[str, Any]) -> str:
    """The catalog of an OSCAL document (`{"catalog": {...}}`) as Markdown, one heading per control."""
    catalog = data["catalog"]
    params = {p["id"]: _param_text(p) for p in catalog.get("params") or [] if "id" in p}
    out = [f"# {(catalog.get('metadata') or {}).get('title') or 'OSCAL catalog'}"]
    labels = _labels(catalog, {})
    for control in catalog.get("controls") or []:
        _control(control, 2, params, out, labels)
    for group in catalog.get("groups") or []:
        _group(group, 2, params, out, labels)
    return "\n\n".join(out) + "\n"
