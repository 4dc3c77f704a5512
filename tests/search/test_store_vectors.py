"""Vectors go to PostgreSQL through pgvector's adapters (binary COPY, binary parameters): stored exactly."""

from __future__ import annotations

import numpy as np

from engine.ingest.chunking import ChunkDraft
from engine.search import store

TEXT = "A firm must retain transaction records for at least six years from the date of the transaction."


def test_vectors_are_stored_and_searched_exactly(conn, settings) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((20, settings.embedding_dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    drafts = [ChunkDraft(id=f"chk_vec_{i:02d}", ordinal=i, text=TEXT, char_start=0, char_end=len(TEXT),
                         metadata={"n": i}) for i in range(len(vectors))]
    with conn.transaction():
        store.insert_document(conn, doc_id="doc_vec", source_key="vectors.txt", version=1, content_sha256="0" * 64,
                              file_sha256=None, title="Vectors", source_type="policy", source_uri="vectors.txt",
                              fmt="txt", text=TEXT, metadata={})
        store.insert_chunks(conn, "doc_vec", drafts, vectors, [16.0] * len(drafts))
        store.insert_postings(conn, [])
    stored = store.chunk_embeddings(conn, [d.id for d in drafts])
    assert all(np.array_equal(stored[d.id], v) for d, v in zip(drafts, vectors, strict=True))  # bit for bit
    chunk = store.get_chunks(conn, [drafts[7].id])[drafts[7].id]
    assert (chunk.text, chunk.metadata, chunk.ordinal, chunk.char_end) == (TEXT, {"n": 7}, 7, len(TEXT))
    assert conn.execute("SELECT token_count FROM chunks WHERE id = %s", (drafts[7].id,)).fetchone()[0] == 16
    best, similarity = store.dense_search(conn, vectors[7], 3, {"current_only": True})[0]
    assert best == drafts[7].id and abs(similarity - 1.0) < 1e-6


def test_a_title_word_the_text_never_writes_in_lower_case_is_a_proper_name(conn) -> None:
    text = ("Licensed under the Apache License. See http://www.apache.org/licenses/ for the Apache terms. "
            "The Security team reviews security events. Mozilla is named once.")
    with conn.transaction():
        store.insert_document(conn, doc_id="doc_proper", source_key="proper.txt", version=1,
                              content_sha256="1" * 64, file_sha256=None, title="Apache Security Mozilla",
                              source_type="contract", source_uri="proper.txt", fmt="txt", text=text, metadata={})
    words = {"doc_proper": {"Apache", "Security", "Mozilla"}}
    # "Apache" twice in capitals, in lower case only in a URL; "security" in running text; "Mozilla" only once
    assert store.proper_words(conn, words) == {"doc_proper": {"Apache"}}
    assert store.proper_words(conn, words) == {"doc_proper": {"Apache"}}  # cached: the same answer
    assert store.proper_words(conn, {"doc_proper": {"Licensed"}}) == {}


def test_a_title_word_in_a_mail_address_is_not_written_in_lower_case(conn) -> None:
    # RFC 6749's text writes "OAuth" as a name throughout and "oauth" only in a list's address
    text = ("The OAuth 2.0 authorization framework. OAuth defines four roles. Requests must be sent to the "
            "oauth-ext-review@ietf.org mailing list. An oauth token is opaque.")
    with conn.transaction():
        for doc, body in (("doc_mail", text.replace(" An oauth token is opaque.", "")), ("doc_lower", text)):
            store.insert_document(conn, doc_id=doc, source_key=f"{doc}.txt", version=1,
                                  content_sha256=("3" if doc == "doc_mail" else "4") * 64, file_sha256=None,
                                  title="The OAuth 2.0 Authorization Framework", source_type="standard",
                                  source_uri=f"{doc}.txt", fmt="txt", text=body, metadata={})
    # the address alone leaves it a name; "an oauth token" in running text does not
    assert store.proper_words(conn, {"doc_mail": {"OAuth"}, "doc_lower": {"OAuth"}}) == {"doc_mail": {"OAuth"}}


def test_the_proper_name_cache_starts_again_when_full_and_answers_the_same(conn, monkeypatch) -> None:
    text = "Apache is named. Apache again, and the Apache terms."
    with conn.transaction():
        store.insert_document(conn, doc_id="doc_full", source_key="full.txt", version=1,
                              content_sha256="2" * 64, file_sha256=None, title="Apache Terms",
                              source_type="contract", source_uri="full.txt", fmt="txt", text=text, metadata={})
    monkeypatch.setattr(store, "_PROPER", {("other", f"w{i}"): False for i in range(3)})
    monkeypatch.setattr(store, "_PROPER_MAX", 4)
    assert store.proper_words(conn, {"doc_full": {"Apache"}}) == {"doc_full": {"Apache"}}  # 3 + 1: kept
    assert len(store._PROPER) == 4
    # 4 + 2 > 4: started again before asking, so "Apache", cached before, is asked again rather than lost
    assert store.proper_words(conn, {"doc_full": {"Apache", "Terms"}}) == {"doc_full": {"Apache"}}
    assert set(store._PROPER) == {("doc_full", "Apache"), ("doc_full", "Terms")}
