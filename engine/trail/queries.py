"""Questions asked of stored trails: what changed between two audits (`diff`), and which audits
rest on a document or section, and on text that has since been superseded (`impact`).

REQ-IDs are numbered per answer, so requirements are matched across audits by their source and
their quote (whitespace-normalized), not by ID.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

import psycopg

from engine.errors import NotFoundError
from engine.ingest.citations import derived_citation
from engine.search import store
from engine.text import normalize_ws
from engine.trail import store as audit_trail


def _key(req: dict[str, Any]) -> tuple[str, str]:
    return req.get("source_key") or req["document_id"], normalize_ws(req["exact_quote"])


def _brief(req: dict[str, Any]) -> dict[str, Any]:
    return {"requirement_id": req["requirement_id"], "verified": req["verified"],
            "rejection_reason": req.get("rejection_reason"), "document_title": req.get("document_title"),
            "document_version": req.get("document_version"), "section_path": req.get("section_path"),
            "citation": req.get("citation") or derived_citation(req.get("section_number") or "",
                                                                 req.get("section_path") or ""),
            "cited": bool(req.get("cited")), "exact_quote": req["exact_quote"]}


def _location(req: dict[str, Any]) -> str:
    return (req.get("section_number") or req.get("section_path") or "").rstrip(".")


def word_diff(before: str, after: str) -> str:
    """The words that changed, marked: 'within [-5 business days-] {+72 hours+} of ...'."""
    old, new = before.split(), after.split()
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op == "equal":
            out.extend(old[i1:i2])
            continue
        if i2 > i1:
            out.append("[-" + " ".join(old[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + " ".join(new[j1:j2]) + "+}")
    return " ".join(out)


def _pair_citations(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> dict[str, Any]:
    """Cited requirements of two answers matched by document, location and text (never by REQ-ID,
    which is numbered per answer): unchanged, changed (same document and place, or nearly the same
    words), added and removed."""
    left = {_key(r): r for r in before}
    right = {_key(r): r for r in after}
    unchanged = [{"before": _brief(left[k]), "after": _brief(right[k])} for k in left.keys() & right.keys()]
    rest_a = [r for k, r in left.items() if k not in right]
    rest_b = [r for k, r in right.items() if k not in left]
    changed = []
    for a in list(rest_a):
        scored = []
        for b in rest_b:
            if (a.get("source_key") or a["document_id"]) != (b.get("source_key") or b["document_id"]):
                continue
            ratio = difflib.SequenceMatcher(a=normalize_ws(a["exact_quote"]), b=normalize_ws(b["exact_quote"])).ratio()
            if _location(a) == _location(b) or ratio >= 0.6:
                scored.append((_location(a) == _location(b), ratio, b))
        if scored:
            best = max(scored, key=lambda x: (x[0], x[1]))[2]
            rest_a.remove(a)
            rest_b.remove(best)
            changed.append({"before": _brief(a), "after": _brief(best),
                            "words": word_diff(a["exact_quote"], best["exact_quote"])})
    return {"unchanged": unchanged, "changed": changed, "added": [_brief(r) for r in rest_b],
            "removed": [_brief(r) for r in rest_a]}


def _direct_answers(answer: dict[str, Any]) -> list[tuple[str, str]]:
    parts = answer.get("parts") or []
    if len(parts) > 1:
        return [(p["question"], p.get("direct_answer") or "(no authoritative evidence)") for p in parts]
    return [("", answer.get("direct_answer") or answer.get("final_answer") or "")]


def diff_records(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """What changed from `a` to `b`: first the answer and its citations (matched by document, place
    and text), then every other candidate requirement, verdicts and corpus versions."""
    ra = {_key(r): r for r in a.get("requirements", [])}
    rb = {_key(r): r for r in b.get("requirements", [])}
    def verdict(r: dict[str, Any]) -> tuple[bool, str | None]:
        return r["verified"], r.get("rejection_reason")

    changed = [{"before": _brief(ra[k]), "after": _brief(rb[k])} for k in ra.keys() & rb.keys()
               if verdict(ra[k]) != verdict(rb[k])]
    ans_a, ans_b = a.get("answer") or {}, b.get("answer") or {}
    text_a, text_b = ans_a.get("final_answer") or "", ans_b.get("final_answer") or ""
    docs_a = {d["source_key"]: d for d in a.get("corpus", [])}
    docs_b = {d["source_key"]: d for d in b.get("corpus", [])}
    corpus = [{"source_key": k, "title": (docs_b.get(k) or docs_a[k])["title"],
               "before": (docs_a.get(k) or {}).get("version"), "after": (docs_b.get(k) or {}).get("version")}
              for k in sorted(docs_a.keys() | docs_b.keys())
              if (docs_a.get(k) or {}).get("content_sha256") != (docs_b.get(k) or {}).get("content_sha256")]
    cited = _pair_citations([r for r in a.get("requirements", []) if r.get("cited") and r["verified"]],
                            [r for r in b.get("requirements", []) if r.get("cited") and r["verified"]])
    direct_a, direct_b = _direct_answers(ans_a), _direct_answers(ans_b)
    added = [_brief(rb[k]) for k in rb.keys() - ra.keys()]
    removed = [_brief(ra[k]) for k in ra.keys() - rb.keys()]
    shown = {r["exact_quote"] for group in ("changed",) for c in cited[group] for r in (c["before"], c["after"])}
    shown |= {r["exact_quote"] for group in ("added", "removed") for r in cited[group]}
    return {
        "a": {"audit_id": a["audit_id"], "question": a["question"], "recorded_at": a.get("recorded_at")},
        "b": {"audit_id": b["audit_id"], "question": b["question"], "recorded_at": b.get("recorded_at")},
        "same_question": normalize_ws(a["question"]).lower() == normalize_ws(b["question"]).lower(),
        "direct_answer": {"before": direct_a, "after": direct_b,
                          "changed": [normalize_ws(x[1]) for x in direct_a] != [normalize_ws(x[1]) for x in direct_b]},
        "citations": cited,
        "requirements_added": added,
        "requirements_removed": removed,
        "verdicts_changed": changed,
        "other_added": [r for r in added if r["exact_quote"] not in shown],
        "other_removed": [r for r in removed if r["exact_quote"] not in shown],
        "other_changes": len([r for r in added + removed if r["exact_quote"] not in shown]) + len(changed),
        "status": [ans_a.get("status"), ans_b.get("status")],
        "grounding_confidence": [ans_a.get("grounding_confidence"), ans_b.get("grounding_confidence")],
        "answer_changed": normalize_ws(text_a) != normalize_ws(text_b),
        "answer_diff": list(difflib.unified_diff(text_a.splitlines(), text_b.splitlines(), a["audit_id"],
                                                 b["audit_id"], lineterm="", n=0)),
        "corpus_changes": corpus,
    }


def summary(d: dict[str, Any]) -> str:
    """One line of what changed between two answers (for `trail rerun`)."""
    c = d["citations"]
    answer = "answer changed" if d["direct_answer"]["changed"] or d["answer_changed"] else "answer unchanged"
    status = f"{d['status'][0]} -> {d['status'][1]}" if d["status"][0] != d["status"][1] else d["status"][1]
    return (f"{status}; {answer}; citations: {len(c['unchanged'])} unchanged, {len(c['changed'])} changed, "
            f"{len(c['added'])} added, {len(c['removed'])} removed")


def diff(conn: psycopg.Connection, audit_a: str, audit_b: str) -> dict[str, Any]:
    return diff_records(audit_trail.get(conn, audit_a)["record"], audit_trail.get(conn, audit_b)["record"])


_SECTION_WORD = re.compile(r"^(?:art(?:icle)?s?\.?|sections?|sec\.?|§+|rules?|paragraphs?|para\.?)\s*", re.IGNORECASE)


def section_key(text: str) -> str:
    """A section as users write it, as chunks number it: 'Art. 33(1)' and 'Article 33 (1)' -> '33(1)',
    'Section 4.2' -> '4.2', 'recital 85' -> 'Recital 85'."""
    text = normalize_ws(text)
    if text.lower().startswith("recital"):
        return "Recital " + text[len("recital"):].strip()
    return _SECTION_WORD.sub("", text).replace(" ", "").rstrip(".")


def parse_target(target: str) -> tuple[str, str | None]:
    """'DOC#4.2' -> ('DOC', '4.2'); 'DOC#Art. 33(1)' -> ('DOC', '33(1)'); no '#' -> (target, None)."""
    name, _, section = target.partition("#")
    return name, (section_key(section) or None)


def version_keys(versions: list[Any]) -> list[str]:
    """How audit requirements name these document versions: their ids and their source keys."""
    return sorted({d.id for d in versions} | {d.source_key for d in versions})


def _known_section(conn: psycopg.Connection, versions: list[Any], section: str) -> str:
    """`section`, or the section a point of it lies in ('4.2(b)' -> '4.2'); NotFoundError when no version of
    the document has it."""
    ids = [d.id for d in versions]
    candidate = section
    while True:
        if store.has_section(conn, ids, candidate):
            return candidate
        shorter = re.sub(r"\([^()]*\)$", "", candidate)
        if shorter == candidate or not shorter:
            break
        candidate = shorter
    current = next((d for d in versions if d.is_current), versions[-1])
    raise NotFoundError(f"no such section '{section}' in {current.title} (any version); "
                        f"'evidence documents sections {current.id}' lists its sections")


def quote_still_there(quote: str, text: str | None) -> bool:
    return text is not None and normalize_ws(quote) in normalize_ws(text)


def impact(conn: psycopg.Connection, target: str) -> dict[str, Any]:
    """Audits citing a document (or section), and which of them are stale: a quote they cite changed or
    vanished in the document's current version (a new version that keeps the quote leaves them current)."""
    name, section = parse_target(target)
    versions = store.find_documents(conn, name)
    if not versions:
        raise NotFoundError(f"no document '{name}': give a document id (or a unique start of one), source path, file "
                            "name or exact title ('evidence documents --all-versions' lists them)")
    if section:
        section = _known_section(conn, versions, section)
    current = {d.source_key: d for d in versions if d.is_current}
    rows = audit_trail.citing(conn, version_keys(versions), section)
    texts = audit_trail.document_texts(conn, [d.id for d in current.values()])
    again = audit_trail.superseded(conn)
    audits: dict[str, dict[str, Any]] = {}
    for r in rows:
        entry = audits.setdefault(r["audit_id"], {
            "audit_id": r["audit_id"], "seq": r["seq"], "question": r["question"], "recorded_at": r["created_at"],
            "status": r["status"], "requirements": [], "stale": False, "superseded_by": again.get(r["audit_id"])})
        now = current.get(r["source_key"])
        superseded = now is None or now.id != r["document_id"]
        still_there = now is not None and quote_still_there(r["exact_quote"], texts.get(now.id))
        entry["requirements"].append({
            "requirement_id": r["requirement_id"], "document_id": r["document_id"],
            "document_version": r["document_version"], "section_path": r["section_path"],
            "section_number": r["section_number"], "exact_quote": r["exact_quote"], "superseded": superseded,
            "current_version": now.version if now else None, "quote_in_current_version": still_there})
        entry["stale"] = entry["stale"] or not still_there
    found = list(audits.values())
    return {"target": target, "section": section,
            "documents": [{"document_id": d.id, "title": d.title, "version": d.version, "current": d.is_current}
                          for d in versions],
            "audits": found, "stale_audits": [a["audit_id"] for a in found if a["stale"]],
            "quotes_gone": [{"audit_id": a["audit_id"], **q} for a in found for q in a["requirements"]
                            if not q["quote_in_current_version"]]}


