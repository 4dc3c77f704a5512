"""Relevance: the learned models that decide what answers a question.

* `encoder` — the sentence encoder served by ONNX Runtime (a MiniLM fine-tuned on question/passage
  pairs; no torch at run time).
* `cross` — the cross-encoder (question and passage read together) whose logit the rank head reads, and
  its seeded training command (`evidence relevance train-cross PAIRS.jsonl --model DIR`).
* `scorer` — learning-to-rank over retrieval features, used to rerank, to gate quotes and to
  select what an answer cites.
* `train` — the seeded training command (`evidence relevance train PAIRS.jsonl`): fine-tunes the
  encoder, exports it to ONNX (int8), fits the scorer.
* `pairs` — (question, passage, label) data: reading, writing, ObliQA conversion, splits.
"""
