"""Development corpora beyond ObliQA: the whole `ask` over every labelled set in bench/corpora/.

    python bench/corpora.py [--corpus NAME ...] [--folder PATH ...] [--limit N] [--type TYPE ...] [--ids FILE]
                            [--out FILE.jsonl]
    python bench/corpora.py --summarize FILE.jsonl

Each corpus (bench/corpora/<name>/questions.yaml, its layout in bench/corpora/README.md) is ingested
into a database of its own and every question is asked as `evidence ask` asks it (research loop,
extract, verify, compose, review; rules backend, no QA memory). A requirement is *cited* when an answer
statement cites it. Printed per corpus:

* answered: answerable questions with at least one cited requirement (of all answerable ones);
* section: answerable questions citing a right section (the gold's document, and its section label in
  the cited chunk's section path or its text in the chunk), of all answerable ones;
* text: answerable questions citing the answering text itself (a cited quote and a gold text overlap:
  one holds the other, or they share 60% of the shorter one's words);
* precision: cited requirements in a right section, over answered questions (mean per question);
* binding: cited quotes that bind (not recitals, discussion, guidance, notes), of all cited quotes;
* coverage: broad questions' gold duties whose text is cited (mean per question);
* both parts: two-part questions citing a right section in each part;
* conflicts: conflict questions whose answer shows a conflict and cites both documents; conflicts elsewhere:
  other questions whose answer shows a conflict;
* refused: out-of-scope questions answered with no cited requirement;
* right extracted: answerable questions with a passage of a right section among those weighed;
* refused by gate / time rule: answerable questions whose right passage was weighed, none cited, and one
  set aside by the relevance gate / by the time rule (false refusals of a rule that can refuse);
* provision answered / section / precision: questions that ask what a provision says, named by its number or
  id ("What does Article 19 require?", type `provision`, added later), apart from the figures above;
* ask p50 seconds.

The last line is one JSON object with every figure. Sets here are development data: a figure used to
choose something is not a held-out figure.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.compose import ELLIPSIS, cut_inside  # noqa: E402
from engine import db as dbmod  # noqa: E402
from engine import embedded_db  # noqa: E402
from engine.config import Settings  # noqa: E402
from engine.ingest.pipeline import ingest_paths  # noqa: E402
from engine.search import store  # noqa: E402
from engine.search.embeddings import Embedder  # noqa: E402
from engine.search.retrieval import Retriever  # noqa: E402
from engine.text import normalize_ws  # noqa: E402

CORPORA = ROOT / "bench" / "corpora"


def _norm(text: str) -> str:
    return normalize_ws(re.sub(r"[^\w\s]", " ", text.lower()))


def overlaps(quote: str, gold: str) -> bool:
    """The quote and the gold text are the same text: one holds the other, or they share 60% of the
    shorter one's words."""
    a, b = _norm(quote), _norm(gold)
    if not a or not b:
        return False
    if a in b or b in a:
        return True
    wa, wb = set(a.split()), set(b.split())
    return len(wa & wb) / min(len(wa), len(wb)) >= 0.6


def _label_in(label: str, path: str) -> bool:
    """`label` ("Article 23", "§ 164.308", "AC-2", "4.2") names a heading of `path`."""
    label, path = normalize_ws(label).lower(), normalize_ws(path).lower()
    return bool(re.search(rf"(?:^|[\s>]){re.escape(label)}(?![\w.(])", path))


def right_section(req: dict[str, Any], chunk: dict[str, Any], file_of: dict[str, str], gold: dict[str, Any]) -> bool:
    if file_of.get(req["document_id"]) != gold["doc"]:
        return False
    where = f"{req.get('section_path', '')} > {req.get('citation') or ''}"
    return _label_in(str(gold["section"]), where) or _norm(gold["text"]) in _norm(chunk.get("text", ""))


def cited_requirements(result: dict[str, Any], part: int | None = None) -> list[dict[str, Any]]:
    verified = {r["requirement_id"]: r for r in result.get("verified_requirements", [])}
    out: dict[str, dict[str, Any]] = {}
    for statement in result.get("statements", []):
        if part is not None and statement.get("part", 0) != part:
            continue
        for rid in statement["requirement_ids"]:
            if rid in verified:
                out[rid] = verified[rid]
    return list(out.values())


