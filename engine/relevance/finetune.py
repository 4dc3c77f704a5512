"""Contrastive fine-tuning of the sentence encoder on labelled pairs (training time only; needs torch).

Multiple-negatives ranking loss: each (question, answering passage) pair is scored against every
other passage in its batch and against one hard negative of its own question (a label-0 passage of
the same question, a different one each epoch), as the best published ObliQA systems fine-tune
their bi-encoders. Seeded end to end (data order, negatives, torch), one checkpoint per epoch, so
an interrupted run resumes at the last finished epoch (`resume=True`).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from sentence_transformers import SentenceTransformer

from engine.relevance.pairs import Pair, grouped

SCALE = 20.0  # similarity scale of the ranking loss (sentence-transformers' default)


def triplets(pairs: list[Pair], epoch: int, seed: int) -> list[tuple[str, str, str]]:
    """(question, positive, negative) for every positive pair, shuffled for `epoch`. Pure."""
    rng = random.Random(seed * 1000 + epoch)
    groups = list(grouped(pairs))
    all_passages = [p.passage for p in pairs]
    out = []
    for _, rows in groups:
        negatives = [r.passage for r in rows if r.label == 0]
        for i, pos in enumerate(r for r in rows if r.label == 1):
            neg = negatives[(epoch + i) % len(negatives)] if negatives else rng.choice(all_passages)
            out.append((pos.question, pos.passage, neg))
    rng.shuffle(out)
    return out


def batches(items: list[tuple[str, str, str]], size: int) -> list[list[tuple[str, str, str]]]:
    """Batches in which no question or positive passage repeats (a repeat would be a false in-batch
    negative); what does not fit goes to a later batch. Pure."""
    pending, out = list(items), []
    while pending:
        batch: list[Any] = []
        seen: set[Any] = set()
        rest: list[Any] = []
        for item in pending:
            if len(batch) < size and item[0] not in seen and item[1] not in seen:
                batch.append(item)
                seen.update(item[:2])
            else:
                rest.append(item)
        out.append(batch)
        pending = rest
    return out


def check_device(device: str) -> str:
    """`device`, or a ValueError that says what to do when it names a GPU this machine's torch cannot use."""
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"--device {device}: this machine has no CUDA GPU that torch can use; "
                         "train with --device cpu, or on a GPU machine")
    return device


def _latest_checkpoint(work: Path) -> tuple[int, Path | None]:
    done = sorted((int(p.name.split("-")[1]), p) for p in work.glob("epoch-*") if (p / "modules.json").exists())
    return done[-1] if done else (0, None)


def finetune(pairs: list[Pair], base: Path, work: Path, *, epochs: int = 2, batch_size: int = 32,
             lr: float = 3e-5, max_length: int = 160, seed: int = 13, resume: bool = True,
             stop_after: int | None = None, device: str = "cpu", log: Callable[[str], None] = print) -> Any:
    """Fine-tune `base` on `pairs`; returns the trained SentenceTransformer (also saved per epoch).

    `stop_after` ends the run after that many epochs of the `epochs`-epoch schedule (the learning
    rate follows the full schedule); a later run with `resume` continues it. On a GPU (`device="cuda"`)
    the forward passes run under bf16 autocast (weights and optimizer stay fp32).
    """
    check_device(device)
    torch.manual_seed(seed)
    random.seed(seed)
    work.mkdir(parents=True, exist_ok=True)
    start_epoch, checkpoint = _latest_checkpoint(work) if resume else (0, None)
    model = SentenceTransformer(str(checkpoint or base), device=device).float()
    model.max_seq_length = max_length
    last = min(epochs, stop_after or epochs)
    if start_epoch >= last:
        log(f"{last} of {epochs} epoch(s) already trained in {work}")
        return model
    plan = [batches(triplets(pairs, e, seed), batch_size) for e in range(epochs)]
    total = sum(len(b) for b in plan)
    warmup = max(1, total // 10)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)

    def factor(step: int) -> float:
        return (step + 1) / warmup if step < warmup else max(0.0, (total - step) / max(1, total - warmup))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
    step = sum(len(b) for b in plan[:start_epoch])
    for _ in range(step):
        scheduler.step()
    model.train()
    started = time.time()
    for epoch in range(start_epoch, last):
        for batch in plan[epoch]:
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.startswith("cuda")):
                loss = _step(model, batch)
            optimizer_step(model, loss, optimizer, scheduler)
            step += 1
            if step % 5 == 0 or step == total:
                rate = (time.time() - started) / max(1, step - sum(len(b) for b in plan[:start_epoch]))
                log(progress(epoch, step, total, loss, rate, total - step))
        model.save(str(work / f"epoch-{epoch + 1}"))
        log(f"epoch {epoch + 1} saved to {work / f'epoch-{epoch + 1}'}")
    model.eval()
    return model


def optimizer_step(model: Any, loss: Any, optimizer: Any, scheduler: Any) -> None:
    """Backpropagate `loss`, clip the gradients' norm at 1, step the optimizer and the learning-rate schedule."""
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()


def progress(epoch: int, step: int, total: int, loss: Any, seconds_per_step: float, steps_left: int) -> str:
    """One JSON line of training progress."""
    return json.dumps({"epoch": epoch + 1, "step": step, "of": total, "loss": round(float(loss.detach()), 4),
                       "s_per_step": round(seconds_per_step, 2),
                       "eta_min": round(seconds_per_step * steps_left / 60, 1)})


def _step(model: Any, batch: list[tuple[str, str, str]]) -> Any:
    def embed(texts: list[str]) -> Any:
        features = (getattr(model, "preprocess", None) or model.tokenize)(texts)
        features = {k: v.to(model.device) if hasattr(v, "to") else v for k, v in features.items()}
        return torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)

    questions = embed([b[0] for b in batch])
    passages = embed([b[1] for b in batch] + [b[2] for b in batch])
    scores = questions @ passages.T * SCALE
    return torch.nn.functional.cross_entropy(scores.float(), torch.arange(len(batch), device=scores.device))
