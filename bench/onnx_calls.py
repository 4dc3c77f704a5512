"""How to run the shipped int8 graphs on CPU: the variants measured to choose (issue 35).

    python bench/onnx_calls.py [--model encoder|cross] [--documents ../shared/obliqa/documents]
        [--questions ../shared/obliqa/ObliQA_dev.json] [--slices 12] [--size 30]

Each variant runs the same slices of ObliQA passages (the cross-encoder: (question, passage) pairs), the
variants one after the other within each slice, so that load from elsewhere falls on all alike; printed
per variant is its median speed against the first (the way the engine ran before) and its median ms per
slice. Variants:

* `before`: the file as it is, one text per call, a session of 2 threads (ORT's default spinning);
* `no spinning`: the same with the intra-op threads' spinning off;
* `runtime graph`: `engine.relevance.graph.runtime_graph` (no NaN guards, one attention mask), no spinning;
* `side by side` (the engine now): the runtime graph, one thread per call, a thread per core over the slice;
* `per-text quantization, batches of N`: the runtime graph with each `DynamicQuantizeLinear` (one scale
  over the whole input) rewritten to quantize each text of a batch on its own range (min/max over its
  unpadded tokens), texts sorted by length into batches of N, padded, 2 threads, no spinning.

`max_abs_diff` is the largest difference of any variant's outputs from `before` (0.0: bitwise the same;
for the batched variant, padding included). The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.config import shipped_relevance_model  # noqa: E402
from engine.relevance.graph import without_redundant_masking  # noqa: E402


def per_text_quantization(model: onnx.ModelProto) -> onnx.ModelProto:
    """Each DynamicQuantizeLinear(x) -> scale and zero point per text (axis 0) from x's range over the text's
    unpadded tokens, as DynamicQuantizeLinear computes them for that text alone; MatMulInteger then takes
    zero point 0 and the text's zero point times the weights' column sums is subtracted (MatMulInteger
    takes one zero point for A only). Integer arithmetic throughout, so a text's outputs are bitwise its
    outputs alone."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    g = model.graph
    weights = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    inferred = onnx.shape_inference.infer_shapes(model).graph.value_info
    ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in inferred}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for n in g.node:
        for name in n.input:
            readers.setdefault(name, []).append(n)
    consts = {"pq_0f": np.array(0.0, np.float32), "pq_255": np.array(255.0, np.float32),
              "pq_1f": np.array(1.0, np.float32), "pq_0u8": np.array(0, np.uint8), "pq_flat": np.array([-1], np.int64),
              "pq_axis2": np.array([2], np.int64)}
    g.initializer.extend(numpy_helper.from_array(v, k) for k, v in consts.items())
    nodes = [helper.make_node("Cast", ["attention_mask"], ["pq_mask"], to=TensorProto.FLOAT),
             helper.make_node("Unsqueeze", ["pq_mask", "pq_axis2"], ["pq_mask3"])]
    after: dict[str, list[onnx.NodeProto]] = {}
    for n in g.node:
        if n.op_type != "DynamicQuantizeLinear":
            nodes.append(n)
            continue
        x, (xq, scale, zero) = n.input[0], n.output
        p = f"pq{len(nodes)}_"
        masked, axes = (p + "m", [1, 2]) if ranks.get(x) == 3 else (x, [1])
        if ranks.get(x) == 3:
            nodes.append(helper.make_node("Mul", [x, "pq_mask3"], [masked]))
        nodes += [helper.make_node("ReduceMin", [masked], [p + "lo0"], axes=axes, keepdims=1),
                  helper.make_node("ReduceMax", [masked], [p + "hi0"], axes=axes, keepdims=1),
                  helper.make_node("Min", [p + "lo0", "pq_0f"], [p + "lo"]),
                  helper.make_node("Max", [p + "hi0", "pq_0f"], [p + "hi"]),
                  helper.make_node("Sub", [p + "hi", p + "lo"], [p + "range"]),
                  helper.make_node("Div", [p + "range", "pq_255"], [p + "s0"]),
                  helper.make_node("Equal", [p + "hi", p + "lo"], [p + "flat"]),
                  helper.make_node("Where", [p + "flat", "pq_1f", p + "s0"], [scale]),
                  helper.make_node("Div", [p + "lo", scale], [p + "q"]),
                  helper.make_node("Neg", [p + "q"], [p + "z0"]),
                  helper.make_node("Clip", [p + "z0", "pq_0f", "pq_255"], [p + "z1"]),
                  helper.make_node("Round", [p + "z1"], [p + "z2"]),
                  helper.make_node("Cast", [p + "z2"], [zero], to=TensorProto.UINT8),
                  helper.make_node("Reshape", [scale, "pq_flat"], [p + "s1"]),
                  helper.make_node("Reshape", [zero, "pq_flat"], [p + "z3"]),
                  helper.make_node("QuantizeLinear", [x, p + "s1", p + "z3"], [xq], axis=0),
                  helper.make_node("Cast", [zero], [p + "z32"], to=TensorProto.INT32)]
        for mm in readers[xq]:
            w = weights[mm.input[1]].astype(np.int32) - weights[mm.input[3]].astype(np.int32)
            sums = mm.input[1] + "_pq_colsum"
            g.initializer.append(numpy_helper.from_array(w.sum(axis=0).astype(np.int32), sums))
            out, raw = mm.output[0], mm.output[0] + "_pq_raw"
            mm.input[2], mm.output[0] = "pq_0u8", raw
            after[mm.name] = [helper.make_node("Mul", [p + "z32", sums], [out + "_pq_corr"]),
                              helper.make_node("Sub", [raw, out + "_pq_corr"], [out])]
    del g.node[:]
    g.node.extend(x for n in nodes for x in [n, *after.get(n.name, [])])
    return model


