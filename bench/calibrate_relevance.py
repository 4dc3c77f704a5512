"""Fit the relevance model's rank head and selection cut on retrieval runs; report held-out figures.

    python bench/calibrate_relevance.py --model DIR --documents ../shared/obliqa/documents \
        --questions ../shared/obliqa/ObliQA_dev.json [--write]

1. Ingests the ObliQA documents into a benchmark database embedded by the model in DIR (one per
   model hash, reused).
2. For every dev question, one hybrid search (no reranking), top `--depth` chunks, with the rank
   features of each candidate (late interaction included, and the cross-encoder's logit when the model
   has one in DIR/cross) and its label (a gold passage or not).
3. Questions of the `calibrate` split (bench.obliqa.obliqa_split: by passage, seed 13) fit the rank head;
   each list then gains the chunks adjoining its best NEIGHBOUR_TOP by that head (as the engine's
   reranking adds them), on which the context head is fitted; on these lists the calibration questions
   choose the selection cut (floor, gap to the best, at most N) with the most passage-level recall
   while precision holds `PRECISION_FLOOR` (0.72) and at least 90% of questions cite something
   (else the best F1), together with the gate threshold for chosen
   passages (`gate_selected`, applied after the cut as the pipeline does) among those that let at
   most `OFF_TOPIC_PASS` of off-topic passages through (each question against the top 3 candidates of
   another question about another document). The `train` split is never used (the encoder saw it).
   The split is by passage (engine.relevance.pairs.passage_split): a question is in `calibrate` or
   `heldout` only when all its gold passages fall in that share, so none of them trained the encoder;
   questions answered across two shares are skipped. `--split-by question` gives the split by question
   id used before 0.5.0 (it leaked: 55% of held-out questions had a gold passage the encoder trained on).
4. Prints, for the `heldout` split only: Recall@10 / MAP@10 without and with reranking, the
   selection's passage precision/recall/answered share, top-1/2/3 references, and the gate's
   balanced accuracy on held-out (question, passage, label) pairs. `--write` stores the heads and
   thresholds in DIR/scorer.json. Last line: one JSON object.
5. `--corpora`: the rank heads are fitted on the development corpora's train-half questions too (bench/corpora/,
   split by gold section as bench/corpora_pairs.py splits them; a hit's label is its right section), and their
   held-out half's Recall@10 / MAP@10 is reported fused, reranked by the scorer's heads as they were, and by the
   heads fitted here. Measured on 0.5.0's models it orders both the corpora and ObliQA worse (docs/relevance.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
from collections.abc import Callable
from itertools import product
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.select import cut  # noqa: E402
from bench.corpora_pairs import corpora_databases, load_corpus, question_split, section_key  # noqa: E402
from bench.corpora_retrieval import item_of  # noqa: E402
from bench.obliqa import SPLIT_BY, gold_passages, ingest, obliqa_split, recall_map  # noqa: E402
from engine import db as dbmod  # noqa: E402
from engine.config import EvidenceSettings, Settings  # noqa: E402
from engine.relevance.candidate import candidate  # noqa: E402
from engine.relevance.cross import load_cross_encoder  # noqa: E402
from engine.relevance.model import NEIGHBOUR_TOP, RelevanceModel, neighbour_candidate  # noqa: E402
from engine.relevance.pairs import read_pairs  # noqa: E402
from engine.relevance.scorer import (  # noqa: E402
    CONTEXT_RANK_FEATURES,
    CROSS,
    CROSS_RANK_FEATURES,
    FOREIGN_CONFIDENT,
    LATE_INTERACTION,
    OFF_TOPIC_PASS,
    POOLED_RANK_FEATURES,
    RANK_FEATURES,
    Head,
    Scorer,
    balanced_accuracy,
    load_scorer,
    pair_features,
    sigmoid,
    with_neighbours,
)
from engine.relevance.train import with_random_negatives  # noqa: E402
from engine.search import store  # noqa: E402
from engine.search.embeddings import Embedder  # noqa: E402
from engine.search.retrieval import Retriever, stored_cosines  # noqa: E402

# Of cited passages, at least this share answers the question: the product's 0.70 and a margin for what the
# pipeline loses against this simulation (held-out precision 0.7418 simulated, 0.7343 end to end; a cut chosen
# at 0.7001 on calibration questions would leave the answers' precision at the target's edge).
PRECISION_FLOOR = 0.72
MIN_ANSWERED = 0.90  # of questions, at least this share cites something


def key_of(chunk: object) -> str:
    meta = chunk.metadata  # type: ignore[attr-defined]
    return f"{meta.get('DocumentID')}|{meta.get('PassageID')}"


def candidate_lists(settings: Settings, embedder: Embedder, questions: list[dict], depth: int,
                    split_by: str = "passage") -> list[dict]:
    """Per question: its split (`obliqa_split`), candidates (rank features inputs), their passage keys and
    the gold keys."""
    plain = settings.model_copy(update={"rerank": False})
    out = []
    with dbmod.connection(settings) as conn:
        retriever = Retriever(conn, embedder, plain)
        model = RelevanceModel.for_embedder(settings.relevance_dir, embedder)
        for i, q in enumerate(questions, 1):
            hits = retriever.search(q["Question"], k=depth)
            cands = candidates_of(hits, model, q["Question"])
            out.append({"question": q, "split": obliqa_split(q, by=split_by), "candidates": cands,
                        "keys": [key_of(h.chunk) for h in hits],
                        "gold": set(gold_passages(q))})
            if i % 200 == 0:
                print(f"searched {i}/{len(questions)}", file=sys.stderr, flush=True)
    return out


def candidates_of(hits: list, model: RelevanceModel, question: str) -> list[dict]:
    """The rank features' inputs of a search's hits (the encoder's cosine computed where the search has none)."""
    cands = [{**candidate(id=h.chunk_id, text=h.chunk.text, heading=h.chunk.section_heading,
                          cosine=h.dense_score, score=h.score, rank=r, dense_rank=h.dense_rank,
                          lexical_rank=h.lexical_rank, document_id=h.chunk.document_id,
                          ordinal=h.chunk.ordinal), "lexical": h.lexical_score}
             for r, h in enumerate(hits, 1)]
    missing = [c for c in cands if c["cosine"] is None]
    for c, x in zip(missing, model.cosines(question, [c["text"] for c in missing]), strict=True):
        c["cosine"] = x
    return cands


def corpora_lists(settings: Settings, embedder: Embedder, depth: int) -> tuple[list[dict], Path]:
    """Per answerable question of the development corpora (bench/corpora/): its candidates as `candidate_lists`
    builds them, split "corpora-train" / "corpora-heldout" as bench/corpora_pairs.py splits them (by gold section),
    each hit's key the gold section it is a right section for, else the chunk (bench/corpora_retrieval.py's
    `item_of`: a section's chunks count once). Cached in the corpora home, with the path returned."""
    with corpora_databases(None, embedder, settings) as databases:
        cache = databases[0][1].home / f"candidates-v1-depth{depth}.json"
        if cache.exists():
            return [{**it, "gold": set(it["gold"])} for it in json.loads(cache.read_text())], cache
        out = []
        model = RelevanceModel.for_embedder(settings.relevance_dir, embedder)
        for folder, corpus_settings in databases:
            with dbmod.connection(corpus_settings) as conn:
                corpus = load_corpus(conn, folder)
                retriever = Retriever(conn, embedder, corpus_settings.model_copy(update={"rerank": False}))
                for q in corpus.answerable():
                    golds = [section_key(corpus.name, g) for g in q["gold"]]
                    hits = retriever.search(q["question"], k=depth)
                    out.append({"question": {"Question": q["question"], "QuestionID": f"{corpus.name}:{q['id']}"},
                                "split": f"corpora-{question_split(golds)}",
                                "candidates": candidates_of(hits, model, q["question"]),
                                "keys": [item_of(corpus, h.chunk, q["gold"]) for h in hits], "gold": set(golds)})
            print(f"{corpus.name}: {sum(i['question']['QuestionID'].startswith(corpus.name + ':') for i in out)} "
                  "questions searched", file=sys.stderr, flush=True)
    write_cache(out, cache)
    return out, cache


def corpora_figures(items: list[dict], probs: list[list[float]] | None) -> dict:
    """`retrieval_figures` per corpus and over all the corpora's questions."""
    names = sorted({it["question"]["QuestionID"].split(":")[0] for it in items})
    out = {}
    for name in names:
        mine = [j for j, it in enumerate(items) if it["question"]["QuestionID"].startswith(name + ":")]
        out[name] = retrieval_figures([items[j] for j in mine], None if probs is None else [probs[j] for j in mine])
    out["all"] = retrieval_figures(items, probs)
    return out


def add_scores(items: list[dict], key: str, score: Callable[[str, list[str]], list[float]], cache: Path) -> None:
    """`score(question, texts)` of every candidate as `candidate[key]`, where any is missing; the candidate
    lists are written back to `cache`."""
    if all(key in c for it in items for c in it["candidates"]):
        return
    for i, it in enumerate(items, 1):
        for c, x in zip(it["candidates"], score(it["question"]["Question"], [c["text"] for c in it["candidates"]]),
                        strict=True):
            c[key] = x
        if i % 200 == 0:
            print(f"{key} {i}/{len(items)}", file=sys.stderr, flush=True)
    write_cache(items, cache)


def write_cache(items: list[dict], cache: Path) -> None:
    cache.write_text(json.dumps([{**it, "gold": sorted(it["gold"])} for it in items]))


def with_adjoining(conn: object, model: RelevanceModel, head: Head, items: list[dict], cache: Path,
                   cross_key: str) -> list[dict]:
    """Each list with the chunks adjoining its best NEIGHBOUR_TOP by `head` that it lacks, scored like the
    others (as the engine's reranking adds them: RelevanceModel.rank_with_neighbours; the cross-encoder's
    scores kept under `cross_key`, one per cross-encoder). They are kept per question (`adjoining`) and
    written back to `cache`."""
    out, changed = [], False
    for it in items:
        first = head.logits(rank_rows(model.scorer, it))
        best = [it["candidates"][i]["id"] for i in sorted(range(len(first)), key=lambda i: (-first[i], i))]
        best = best[:NEIGHBOUR_TOP]
        near = store.adjoining_chunks(conn, best)  # type: ignore[arg-type]
        have = {c["id"] for c in it["candidates"]}
        known, q = it.setdefault("adjoining", {}), it["question"]["Question"]
        fresh = {}  # chunk id -> chunk, adjoining and not scored before
        ids = []
        for origin in best:
            for chunk in near.get(origin, []):
                if chunk.id not in have:
                    have.add(chunk.id)
                    ids.append(chunk.id)
                    if chunk.id not in known:
                        known[chunk.id] = {**neighbour_candidate(chunk, origin), "key": key_of(chunk)}
                        fresh[chunk.id] = chunk
        if fresh:  # the index's own vectors give the cosines, as in the engine
            cosines = stored_cosines(conn, model, q, list(fresh))
            missing = [cid for cid in fresh if cid not in cosines]
            cosines.update(zip(missing, model.cosines(q, [fresh[cid].text for cid in missing]), strict=True))
            texts = [c.text for c in fresh.values()]
            for cid, late in zip(fresh, model.late_interactions(q, texts), strict=True):
                known[cid].update({"cosine": cosines[cid], LATE_INTERACTION: late})
        unscored = [cid for cid in ids if cross_key not in known[cid]]
        for cid, x in zip(unscored, model.cross_scores(q, [known[cid]["text"] for cid in unscored]), strict=True):
            known[cid][cross_key] = x
        changed = changed or bool(fresh or unscored)
        extra = [{**known[cid], CROSS: known[cid][cross_key]} for cid in ids]
        out.append({**it, "candidates": [*it["candidates"], *extra], "keys": [*it["keys"], *(e["key"] for e in extra)]})
    if changed:
        write_cache(items, cache)
    return out


def context_rows(scorer: Scorer, head: Head, item: dict) -> list[dict]:
    """The context head's features: the rank features with the neighbour's first-stage (`head`) probability."""
    rows = rank_rows(scorer, item)
    positions = [(c["document_id"], c["ordinal"]) for c in item["candidates"]]
    return with_neighbours(rows, list(sigmoid(head.logits(rows))), positions)


def rank_rows(scorer: Scorer, item: dict) -> list[dict]:
    from engine.relevance.scorer import rank_features

    q = item["question"]["Question"]
    rows = [pair_features(q, c["text"], c["cosine"], c["heading"]) for c in item["candidates"]]
    return rank_features(list(scorer.pair_logits(rows)), item["candidates"], rows)


def pair_probabilities(scorer: Scorer, item: dict) -> list[float]:
    q = item["question"]["Question"]
    rows = [pair_features(q, c["text"], c["cosine"], c["heading"]) for c in item["candidates"]]
    return list(sigmoid(scorer.pair_logits(rows)))


def off_topic_probabilities(scorer: Scorer, model: RelevanceModel, items: list[dict], seed: int = 5) -> list[float]:
    """The pair head's probability for each question against the top 3 candidates of another question
    about another document: regulatory text on some other subject, which the gate should not pass."""
    import random

    rng = random.Random(seed)
    out: list[float] = []
    for item in items:
        document = item["keys"][0].split("|")[0]
        other = rng.choice([o for o in items if o["keys"][0].split("|")[0] != document])
        q, cands = item["question"]["Question"], other["candidates"][:3]
        cosines = model.cosines(q, [c["text"] for c in cands])
        rows = [pair_features(q, c["text"], x, c["heading"]) for c, x in zip(cands, cosines, strict=True)]
        out.extend(float(p) for p in sigmoid(scorer.pair_logits(rows)))
    return out


def foreign_lists(model: RelevanceModel, items: list[dict], cache: Path, depth: int = 10, seed: int = 5) -> list[dict]:
    """Each question against the best `depth` candidates retrieved for a question about another document,
    scored for it as the engine scores a list (cosine, late interaction, cross-encoder; retrieval ranks and
    fused scores as retrieved): what the ranking makes of a list that holds no answer. Cached in `cache`."""
    import random

    rng = random.Random(seed)
    known = json.loads(cache.read_text()) if cache.exists() else {}
    out = []
    for item in items:
        document = item["keys"][0].split("|")[0]
        other = rng.choice([o for o in items if o["keys"][0].split("|")[0] != document])
        q, cands = item["question"]["Question"], [dict(c) for c in other["candidates"][:depth]]
        key = f"{item['question']['QuestionID']}|{other['question']['QuestionID']}"
        if key not in known:
            texts = [c["text"] for c in cands]
            known[key] = [[float(x) for x in model.cosines(q, texts)], model.late_interactions(q, texts),
                          model.cross_scores(q, texts)]
        cosines, lates, crosses = known[key]
        for i, c in enumerate(cands):  # no cross-encoder logits without one (cross_scores gives [])
            c.update({"cosine": cosines[i], LATE_INTERACTION: lates[i], **({CROSS: crosses[i]} if crosses else {})})
        out.append({"question": item["question"], "candidates": cands, "keys": other["keys"][:depth], "gold": set()})
    cache.write_text(json.dumps(known))
    return out


def confident_level(best_of_foreign: list[float]) -> float:
    """The lowest ranking probability (0.50-1.00 by 0.01) that the best of at most FOREIGN_CONFIDENT of the
    foreign lists reaches: a passage scored at least this passes the gate whatever the pair head says."""
    for level in (round(0.5 + 0.01 * i, 2) for i in range(51)):
        if sum(b >= level for b in best_of_foreign) <= FOREIGN_CONFIDENT * len(best_of_foreign):
            return level
    return 1.0


def gated_lists(items: list[dict], probs: list[list[float]], pair: list[list[float]], thresholds: dict,
                gate: float, extra: int = EvidenceSettings().extra_candidates) -> list[list[int]]:
    """As the pipeline cites (agents.select, agents.verify): the cut's passages and `extra` more are
    candidates; those whose pair probability is below `gate` drop out, unless the ranking scores them at least
    `gate_confident`; the cut is taken again over the rest (a rejected top passage does not block the next).
    The cited candidates of each list."""
    floor, gap, most = thresholds["select_floor"], thresholds["select_gap"], int(thresholds["select_max"])
    confident = thresholds.get("gate_confident", 1.0)
    chosen = []
    for p, q in zip(probs, pair, strict=True):
        order = sorted(range(len(p)), key=lambda i: (-p[i], i))
        candidates = [i for i in order[: len(cut(p, floor, gap, most)) + extra] if q[i] >= gate or p[i] >= confident]
        kept = cut([p[i] for i in candidates], floor, gap, most)
        chosen.append([candidates[j] for j in kept])
    return chosen


def gated_figures(items: list[dict], probs: list[list[float]], pair: list[list[float]], thresholds: dict,
                  gate: float) -> dict:
    """Citation figures of `gated_lists`."""
    chosen = gated_lists(items, probs, pair, thresholds, gate)
    return selection_figures(items, [[1.0 if i in c else 0.0 for i in range(len(p))] for c, p in
                                     zip(chosen, probs, strict=True)], 0.5, 1.0, int(thresholds["select_max"]))


def passages_in_order(keys: list[str], order: list[int]) -> list[str]:
    return list(dict.fromkeys(keys[i] for i in order))


def selection_figures(items: list[dict], probs: list[list[float]], floor: float, gap: float, most: int) -> dict:
    precision, recall, answered = [], [], 0
    for item, p in zip(items, probs, strict=True):
        cited = set(item["keys"][i] for i in cut(p, floor, gap, most))
        if cited:
            answered += 1
            precision.append(len(cited & item["gold"]) / len(cited))
        recall.append(len(cited & item["gold"]) / len(item["gold"]))
    n = len(items)
    p_, r_ = (statistics.mean(precision) if precision else 0.0), statistics.mean(recall)
    return {"precision": round(p_, 4), "recall": round(r_, 4), "answered": round(answered / n, 4),
            "f1": round(2 * p_ * r_ / (p_ + r_), 4) if p_ + r_ else 0.0}


def top_k_reference(items: list[dict], k: int) -> dict:
    return selection_figures(items, [[1.0 if i < k else 0.0 for i in range(len(it["keys"]))] for it in items],
                             0.5, 1.0, k)


def retrieval_figures(items: list[dict], probs: list[list[float]] | None) -> dict:
    recalls, maps = [], []
    for j, item in enumerate(items):
        order = list(range(len(item["keys"])))
        if probs is not None:
            order.sort(key=lambda i: -probs[j][i])
        r, m = recall_map(passages_in_order(item["keys"], order), item["gold"])
        recalls.append(r)
        maps.append(m)
    return {"recall@10": round(statistics.mean(recalls), 4), "map@10": round(statistics.mean(maps), 4)}


def gate_figures(scorer: Scorer, embedder: Embedder, pairs: list) -> dict:
    """The gate (pair head and its threshold) on held-out (question, passage, label) pairs."""
    model = RelevanceModel(scorer, embedder, shares_index=False)
    labels, probs = [], []
    by_question: dict[str, list] = {}
    for pair in pairs:
        by_question.setdefault(pair.question, []).append(pair)
    for question, mine in by_question.items():
        probs.extend(model.pair_probabilities(question, [p.passage for p in mine]))
        labels.extend(p.label for p in mine)
    threshold = scorer.thresholds["gate"]
    return {"gate_pairs": len(labels), "gate_threshold": threshold,
            "gate_balanced_accuracy": round(balanced_accuracy(labels, [x >= threshold for x in probs]), 4)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True, help="relevance model directory")
    parser.add_argument("--documents", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--pairs", type=Path, default=ROOT / "out" / "pairs" / "heldout.jsonl",
                        help="held-out pairs for the gate's balanced accuracy (bench/obliqa_pairs.py)")
    parser.add_argument("--depth", type=int, default=30)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--split-by", choices=SPLIT_BY, default="passage",
                        help="'passage' (default: no calibrate or held-out question shares a passage with "
                             "training) or 'question' (the split by question id before 0.5.0, which leaked)")
    parser.add_argument("--write", action="store_true", help="store the rank head and thresholds in MODEL")
    parser.add_argument("--corpora", action="store_true",
                        help="fit the rank heads on the development corpora's train-half questions too and report "
                             "their held-out half's figures (an encoder trained on those halves, as 0.5.0's was, "
                             "is surer of them than of unseen text: the heads then learn to trust it too much)")
    parser.add_argument("--heldout-ids", type=Path, default=None,
                        help="a JSON list of question ids: report held-out figures on those questions only "
                             "(e.g. those no compared model trained on)")
    args = parser.parse_args(argv)

    scorer = load_scorer(args.model)
    encoder_sha = json.loads((args.model / "relevance.json").read_text())["sha256"]
    home = ROOT / "bench" / ".cache" / f"obliqa-{encoder_sha[:12]}"  # one database per encoder
    home.mkdir(parents=True, exist_ok=True)
    settings = Settings(home=home, relevance_model=args.model, embedding_backend="onnx")
    embedder = Embedder.from_settings(settings)
    ingest(settings, embedder, args.documents)
    # calibrate and heldout only: the train split and (by passage) questions of no split are skipped
    questions = [q for q in json.loads(args.questions.read_text())
                 if obliqa_split(q, by=args.split_by) in ("calibrate", "heldout")]
    questions = questions[: args.limit]
    by_passage = "" if args.split_by == "question" else "-by-passage"  # the question split's caches stay valid
    cache = home / f"candidates-v2-depth{args.depth}{by_passage}-{len(questions)}.json"
    if cache.exists():  # retrieval does not depend on the scorer: refits reuse the lists
        items = [{**it, "gold": set(it["gold"]), "split": obliqa_split(it["question"], by=args.split_by)}
                 for it in json.loads(cache.read_text())]
    else:
        items = candidate_lists(settings, embedder, questions, args.depth, args.split_by)
        write_cache(items, cache)
    # late interaction once per index, the cross-encoder's logits once per cross-encoder; one model scores
    # every list this script builds (late interaction, neighbours, foreign lists)
    scoring = RelevanceModel.for_embedder(args.model, embedder)
    add_scores(items, LATE_INTERACTION, scoring.late_interactions, cache)
    # A freshly trained model's scorer has no rank head reading the cross-encoder yet, so the model leaves
    # it out: calibration reads the model directory's cross-encoder whatever the current heads read.
    scoring.cross = scoring.cross or load_cross_encoder(args.model)
    cross = scoring.cross
    if cross is not None:
        key = f"{CROSS}:{cross.sha256[:12]}"
        add_scores(items, key, cross.scores, cache)
        for it in items:
            for c in it["candidates"]:
                c[CROSS] = c[key]
    calib = [it for it in items if it["split"] == "calibrate"]
    only = set(json.loads(args.heldout_ids.read_text())) if args.heldout_ids else None
    held = [it for it in items if it["split"] == "heldout" and (only is None or it["question"]["QuestionID"] in only)]

    corpora: list[dict] = []
    if args.corpora:
        corpora, corpora_cache = corpora_lists(settings, embedder, args.depth)
        add_scores(corpora, LATE_INTERACTION, scoring.late_interactions, corpora_cache)
        if cross is not None:
            add_scores(corpora, key, cross.scores, corpora_cache)
            for it in corpora:
                for c in it["candidates"]:
                    c[CROSS] = c[key]
    corpora_train = [it for it in corpora if it["split"] == "corpora-train"]
    corpora_held = [it for it in corpora if it["split"] == "corpora-heldout"]

    rows, labels = [], []
    for it in calib + corpora_train:
        rows.extend(rank_rows(scorer, it))
        labels.extend(int(k in it["gold"]) for k in it["keys"])
    rank_late = Head.fit(rows, labels, RANK_FEATURES)  # without a cross-encoder (Settings.cross_encoder off)
    rank = Head.fit(rows, labels, CROSS_RANK_FEATURES) if cross is not None else rank_late
    rank_pooled = Head.fit(rows, labels, POOLED_RANK_FEATURES)  # for Settings.late_interaction off
    fitted = Scorer(pair=scorer.pair, rank=rank, thresholds=dict(scorer.thresholds), name=scorer.name,
                    info={**scorer.info, "rank_head_questions": len(calib) + len(corpora_train),
                          "rank_head_corpora_questions": len(corpora_train)}, rank_pooled=rank_pooled,
                    rank_late=rank_late if cross is not None else None)

    def probabilities(subset: list[dict], head: Head = rank) -> list[list[float]]:
        return [list(sigmoid(head.logits(rank_rows(fitted, it)))) for it in subset]

    # The context head: each list with the chunks adjoining its best by the rank head (as the engine's
    # reranking adds them), each candidate scored again beside its neighbours' first-stage probability.
    # Selection and its gate are calibrated on these lists, the engine's selection seeing what its search
    # returned.
    calib_pool, held_pool = calib, held
    if cross is not None:
        with dbmod.connection(settings) as conn:
            expanded = with_adjoining(conn, scoring, rank, items, cache, f"{CROSS}:{cross.sha256[:12]}")
        calib_near = [it for it in expanded if it["split"] == "calibrate"]
        held_near = [it for it in expanded
                     if it["split"] == "heldout" and (only is None or it["question"]["QuestionID"] in only)]
        rows, labels = [], []
        for it in calib_near:
            rows.extend(context_rows(fitted, rank, it))
            labels.extend(int(k in it["gold"]) for k in it["keys"])
        fitted = dataclasses.replace(fitted, context=Head.fit(rows, labels, CONTEXT_RANK_FEATURES))

    def final(subset: list[dict], context: bool = settings.neighbours) -> list[list[float]]:
        """What the engine's reranking gives: the context head where there is one and Settings.neighbours is
        on (the selection is calibrated for the setting in effect)."""
        if fitted.context is None or not context:
            return probabilities(subset)
        return [list(sigmoid(fitted.context.logits(context_rows(fitted, rank, it)))) for it in subset]

    if fitted.context is not None and settings.neighbours:  # the selection sees what the search returns
        calib, held = calib_near, held_near
    calib_probs = final(calib)
    # The cut and the gate for chosen passages are chosen together, as the pipeline applies them one after
    # the other, among the gates that let at most OFF_TOPIC_PASS of off-topic passages through: the most
    # recall while at least PRECISION_FLOOR of what is cited answers and MIN_ANSWERED of the questions cite
    # something (the product's operating point; the best F1 when no cut reaches it).
    model = RelevanceModel(fitted, embedder, shares_index=False)
    off_topic = off_topic_probabilities(fitted, model, calib_pool)
    foreign = foreign_lists(scoring, calib_pool,
                            home / f"foreign-v1-{cross.sha256[:12] if cross is not None else 'none'}.json")
    foreign_probs = final(foreign)
    fitted.thresholds["gate_confident"] = confident_level([max(p) for p in foreign_probs])
    calib_pair = [pair_probabilities(fitted, it) for it in calib]
    gates = [g for g in (round(0.01 * i, 2) for i in range(0, 51))
             if sum(p >= g for p in off_topic) / len(off_topic) <= OFF_TOPIC_PASS]
    grid = []
    for floor, gap, most in product([0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4], [0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5],
                                    [1, 2, 3]):
        cut_at = {"select_floor": floor, "select_gap": gap, "select_max": most,
                  "gate_confident": fitted.thresholds["gate_confident"]}
        for gate_value in gates[:12]:  # the 12 lowest the off-topic bound allows (bounds the search time)
            fig = gated_figures(calib, calib_probs, calib_pair, cut_at, gate_value)
            if fig["answered"] >= MIN_ANSWERED:
                grid.append((fig, floor, gap, most, gate_value))
    assert grid, "no selection cut answers enough calibration questions"
    precise = [g for g in grid if g[0]["precision"] >= PRECISION_FLOOR]
    best = (max(precise, key=lambda g: (g[0]["recall"], g[0]["precision"])) if precise
            else max(grid, key=lambda g: g[0]["f1"]))
    fitted.thresholds.update({"select_floor": best[1], "select_gap": best[2], "select_max": best[3],
                              "gate_selected": best[4]})
    passing = sum(p >= best[4] for p in off_topic) / len(off_topic)
    foreign_pair = [pair_probabilities(fitted, it) for it in foreign]
    foreign_cited = [bool(c) for c in gated_lists(foreign, foreign_probs, foreign_pair, fitted.thresholds, best[4])]

    held_probs = final(held)
    held_pair = [pair_probabilities(fitted, it) for it in held]
    gate = {}
    if args.pairs.exists():  # hard negatives only (BM25's best non-gold passages), and with random ones too
        hard = read_pairs(args.pairs)
        mixed = with_random_negatives(hard, 3, 2)
        gate = {**{f"{k}_hard": v for k, v in gate_figures(fitted, embedder, hard).items()},
                **{f"{k}_mixed": v for k, v in gate_figures(fitted, embedder, mixed).items()}}
    result = {
        "split_by": args.split_by, "calibrate_questions": len(calib), "heldout_questions": len(held),
        "calibrate_selection": best[0],
        "thresholds": fitted.thresholds,
        "heldout_retrieval_fused": retrieval_figures(held_pool, None),
        "heldout_retrieval_reranked": retrieval_figures(held, held_probs),
        **({"heldout_retrieval_reranked_with_neighbours": retrieval_figures(held_near, final(held_near, context=True))}
           if fitted.context is not None else {}),
        "heldout_retrieval_reranked_pooled": retrieval_figures(held_pool, probabilities(held_pool, rank_pooled)),
        **({"heldout_retrieval_reranked_without_cross": retrieval_figures(held_pool,
                                                                          probabilities(held_pool, rank_late))}
           if cross is not None else {}),
        "heldout_selection": selection_figures(held, held_probs, best[1], best[2], best[3]),
        "calibrate_off_topic_pass": round(passing, 4),
        "calibrate_foreign_lists_citing": round(sum(foreign_cited) / len(foreign_cited), 4),
        "calibrate_foreign_lists_citing_without_confident": round(sum(bool(c) for c in gated_lists(
            foreign, foreign_probs, foreign_pair, {**fitted.thresholds, "gate_confident": 1.0}, best[4]))
            / len(foreign), 4),
        "heldout_selection_gated": gated_figures(held, held_probs, held_pair, fitted.thresholds, best[4]),
        "heldout_selection_gated_at_pair_gate": gated_figures(held, held_probs, held_pair, fitted.thresholds,
                                                              fitted.thresholds["gate"]),
        "heldout_top1": top_k_reference(held_pool, 1), "heldout_top2": top_k_reference(held_pool, 2),
        "heldout_top3": top_k_reference(held_pool, 3), **gate,
    }
    if corpora_held:  # what the engine's search gives with neighbours off: the rank head's order
        before = scorer.rank if scorer.rank is not None and (cross is not None or CROSS not in scorer.rank.features) \
            else None
        result["corpora_heldout_questions"] = len(corpora_held)
        result["corpora_heldout_fused"] = corpora_figures(corpora_held, None)
        if before is not None:
            result["corpora_heldout_reranked_before"] = corpora_figures(
                corpora_held, [list(sigmoid(before.logits(rank_rows(scorer, it)))) for it in corpora_held])
        result["corpora_heldout_reranked"] = corpora_figures(corpora_held, probabilities(corpora_held))
    if args.write:
        fitted.save(args.model)  # without a gate head: it reads the rank head's output, so it is fitted again
        result["written"] = str(args.model / "scorer.json")
        print("the scorer has no gate head now: fit it again with bench/calibrate_gate.py collect, then fit --write",
              file=sys.stderr)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
