-- Cross-references found in chunk text ("see section 4.2") resolved to the chunks they point to.
CREATE TABLE chunk_references (
    from_chunk_id text NOT NULL REFERENCES chunks (id),
    to_chunk_id   text NOT NULL REFERENCES chunks (id),
    ref_text      text NOT NULL,
    resolver      text NOT NULL,                  -- version of the resolving rules; other versions are ignored
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (from_chunk_id, to_chunk_id, ref_text, resolver)
);
CREATE INDEX chunk_references_to ON chunk_references (to_chunk_id);
CREATE INDEX chunks_section_number ON chunks (rtrim(section_number, '.'));
