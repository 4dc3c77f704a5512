"""Labelled (question, passage, label) pairs: the training data of the relevance models.

One JSON object per line: `{"question": str, "passage": str, "label": 0 | 1}`, optionally
`"question_id"` (rows of one question are grouped by it, else by the question text) and `"source"`.
Reviewers' decisions, ObliQA gold passages (bench/obliqa_pairs.py) or any other labelled set use
the same format.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engine.errors import InputError

SPLITS = ("train", "calibrate", "heldout")


class Pair(BaseModel):
    """One labelled pair."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    question: str = Field(min_length=1, description="The question as asked")
    passage: str = Field(min_length=1, description="A passage (or sentence) of a source")
    label: int = Field(ge=0, le=1, description="1: the passage answers the question; 0: it does not")
    question_id: str | None = None
    split: str | None = Field(default=None, pattern="^(train|calibrate|heldout)$",
                              description="The share the row belongs to, where the file says (bench/obliqa_pairs.py "
                                          "writes its passage split); else `split_of` by question")

    @property
    def group(self) -> str:
        return self.question_id or self.question

    def share(self, seed: int = 13) -> str:
        """The row's split as the file states it, else by its question's hash (`split_of`)."""
        return self.split or split_of(self.group, seed=seed)


def read_pairs(path: Path) -> list[Pair]:
    """Read a pairs file; a malformed line is an InputError naming the file and line."""
    pairs = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read pairs file {path}: {exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            pairs.append(Pair.model_validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            raise InputError(f"{path}:{number}: expected {{\"question\", \"passage\", \"label\": 0|1}}; "
                             f"{'.'.join(map(str, first['loc'])) or 'line'}: {first['msg']}") from exc
    if not any(p.label == 1 for p in pairs):
        raise InputError(f"{path}: no pair with label 1; training needs positive examples")
    return pairs


def write_pairs(path: Path, rows: Iterable[dict]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def split_of(question_id: str, *, seed: int = 13, shares: tuple[float, float] = (0.6, 0.2)) -> str:
    """A stable split by question: train (60%), calibrate (20%), heldout (20%) by default.

    Hash-based, so a question stays in its split whatever else the file holds.
    """
    digest = hashlib.sha256(f"{seed}:{question_id}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    if u < shares[0]:
        return "train"
    return "calibrate" if u < shares[0] + shares[1] else "heldout"


def passage_split(passage_keys: Iterable[str], *, seed: int = 13, shares: tuple[float, float] = (0.6, 0.2),
                  role: str = "evaluate") -> str | None:
    """A split by passage, so that no passage a held-out question is answered by was seen in training or
    calibration: each passage falls in train / calibrate / heldout by its key's hash (`split_of`).

    `role="evaluate"`: a question belongs to `calibrate` or `heldout` only when every one of its answering
    passages falls there; `"train"` when all of them fall in train; else None (a question answered by
    passages of two splits is left out of evaluation). `role="train"`: "train" when any of its passages
    falls in train (training then uses those passages only; `train_passages`), else None. Pure.
    """
    splits = {split_of(f"passage:{key}", seed=seed, shares=shares) for key in passage_keys}
    if role == "train":
        return "train" if "train" in splits else None
    return splits.pop() if len(splits) == 1 else None


def train_passages(passage_keys: Iterable[str], *, seed: int = 13,
                   shares: tuple[float, float] = (0.6, 0.2)) -> list[str]:
    """The keys among `passage_keys` that fall in the train share of `passage_split`."""
    return [k for k in passage_keys if split_of(f"passage:{k}", seed=seed, shares=shares) == "train"]


def grouped(pairs: Iterable[Pair]) -> Iterator[tuple[str, list[Pair]]]:
    """Pairs by question, in first-appearance order."""
    groups: dict[str, list[Pair]] = {}
    for pair in pairs:
        groups.setdefault(pair.group, []).append(pair)
    yield from groups.items()
