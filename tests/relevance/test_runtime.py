"""The shipped graphs as the runtime runs them (engine.relevance.graph): the same bits as the file, less the
exporter's masking that cannot change a result; and a guard whose fill is not zero is left alone."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from engine.config import shipped_relevance_model
from engine.relevance.cross import CrossEncoder
from engine.relevance.encoder import OnnxEncoder
from engine.relevance.graph import runtime_graph, without_redundant_masking
from tests.relevance.test_relevance import ANSWERING, OFF_TOPIC


def _plain(path) -> ort.InferenceSession:
    """A session on the file as it is, with ONNX Runtime's defaults."""
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("kind", ["encoder", "cross"])
def test_the_runtime_graph_computes_the_files_bits(kind: str) -> None:
    directory = shipped_relevance_model() / ("cross" if kind == "cross" else "")
    artefact = CrossEncoder(directory) if kind == "cross" else OnnxEncoder(directory)
    pairs = [(ANSWERING[0], ANSWERING[1]), (OFF_TOPIC[0], OFF_TOPIC[1] * 6), ("Short?", "Yes.")]
    encoded = (artefact._tokenizer.encode_batch(pairs) if kind == "cross"
               else artefact._tokenizer.encode_batch([t for pair in pairs for t in pair]))
    plain = _plain(directory / "model.onnx")
    for e, got in zip(encoded, artefact.run_each(encoded), strict=True):
        assert np.array_equal(got, plain.run(None, artefact.feed(e))[0])


def test_the_runtime_graph_drops_each_layers_nan_guard_and_repeated_mask() -> None:
    path = shipped_relevance_model() / "model.onnx"
    ops = [n.op_type for n in onnx.load(str(path)).graph.node]
    kept = [n.op_type for n in onnx.ModelProto.FromString(runtime_graph(path)).graph.node]
    assert ops.count("IsNaN") == 6 and kept.count("IsNaN") == 0
    assert ops.count("Where") - kept.count("Where") == 6 + 5  # the guards, and 5 of the 6 masks
    assert ops.count("MatMulInteger") == kept.count("MatMulInteger")


def _guarded(fill: float) -> onnx.ModelProto:
    """y = Relu(Where(IsNaN(x), fill, x))."""
    nodes = [helper.make_node("Constant", [], ["fill"], value=numpy_helper.from_array(np.array([fill], np.float32))),
             helper.make_node("IsNaN", ["x"], ["nan"]),
             helper.make_node("Where", ["nan", "fill", "x"], ["guarded"]),
             helper.make_node("Relu", ["guarded"], ["y"])]
    graph = helper.make_graph(nodes, "guard", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("fill", "left"), [(0.0, ["Relu"]), (1.0, ["Constant", "IsNaN", "Where", "Relu"])],
                         ids=["zero-fill-dropped", "other-fill-kept"])
def test_a_nan_guard_is_dropped_only_when_it_fills_zeros(fill: float, left: list[str]) -> None:
    # a guard that writes 0 where softmax gave NaN only matters for an all-masked row, which BERT never has;
    # one that writes anything else is not the exporter's guard and stays
    assert [n.op_type for n in without_redundant_masking(_guarded(fill)).graph.node] == left
