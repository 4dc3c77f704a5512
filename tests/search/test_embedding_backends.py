"""The two embedding backends compute the same function: torch and an fp32 ONNX export of one model agree."""

from __future__ import annotations

import numpy as np
import pytest

from engine.config import default_model_dir
from engine.search.embeddings import Embedder

TEXTS = ["How long must transaction records be kept?",
         "4.2 Retention periods: A firm must retain transaction records for at least six years from the date of "
         "the transaction, and must not destroy client records while an investigation is pending.",
         "Access to records is restricted to authorised staff.", "a", "Ünïcödé text — with dashes; and (brackets)."]


@pytest.mark.slow
def test_torch_and_onnx_fp32_of_the_same_model_agree(tmp_path) -> None:
    from engine.relevance.export import export_onnx

    source = default_model_dir()
    exported = export_onnx(source, tmp_path / "fp32", name="minilm-fp32", quantize=False)
    torch_vectors = Embedder(source, backend="torch").encode(TEXTS)
    onnx = Embedder(exported, backend="onnx")
    onnx_vectors = onnx.encode(TEXTS)
    cosines = (torch_vectors * onnx_vectors).sum(axis=1)
    assert onnx_vectors.shape == torch_vectors.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(onnx_vectors, axis=1), 1.0, atol=1e-5)
    assert cosines.min() > 0.9999, cosines
    assert onnx.identity["backend"] == "onnx" and onnx.identity["sha256"] != Embedder(source).sha256


def test_unknown_backend_is_refused() -> None:
    from engine.errors import ConfigError

    with pytest.raises(ConfigError, match="expected 'onnx' or 'torch'"):
        Embedder(default_model_dir(), backend="tensorflow")
