-- Witness cosignatures of the trail's checkpoints (C2SP tlog-cosignature, cosignature/v1).
--
-- A witness (`evidence trail witness cosign`, with its own key, on another machine in production) checks
-- that a checkpoint extends the last one it cosigned and returns a signature line over the checkpoint; the
-- line is kept here, exactly as returned, beside the checkpoint it cosigns (by origin, tree size and root, the
-- checkpoint's own identity), and the notes embedded in reports carry it. Append-only, as every trail table.

CREATE TABLE trail_cosignatures (
    id          bigserial PRIMARY KEY,
    origin      text NOT NULL,                        -- the checkpoint's origin (the log's name)
    tree_size   bigint NOT NULL CHECK (tree_size >= 0),
    root_hash   text NOT NULL,                        -- hex, as trail_checkpoints.root_hash
    witness     text NOT NULL,                        -- the witness's key name
    key_id      text NOT NULL,                        -- hex of the 4-byte cosignature/v1 key ID
    cosigned_at timestamptz NOT NULL,                 -- the timestamp inside the cosignature
    line        text NOT NULL UNIQUE,                 -- the signature line, exactly as the witness returned it
    recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX trail_cosignatures_checkpoint ON trail_cosignatures (origin, tree_size, root_hash);

CREATE TRIGGER trail_cosignatures_no_change BEFORE UPDATE OR DELETE ON trail_cosignatures
    FOR EACH ROW EXECUTE FUNCTION trail_append_only();
CREATE TRIGGER trail_cosignatures_no_truncate BEFORE TRUNCATE ON trail_cosignatures
    FOR EACH STATEMENT EXECUTE FUNCTION trail_append_only();
REVOKE TRUNCATE, UPDATE, DELETE ON trail_cosignatures FROM PUBLIC;

DO $$
BEGIN
    GRANT SELECT, INSERT ON trail_cosignatures TO evidence_trail_writer;
    GRANT USAGE ON SEQUENCE trail_cosignatures_id_seq TO evidence_trail_writer;
EXCEPTION
    WHEN insufficient_privilege OR undefined_object THEN
        RAISE NOTICE 'no grants to evidence_trail_writer: %', SQLERRM;
END $$;
