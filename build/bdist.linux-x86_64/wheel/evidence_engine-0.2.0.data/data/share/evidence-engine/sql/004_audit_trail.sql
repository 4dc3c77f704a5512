-- The audit trail: append-only, hash-chained records of every answer, note and correction.
--
-- `audits` holds one row per record with its canonical serialization (`canonical`, the hashed
-- bytes), `hash` = SHA-256 of it, and `prev_hash` = the previous record's hash. The other trail
-- tables are relational copies of parts of the record, for queries; `evidence trail verify`
-- checks them against the hashed record. UPDATE, DELETE and TRUNCATE are rejected by triggers,
-- and the engine writes through the role evidence_trail_writer (INSERT and SELECT only).

CREATE TABLE audits (
    seq                  bigint PRIMARY KEY CHECK (seq >= 1),
    audit_id             text NOT NULL UNIQUE,
    kind                 text NOT NULL CHECK (kind IN ('answer', 'note', 'correction')),
    amends               text REFERENCES audits (audit_id),   -- the record a note/correction is about
    run_id               text UNIQUE,                         -- the research run (one audit per run)
    batch_id             text,
    question             text NOT NULL,
    actor                text NOT NULL,
    created_at           timestamptz NOT NULL,
    status               text NOT NULL,                       -- ANSWERED | NO_AUTHORITATIVE_EVIDENCE | REJECTED | NOTE | CORRECTION
    grounding_confidence text,
    backend              text,
    settings_hash        text,
    canonical            text NOT NULL,                       -- exactly the bytes hashed
    record               jsonb NOT NULL,                      -- the same record, queryable
    prev_hash            text NOT NULL UNIQUE,                -- one successor per record: no forks
    hash                 text NOT NULL UNIQUE,
    CHECK (kind = 'answer' OR amends IS NOT NULL)
);
CREATE INDEX audits_created ON audits (created_at);
CREATE INDEX audits_batch ON audits (batch_id) WHERE batch_id IS NOT NULL;
CREATE INDEX audits_amends ON audits (amends) WHERE amends IS NOT NULL;

CREATE TABLE audit_requirements (
    audit_id         text NOT NULL REFERENCES audits (audit_id),
    requirement_id   text NOT NULL,
    verified         boolean NOT NULL,
    cited            boolean NOT NULL,                        -- an answer statement rests on it
    rejection_reason text,
    modality         text NOT NULL,
    document_id      text NOT NULL,
    source_key       text NOT NULL,
    document_version int  NOT NULL,
    section_path     text NOT NULL,
    section_number   text NOT NULL,
    chunk_id         text NOT NULL,
    doc_char_start   int  NOT NULL,                           -- offsets into documents.text
    doc_char_end     int  NOT NULL,
    exact_quote      text NOT NULL,
    PRIMARY KEY (audit_id, requirement_id)
);
CREATE INDEX audit_requirements_document ON audit_requirements (document_id);
CREATE INDEX audit_requirements_source ON audit_requirements (source_key, section_number);

-- The corpus snapshot each answer was given: every current document at the time.
CREATE TABLE audit_documents (
    audit_id       text NOT NULL REFERENCES audits (audit_id),
    document_id    text NOT NULL,
    source_key     text NOT NULL,
    version        int  NOT NULL,
    content_sha256 text NOT NULL,
    title          text NOT NULL,
    PRIMARY KEY (audit_id, document_id)
);

-- Signed checkpoints: {seq, head_hash, signed_at} signed with an Ed25519 key kept outside the database.
CREATE TABLE trail_checkpoints (
    id              bigserial PRIMARY KEY,
    seq             bigint NOT NULL,
    head_hash       text NOT NULL,
    signed_at       timestamptz NOT NULL,
    key_fingerprint text NOT NULL,
    payload         text NOT NULL,                            -- the canonical bytes signed
    signature       text NOT NULL                             -- hex
);

-- Derived search index over questions and answers (not evidence: rebuilt from the records).
CREATE TABLE audit_embeddings (
    audit_id  text PRIMARY KEY REFERENCES audits (audit_id),
    question  vector(384) NOT NULL,
    answer    vector(384) NOT NULL
);
CREATE INDEX audit_embeddings_question ON audit_embeddings USING hnsw (question vector_cosine_ops);

-- Append-only, whoever connects: no UPDATE, DELETE or TRUNCATE.
CREATE FUNCTION trail_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit trail is append-only: % on % is not allowed; record a correction instead',
        TG_OP, TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END $$;

-- Chain integrity at insert time (the engine also serializes appends with an advisory lock).
CREATE FUNCTION trail_check_append() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    head record;
BEGIN
    SELECT seq, hash INTO head FROM audits ORDER BY seq DESC LIMIT 1;
    IF head IS NULL THEN
        IF NEW.seq <> 1 OR NEW.prev_hash <> repeat('0', 64) THEN
            RAISE EXCEPTION 'the first audit must have seq 1 and the genesis prev_hash';
        END IF;
    ELSIF NEW.seq <> head.seq + 1 OR NEW.prev_hash <> head.hash THEN
        RAISE EXCEPTION 'audit seq % does not extend the chain head % (expected seq %, prev_hash %)',
            NEW.seq, head.seq, head.seq + 1, head.hash;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER audits_chain BEFORE INSERT ON audits FOR EACH ROW EXECUTE FUNCTION trail_check_append();

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['audits', 'audit_requirements', 'audit_documents', 'trail_checkpoints',
                             'audit_embeddings'] LOOP
        EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE OR DELETE ON %I FOR EACH ROW '
                       'EXECUTE FUNCTION trail_append_only()', t || '_no_change', t);
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT '
                       'EXECUTE FUNCTION trail_append_only()', t || '_no_truncate', t);
        EXECUTE format('REVOKE TRUNCATE, UPDATE, DELETE ON %I FROM PUBLIC', t);
    END LOOP;
END $$;

-- The writer role (cluster-wide; created once, granted per database). Servers where the
-- connecting user may not create roles keep the triggers and skip the role.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'evidence_trail_writer') THEN
        CREATE ROLE evidence_trail_writer NOLOGIN;
    END IF;
EXCEPTION
    WHEN insufficient_privilege OR duplicate_object OR unique_violation THEN
        RAISE NOTICE 'role evidence_trail_writer not created here: %', SQLERRM;
END $$;

DO $$
BEGIN
    GRANT SELECT, INSERT ON audits, audit_requirements, audit_documents, trail_checkpoints, audit_embeddings
        TO evidence_trail_writer;
    GRANT USAGE ON SEQUENCE trail_checkpoints_id_seq TO evidence_trail_writer;
    GRANT SELECT ON documents, chunks TO evidence_trail_writer;
EXCEPTION
    WHEN insufficient_privilege OR undefined_object THEN
        RAISE NOTICE 'no grants to evidence_trail_writer: %', SQLERRM;
END $$;
