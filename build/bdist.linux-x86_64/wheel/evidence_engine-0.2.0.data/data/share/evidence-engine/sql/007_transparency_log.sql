-- The trail as a transparency log (RFC 6962 Merkle tree, C2SP tlog checkpoints).
--
-- Leaves are the audits' record hashes in seq order; nothing about them is stored twice, the tree
-- is recomputed from `audits.hash`. What is new is the checkpoint: a C2SP signed note (origin, tree
-- size, base64 root hash; an Ed25519 signature line), kept whole in `note`. For these rows `seq` is
-- the tree size (the audits 1..seq), `head_hash` the record hash of audit `seq`, `payload` the
-- signed text and `signature` the raw Ed25519 signature in hex. Rows written before this migration
-- keep format 'json-v1' (a signed {seq, head_hash, signed_at}) and are still verified as they were.

ALTER TABLE trail_checkpoints ADD COLUMN format text NOT NULL DEFAULT 'json-v1'
    CHECK (format IN ('json-v1', 'c2sp-note'));
ALTER TABLE trail_checkpoints ADD COLUMN root_hash text;
ALTER TABLE trail_checkpoints ADD COLUMN origin text;
ALTER TABLE trail_checkpoints ADD COLUMN note text;
ALTER TABLE trail_checkpoints ADD CONSTRAINT trail_checkpoints_note_complete
    CHECK (format = 'json-v1' OR (root_hash IS NOT NULL AND origin IS NOT NULL AND note IS NOT NULL));
CREATE INDEX trail_checkpoints_size ON trail_checkpoints (seq) WHERE format = 'c2sp-note';
