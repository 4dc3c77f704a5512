"""`evidence relevance train PAIRS.jsonl`, `evidence relevance train-cross PAIRS.jsonl --model DIR` and
`evidence relevance score QUESTION TEXT`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer

from engine.cli.common import FullHelpGroup, emit_json, err, out, run, settings
from engine.config import default_model_dir
from engine.errors import ExitCode, InputError
from engine.relevance.cross import CROSS_DIR
from engine.relevance.pairs import read_pairs
from engine.relevance.train import train

relevance_app = typer.Typer(cls=FullHelpGroup, no_args_is_help=True,
                            help="The learned relevance model: train it on labelled pairs, score a pair.")


DEVICE_HELP = "cpu, or cuda (cuda:N) on a machine with an NVIDIA GPU: bf16 autocast, minutes instead of hours."


def _device(name: str) -> str:
    """The torch device to train on; a clear error for a name torch does not know (whether this machine has the
    GPU is checked where torch is loaded: engine.relevance.finetune.check_device)."""
    if not re.fullmatch(r"cpu|cuda(?::\d+)?", name):
        raise InputError(f"unknown device {name!r}: use cpu, cuda or cuda:N")
    return name


def _progress(line: str) -> None:
    """A training progress line, on stderr as printed (JSON, no markup)."""
    err.print(line, markup=False, highlight=False, soft_wrap=True)


@relevance_app.command("train")
def train_command(
    pairs: Annotated[Path, typer.Argument(help="JSONL of {question, passage, label 0|1[, question_id]}.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Model directory to write (replaced when done).")],
    epochs: Annotated[int, typer.Option(min=1, help="Passes over the encoder's share of the pairs.")] = 2,
    seed: Annotated[int, typer.Option(help="Seed of the split, data order, negatives and weights.")] = 13,
    batch_size: Annotated[int, typer.Option(min=2, help="Questions per training batch.")] = 32,
    stop_after: Annotated[int | None, typer.Option(
        min=1, help="Stop after this many epochs of the schedule (resume later with the same command).")] = None,
    fp32: Annotated[bool, typer.Option("--fp32", help="Export fp32 instead of int8.")] = False,
    base: Annotated[Path | None, typer.Option(
        help="sentence-transformers directory to start from (default: the shipped all-MiniLM-L6-v2).")] = None,
    device: Annotated[str, typer.Option(help=DEVICE_HELP)] = "cpu",
) -> None:
    """Fine-tune the encoder, export it to ONNX and fit the scorer (seeded, reproducible).

    Rows are split as their 'split' field says (bench/obliqa_pairs.py writes one by passage), else
    60/20/20 by question id: the first share trains the encoder, the second fits the scorer and the
    gate threshold, the third is left for evaluation. Point EVIDENCE_RELEVANCE_MODEL
    at the written directory to use it, then run 'evidence db reembed'.
    """

    def body() -> int:
        settings()  # configuration errors first
        rows = read_pairs(pairs)
        try:
            train(rows, out_dir, base=base or default_model_dir(), epochs=epochs, seed=seed, batch_size=batch_size,
                  quantize=not fp32, stop_after=stop_after, device=_device(device),
                  log=_progress)
        except ValueError as exc:
            raise InputError(f"{pairs}: {exc}") from exc
        out.print(f"relevance model written to {out_dir}", soft_wrap=True)
        return ExitCode.SUCCESS

    run(body)


@relevance_app.command("train-cross")
def train_cross_command(
    pairs: Annotated[Path, typer.Argument(help="JSONL of {question, passage, label 0|1[, question_id]}.")],
    model_dir: Annotated[Path, typer.Option("--model", help="Relevance model directory; the cross-encoder "
                                                             "is written to its 'cross' subdirectory.")],
    epochs: Annotated[int, typer.Option(min=1, help="Passes over the training share's questions.")] = 4,
    seed: Annotated[int, typer.Option(help="Seed of the split, data order, negatives and head.")] = 13,
    stop_after: Annotated[int | None, typer.Option(
        min=1, help="Stop after this many epochs of the schedule (resume later with the same command).")] = None,
    fp32: Annotated[bool, typer.Option("--fp32", help="Export fp32 instead of int8.")] = False,
    base: Annotated[Path | None, typer.Option(
        help="Transformer directory to start from (default: the shipped all-MiniLM-L6-v2).")] = None,
    device: Annotated[str, typer.Option(help=DEVICE_HELP)] = "cpu",
) -> None:
    """Train a cross-encoder for the rank head (seeded, resumable, exported to ONNX).

    Only the rows of the training share (their 'split' field, else 60% by question id, as 'train') are
    used. Then fit the rank head that reads it: bench/calibrate_relevance.py --model MODEL --write.
    """

    from engine.relevance.cross_train import train_cross  # torch and transformers: training only

    def body() -> int:
        settings()  # configuration errors first
        rows = [p for p in read_pairs(pairs) if p.share(seed) == "train"]
        target = model_dir / CROSS_DIR
        try:
            train_cross(rows, target, base=base or default_model_dir(), epochs=epochs, seed=seed,
                        stop_after=stop_after, quantize=not fp32, device=_device(device),
                        log=_progress)
        except ValueError as exc:
            raise InputError(f"{pairs}: {exc}") from exc
        out.print(f"cross-encoder written to {target}", soft_wrap=True)
        return ExitCode.SUCCESS

    run(body)


@relevance_app.command("score")
def score_command(
    question: Annotated[str, typer.Argument(help="The question.")],
    text: Annotated[str, typer.Argument(help="A sentence or passage.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Score one (question, text) pair with the grounding gate (agents.verify.judge)."""
    from agents.verify import judge

    def body() -> int:
        verdict = judge(question, text)
        if as_json:
            emit_json(verdict.model_dump())
        else:
            out.print(f"{'verified' if verdict.verified else 'rejected'}: {verdict.rationale}", soft_wrap=True)
            out.print(json.dumps(verdict.features), soft_wrap=True, highlight=False)
        return ExitCode.SUCCESS

    run(body)
