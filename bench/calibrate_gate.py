"""Fit the gate head (engine.relevance.scorer.GATE_FEATURES) on passages the selection chose, on every corpus.

    python bench/calibrate_gate.py collect --out ROWS.jsonl [--corpus NAME ...] [--obliqa N]
    python bench/calibrate_gate.py fit ROWS.jsonl [--write] [--features pair_logit,cross,...]
    python bench/calibrate_gate.py curve ROWS.jsonl

`collect` asks every question of the development corpora (bench/corpora/, as bench/corpora.py does) and the
first N ObliQA dev questions of the `calibrate` split (bench.obliqa.obliqa_split, by passage: all their gold
passages fall in the calibrate share; never the `heldout` split) as `evidence ask` asks them, and writes one
row per passage that reached the gate (each (part, chunk) of the extracted requirements): the gate head's
features, the old gate's decision (`today`: the pair head at `gate_selected`, or the ranking at
`gate_confident`) and the label (the passage is in a right section; for ObliQA, a gold passage). Out-of-scope
questions give only negatives.

`fit` fits the gate head on all rows and reports, leaving one corpus out at a time (the head and its threshold
fitted on the others only): per corpus, the right passages passed (recall), the wrong ones passed, the
questions whose best right passage is passed, and out-of-scope questions with any passage passed, beside the
old gate (`today`) and the head the engine ships (`shipped`) on the same rows. A judge corpus (`judge: true`
in its questions.yaml) is only reported, by the head fitted on the development corpora: no head is fitted on
it and no threshold chosen by it. The threshold maximises, on the fitting rows, the mean over corpora of the
share of answerable questions whose right passage passes less the share of out-of-scope questions with any
passage passed (Youden's J at the question level: a false refusal and a near-miss answered weigh alike), among
those that pass at most `OUT_OF_SCOPE_PASS` of out-of-scope questions and at most the share of wrong passages
today's gate lets through. (Until 0.5.0 it was the threshold passing the most right passages with at most 15%
of out-of-scope questions passed; with the 0.5.0 encoder that refused the right passage of 16% of ObliQA
calibration questions and of half of two development corpora's.)
`--write` stores the head fitted on every row and its threshold (`gate_head`) in the model's
scorer.json. Figures of corpora a head was fitted on are development figures, not held-out ones.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.citations import gold_of, passage_keys  # noqa: E402
from bench.corpora import CORPORA, _database, right_section  # noqa: E402
from bench.obliqa import ingest as ingest_obliqa  # noqa: E402
from bench.obliqa import obliqa_split  # noqa: E402
from engine import db as dbmod  # noqa: E402
from engine import embedded_db  # noqa: E402
from engine.config import Settings  # noqa: E402
from engine.ingest.pipeline import ingest_paths  # noqa: E402
from engine.relevance.scorer import GATE_FEATURES, Head, load_scorer, sigmoid  # noqa: E402
from engine.search import store  # noqa: E402
from engine.search.embeddings import Embedder  # noqa: E402
from engine.search.retrieval import Retriever  # noqa: E402

OUT_OF_SCOPE_PASS = 0.30  # most out-of-scope questions' chosen passages the gate may pass (fitting rows)
OBLIQA = ROOT.parent / "shared" / "obliqa"


def gate_rows(result: dict[str, Any], model: Any, chunks: dict[str, Any], label: Any,
              headings: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One row per (part, chunk) of the extracted requirements: features, today's decision, label, and each
    chunk's section heading (`headings`) as the row's `heading`."""
    headings = headings or {}
    parts = {p["index"]: p for p in result.get("parts") or []}
    seen: dict[tuple[int, str], dict[str, Any]] = {}
    for req in result.get("extracted_requirements", []):
        key = (int(req.get("part") or 0), req["chunk_id"])
        if key not in seen and req["chunk_id"] in chunks:
            seen[key] = req
    thresholds = model.thresholds
    best: dict[int, float] = defaultdict(float)  # each part's best passage at the gate, as verify reads it
    for (index, _), req in seen.items():
        best[index] = max(best[index], float(req.get("relevance") or 0.0))
    rows = []
    for (index, chunk_id), req in seen.items():
        part = parts.get(index) or {"question": result.get("question", "")}
        relevance = float(req.get("relevance") or 0.0)
        text = chunks[chunk_id]["text"]
        heading = headings.get(chunk_id, "")
        features = model.gate_rows(part["question"], [text], [relevance], best[index])[0]
        pair = float(sigmoid(features["pair_logit"]))
        chunk = chunks[chunk_id]
        rows.append({"part": index, "chunk": chunk_id, "label": bool(label(req, chunk)),
                     "question": part["question"], "text": text, "heading": heading,
                     "source_type": chunk.get("source_type"), "binding": req.get("binding", True),
                     "position": sorted((-float(r.get("relevance") or 0.0) for (i, _), r in seen.items()
                                         if i == index)).index(-relevance),
                     "relevance": relevance, "pair": round(pair, 4),
                     "today": pair >= thresholds["gate_selected"] or relevance >= thresholds["gate_confident"],
                     "verified": [r.get("verified") for r in result["extracted_requirements"]
                                  if r["chunk_id"] == chunk_id and int(r.get("part") or 0) == index],
                     **{f: round(float(v), 5) for f, v in features.items()}})
    return rows


