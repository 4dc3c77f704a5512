"""Questions asked of stored trails: what changed between two audits (`diff`), and which audits
rest on a document or section, and on text that has since been superseded (`impact`).

REQ-IDs are numbered per answer, so requirements are matched across audits by their source and
their quote (whitespace-normalized), not by ID.
"""

from __future__ import annotations

import difflib
from typing import Any

import psycopg

from engine import audit_trail, store
from engine.errors import NotFoundError
from engine.sentences import normalize_ws


def _key(req: dict[str, Any]) -> tuple[str, str]:
    return req.get("source_key") or req["document_id"], normalize_ws(req["exact_quote"])


def _brief(req: dict[str, Any]) -> dict[str, Any]:
    return {"requirement_id": req["requirement_id"], "verified": req["verified"],
            "rejection_reason": req.get("rejection_reason"), "document_title": req.get("document_title"),
            "document_version": req.get("document_version"), "section_path": req.get("section_path"),
            "exact_quote": req["exact_quote"]}


def diff_records(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Requirements added and removed, changed verdicts, answer and corpus changes from `a` to `b`."""
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
    return {
        "a": {"audit_id": a["audit_id"], "question": a["question"], "recorded_at": a.get("recorded_at")},
        "b": {"audit_id": b["audit_id"], "question": b["question"], "recorded_at": b.get("recorded_at")},
        "same_question": normalize_ws(a["question"]).lower() == normalize_ws(b["question"]).lower(),
        "requirements_added": [_brief(rb[k]) for k in rb.keys() - ra.keys()],
        "requirements_removed": [_brief(ra[k]) for k in ra.keys() - rb.keys()],
        "verdicts_changed": changed,
        "status": [ans_a.get("status"), ans_b.get("status")],
        "grounding_confidence": [ans_a.get("grounding_confidence"), ans_b.get("grounding_confidence")],
        "answer_changed": normalize_ws(text_a) != normalize_ws(text_b),
        "answer_diff": list(difflib.unified_diff(text_a.splitlines(), text_b.splitlines(), a["audit_id"],
                                                 b["audit_id"], lineterm="", n=0)),
        "corpus_changes": corpus,
    }


def diff(conn: psycopg.Connection, audit_a: str, audit_b: str) -> dict[str, Any]:
    return diff_records(audit_trail.get(conn, audit_a)["record"], audit_trail.get(conn, audit_b)["record"])


def parse_target(target: str) -> tuple[str, str | None]:
    """'DOCUMENT#4.2' -> ('DOCUMENT', '4.2'); no '#' -> (target, None)."""
    name, _, section = target.partition("#")
    return name, (section.strip() or None)


def version_keys(versions: list[Any]) -> list[str]:
    """How audit requirements name these document versions: their ids and their source keys."""
    return sorted({d.id for d in versions} | {d.source_key for d in versions})


def impact(conn: psycopg.Connection, target: str) -> dict[str, Any]:
    """Audits citing a document (or section), and which of them rest on superseded text."""
    name, section = parse_target(target)
    versions = store.find_documents(conn, name)
    if not versions:
        raise NotFoundError(f"no document '{name}': give a document id, source path, file name or exact title "
                            "('evidence documents --all-versions' lists them)")
    current = {d.source_key: d for d in versions if d.is_current}
    rows = audit_trail.citing(conn, version_keys(versions), section)
    texts = audit_trail.document_texts(conn, [d.id for d in current.values()])
    audits: dict[str, dict[str, Any]] = {}
    for r in rows:
        entry = audits.setdefault(r["audit_id"], {
            "audit_id": r["audit_id"], "seq": r["seq"], "question": r["question"], "recorded_at": r["created_at"],
            "status": r["status"], "requirements": [], "stale": False})
        now = current.get(r["source_key"])
        superseded = now is None or now.id != r["document_id"]
        still_there = now is not None and normalize_ws(r["exact_quote"]) in normalize_ws(texts.get(now.id, ""))
        entry["requirements"].append({
            "requirement_id": r["requirement_id"], "document_id": r["document_id"],
            "document_version": r["document_version"], "section_path": r["section_path"],
            "exact_quote": r["exact_quote"], "superseded": superseded,
            "current_version": now.version if now else None, "quote_in_current_version": still_there})
        entry["stale"] = entry["stale"] or superseded
    found = list(audits.values())
    return {"target": target, "section": section,
            "documents": [{"document_id": d.id, "title": d.title, "version": d.version, "current": d.is_current}
                          for d in versions],
            "audits": found, "stale_audits": [a["audit_id"] for a in found if a["stale"]],
            "quotes_gone": [{"audit_id": a["audit_id"], **q} for a in found for q in a["requirements"]
                            if q["superseded"] and not q["quote_in_current_version"]]}
