"""A sentence encoder served by ONNX Runtime: tokenizer + transformer graph + mean pooling + L2 norm.

The artefact is a directory holding `model.onnx` (the transformer, int8 or fp32), `tokenizer.json`
and `relevance.json` (name, max length, sha256 of the ONNX file). Loading imports neither torch nor
transformers, so a cold CLI starts in a fraction of a second.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import ConfigError

MANIFEST = "relevance.json"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
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
        options.intra_op_num_threads = max(1, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            session = ort.InferenceSession(str(self.model_dir / "model.onnx"), options,
                                           providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own untyped errors for a bad file
            raise ConfigError(f"cannot load the ONNX model {self.model_dir / 'model.onnx'}: {exc}; "
                              f"{self.retrain_hint}") from exc
        self._inputs = {i.name for i in session.get_inputs()}
        return session


class OnnxEncoder(OnnxArtefact):
    """Encodes texts to L2-normalized float32 vectors with ONNX Runtime (CPU)."""

    @cached_property
    def _tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        tok.enable_truncation(self.max_length)
        tok.enable_padding(pad_id=int(self.manifest.get("pad_id", 0)))
        return tok

    def _hidden(self, texts: list[str]) -> tuple[list[Any], np.ndarray, np.ndarray]:
        """The tokenizer's encodings, the attention mask and the transformer's last hidden states."""
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        session = self._session
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        return encoded, mask, session.run(None, feed)[0]

    def _batch(self, texts: list[str]) -> np.ndarray:
        _, mask, hidden = self._hidden(texts)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    def encode(self, texts: list[str], dim: int | None = None) -> np.ndarray:
        """Embed texts, one per ONNX call: the int8 graph quantizes activations over its whole input, so in a
        batch a text's vector would depend on its neighbours and their padding (cosine 0.994 to itself
        alone, measured), and re-ingesting one document would move unchanged chunks. Alone, a text always
        gets the same vector; on CPU it is as fast (no padding)."""
        if not texts:
            return np.zeros((0, dim or 0), dtype=np.float32)
        return np.concatenate([self._batch([text]) for text in texts])

    def token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        """Each text's token vectors (last hidden states, each L2-normalized; no [CLS]/[SEP] or padding):
        the late-interaction view of the same encoder, one (tokens x dim) float32 array per text."""
        out = []
        for text in texts:  # one at a time, as in `encode`
            (e,), _, hidden = self._hidden([text])
            keep = [k for k, (m, special) in enumerate(zip(e.attention_mask, e.special_tokens_mask, strict=True))
                    if m and not special] or [0]
            v = hidden[0][keep].astype(np.float32)
            out.append(v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None))
        return out


def late_interaction(query: np.ndarray, passage: np.ndarray) -> float:
    """MaxSim (ColBERT): each query token's best cosine to any passage token, averaged over the query's
    tokens. Token-level matching that the pooled vector blurs: a passage that answers holds, word for
    word or in synonyms, what each part of the question asks."""
    return float((query @ passage.T).max(axis=1).mean())
