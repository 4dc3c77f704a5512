"""Modality on labelled sentences: obligation detection measured against labels written blind.

    python bench/modality.py [--labels FILE] [--errors] [--skip-noted] [--split all|dev|heldout]
    python bench/modality.py --labels bench/modality/labels-dev2.yaml   # the second development set, whole
    python bench/modality.py --sample [--per-corpus N] [--seed S] [--exclude FILE ...]   # draw unlabelled sentences

The labels (bench/modality/labels.yaml, their rules at the top of the file) were written by reading each
sentence, before `classify_modality` was run on any of them. The sentences were drawn with `--sample`:
each development corpus in bench/corpora/*/docs/ and the sample corpus in examples/corpus/ split by
`engine.ingest.sentences.split_sentences`, Markdown headings and pieces under five words set aside, and
`--per-corpus` sentences drawn from each corpus with `random.Random(seed)`; `--exclude FILE` leaves out of the
pool the sentences already labelled in FILE (bench/modality/labels-dev2.yaml was drawn with seed 2027 excluding
labels.yaml).

Printed per corpus and overall: obligation detection as a binary decision (obligation or not):
precision, recall, F1, accuracy; prohibition precision and recall; the five-class accuracy; and the
confusion matrix (rows: label, columns: classifier). `--errors` lists the misclassified sentences. The
last line is one JSON object with every figure. Nothing here was used to choose or tune a rule: the
figures are held-out for the classifier as it stood when they were taken.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.ingest.formats import parse  # noqa: E402
from engine.ingest.sentences import split_sentences  # noqa: E402

LABELS = ROOT / "bench" / "modality" / "labels.yaml"
CORPORA = ROOT / "bench" / "corpora"
CLASSES = ["obligation", "prohibition", "permission", "recommendation", "none"]
MIN_WORDS = 5


def corpora() -> dict[str, list[Path]]:
    """Each corpus's files: the development corpora's docs/ and the sample corpus (as `examples`)."""
    out = {d.name: sorted(p for p in (d / "docs").rglob("*") if p.is_file())
           for d in sorted((ROOT / "bench" / "corpora").iterdir()) if (d / "docs").is_dir()}
    out["examples"] = sorted((ROOT / "examples" / "corpus").glob("*.md"))
    return out


METADATA = re.compile(r"^(Revision|Control|Updated):[^;]*;")  # the ISM's 'Revision: 4; Updated: ...' lines
LIST_ITEM = re.compile(r"^(?:[-*•]|\(?[0-9a-zA-Z]{1,4}[.)])\s")


def _usable(sentence: str) -> bool:
    """A sentence or list item, not a heading, metadata line, boxed fragment or piece under MIN_WORDS words.

    A piece with no closing punctuation that is not a list item is a plain-text heading ('Exercise of the
    power to impose ...') or a line cut from a sentence; a piece ending in '*' is a line of the MPL's boxed
    disclaimer.
    """
    if sentence.startswith("#") or METADATA.match(sentence) or sentence.rstrip().endswith("*"):
        return False
    if not LIST_ITEM.match(sentence) and not re.search(r"[.;:,)?!\"'’”]$", sentence):
        return False
    return len(re.findall(r"[A-Za-z]+", sentence)) >= MIN_WORDS


_BINARY = frozenset({".pdf", ".docx", ".odt", ".xlsx"})


def sample(per_corpus: int, seed: int, exclude: frozenset[str] = frozenset()) -> list[dict[str, str]]:
    """Draw `per_corpus` usable sentences from each corpus, in corpus order, with one seeded RNG; none of
    the sentences in `exclude` (those labelled already)."""
    rng = random.Random(seed)
    rows: list[dict[str, str]] = []
    for name, files in corpora().items():
        pool = []
        for path in files:
            # a published binary file (PDF, Word) as the engine reads it; text files as written, so earlier seeded
            # draws stay reproducible
            text = (parse(path, path.read_bytes()).text if path.suffix.lower() in _BINARY
                    else path.read_text(encoding="utf-8"))
            rel = str(path.relative_to(ROOT))
            pool += [(rel, text[s.start:s.end]) for s in split_sentences(text)
                     if _usable(text[s.start:s.end]) and text[s.start:s.end] not in exclude]
        for rel, sentence in rng.sample(pool, min(per_corpus, len(pool))):
            rows.append({"corpus": name, "source": rel, "sentence": sentence, "label": ""})
    return rows


def _binary(pairs: list[tuple[str, str]], cls: str) -> dict[str, float | int]:
    """Precision, recall, F1 and accuracy of deciding `cls` or not, over (label, predicted) pairs."""
    tp = sum(1 for g, p in pairs if g == cls and p == cls)
    fp = sum(1 for g, p in pairs if g != cls and p == cls)
    fn = sum(1 for g, p in pairs if g == cls and p != cls)
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    acc = sum(1 for g, p in pairs if (g == cls) == (p == cls)) / len(pairs) if pairs else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": round(prec, 3), "recall": round(rec, 3),
            "f1": round(f1, 3), "accuracy": round(acc, 3)}


def figures(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Every figure for one set of (label, predicted) pairs."""
    return {
        "n": len(pairs),
        "obligation": _binary(pairs, "obligation"),
        "prohibition": _binary(pairs, "prohibition"),
        "accuracy_5class": round(sum(g == p for g, p in pairs) / len(pairs), 3) if pairs else 0.0,
        "confusion": {g: {p: n for (gg, p), n in Counter(pairs).items() if gg == g} for g in CLASSES},
    }


def _print_figures(name: str, f: dict[str, Any]) -> None:
    o, p = f["obligation"], f["prohibition"]
    print(f"{name:<14} n={f['n']:<4} obligation P/R/F1/acc {o['precision']:.3f} / {o['recall']:.3f} / "
          f"{o['f1']:.3f} / {o['accuracy']:.3f} (tp {o['tp']}, fp {o['fp']}, fn {o['fn']})   "
          f"prohibition P/R {p['precision']:.3f} / {p['recall']:.3f} (tp {p['tp']}, fp {p['fp']}, "
          f"fn {p['fn']})   5-class acc {f['accuracy_5class']:.3f}")


def _print_confusion(f: dict[str, Any]) -> None:
    short = [c[:5] for c in CLASSES]
    print("confusion (rows: label, columns: classifier)")
    print(f"{'':<16}" + "".join(f"{s:>7}" for s in short))
    for g in CLASSES:
        row = f["confusion"][g]
        print(f"{g:<16}" + "".join(f"{row.get(p, 0):>7}" for p in CLASSES))


def split_of(sentence: str) -> str:
    """Half the labelled sentences are for development (their errors may be read and rules changed for
    them), half held out (measured only): by the first hex digit of the sentence's sha256."""
    return "dev" if hashlib.sha256(sentence.encode("utf-8")).hexdigest()[0] in "01234567" else "heldout"


def source_types() -> dict[str, str]:
    """Each labelled source file's source type, as the engine ingests it (bench/corpora/*/questions.yaml;
    the sample corpus's policy-*.md files are policies, its other files regulations)."""
    out = {}
    for spec_file in CORPORA.glob("*/questions.yaml"):
        spec = yaml.safe_load(spec_file.read_text(encoding="utf-8"))
        for doc in spec["documents"]:
            out[str((spec_file.parent / "docs" / doc["file"]).relative_to(ROOT))] = doc["source_type"]
    for path in (ROOT / "examples" / "corpus").glob("*.md"):
        out[str(path.relative_to(ROOT))] = "policy" if path.name.startswith("policy-") else "regulation"
    return out


def measure(labels: Path, errors: bool, skip_noted: bool = False, split: str = "all") -> dict[str, Any]:
    """Classify every labelled sentence, print the figures per corpus and overall, return them.

    `skip_noted` leaves out the labels marked as close calls (those with a `note`), to show how much the
    figures rest on them.
    """
    from agents.modality import classify_modality

    rows = yaml.safe_load(labels.read_text(encoding="utf-8"))
    if skip_noted:
        rows = [r for r in rows if not r.get("note")]
    if split != "all":
        rows = [r for r in rows if split_of(r["sentence"]) == split]
    kinds = source_types()
    for r in rows:
        r["predicted"] = str(classify_modality(r["sentence"], source_type=kinds.get(r["source"], "")))
    by_corpus: dict[str, list[tuple[str, str]]] = {}
    for r in rows:
        by_corpus.setdefault(r["corpus"], []).append((r["label"], r["predicted"]))
    out: dict[str, Any] = {name: figures(pairs) for name, pairs in by_corpus.items()}
    out["overall"] = figures([(r["label"], r["predicted"]) for r in rows])
    for name, f in out.items():
        _print_figures(name, f)
    _print_confusion(out["overall"])
    if errors:
        wrong = [r for r in rows if r["label"] != r["predicted"]]
        print(f"\nmisclassified: {len(wrong)} of {len(rows)}")
        for r in sorted(wrong, key=lambda r: (r["label"], r["predicted"], r["corpus"])):
            print(f"[{r['corpus']}] label {r['label']} -> {r['predicted']}: {' '.join(r['sentence'].split())}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--errors", action="store_true", help="list the misclassified sentences")
    ap.add_argument("--skip-noted", action="store_true", help="leave out the labels marked as close calls")
    ap.add_argument("--sample", action="store_true", help="print a fresh unlabelled sample as YAML")
    ap.add_argument("--per-corpus", type=int, default=50)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--exclude", type=Path, action="append", default=[],
                    help="with --sample: leave out the sentences labelled in this file (repeatable)")
    ap.add_argument("--split", choices=("all", "dev", "heldout"), default="all",
                    help="dev: the half whose errors may guide a rule; heldout: the half only measured")
    args = ap.parse_args()
    if args.sample:
        done = frozenset(r["sentence"] for f in args.exclude for r in yaml.safe_load(f.read_text(encoding="utf-8")))
        rows = sample(args.per_corpus, args.seed, done)
        print(yaml.safe_dump(rows, sort_keys=False, allow_unicode=True, width=120))
        return
    out = measure(args.labels, args.errors, args.skip_noted, args.split)
    print(json.dumps({"labels": str(args.labels.relative_to(ROOT)) if args.labels.is_relative_to(ROOT)
                      else str(args.labels), **out}))


if __name__ == "__main__":
    main()