def _session(model: str | bytes, threads: int, spinning: bool) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads, options.log_severity_level = threads, 1, 3
    if not spinning:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def _run(session: ort.InferenceSession, encodings: list[Any]) -> np.ndarray:
    """One call over `encodings` (padded to the longest by the tokenizer)."""
    feed = {"input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64)}
    return session.run(None, feed)[0]


def _outputs(arrays: list[np.ndarray], encodings: list[Any]) -> list[np.ndarray]:
    """Per text: its unpadded rows (hidden states) or its score."""
    return [a[: sum(e.attention_mask)] if a.ndim == 2 else a for a, e in zip(arrays, encodings, strict=True)]


def variants(path: Path, pool: ThreadPoolExecutor) -> dict[str, Callable[[list[Any]], list[np.ndarray]]]:
    runtime = without_redundant_masking(onnx.load(str(path)))
    before = _session(str(path), 2, True)
    no_spin = _session(str(path), 2, False)
    runtime2 = _session(runtime.SerializeToString(), 2, False)
    runtime1 = _session(runtime.SerializeToString(), 1, False)
    per_text = _session(per_text_quantization(runtime).SerializeToString(), 2, False)

    def alone(session: ort.InferenceSession) -> Callable[[list[Any]], list[np.ndarray]]:
        return lambda encodings: [_run(session, [e])[0] for e in encodings]

    def batched(n: int) -> Callable[[list[Any]], list[np.ndarray]]:
        def run(encodings: list[Any]) -> list[np.ndarray]:
            order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
            out: dict[int, np.ndarray] = {}
            for start in range(0, len(order), n):
                part = order[start:start + n]
                longest = max(len(encodings[i].ids) for i in part)
                for e in (encodings[i] for i in part):
                    e.pad(longest)
                out.update(zip(part, _run(per_text, [encodings[i] for i in part]), strict=True))
            return [out[i] for i in range(len(encodings))]
        return run

    return {"before": alone(before), "no spinning": alone(no_spin), "runtime graph": alone(runtime2),
            "side by side": lambda encodings: list(pool.map(lambda e: _run(runtime1, [e])[0], encodings)),
            **{f"per-text quantization, batches of {n}": batched(n) for n in (2, 4, 8, 16)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=["encoder", "cross"], default="encoder")
    parser.add_argument("--documents", type=Path, default=ROOT.parent / "shared" / "obliqa" / "documents")
    parser.add_argument("--questions", type=Path, default=ROOT.parent / "shared" / "obliqa" / "ObliQA_dev.json")
    parser.add_argument("--slices", type=int, default=12)
    parser.add_argument("--size", type=int, default=30)
    args = parser.parse_args()
    directory = shipped_relevance_model() / ("cross" if args.model == "cross" else "")
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(192 if args.model == "cross" else 256,
                                strategy="only_second" if args.model == "cross" else "longest_first")
    passages = [p["Passage"] for path in sorted(args.documents.glob("*.json"))[:8]
                for p in json.loads(path.read_text()) if p["Passage"].strip()]
    questions = [q["Question"] for q in json.loads(args.questions.read_text())]
    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        runs = variants(directory / "model.onnx", pool)
        speed: dict[str, list[float]] = {name: [] for name in runs}
        ms: dict[str, list[float]] = {name: [] for name in runs}
        diff = dict.fromkeys(runs, 0.0)
        for k in range(args.slices):
            texts = passages[k * args.size:(k + 1) * args.size]
            items = [(questions[k], t) for t in texts] if args.model == "cross" else texts
            reference: list[np.ndarray] = []
            for name, run in runs.items():
                encodings = tokenizer.encode_batch(items)  # fresh: the batched variant pads them
                started = time.perf_counter()
                out = _outputs(run(encodings), tokenizer.encode_batch(items))
                seconds = time.perf_counter() - started
                reference = reference or out
                gaps = [float(np.abs(a - b).max()) for a, b in zip(out, reference, strict=True)]
                diff[name] = max(diff[name], *gaps)
                ms[name].append(seconds * 1000)
                speed[name].append(ms["before"][-1] / ms[name][-1])
    figures = {name: {"speed_vs_before": round(statistics.median(speed[name]), 2),
                      "ms_per_slice": round(statistics.median(ms[name]), 1), "max_abs_diff": diff[name]}
               for name in runs}
    for name, f in figures.items():
        print(f"{name:40s} {f['speed_vs_before']:5.2f}x  {f['ms_per_slice']:7.1f} ms  max abs diff {f['max_abs_diff']}")
    print(json.dumps({"model": args.model, "slice": args.size, "slices": args.slices, "cpus": os.cpu_count(),
                      "load_average": [round(x, 2) for x in os.getloadavg()], "variants": figures}))


if __name__ == "__main__":
    main()