def score(question: dict[str, Any], result: dict[str, Any], file_of: dict[str, str]) -> dict[str, Any]:
    """One question's figures (see the module docstring)."""
    chunks = result.get("evidence_chunks", {})
    cited = cited_requirements(result)
    gold = question.get("gold") or []
    row: dict[str, Any] = {"id": question["id"], "type": question["type"], "question": question["question"],
                           "answered": bool(cited), "status": result.get("status"),
                           "conflicts_shown": len(result.get("conflicts") or []),
                           "confidence": result.get("grounding_confidence"),
                           "cited": [{"id": r["requirement_id"], "file": file_of.get(r["document_id"]),
                                      "section": r.get("section_path", ""),
                                      "binding": r.get("binding", True), "quote": r["exact_quote"]} for r in cited],
                           "direct": [s["text"] for s in result.get("statements", []) if s.get("kind") == "direct"]}
    extracted = result.get("extracted_requirements", [])
    right_ones = [r for r in extracted
                  if any(right_section(r, chunks.get(r["chunk_id"], {}), file_of, g) for g in gold)]
    right_ids = {r["requirement_id"] for r in right_ones}
    # the ranking's best candidate, and the best one in a right section: how sure the ranking was
    row["best_relevance"] = max((r.get("relevance") or 0.0 for r in extracted), default=None)
    row["best_right_relevance"] = max((r.get("relevance") or 0.0 for r in right_ones), default=None)
    row["extracted"] = [{"id": r["requirement_id"], "chunk": r["chunk_id"], "part": r.get("part"),
                         "relevance": r.get("relevance"), "score": r.get("score"), "verified": r.get("verified"),
                         "reason": r.get("rejection_reason"), "why": (r.get("rationale") or "")[:90],
                         "right": r["requirement_id"] in right_ids, "binding": r.get("binding", True),
                         "answering": any(overlaps(r["exact_quote"], g["text"]) for g in gold)}
                        for r in extracted]
    if not gold:
        return row

    def right(r: dict[str, Any], g: dict[str, Any]) -> bool:
        return right_section(r, chunks.get(r["chunk_id"], {}), file_of, g)

    row["section"] = any(right(r, g) for r in cited for g in gold)
    row["text"] = any(overlaps(r["exact_quote"], g["text"]) for r in cited for g in gold)
    row["precision"] = (sum(any(right(r, g) for g in gold) for r in cited) / len(cited)) if cited else None
    row["binding"] = [bool(r.get("binding", True)) for r in cited]
    row["coverage"] = sum(any(overlaps(r["exact_quote"], g["text"]) or right(r, g) and g["text"] in r["exact_quote"]
                              for r in cited) for g in gold) / len(gold)
    if question["type"] == "two-part":
        parts = result.get("parts") or []
        ok = []
        for n in (1, 2):
            golds = [g for g in gold if g.get("part") == n]
            ok.append(any(right(r, g) for i in range(len(parts)) for r in cited_requirements(result, i)
                          for g in golds if _part_matches(parts, i, n)))
        row["both_parts"] = all(ok)
    if question["type"] == "conflict":
        files = {file_of.get(r["document_id"]) for r in cited}
        row["conflict_flagged"] = bool(result.get("conflicts")) and {g["doc"] for g in gold} <= files
    return row


def _part_matches(parts: list[dict[str, Any]], index: int, n: int) -> bool:
    """Part `index` of the answer belongs to question part `n`: the first parts go to 1, the last to 2."""
    if len(parts) < 2:
        return True
    return (index < len(parts) - 1) if n == 1 else index == len(parts) - 1


_DIRECT_PIECE = re.compile(r"(.+?)\s*\[(REQ-[SP]\d{3})(?:, REQ-[SP]\d{3})*\]")


def direct_cuts(row: dict[str, Any]) -> tuple[int, int]:
    """(direct answer pieces cut inside a sentence of their quote and marked "\u2026", those cut and not marked):
    each piece of a direct answer ("X [REQ-P001]", "The sources differ: X [REQ-S001], while Y [REQ-P002]") found in
    the quote it cites (`agents.compose.cut_inside`: opening after no sentence end or list label, or ending before
    no sentence end)."""
    quotes = {c["id"]: c["quote"] for c in row.get("cited", [])}
    marked = unmarked = 0
    for direct in row.get("direct", []):
        for m in _DIRECT_PIECE.finditer(re.sub(r"^The sources differ:\s*", "", direct)):
            piece = re.sub(r"^(?:,?\s*while\s+)", "", m.group(1).strip())
            cut = cut_inside(piece.strip(f"{ELLIPSIS} "), quotes.get(m.group(2), ""))
            if cut is None:
                continue  # a table row read under its header, a lead-in and its point, a quote not cited
            marked += any(cut) and ELLIPSIS in piece
            unmarked += any(cut) and ELLIPSIS not in piece
    return marked, unmarked


