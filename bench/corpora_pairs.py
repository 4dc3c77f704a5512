"""Development corpora -> labelled pairs for the relevance models, split by gold section.

    python bench/corpora_pairs.py [--corpus NAME ...] [--out out/corpora-pairs] [--negatives 5] [--per-gold 4]

Every answerable question of every corpus in bench/corpora/ (layout in bench/corpora/README.md; out-of-scope
questions, whose gold is empty, are skipped) gives:

* positives (label 1): the corpus's chunks, as bench/corpora.py ingested them, that are a right section for
  one of the question's golds by bench/corpora.py's own rule (`right_section`: the gold's document, and its
  section label in the chunk's section path or citation, or its text inside the chunk). When more than
  `--per-gold` chunks match one gold, those holding the gold text come first, then the best BM25 ones for
  the question;
* negatives (label 0): the `--negatives` best BM25 chunks of the same corpus (the engine's tokenizer,
  k1 1.0, b 0.6 as bench/obliqa_pairs.py) that are no right section for any of the question's golds,
  skipping chunks under 8 words.

The split is by passage: each gold section (corpus|doc|section) falls in train or heldout by its hash
(`split_of("section:<key>", seed=13, shares=(0.5, 0.0))`). A question is heldout when all of its gold
sections are, else train, and a train question keeps only the positives of its train sections. No chunk
that is a right section for a heldout question appears in train, as a positive or a negative, so a heldout
question's answering passages were never seen in training. A question left with no positive is left out.
A corpus whose questions.yaml says `judge: true` (those added on 2026-11-27: standard, eu-directive, contracts)
is held out whole: a share of the development data no model trains on, to judge the next retrain by.

Every row: question, passage, label, question_id ("<corpus>:<id>"), corpus, split, section (a positive's
gold section key; a negative's "corpus|doc|section path"), chunk_id. Writes <out>/train.jsonl,
<out>/heldout.jsonl and <out>/README.txt (the counts printed). Deterministic.

The corpora database is the one bench/corpora.py uses (bench/.cache/corpora-<encoder sha256[:12]>), ingested
when missing. These are development sets: a figure on the heldout half has not chosen anything only while
nothing is tuned on it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# mypy takes bench.corpora for the data folder bench/corpora/; Python imports bench/corpora.py
from bench.corpora import CORPORA, _database, _norm, ingest_corpus, right_section  # type: ignore[attr-defined]  # noqa: E402
from engine import db as dbmod  # noqa: E402
from engine import embedded_db  # noqa: E402
from engine.config import Settings  # noqa: E402
from engine.ingest.citations import chunk_citation  # noqa: E402
from engine.models import Chunk  # noqa: E402
from engine.relevance.pairs import split_of, write_pairs  # noqa: E402
from engine.search import store  # noqa: E402
from engine.search.embeddings import Embedder  # noqa: E402
from engine.terms import query_terms, tokenize  # noqa: E402

SEED = 13
SHARES = (0.5, 0.0)
SPLITS = ("train", "heldout")


def section_key(corpus: str, gold: dict[str, Any]) -> str:
    return f"{corpus}|{gold['doc']}|{gold['section']}"


def section_split(key: str, *, seed: int = SEED) -> str:
    """"train" or "heldout" for one gold section key, by its hash."""
    return split_of(f"section:{key}", seed=seed, shares=SHARES)


def question_split(keys: list[str], *, seed: int = SEED) -> str:
    """A question is heldout when every one of its gold sections is, else train. Pure."""
    return "heldout" if all(section_split(k, seed=seed) == "heldout" for k in keys) else "train"


@dataclass
class Corpus:
    """One corpus's questions and current chunks, with what `right_section` needs to judge a chunk."""

    name: str
    questions: list[dict[str, Any]]
    chunks: list[Chunk]
    file_of: dict[str, str]
    judge: bool = False  # questions.yaml's `judge: true`: every question held out, nothing of it trains a model
    _matches: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)

    def answerable(self) -> list[dict[str, Any]]:
        return [q for q in self.questions if q.get("gold") and q.get("type") != "out-of-scope"]

    def right(self, chunk: Chunk, gold: dict[str, Any]) -> bool:
        req = {"document_id": chunk.document_id, "section_path": chunk.section_path,
               "citation": chunk_citation(chunk.section_number, chunk.section_path, chunk.metadata)}
        return right_section(req, {"text": chunk.text}, self.file_of, gold)

    def matches(self, gold: dict[str, Any]) -> list[int]:
        """Indexes of the chunks that are a right section for `gold` (a fresh list)."""
        key = (gold["doc"], str(gold["section"]), gold["text"])
        if key not in self._matches:
            self._matches[key] = [i for i, c in enumerate(self.chunks) if self.right(c, gold)]
        return list(self._matches[key])

    def section_of(self, i: int) -> str:
        c = self.chunks[i]
        return f"{self.name}|{self.file_of.get(c.document_id, '')}|{c.section_path}"


def load_corpus(conn: Any, folder: Path) -> Corpus:
    spec = yaml.safe_load((folder / "questions.yaml").read_text(encoding="utf-8"))
    docs = store.list_documents(conn)
    chunks = [c for d in docs for c in store.chunks_of_document(conn, d.id) if c.is_current]
    return Corpus(folder.name, spec["questions"], chunks, {d.id: Path(d.source_uri).name for d in docs},
                  judge=bool(spec.get("judge")))