def _headings(conn: Any, chunks: dict[str, Any]) -> dict[str, str]:
    return {cid: c.section_heading for cid, c in store.get_chunks(conn, list(chunks)).items()}


def _ask(deps: Any, question: str) -> dict[str, Any]:
    from agents.research import run_research

    return run_research(question, deps).evidence_result or {}


def collect(args: argparse.Namespace) -> None:
    from agents.deps import Deps

    settings = Settings(memory_enabled=False)
    embedder = Embedder.from_settings(settings)
    out = args.out.open("w", encoding="utf-8")
    home = ROOT / "bench" / ".cache" / f"corpora-{embedder.sha256[:12]}"
    home.mkdir(parents=True, exist_ok=True)
    corpora = settings.model_copy(update={"home": home})
    base = embedded_db.start(corpora)
    try:
        for folder in sorted(p.parent for p in CORPORA.glob("*/questions.yaml")):
            if args.corpus and folder.name not in args.corpus:
                continue
            spec = yaml.safe_load((folder / "questions.yaml").read_text(encoding="utf-8"))
            mine = corpora.model_copy(update={"database_url": _database(base, f"corpus_{folder.name}")})
            with dbmod.connection(mine) as conn:
                for doc in spec["documents"]:
                    ingest_paths(conn, embedder, mine, [folder / "docs" / doc["file"]],
                                 source_type=doc["source_type"], title=doc.get("title"))
                file_of = {d.id: Path(d.source_uri).name for d in store.list_documents(conn)}
                deps = Deps(conn=conn, embedder=embedder, settings=mine, retriever=Retriever(conn, embedder, mine))
                model = deps.retriever.relevance_model()
                for q in spec["questions"]:
                    result = _ask(deps, q["question"])
                    chunks = result.get("evidence_chunks", {})
                    gold = q.get("gold") or []

                    def label(req: dict[str, Any], chunk: dict[str, Any], gold: list[Any] = gold,
                              file_of: dict[str, str] = file_of) -> bool:
                        return any(right_section(req, chunk, file_of, g) for g in gold)

                    for row in gate_rows(result, model, chunks, label, _headings(conn, chunks)):
                        out.write(json.dumps({"corpus": folder.name, "id": q["id"], "type": q["type"], **row}) + "\n")
                    out.flush()
                print(folder.name, "done", file=sys.stderr, flush=True)
    finally:
        embedded_db.stop(corpora)
    if args.obliqa:
        home = ROOT / "bench" / ".cache" / f"obliqa-{embedder.sha256[:12]}"
        home.mkdir(parents=True, exist_ok=True)
        mine = settings.model_copy(update={"home": home})
        ingest_obliqa(mine, embedder, OBLIQA / "documents")
        questions = [q for q in json.loads((OBLIQA / "ObliQA_dev.json").read_text())
                     if obliqa_split(q) == "calibrate"][: args.obliqa]
        try:
            with dbmod.connection(mine) as conn:
                deps = Deps(conn=conn, embedder=embedder, settings=mine, retriever=Retriever(conn, embedder, mine))
                model = deps.retriever.relevance_model()
                for i, q in enumerate(questions, 1):
                    result = _ask(deps, q["Question"])
                    keys = passage_keys(conn, [r["chunk_id"] for r in result.get("extracted_requirements", [])])
                    gold = gold_of(q)

                    def passage_label(req: dict[str, Any], chunk: dict[str, Any], gold: set[str] = gold,
                                      keys: dict[str, str] = keys) -> bool:
                        return keys.get(req["chunk_id"]) in gold

                    chunks = result.get("evidence_chunks", {})
                    for row in gate_rows(result, model, chunks, passage_label, _headings(conn, chunks)):
                        out.write(json.dumps({"corpus": "obliqa", "id": q["QuestionID"], "type": "paraphrase",
                                              **row}) + "\n")
                    out.flush()
                    if i % 50 == 0:
                        print(f"obliqa {i}/{len(questions)}", file=sys.stderr, flush=True)
        finally:
            embedded_db.stop(mine)
    out.close()