def summary(rows: list[dict[str, Any]], seconds: list[float]) -> dict[str, Any]:
    answerable = [r for r in rows if r["type"] not in ("out-of-scope", "provision")]
    provisions = [r for r in rows if r["type"] == "provision"]
    answered = [r for r in answerable if r["answered"]]
    out_of_scope = [r for r in rows if r["type"] == "out-of-scope"]
    binding = [b for r in answerable for b in r.get("binding", [])]
    broad = [r["coverage"] for r in answerable if r["type"] == "broad"]
    two = [r["both_parts"] for r in answerable if "both_parts" in r]
    conflicts = [r["conflict_flagged"] for r in answerable if "conflict_flagged" in r]
    cuts = [direct_cuts(r) for r in rows]

    def share(values: list[Any]) -> float | None:
        return round(sum(map(bool, values)) / len(values), 4) if values else None

    def refused_by(rule: str) -> int:
        """Answerable questions citing no right passage whose answering quote (one that overlaps a gold text)
        was weighed and set aside by `rule`."""
        return sum(1 for r in answerable
                   if not any(e["right"] and e["verified"] for e in r.get("extracted", []))
                   and any(e.get("answering", e["right"]) and rule in (e["why"] or "")
                           for e in r.get("extracted", [])))

    return {"questions": len(rows), "answerable": len(answerable),
            "answered": share([r["answered"] for r in answerable]),
            "section": share([r["section"] for r in answerable]),
            "text": share([r["text"] for r in answerable]),
            "precision": round(statistics.mean(r["precision"] for r in answered), 4) if answered else None,
            "binding_cited": share(binding),
            "broad_coverage": round(statistics.mean(broad), 4) if broad else None,
            "both_parts": share(two), "conflicts_flagged": share(conflicts),
            # answers to questions that are not about a conflict which show one anyway (each worth a look: a
            # conflict the labels did not ask about, or a false one)
            "conflicts_elsewhere": sum(1 for r in rows if r["type"] != "conflict" and r.get("conflicts_shown")),
            "out_of_scope_refused": share([not r["answered"] for r in out_of_scope]),
            "high_confidence_out_of_scope": sum(r["answered"] and r["confidence"] == "high" for r in out_of_scope),
            "right_extracted": share([r.get("best_right_relevance") is not None for r in answerable]),
            # direct answers that leave their sentence: marked with an ellipsis, and not (none should be)
            "direct_excerpts": sum(marked for marked, _ in cuts),
            "direct_cut_unmarked": sum(unmarked for _, unmarked in cuts),
            "refused_by_gate": refused_by("below the gate"),
            "refused_by_time_rule": refused_by("asks for a time"),
            "provision_answered": share([r["answered"] for r in provisions]),
            "provision_section": share([r["section"] for r in provisions]),
            "provision_precision": round(statistics.mean(r["precision"] for r in provisions if r["answered"]), 4)
            if any(r["answered"] for r in provisions) else None,
            "ask_seconds_p50": round(statistics.median(seconds), 3) if seconds else None}