def stale_audits(conn: psycopg.Connection) -> list[dict[str, Any]]:
    """Every answer not yet answered again (`trail rerun`) that cites a quote which changed or vanished in
    its document's current version, oldest first, with the quotes gone and `since`: when the first of them
    changed (the changed version's ingest time; None when the document was removed)."""
    rows = audit_trail.citing(conn, None, None)
    current = {d.source_key: d for d in store.list_documents(conn)}
    texts = audit_trail.document_texts(conn, [d.id for d in current.values()])
    again = audit_trail.superseded(conn)
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["audit_id"] in again:
            continue
        now = current.get(r["source_key"])
        if now is not None and now.id == r["document_id"]:
            continue  # the version cited is still the current one
        if now is not None and quote_still_there(r["exact_quote"], texts.get(now.id)):
            continue
        changed_at = now.ingested_at if now is not None else None
        entry = out.setdefault(r["audit_id"], {"audit_id": r["audit_id"], "seq": r["seq"],
                                               "question": r["question"], "quotes_gone": [], "since": changed_at})
        if changed_at is not None and (entry["since"] is None or changed_at < entry["since"]):
            entry["since"] = changed_at
        entry["quotes_gone"].append({"requirement_id": r["requirement_id"], "document_id": r["document_id"],
                                     "exact_quote": r["exact_quote"]})
    return sorted(out.values(), key=lambda e: e["seq"])