def _questions(rows: list[dict[str, Any]], passed: list[bool]) -> dict[str, list[list[tuple[dict[str, Any], bool]]]]:
    """Rows with their decisions by question: answerable ones with a right passage at the gate, all answerable
    ones, and out-of-scope ones."""
    by_q: dict[str, list[tuple[dict[str, Any], bool]]] = defaultdict(list)
    for r, p in zip(rows, passed, strict=True):
        by_q[f"{r['corpus']}/{r['id']}"].append((r, p))
    answerable = [q for q in by_q.values() if q[0][0]["type"] != "out-of-scope"]
    return {"with_right": [q for q in answerable if any(r["label"] for r, _ in q)], "answerable": answerable,
            "out_of_scope": [q for q in by_q.values() if q[0][0]["type"] == "out-of-scope"]}


def figures(rows: list[dict[str, Any]], passed: list[bool]) -> dict[str, Any]:
    """Question-level figures of a gate's decisions: answerable questions with a right passage at the gate
    whose right passage passes, out-of-scope questions with any passage passed, and the mean share of right
    passages among those passed (answerable questions with any passed)."""
    q = _questions(rows, passed)
    right = sum(any(p for r, p in x if r["label"]) for x in q["with_right"])
    shares = [sum(r["label"] for r, p in x if p) / sum(p for _, p in x)
              for x in q["answerable"] if any(p for _, p in x)]
    return {"right_passed": f"{right}/{len(q['with_right'])}",
            "right_passed_share": round(right / len(q["with_right"]), 3) if q["with_right"] else None,
            "out_of_scope_passed": f"{sum(any(p for _, p in x) for x in q['out_of_scope'])}/{len(q['out_of_scope'])}",
            "precision": round(statistics.mean(shares), 3) if shares else None}


def _threshold(head: Head, rows: list[dict[str, Any]]) -> float:
    """The threshold with the highest mean over corpora of the share of right passages passed (`figures`) on
    `rows` less the share of out-of-scope questions with a passage passed, among those that pass at most
    OUT_OF_SCOPE_PASS of out-of-scope questions and no larger share of the wrong passages of answerable
    questions than today's gate."""
    probs = [float(p) for p in sigmoid(head.logits(rows))]
    corpora = sorted({r["corpus"] for r in rows})
    wrong = [(p, r) for p, r in zip(probs, rows, strict=True) if not r["label"] and r["type"] != "out-of-scope"]
    today_wrong = sum(r["today"] for _, r in wrong) / max(1, len(wrong))
    best = (-1.0, 1.0)
    for t in sorted({round(p, 3) for p in probs}):
        passed = [p >= t for p in probs]
        outside = _questions(rows, passed)["out_of_scope"]
        if outside and sum(any(p for _, p in x) for x in outside) > OUT_OF_SCOPE_PASS * len(outside):
            continue
        if sum(p >= t for p, _ in wrong) > today_wrong * len(wrong):
            continue
        value = statistics.mean(figures([r for r in rows if r["corpus"] == c],
                                        [p for p, r in zip(passed, rows, strict=True) if r["corpus"] == c]
                                        )["right_passed_share"] or 0.0 for c in corpora)
        if outside:
            value -= sum(any(p for _, p in x) for x in outside) / len(outside)
        if value > best[0]:
            best = (value, t)
    return best[1]


def _fit_head(rows: list[dict[str, Any]], l2: float, features: tuple[str, ...] = GATE_FEATURES) -> Head:
    """The gate head on `rows`, each corpus weighing as much as another (ObliQA's many questions would
    otherwise fit it to one corpus's wording again)."""
    count: dict[str, int] = defaultdict(int)
    for r in rows:
        count[r["corpus"]] += 1
    return Head.fit(rows, [int(r["label"]) for r in rows], features, l2=l2,
                    weights=[1.0 / count[r["corpus"]] for r in rows])


def judges() -> frozenset[str]:
    """The corpora whose questions.yaml says `judge: true`: no head is fitted on them, nor a threshold chosen."""
    return frozenset(f.parent.name for f in CORPORA.glob("*/questions.yaml")
                     if yaml.safe_load(f.read_text(encoding="utf-8")).get("judge"))


