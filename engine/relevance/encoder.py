"""A sentence encoder served by ONNX Runtime: tokenizer + transformer graph + mean pooling + L2 norm.

The artefact is a directory holding `model.onnx` (the transformer, int8 or fp32), `tokenizer.json`
and `relevance.json` (name, max length, sha256 of the ONNX file). Loading imports neither torch nor
transformers, so a cold CLI starts in a fraction of a second.

Each text is one ONNX call, on one core, and the texts of a list run side by side on as many threads
as the machine has cores. One text per call because the int8 graph quantizes activations over its
whole input: batched, a text's vector depended on its neighbours and their padding (cosine 0.994 to
itself alone), and re-ingesting one document moved unchanged chunks. So a text's vector is bitwise the
same alone and in any list, in any order. Side by side rather than batched, by measurement on 2 cores
(docs/scale.md): a graph quantizing each text of a batch on its own range gives the same bits as one
text per call, but its extra steps cost more than batching saves; and one core per call spares the
two-thread sessions' wait for each other at every node, which on a loaded machine was half their time.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import ConfigError
from engine.relevance.graph import runtime_graph

MANIFEST = "relevance.json"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_fingerprint(model_dir: Path) -> str:
    """SHA-256 over the model's weight files (names and bytes): which embedder exactly answered."""
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(model_dir).rglob("*") if p.suffix in (".safetensors", ".bin", ".onnx")):
        digest.update(path.name.encode())
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def read_manifest(model_dir: Path) -> dict[str, Any]:
    """The artefact's manifest; a clear error when the directory is not an exported encoder."""
    path = Path(model_dir) / MANIFEST
    if not path.exists() or not (Path(model_dir) / "model.onnx").exists():
        raise ConfigError(f"{model_dir} is not a relevance model directory (expected model.onnx and {MANIFEST}); "
                          "train one with 'evidence relevance train' or unset EVIDENCE_RELEVANCE_MODEL")
    return json.loads(path.read_text())


class OnnxArtefact:
    """A model directory served by ONNX Runtime on CPU: its manifest, name, sha256 and session."""

    default_max_length = 256
    retrain_hint = "re-export it with 'evidence relevance train'"

    def __init__(self, model_dir: Path) -> None:
        self.model_dir = Path(model_dir)
        self.manifest = read_manifest(self.model_dir)
        self.max_length = int(self.manifest.get("max_length", self.default_max_length))

    @property
    def name(self) -> str:
        return str(self.manifest.get("name", self.model_dir.name))

    @property
    def sha256(self) -> str:
        return str(self.manifest["sha256"])

    @cached_property
    def _session(self) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # one core per call; `run_each` runs calls side by side
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            session = ort.InferenceSession(runtime_graph(self.model_dir / "model.onnx"), options,
                                           providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnx and onnxruntime raise their own untyped errors for a bad file
            raise ConfigError(f"cannot load the ONNX model {self.model_dir / 'model.onnx'}: {exc}; "
                              f"{self.retrain_hint}") from exc
        self._inputs = {i.name for i in session.get_inputs()}
        return session

    @cached_property
    def _workers(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1), thread_name_prefix=self.name)

    def feed(self, encoding: Any) -> dict[str, np.ndarray]:
        """One tokenized text (or pair) as the graph's inputs, a batch of one."""
        feed = {"input_ids": np.array([encoding.ids], dtype=np.int64),
                "attention_mask": np.array([encoding.attention_mask], dtype=np.int64)}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.array([encoding.type_ids], dtype=np.int64)
        return feed

    def run_each(self, encodings: Sequence[Any]) -> list[np.ndarray]:
        """The graph's first output for each encoding, one call each, side by side on the worker threads
        (ONNX Runtime releases the GIL while it runs); in the order given."""
        session = self._session
        if len(encodings) == 1:
            return [session.run(None, self.feed(encodings[0]))[0]]
        return list(self._workers.map(lambda e: session.run(None, self.feed(e))[0], encodings))


class OnnxEncoder(OnnxArtefact):
    """Encodes texts to L2-normalized float32 vectors with ONNX Runtime (CPU)."""

    @cached_property
    def _tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        tok.enable_truncation(self.max_length)
        tok.no_padding()  # one text per call (see the module docstring): nothing to pad to
        return tok

    def _hidden(self, texts: list[str]) -> list[tuple[Any, np.ndarray]]:
        """Each text's encoding and the transformer's last hidden states for it, (1 x tokens x dim)."""
        encoded = self._tokenizer.encode_batch(texts)
        return list(zip(encoded, self.run_each(encoded), strict=True))

    def encode(self, texts: list[str], dim: int | None = None) -> np.ndarray:
        """Embed texts: the mean of each text's last hidden states, L2-normalized; the same vector for a
        text alone and in any list (one call per text, see the module docstring)."""
        if not texts:
            return np.zeros((0, dim or 0), dtype=np.float32)
        pooled = np.concatenate([hidden.mean(axis=1) for _, hidden in self._hidden(texts)])
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    def token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        """Each text's token vectors (last hidden states, each L2-normalized; no [CLS]/[SEP]): the
        late-interaction view of the same encoder, one (tokens x dim) float32 array per text."""
        out = []
        for e, hidden in self._hidden(texts):
            keep = [k for k, special in enumerate(e.special_tokens_mask) if not special] or [0]
            v = hidden[0][keep].astype(np.float32)
            out.append(v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None))
        return out


def late_interaction(query: np.ndarray, passage: np.ndarray) -> float:
    """MaxSim (ColBERT): each query token's best cosine to any passage token, averaged over the query's
    tokens. Token-level matching that the pooled vector blurs: a passage that answers holds, word for
    word or in synonyms, what each part of the question asks."""
    return float((query @ passage.T).max(axis=1).mean())
