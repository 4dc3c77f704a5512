-- Documents, versions, chunks, dense vectors and the lexical (BM25) inverted index.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE documents (
    id              text PRIMARY KEY,              -- 'doc_' + first 24 hex of the text's SHA-256
    source_key      text NOT NULL,                 -- stable identity of the source across versions
    version         int  NOT NULL CHECK (version >= 1),
    content_sha256  text NOT NULL,                 -- SHA-256 of the normalized text
    file_sha256     text,                          -- SHA-256 of the raw file bytes
    title           text NOT NULL,
    source_type     text NOT NULL CHECK (source_type IN
                        ('statute', 'regulation', 'guidance', 'policy', 'standard', 'contract')),
    source_uri      text NOT NULL,
    format          text NOT NULL,
    text            text NOT NULL,
    metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
    ingested_at     timestamptz NOT NULL DEFAULT now(),
    is_current      boolean NOT NULL DEFAULT true,
    superseded_by   text REFERENCES documents (id),
    superseded_at   timestamptz,
    UNIQUE (source_key, version),
    UNIQUE (source_key, content_sha256)
);
CREATE UNIQUE INDEX documents_one_current ON documents (source_key) WHERE is_current;

CREATE TABLE chunks (
    id              text PRIMARY KEY,              -- 'chk_' + hash of (document id, offsets, text)
    document_id     text NOT NULL REFERENCES documents (id),
    ordinal         int  NOT NULL,
    section_number  text NOT NULL DEFAULT '',      -- e.g. '4.2'
    section_path    text NOT NULL DEFAULT '',      -- e.g. '4 > 4.2'
    section_heading text NOT NULL DEFAULT '',      -- e.g. 'Retention periods'
    text            text NOT NULL,
    char_start      int  NOT NULL,                 -- offsets into documents.text
    char_end        int  NOT NULL,
    token_count     int  NOT NULL,                 -- lexical length (BM25 dl)
    embedding       vector(384) NOT NULL,
    metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
    is_current      boolean NOT NULL DEFAULT true,
    UNIQUE (document_id, ordinal),
    CHECK (char_end > char_start)
);
CREATE INDEX chunks_document ON chunks (document_id);
CREATE INDEX chunks_embedding ON chunks USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);

-- Lexical index: a term dictionary and postings with (weighted) term frequency and chunk length,
-- so BM25 is computed exactly at query time from current corpus statistics.
CREATE TABLE lexical_terms (
    id   serial PRIMARY KEY,
    term text NOT NULL UNIQUE,
    df   int  NOT NULL DEFAULT 0 CHECK (df >= 0)    -- current chunks holding the term
);

-- BM25 corpus statistics over current chunks, kept in step by each ingest transaction.
CREATE TABLE corpus_stats (
    id       boolean PRIMARY KEY DEFAULT true CHECK (id),
    n_chunks bigint NOT NULL DEFAULT 0 CHECK (n_chunks >= 0),
    sum_dl   double precision NOT NULL DEFAULT 0
);
INSERT INTO corpus_stats DEFAULT VALUES;

CREATE TABLE postings (
    term_id    int  NOT NULL REFERENCES lexical_terms (id),
    chunk_id   text NOT NULL REFERENCES chunks (id),
    tf         real NOT NULL,
    dl         real NOT NULL,
    is_current boolean NOT NULL DEFAULT true,
    PRIMARY KEY (term_id, chunk_id)
);
CREATE INDEX postings_current ON postings (term_id) INCLUDE (chunk_id, tf, dl) WHERE is_current;
CREATE INDEX postings_chunk ON postings (chunk_id);
