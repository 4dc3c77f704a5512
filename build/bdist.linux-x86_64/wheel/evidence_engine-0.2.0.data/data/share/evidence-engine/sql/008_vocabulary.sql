-- Surface words of the corpus (lowercase letters, 4-30 characters), for correcting misspelled query
-- words by edit distance (engine/spelling.py). Kept by ingest; a word's stem in lexical_terms (df > 0)
-- says whether it is still in a current document.
CREATE TABLE vocabulary (
    word text PRIMARY KEY CHECK (word ~ '^[a-z]{4,30}$')
);
CREATE INDEX vocabulary_length ON vocabulary (length(word), left(word, 1));

-- Words of the chunks stored before this table existed.
INSERT INTO vocabulary (word)
SELECT DISTINCT w FROM chunks, regexp_split_to_table(lower(text), '[^a-z]+') AS w
WHERE w ~ '^[a-z]{4,30}$'
ON CONFLICT DO NOTHING;
