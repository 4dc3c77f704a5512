-- A source's versions may repeat a text: a policy changed back to what version 1 said, or the same text read
-- again into other chunks by a newer engine (engine.ingest.pipeline). Each such version is a document of its
-- own (its id the text's hash with its source and a count), so (source_key, content_sha256) is no longer
-- unique; the texts are still looked up by hash.
ALTER TABLE documents DROP CONSTRAINT IF EXISTS documents_source_key_content_sha256_key;
CREATE INDEX documents_content ON documents (content_sha256);
