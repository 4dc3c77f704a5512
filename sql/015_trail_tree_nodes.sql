-- The transparency log's perfect subtrees, stored as they are made (issue 34, item 5).
--
-- Node (level, idx) is the RFC 6962 hash of leaves idx * 2^level .. (idx + 1) * 2^level - 1: level 0
-- holds the leaf hashes SHA-256(0x00 || record hash) of audit seq idx + 1, level l + 1 the node hash
-- SHA-256(0x01 || left || right) of two level-l nodes. A node is written once, when its last leaf is
-- appended, by the trigger below in the append's own transaction: one leaf, and on average one parent,
-- per audit. Any tree size's root, inclusion proof and consistency proof then reads O(log n) of them
-- (`engine.trail.tree.StoredTree`) instead of every record hash. The table is derived from
-- `audits.hash` and append-only like the trail: `evidence trail verify` recomputes and compares it.

CREATE TABLE trail_nodes (
    level smallint NOT NULL CHECK (level BETWEEN 0 AND 62),
    idx   bigint   NOT NULL CHECK (idx >= 0),
    hash  bytea    NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (level, idx)
);

-- Every node the audits imply and the table lacks (a trail from before this migration, rows loaded with
-- triggers off), level by level and set-based; ON CONFLICT: a concurrent writer may have made the same node.
CREATE FUNCTION trail_fill_nodes() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    lvl int := 0;
    have bigint;
    added bigint;
    total bigint := 0;
BEGIN
    SELECT coalesce(max(idx) + 1, 0) INTO have FROM trail_nodes WHERE level = 0;
    INSERT INTO trail_nodes (level, idx, hash)
        SELECT 0, seq - 1, sha256('\x00'::bytea || decode(hash, 'hex')) FROM audits WHERE seq > have
        ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS total = ROW_COUNT;
    LOOP
        EXIT WHEN coalesce((SELECT max(idx) FROM trail_nodes WHERE level = lvl), 0) < 1;
        SELECT coalesce(max(idx) + 1, 0) INTO have FROM trail_nodes WHERE level = lvl + 1;
        INSERT INTO trail_nodes (level, idx, hash)
            SELECT lvl + 1, l.idx / 2, sha256('\x01'::bytea || l.hash || r.hash)
            FROM trail_nodes l JOIN trail_nodes r ON r.level = lvl AND r.idx = l.idx + 1
            WHERE l.level = lvl AND l.idx % 2 = 0 AND l.idx >= 2 * have
            ON CONFLICT DO NOTHING;
        GET DIAGNOSTICS added = ROW_COUNT;
        total := total + added;
        lvl := lvl + 1;
    END LOOP;
    RETURN total;
END $$;

-- One node, unless it is there already with the same hash (a concurrent fill); another hash there is a
-- tampered table, and the append is refused rather than build on it.
CREATE FUNCTION trail_put_node(lvl int, i bigint, node bytea) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    stored bytea;
BEGIN
    INSERT INTO trail_nodes (level, idx, hash) VALUES (lvl, i, node) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        SELECT hash INTO stored FROM trail_nodes WHERE level = lvl AND idx = i;
        IF stored IS DISTINCT FROM node THEN
            RAISE EXCEPTION 'trail_nodes already holds node (%, %) with another hash: the table was altered '
                'outside the engine; run ''evidence trail verify''', lvl, i USING ERRCODE = 'data_corrupted';
        END IF;
    END IF;
END $$;

-- After each audit: its leaf, then every perfect subtree it completes (as many as the trailing one bits
-- of its leaf index).
CREATE FUNCTION trail_tree_append() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    i bigint := NEW.seq - 1;
    lvl int := 0;
    node bytea := sha256('\x00'::bytea || decode(NEW.hash, 'hex'));
    sibling bytea;
BEGIN
    IF i > 0 AND NOT EXISTS (SELECT 1 FROM trail_nodes WHERE level = 0 AND idx = i - 1) THEN
        PERFORM trail_fill_nodes();  -- the table lags (rows loaded with triggers off): fill it, this row too
        RETURN NULL;
    END IF;
    PERFORM trail_put_node(0, i, node);
    WHILE i % 2 = 1 LOOP
        SELECT hash INTO sibling FROM trail_nodes WHERE level = lvl AND idx = i - 1;
        IF sibling IS NULL THEN
            RAISE EXCEPTION 'trail_nodes lacks node (%, %) below audit seq %: run ''evidence trail verify''',
                lvl, i - 1, NEW.seq USING ERRCODE = 'data_corrupted';
        END IF;
        node := sha256('\x01'::bytea || sibling || node);
        i := i / 2;
        lvl := lvl + 1;
        PERFORM trail_put_node(lvl, i, node);
    END LOOP;
    RETURN NULL;
END $$;

CREATE TRIGGER audits_tree AFTER INSERT ON audits FOR EACH ROW EXECUTE FUNCTION trail_tree_append();

CREATE TRIGGER trail_nodes_no_change BEFORE UPDATE OR DELETE ON trail_nodes FOR EACH ROW
    EXECUTE FUNCTION trail_append_only();
CREATE TRIGGER trail_nodes_no_truncate BEFORE TRUNCATE ON trail_nodes FOR EACH STATEMENT
    EXECUTE FUNCTION trail_append_only();
REVOKE TRUNCATE, UPDATE, DELETE ON trail_nodes FROM PUBLIC;

DO $$
BEGIN
    GRANT SELECT, INSERT ON trail_nodes TO evidence_trail_writer;
EXCEPTION
    WHEN insufficient_privilege OR undefined_object THEN
        RAISE NOTICE 'no grants to evidence_trail_writer: %', SQLERRM;
END $$;

SELECT trail_fill_nodes();

-- A trail with a checkpoint per append holds as many checkpoints as audits: signing looks up the newest
-- ones and whether the local log's latest is stored, by index rather than by reading every row.
CREATE INDEX trail_checkpoints_seq_id ON trail_checkpoints (seq, id);
CREATE INDEX trail_checkpoints_signature ON trail_checkpoints (signature);
