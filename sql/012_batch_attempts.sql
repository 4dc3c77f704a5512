-- A question that fails no longer ends its worker: each claim of an item is an attempt (`claims`); an
-- attempt that raises stores its error, gives the lease back and waits `retry_at` (back-off doubling per
-- attempt) before any worker claims it again; after the attempt limit (EVIDENCE_BATCH_MAX_ATTEMPTS) the
-- item is failed (`failed_at`) and stays so until `evidence audit retry`. An item whose workers died on
-- every attempt is failed too, at the next claim. `evidence audit skip` sets an item aside on purpose.
-- Item states: done (audit_id), skipped, failed, leased (a live lease), retrying (retry_at ahead), open.
ALTER TABLE batch_items
    ADD COLUMN leased_at     timestamptz,   -- when the present lease was taken (its age: a stuck worker)
    ADD COLUMN last_error    text,          -- the last attempt's error (redacted), kept after a retry
    ADD COLUMN last_error_at timestamptz,
    ADD COLUMN retry_at      timestamptz,   -- not claimed before this (back-off after a failed attempt)
    ADD COLUMN failed_at     timestamptz,   -- attempt limit reached: claimed by no worker until retried
    ADD COLUMN skipped_at    timestamptz,   -- set aside by an operator (`evidence audit skip`)
    ADD COLUMN skipped_by    text,
    ADD COLUMN skip_reason   text,
    ADD CONSTRAINT batch_items_one_end CHECK (num_nonnulls(audit_id, failed_at, skipped_at) <= 1);

-- The open items a worker may claim, in checklist order.
DROP INDEX IF EXISTS batch_items_open;
CREATE INDEX batch_items_open ON batch_items (batch_id, position)
    WHERE audit_id IS NULL AND failed_at IS NULL AND skipped_at IS NULL;
