"""OSCAL catalogs (and resolved profiles, which are catalogs) as a document. Pure: no I/O.

A catalog is rendered to Markdown and read like any Markdown document, so a control is a section cited
by its id: groups are headings, each control and enhancement a heading "<label> <title>" (the `label`
prop, else the id in capitals: "AC-2", "AC-2(1)", "ISM-0039"), its statement parts with their item
labels ("a.", "1.") as paragraphs, its guidance as a "Discussion:" paragraph (non-binding context),
parameters shown as the catalog defines them ("[Assignment: organization-defined frequency]",
"[Selection: daily; weekly]"), withdrawn controls marked "(withdrawn)" and said to be withdrawn, with the
controls their links say they were incorporated into or moved to ("This control is withdrawn: incorporated into
AC-6.").
"""

from __future__ import annotations

import re
from typing import Any

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


def _prose(text: str, params: dict[str, str]) -> str:
    text = _INSERT.sub(lambda m: params.get(m.group(1), f"[Assignment: {m.group(1)}]"), text)
    return _LINK.sub(r"\1", text).strip()


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
    title = str(control.get("title", "")).strip() + (" (withdrawn)" if withdrawn else "")
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
        _part(part, params, out)
    for control in group.get("controls") or []:
        _control(control, depth + 1, params, out, labels)
    for sub in group.get("groups") or []:
        _group(sub, depth + 1, params, out, labels)


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