def _database(base_url: str, name: str) -> str:
    with psycopg.connect(base_url, autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            admin.execute(f'CREATE DATABASE "{name}"')
    return base_url.replace("/postgres?", f"/{name}?", 1)


def ingest_corpus(conn: Any, embedder: Embedder, settings: Settings, folder: Path, spec: dict[str, Any]) -> None:
    """Ingest every document a corpus's questions.yaml lists, each with its source type and title."""
    for doc in spec["documents"]:
        done = ingest_paths(conn, embedder, settings, [folder / "docs" / doc["file"]],
                            source_type=doc["source_type"], title=doc.get("title"))
        if done.failed:
            raise SystemExit(f"{folder.name}: ingest failed: {done.failed}")


def run_corpus(folder: Path, settings: Settings, embedder: Embedder, limit: int | None,
               out: Any, types: list[str] | None = None, ids: set[str] | None = None) -> dict[str, Any] | None:
    """Ask the corpus's questions (of `types`, of `ids`, where given) and give its figures; None where none is
    asked."""
    from agents.deps import Deps
    from agents.research import run_research

    spec = yaml.safe_load((folder / "questions.yaml").read_text(encoding="utf-8"))
    asked = [q for q in spec["questions"] if (not types or q["type"] in types) and (ids is None or q["id"] in ids)]
    if not asked:
        return None
    with dbmod.connection(settings) as conn:
        ingest_corpus(conn, embedder, settings, folder, spec)
        file_of = {d.id: Path(d.source_uri).name for d in store.list_documents(conn)}
        twice = sorted(name for name in set(file_of.values()) if list(file_of.values()).count(name) > 1)
        if twice:  # a document's identity is its path: a copy of the tree ingests its own, beside the first
            print(f"{folder.name}: WARNING: {', '.join(twice)} current more than once (ingested from another copy of "
                  "the tree, and changed since): answers draw on both; drop the corpus's database or run with "
                  "--folder pointing at the copy first ingested", file=sys.stderr, flush=True)
        deps = Deps(conn=conn, embedder=embedder, settings=settings, retriever=Retriever(conn, embedder, settings))
        run_research("warm-up question about record keeping", deps)
        rows, seconds = [], []
        for question in asked[:limit]:
            started = time.perf_counter()
            result = run_research(question["question"], deps).evidence_result or {}
            seconds.append(time.perf_counter() - started)
            rows.append(score(question, result, file_of))
            if out is not None:
                out.write(json.dumps({"corpus": folder.name, **rows[-1]}) + "\n")
                out.flush()
    return summary(rows, seconds)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", default=None, help="a folder name under bench/corpora")
    parser.add_argument("--folder", type=Path, action="append", default=[],
                        help="a corpus folder elsewhere, laid out as bench/corpora/README.md says (questions.yaml, "
                             "docs/): your own labelled set, measured beside or instead of (with --corpus none) "
                             "the shipped ones")
    parser.add_argument("--limit", type=int, default=None, help="first N questions of each corpus")
    parser.add_argument("--type", action="append", default=None, dest="types",
                        help="ask only the questions of this type (paraphrase, broad, two-part, conflict, "
                             "out-of-scope, provision); repeat for several")
    parser.add_argument("--ids", type=Path, default=None,
                        help="ask only the questions whose ids this file lists (one a line): those a change reads "
                             "otherwise")
    parser.add_argument("--out", type=Path, default=None, help="one JSON line per question")
    parser.add_argument("--summarize", type=Path, default=None, help="print the figures of a file --out wrote, "
                                                                     "asking nothing")
    args = parser.parse_args(argv)
    if args.summarize:
        rows: dict[str, list[dict[str, Any]]] = {}
        for line in args.summarize.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            rows.setdefault(row["corpus"], []).append(row)
        for name, mine in rows.items():
            print(name, json.dumps(summary(mine, [])))
        return

    settings = Settings(memory_enabled=False)
    embedder = Embedder.from_settings(settings)
    home = ROOT / "bench" / ".cache" / f"corpora-{embedder.sha256[:12]}"
    home.mkdir(parents=True, exist_ok=True)
    settings = settings.model_copy(update={"home": home})
    base = embedded_db.start(settings)
    folders = sorted(p.parent for p in CORPORA.glob("*/questions.yaml"))
    if args.corpus:
        folders = [f for f in folders if f.name in args.corpus]
    folders += [f.resolve() for f in args.folder]
    ids = set(args.ids.read_text(encoding="utf-8").split()) if args.ids else None
    figures: dict[str, Any] = {}
    out = args.out.open("w", encoding="utf-8") if args.out else None
    try:
        for folder in folders:
            corpus = settings.model_copy(update={"database_url": _database(base, f"corpus_{folder.name}")})
            found = run_corpus(folder, corpus, embedder, args.limit, out, args.types, ids)
            if found is None:
                continue
            figures[folder.name] = found
            print(folder.name, json.dumps(figures[folder.name]), flush=True)
    finally:
        if out is not None:
            out.close()
        embedded_db.stop(settings)
    print(json.dumps({"corpora": figures, "relevance_model": embedder.identity}))


if __name__ == "__main__":
    main()
