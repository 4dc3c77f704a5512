"""Training the cross-encoder (torch; `evidence relevance train-cross`, never imported at run time).

all-MiniLM-L6-v2 with a linear head over the mean of its last hidden states, trained listwise on the
steps `engine.relevance.cross.epoch_plan` lays out, resumable from its last checkpoint, and exported
to the ONNX artefact `engine.relevance.cross.CrossEncoder` runs (see that module's docstring).
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModel, AutoTokenizer

from engine.relevance.cross import epoch_plan, training_groups
from engine.relevance.export import write_artefact
from engine.relevance.finetune import check_device, optimizer_step, progress
from engine.relevance.pairs import Pair

CHECKPOINT_EVERY = 100


def _network(base: Path) -> Any:
    class CrossNet(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = AutoModel.from_pretrained(str(base))
            self.head = torch.nn.Linear(self.bert.config.hidden_size, 1)
            torch.nn.init.normal_(self.head.weight, std=0.02)
            torch.nn.init.zeros_(self.head.bias)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask[..., None].float()
            return self.head((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)).squeeze(-1)

    return CrossNet()


def train_cross(pairs: list[Pair], out: Path, *, base: Path, epochs: int = 4, seed: int = 13, group: int = 6,
                per_step: int = 4, lr: float = 5e-5, max_length: int = 192, stop_after: int | None = None,
                work: Path | None = None, quantize: bool = True, device: str = "cpu",
                choose: Callable[[Callable[[str, list[str]], list[float]]], float] | None = None,
                deadline: float | None = None, log: Callable[[str], None] = print) -> Path:
    """Train a cross-encoder on `pairs` and export it to `out` (ONNX). Returns `out`.

    `stop_after` ends the run after that many epochs of the schedule (the learning rate follows the
    whole schedule); the same call later resumes from the last checkpoint in `work`. With `choose` (a
    function of a scoring function `(question, texts) -> logits` that returns a figure to maximise, measured
    on questions not trained on), it is called after each epoch and the best epoch's weights are exported
    (of the epochs this call trained: a resumed run does not know an earlier call's best). With `deadline` (a
    `time.time()` value) no epoch starts that would end after it, going by the last epoch's time: a run on a
    machine lent for minutes still exports what it has. On a GPU (`device="cuda"`) the forward passes run under
    bf16 autocast.
    """
    check_device(device)
    torch.manual_seed(seed)
    groups = training_groups(pairs, group, seed)
    if len(groups) < per_step:
        raise ValueError(f"too few questions with an answering passage ({len(groups)}) to train a cross-encoder")
    work = work or out.parent / f".{out.name}-work"
    work.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    model = _network(base).to(device)
    plans = [epoch_plan(groups, e, group=group, per_step=per_step, seed=seed) for e in range(epochs)]
    per_epoch = len(plans[0])
    total = per_epoch * epochs
    last = per_epoch * min(epochs, stop_after or epochs)
    warmup = max(1, total // 10)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (total - s) / max(1, total - warmup)))
    step = 0
    checkpoint = work / "last.pt"
    if checkpoint.exists():
        state = torch.load(checkpoint, weights_only=False, map_location=device)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        step = int(state["step"])
        log(f"resumed at step {step} of {total}")

    def encode(question: str, texts: list[str]) -> Any:
        return tokenizer([question] * len(texts), texts, truncation="only_second", max_length=max_length,
                         padding=True, return_tensors="pt").to(device)

    autocast = device.startswith("cuda")

    def score(question: str, texts: list[str]) -> list[float]:
        model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            logits = [float(x) for x in model(**encode(question, texts)).float()]
        model.train()
        return logits

    best: tuple[float, int, dict[str, Any]] | None = None
    model.train()
    started, first = time.time(), step
    epoch_started = started
    while step < last:
        epoch, k = divmod(step, per_epoch)
        loss: Any = 0.0  # a tensor once the first pair is added
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            for i, positive, negatives in plans[epoch][k]:
                logits = model(**encode(groups[i][0], [positive, *negatives])).float()
                loss = loss + torch.nn.functional.cross_entropy(logits[None], torch.tensor([0], device=device))
        loss = loss / len(plans[epoch][k])
        optimizer_step(model, loss, optimizer, scheduler)
        step += 1
        if choose is not None and step % per_epoch == 0:
            figure = choose(score)
            log(f"epoch {step // per_epoch}: {figure:.4f} on the questions that choose the epoch")
            if best is None or figure > best[0]:
                best = (figure, step, {name: value.detach().clone() for name, value in model.state_dict().items()})
            now = time.time()
            if deadline is not None and step < last and now + (now - epoch_started) > deadline:
                log(f"stopping after epoch {step // per_epoch}: another would end past the deadline")
                last = step
            epoch_started = now
        if step % 20 == 0 or step == last:
            log(progress(epoch, step, total, loss, (time.time() - started) / (step - first), last - step))
        if step % CHECKPOINT_EVERY == 0 or step == last:
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(), "step": step}, work / "last.tmp")
            os.replace(work / "last.tmp", checkpoint)
    if best is not None:
        model.load_state_dict(best[2])
        log(f"exporting the weights of step {best[1]} ({best[0]:.4f})")
        step = best[1]
    model.eval()
    export_cross(model.float().cpu(), tokenizer, out, name=out.name, max_length=max_length, quantize=quantize,
                 extra={"base": base.parent.name if base.name == "model" else base.name, "epochs": epochs,
                        "steps_trained": step, "of_steps": total, "seed": seed, "group": group,
                        "questions": len(groups)})
    return out


def export_cross(model: Any, tokenizer: Any, out: Path, *, name: str, max_length: int = 192, quantize: bool = True,
                 extra: dict[str, Any] | None = None) -> Path:
    """Write `out/` = model.onnx (one score per pair) + tokenizer.json + relevance.json."""
    out.mkdir(parents=True, exist_ok=True)
    sample = tokenizer(["a question about records"], ["a longer passage about records"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes it fixes; the graph keeps dynamic axes
        raw = Path(tmp) / "model.onnx"
        with torch.no_grad():
            torch.onnx.export(model, tuple(sample[n] for n in names), str(raw), input_names=names,
                              output_names=["score"], opset_version=17, dynamo=False,
                              dynamic_axes={**{n: {0: "batch", 1: "sequence"} for n in names}, "score": {0: "batch"}})
        return write_artefact(raw, out, tokenizer, quantize=quantize,
                              manifest={"name": name, "kind": "cross-encoder", "max_length": max_length,
                                        **(extra or {})})
