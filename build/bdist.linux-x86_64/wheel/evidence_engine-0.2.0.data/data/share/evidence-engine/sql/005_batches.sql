-- Batch runs of audit definitions (audits/*.yaml). A batch is the definition as run (resolved
-- scope included), and one item per question with its pre-assigned research run id. Workers
-- claim items with FOR UPDATE SKIP LOCKED and hold the row lock while answering, so a question
-- is never answered by two workers; the audit itself (unique per run id) is the proof of done.
CREATE TABLE batches (
    batch_id          text PRIMARY KEY,
    name              text NOT NULL,
    definition_path   text NOT NULL,
    definition_sha256 text NOT NULL,
    definition        jsonb NOT NULL,              -- the validated definition, resolved scope included
    actor             text NOT NULL,
    settings_hash     text NOT NULL,
    started_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE batch_items (
    batch_id    text NOT NULL REFERENCES batches (batch_id),
    question_id text NOT NULL,
    position    int  NOT NULL,
    run_id      text NOT NULL UNIQUE,
    audit_id    text REFERENCES audits (audit_id),  -- set once the question's audit is recorded
    finished_at timestamptz,
    PRIMARY KEY (batch_id, question_id),
    UNIQUE (batch_id, position)
);
CREATE INDEX batch_items_open ON batch_items (batch_id, position) WHERE audit_id IS NULL;

DO $$
BEGIN
    GRANT SELECT, INSERT, UPDATE ON batches, batch_items TO evidence_trail_writer;
EXCEPTION
    WHEN insufficient_privilege OR undefined_object THEN
        RAISE NOTICE 'no grants to evidence_trail_writer: %', SQLERRM;
END $$;
