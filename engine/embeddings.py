"""Sentence embeddings with a local sentence-transformers model (offline)."""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import Settings
from engine.errors import ConfigError


class Embedder:
    """Loads the model lazily; `encode` returns L2-normalized float32 vectors."""

    def __init__(self, model_dir: Path, batch_size: int = 64, dim: int = 384) -> None:
        self.model_dir = Path(model_dir)
        self.batch_size = batch_size
        self.dim = dim
        self._model: Any = None
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    @classmethod
    def from_settings(cls, settings: Settings) -> Embedder:
        return cls(settings.model_dir, settings.embedding_batch_size, settings.embedding_dim)

    @property
    def name(self) -> str:
        return self.model_dir.name if self.model_dir.name != "model" else self.model_dir.parent.name

    def _load(self) -> Any:
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
        vectors = self._load().encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                      convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        """Embed one query, with a small LRU cache (research loops repeat queries)."""
        if text in self._cache:
            self._cache.move_to_end(text)
            return self._cache[text]
        vector = self.encode([text])[0]
        self._cache[text] = vector
        if len(self._cache) > 2048:
            self._cache.popitem(last=False)
        return vector
