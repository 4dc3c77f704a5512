-- The pruned BM25 search (engine/search/store.py, lexical_search) scores its few best candidates on
-- every query term by looking up each candidate's postings: an index on (chunk_id, term_id) that
-- holds tf, dl and is_current answers that from the index alone. It replaces the plain chunk_id index
-- (same leading column: removing or retiring a chunk's postings uses it as before).
CREATE INDEX IF NOT EXISTS postings_by_chunk ON postings (chunk_id, term_id) INCLUDE (tf, dl, is_current);
DROP INDEX IF EXISTS postings_chunk;
