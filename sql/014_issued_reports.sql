-- An issued report is a trail record of its own kind ('report'): the SHA-256 of the signed PDF the engine
-- handed out, so `report verify` can tell a report the engine issued from one assembled around a genuine
-- record. DDL, not an UPDATE: the append-only triggers stay.
ALTER TABLE audits DROP CONSTRAINT IF EXISTS audits_kind_check;
ALTER TABLE audits ADD CONSTRAINT audits_kind_check
    CHECK (kind IN ('answer', 'note', 'correction', 'signoff', 'report'));
CREATE INDEX IF NOT EXISTS audits_issued_report_sha256 ON audits ((record->'report'->>'sha256')) WHERE kind = 'report';