def fit(args: argparse.Namespace) -> None:
    every = [json.loads(line) for line in args.rows.read_text(encoding="utf-8").splitlines() if line.strip()]
    held_out = judges()
    # what the head is fitted on: never a judge corpus, ObliQA only when asked
    rows = [r for r in every if (args.with_obliqa or r["corpus"] != "obliqa") and r["corpus"] not in held_out]
    corpora = sorted({r["corpus"] for r in every})
    features = tuple(args.features.split(",")) if args.features else GATE_FEATURES
    shipped = load_scorer(Settings().relevance_dir)
    report: dict[str, Any] = {}
    for held in corpora:
        train = [r for r in rows if r["corpus"] != held]
        test = [r for r in every if r["corpus"] == held]
        head = _fit_head(train, args.l2, features)
        t = _threshold(head, train)
        probs = sigmoid(head.logits(test))
        report[held] = {"threshold": t, "gate_head": figures(test, [bool(p >= t) for p in probs]),
                        "today": figures(test, [r["today"] for r in test])}
        if shipped.gate is not None:  # the head the engine ships, fitted on the corpora its info names
            now = sigmoid(shipped.gate.logits(test))
            report[held]["shipped"] = figures(test, [bool(p >= shipped.thresholds["gate_head"]) for p in now])
        print(held, json.dumps(report[held]), flush=True)
    head = _fit_head(rows, args.l2, features)
    t = _threshold(head, rows)
    probs = sigmoid(head.logits(every))
    whole = {c: figures([r for r in every if r["corpus"] == c],
                        [bool(p >= t) for p, r in zip(probs, every, strict=True) if r["corpus"] == c]) for c in corpora}
    print("fitted on all rows (development figures):", json.dumps(whole))
    print(json.dumps({"features": list(features), "weights": list(head.weights), "threshold": t,
                      "rows": len(rows), "leave_one_corpus_out": report,
                      }))
    if args.write:
        model_dir = Settings().relevance_dir
        scorer = load_scorer(model_dir)
        info = {**scorer.info, "gate_head_rows": len(rows), "gate_head_corpora": corpora}
        updated = type(scorer)(pair=scorer.pair, rank=scorer.rank, thresholds={**scorer.thresholds, "gate_head": t},
                               name=scorer.name, info=info, rank_pooled=scorer.rank_pooled, rank_late=scorer.rank_late,
                               context=scorer.context, gate=head)
        print("wrote", updated.save(model_dir))


def curve(args: argparse.Namespace) -> None:
    """The head fitted leaving each corpus out (each corpus's rows scored by a head fitted on the others, no judge
    corpus fitted on) beside the head the engine ships, over a sweep of thresholds: answerable questions whose right
    passage passes, out-of-scope questions with any passage passed, and wrong passages passed, all corpora
    together; the two heads compared where they pass as many out-of-scope questions (or right passages)."""
    every = [json.loads(line) for line in args.rows.read_text(encoding="utf-8").splitlines() if line.strip()]
    held_out = judges()
    rows = [r for r in every if r["corpus"] != "obliqa" and r["corpus"] not in held_out]
    loco = [0.0] * len(every)
    for held in sorted({r["corpus"] for r in every}):
        head = _fit_head([r for r in rows if r["corpus"] != held], args.l2)
        at = [i for i, r in enumerate(every) if r["corpus"] == held]
        for i, p in zip(at, sigmoid(head.logits([every[i] for i in at])), strict=True):
            loco[i] = float(p)
    shipped = load_scorer(Settings().relevance_dir)
    heads = {"left-out": loco}
    if shipped.gate is not None:
        heads["shipped"] = [float(p) for p in sigmoid(shipped.gate.logits(every))]
    for name, probs in heads.items():
        for t in (0.30, 0.34, 0.38, 0.40, 0.42, 0.44, 0.46, 0.50):
            q = _questions(every, [p >= t for p in probs])
            wrong = sum(p for x in q["answerable"] for r, p in x if not r["label"])
            print(json.dumps({"head": name, "threshold": t,
                              "right_passed": f"{sum(any(p for r, p in x if r['label']) for x in q['with_right'])}/"
                                              f"{len(q['with_right'])}",
                              "out_of_scope_passed": f"{sum(any(p for _, p in x) for x in q['out_of_scope'])}/"
                                                     f"{len(q['out_of_scope'])}",
                              "wrong_passages_passed": wrong}))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--corpus", action="append", default=None)
    c.add_argument("--obliqa", type=int, default=0, help="first N ObliQA dev questions of the calibrate split")
    f = sub.add_parser("fit")
    f.add_argument("rows", type=Path)
    f.add_argument("--l2", type=float, default=1.0)
    f.add_argument("--write", action="store_true")
    f.add_argument("--features", default="", help="comma-separated features to fit on (default GATE_FEATURES)")
    f.add_argument("--with-obliqa", action="store_true", help="fit on ObliQA's rows too (by default they are only "
                                                              "reported: a held-out corpus for the head)")
    v = sub.add_parser("curve")
    v.add_argument("rows", type=Path)
    v.add_argument("--l2", type=float, default=1.0)
    args = parser.parse_args(argv)
    {"collect": collect, "fit": fit, "curve": curve}[args.command](args)


if __name__ == "__main__":
    main()