@contextmanager
def corpora_databases(names: list[str] | None, embedder: Embedder | None = None,
                      settings: Settings | None = None) -> Iterator[list[tuple[Path, Settings]]]:
    """(folder, settings with its database) per corpus, in bench/corpora.py's home for this embedder,
    ingesting what is missing (ingest skips a document already stored). The server is stopped on leaving
    unless it was already running (someone else's run)."""
    settings = settings or Settings(memory_enabled=False)
    embedder = embedder or Embedder.from_settings(settings)
    home = ROOT / "bench" / ".cache" / f"corpora-{embedder.sha256[:12]}"
    home.mkdir(parents=True, exist_ok=True)
    settings = settings.model_copy(update={"home": home})
    was_running = embedded_db.status(settings)["running"]
    base = embedded_db.start(settings)
    folders = sorted(p.parent for p in CORPORA.glob("*/questions.yaml"))
    folders = [f for f in folders if not names or f.name in names]
    try:
        out = []
        for folder in folders:
            corpus = settings.model_copy(update={"database_url": _database(base, f"corpus_{folder.name}")})
            _ingest(folder, corpus, embedder)
            out.append((folder, corpus))
        yield out
    finally:
        if not was_running:
            embedded_db.stop(settings)


def _ingest(folder: Path, settings: Settings, embedder: Embedder) -> None:
    spec = yaml.safe_load((folder / "questions.yaml").read_text(encoding="utf-8"))
    with dbmod.connection(settings) as conn:
        ingest_corpus(conn, embedder, settings, folder, spec)


def positives(corpus: Corpus, gold: dict[str, Any], ranked: list[int], cap: int) -> list[int]:
    """At most `cap` chunks for one gold: those holding the gold text first, then by the question's BM25
    rank (`ranked`: chunk indexes, best first), then in document order."""
    found = corpus.matches(gold)
    if len(found) <= cap:
        return found
    text = _norm(gold["text"])
    rank = {i: r for r, i in enumerate(ranked)}
    found.sort(key=lambda i: (text not in _norm(corpus.chunks[i].text), rank.get(i, len(rank)), i))
    return sorted(found[:cap])


def corpus_rows(corpus: Corpus, *, negatives: int, cap: int) -> dict[str, list[dict[str, Any]]]:
    """The pairs of one corpus by split (see the module docstring)."""
    import bm25s

    index = bm25s.BM25(method="lucene", k1=1.0, b=0.6)
    index.index([tokenize(c.text) for c in corpus.chunks], show_progress=False)
    questions = corpus.answerable()
    plan = []
    for q in questions:
        keys = [section_key(corpus.name, g) for g in q["gold"]]
        right = {i for g in q["gold"] for i in corpus.matches(g)}
        plan.append((q, keys, "heldout" if corpus.judge else question_split(keys), right))
    # every chunk that answers a heldout question: kept out of train entirely
    held = set().union(*(right for _, _, split, right in plan if split == "heldout"))
    rows: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}
    for q, keys, split, right in plan:
        ranked = [int(i) for i in index.get_scores(list(query_terms(q["question"]))).argsort()[::-1]]
        base = {"question": q["question"], "question_id": f"{corpus.name}:{q['id']}", "corpus": corpus.name,
                "split": split}
        taken: set[int] = set()
        found: list[dict[str, Any]] = []
        for gold, key in zip(q["gold"], keys, strict=True):
            if split == "train" and section_split(key) != "train":
                continue
            for i in positives(corpus, gold, ranked, cap):
                if i in taken or (split == "train" and i in held):
                    continue
                taken.add(i)
                found.append({**base, "passage": corpus.chunks[i].text, "label": 1, "section": key,
                                    "chunk_id": corpus.chunks[i].id})
        if not found:
            continue  # nothing of it may be shown in its split: left out
        rows[split].extend(found)
        n = 0
        for i in ranked[:200]:
            if n == negatives:
                break
            if i in right or len(corpus.chunks[i].text.split()) < 8 or (split == "train" and i in held):
                continue
            rows[split].append({**base, "passage": corpus.chunks[i].text, "label": 0,
                                "section": corpus.section_of(i), "chunk_id": corpus.chunks[i].id,
                                "bm25_rank": ranked.index(i) + 1})
            n += 1
    return rows


def counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    return {"questions": len({r["question_id"] for r in rows}), "pairs": len(rows),
            "positives": sum(r["label"] for r in rows)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", default=None, help="a folder name under bench/corpora")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "corpora-pairs")
    parser.add_argument("--negatives", type=int, default=5, help="BM25 negatives per question")
    parser.add_argument("--per-gold", type=int, default=4, help="at most this many positive chunks per gold")
    args = parser.parse_args(argv)

    rows: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}
    lines = []
    with corpora_databases(args.corpus) as databases:
        for folder, settings in databases:
            with dbmod.connection(settings) as conn:
                corpus = load_corpus(conn, folder)
            mine = corpus_rows(corpus, negatives=args.negatives, cap=args.per_gold)
            unmatched = sum(1 for q in corpus.answerable() for g in q["gold"] if not corpus.matches(g))
            line = f"{corpus.name}: " + "; ".join(f"{s} {json.dumps(counts(mine[s]))}" for s in SPLITS)
            line += f"; golds matching no chunk {unmatched}"
            print(line, flush=True)
            lines.append(line)
            for s in SPLITS:
                rows[s].extend(mine[s])
    for s in SPLITS:
        write_pairs(args.out / f"{s}.jsonl", rows[s])
    total = "all: " + "; ".join(f"{s} {json.dumps(counts(rows[s]))}" for s in SPLITS)
    print(total)
    (args.out / "README.txt").write_text(
        "bench/corpora_pairs.py: pairs from the development corpora, split by gold section "
        f"(seed {SEED}, train/heldout 50/50).\n" + "\n".join([*lines, total]) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
