-- Batch items are leased, not locked for the length of an answer: a worker claims an item (a short
-- transaction, FOR UPDATE SKIP LOCKED), renews its lease with heartbeats while it answers, and records
-- the audit and `audit_id` in one transaction only while the lease is still its own. Another worker
-- takes the item over when the lease has expired (a host that hangs or loses the network) or when the
-- owner's connection is gone (its session advisory lock, namespace 7702008, is released), and resumes
-- it from its checkpoint. So workers may run on several machines sharing one database.
ALTER TABLE batch_items
    ADD COLUMN lease_owner      text,            -- worker id: host:pid:random
    ADD COLUMN lease_expires_at timestamptz,     -- by the database's clock, never a worker's
    ADD COLUMN claims           int NOT NULL DEFAULT 0 CHECK (claims >= 0),
    ADD COLUMN done_by          text;            -- the worker that recorded the audit
-- One audit answers one item: a second recording of a question cannot be attached anywhere.
CREATE UNIQUE INDEX batch_items_one_audit ON batch_items (audit_id) WHERE audit_id IS NOT NULL;
