-- Which embedder filled the dense index. Vectors of different models (or of one model's fp32 and
-- int8 exports) are not comparable, so the engine refuses to mix them: one row, written by the
-- first ingest, checked by every ingest and search, rewritten only by `evidence db reembed`.
CREATE TABLE embedding_space (
    id          boolean PRIMARY KEY DEFAULT true CHECK (id),
    name        text NOT NULL,
    backend     text NOT NULL,
    sha256      text NOT NULL,
    dim         int  NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now()
);
