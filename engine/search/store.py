"""SQL for documents, chunks, the lexical index and the two searches."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from engine.db import one
from engine.errors import InputError, StorageError
from engine.models import Chunk, ChunkDraft, Document

_DOC_COLUMNS = ("id, source_key, version, content_sha256, title, source_type, source_uri, format, "
                "ingested_at, is_current, superseded_by, metadata")
_CHUNK_SELECT = """
SELECT c.id, c.document_id, d.title AS document_title, d.version AS document_version, d.source_type,
       c.is_current, c.ordinal, c.section_number, c.section_path, c.section_heading, c.text,
       c.char_start, c.char_end, c.metadata
FROM chunks c JOIN documents d ON d.id = c.document_id
"""


def document_by_content(conn: psycopg.Connection, content_sha256: str) -> Document | None:
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE content_sha256 = %s "
                          "ORDER BY is_current DESC, ingested_at LIMIT 1", (content_sha256,)).fetchone()
    return Document(**row) if row else None


def chunk_layout(conn: psycopg.Connection, document_id: str) -> list[tuple[Any, ...]]:
    """How a stored version was read into chunks, in order: each chunk's (ordinal, char_start, char_end,
    section_number, section_path, section_heading, metadata), what `engine.ingest.pipeline.layout` gives a
    reading of the same text."""
    rows = conn.execute("SELECT ordinal, char_start, char_end, section_number, section_path, section_heading, "
                        "metadata FROM chunks WHERE document_id = %s ORDER BY ordinal", (document_id,)).fetchall()
    return [tuple(r) for r in rows]


def current_document(conn: psycopg.Connection, source_key: str) -> Document | None:
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE source_key = %s AND is_current",
                          (source_key,)).fetchone()
    return Document(**row) if row else None


def get_document(conn: psycopg.Connection, document_id: str) -> Document | None:
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE id = %s", (document_id,)).fetchone()
    return Document(**row) if row else None


def document_text(conn: psycopg.Connection, document_id: str) -> str | None:
    row = conn.execute("SELECT text FROM documents WHERE id = %s", (document_id,)).fetchone()
    return row[0] if row else None


def list_documents(conn: psycopg.Connection, *, include_superseded: bool = False) -> list[Document]:
    where = "" if include_superseded else "WHERE is_current"
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(f"SELECT {_DOC_COLUMNS} FROM documents {where} ORDER BY source_key, version").fetchall()
    return [Document(**row) for row in rows]


def current_titles(conn: psycopg.Connection) -> dict[str, str]:
    """Every current document's id and title (documents.id: an exact version)."""
    return dict(conn.execute("SELECT id, title FROM documents WHERE is_current ORDER BY source_key").fetchall())


def names_written(conn: psycopg.Connection, document_ids: Iterable[str], names: Iterable[str]) -> set[str]:
    """Of `names` ("PSD2", "Atomic Energy Act"), those the text of any of the documents writes, in any case and
    spacing, as whole words."""
    names, ids = list(dict.fromkeys(names)), list(document_ids)
    if not names or not ids:
        return set()
    patterns = ["\\m" + "\\s+".join(re.sub(r"([^\w\s])", r"\\\1", w) for w in n.split()) + "\\M" for n in names]
    rows = conn.execute("SELECT n, p FROM unnest(%s::text[], %s::text[]) AS t(n, p) WHERE EXISTS "
                        "(SELECT 1 FROM documents d WHERE d.id = ANY(%s) AND d.text ~* p)", (names, patterns, ids))
    return {row[0] for row in rows.fetchall()}


def current_languages(conn: psycopg.Connection, sample_chars: int = 2000) -> list[tuple[str | None, str]]:
    """(language detected at ingest, or None for documents ingested before that; the text's opening)
    for every current document."""
    rows = conn.execute("SELECT metadata->>'language', left(text, %s) FROM documents WHERE is_current "
                        "ORDER BY source_key", (sample_chars,)).fetchall()
    return [(row[0], row[1]) for row in rows]


def document_versions(conn: psycopg.Connection, source_key: str) -> list[Document]:
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE source_key = %s ORDER BY version",
                           (source_key,)).fetchall()
    return [Document(**row) for row in rows]


def term_ids(conn: psycopg.Connection, terms: Iterable[str], *, create: bool) -> dict[str, int]:
    """Ids of terms in the dictionary; with `create`, missing terms are added first."""
    terms = sorted(set(terms))
    if not terms:
        return {}
    if create:
        conn.execute("INSERT INTO lexical_terms (term) SELECT unnest(%s::text[]) ON CONFLICT (term) DO NOTHING",
                     (terms,))
    rows = conn.execute("SELECT term, id FROM lexical_terms WHERE term = ANY(%s)", (terms,)).fetchall()
    return dict(rows)


def insert_vocabulary(conn: psycopg.Connection, words: Iterable[str]) -> None:
    """Add surface words (lowercase letters, 4-30 characters) to the vocabulary the spelling correction reads."""
    words = sorted(set(words))
    if words:
        conn.execute("INSERT INTO vocabulary (word) SELECT unnest(%s::text[]) ON CONFLICT DO NOTHING", (words,))


def vocabulary_near(conn: psycopg.Connection, words: Sequence[str], slack: int = 2) -> list[str]:
    """Corpus words that could be a misspelling of one of `words`: a length within `slack` of it and its
    first or second letter in the same place (the candidates an edit distance is then computed for)."""
    if not words:
        return []
    lengths = [len(w) for w in words]
    rows = conn.execute(
        "SELECT word FROM vocabulary WHERE length(word) BETWEEN %s AND %s "
        "AND (left(word, 1) = ANY(%s) OR substr(word, 2, 1) = ANY(%s))",
        (min(lengths) - slack, max(lengths) + slack, sorted({w[0] for w in words}),
         sorted({w[1:2] for w in words}))).fetchall()
    return [r[0] for r in rows]


def term_frequencies(conn: psycopg.Connection, terms: Iterable[str]) -> dict[str, int]:
    """Current chunks holding each lexical term (stem), for terms that occur in the current corpus."""
    terms = sorted(set(terms))
    if not terms:
        return {}
    rows = conn.execute("SELECT term, df FROM lexical_terms WHERE term = ANY(%s) AND df > 0", (terms,)).fetchall()
    return {r[0]: int(r[1]) for r in rows}


def insert_document(conn: psycopg.Connection, *, doc_id: str, source_key: str, version: int, content_sha256: str,
                    file_sha256: str | None, title: str, source_type: str, source_uri: str, fmt: str, text: str,
                    metadata: dict[str, Any]) -> None:
    conn.execute(
        "INSERT INTO documents (id, source_key, version, content_sha256, file_sha256, title, source_type,"
        " source_uri, format, text, metadata) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (doc_id, source_key, version, content_sha256, file_sha256, title, source_type, source_uri, fmt, text,
         Jsonb(metadata)),
    )


def retire(conn: psycopg.Connection, old_id: str) -> None:
    """First half of superseding: the old version stops being current (before the new one is inserted)."""
    old_chunks = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE document_id = %s AND is_current", (old_id,))]
    adjust_lexical_stats(conn, old_chunks, -1)
    conn.execute("UPDATE documents SET is_current = false, superseded_at = now() WHERE id = %s", (old_id,))
    conn.execute("UPDATE chunks SET is_current = false WHERE document_id = %s", (old_id,))
    conn.execute("UPDATE postings SET is_current = false WHERE chunk_id = ANY(%s)", (old_chunks,))


def supersede(conn: psycopg.Connection, old_id: str, new_id: str) -> None:
    """Second half: link the old version to its successor; its text and chunks stay readable."""
    conn.execute("UPDATE documents SET is_current = false, superseded_by = %s WHERE id = %s", (new_id, old_id))


# Bulk loads are binary COPYs: vectors go as pgvector's binary float4 (the connection has its adapters:
# engine.db.connect registers them), exactly the encoder's float32 values, with no text on the way.
_CHUNK_TYPES = ("text", "text", "int4", "text", "text", "text", "text", "int4", "int4", "int4", "vector", "jsonb")
_POSTING_TYPES = ("int4", "text", "float4", "float4")


def insert_chunks(conn: psycopg.Connection, document_id: str, drafts: Sequence[ChunkDraft],
                  embeddings: np.ndarray, lengths: Sequence[float]) -> None:
    with conn.cursor() as cur, cur.copy(
        "COPY chunks (id, document_id, ordinal, section_number, section_path, section_heading, text,"
        " char_start, char_end, token_count, embedding, metadata) FROM STDIN WITH (FORMAT BINARY)"
    ) as copy:
        copy.set_types(list(_CHUNK_TYPES))
        for draft, vector, length in zip(drafts, embeddings, lengths, strict=True):
            copy.write_row((draft.id, document_id, draft.ordinal, draft.section_number, draft.section_path,
                            draft.section_heading, draft.text, draft.char_start, draft.char_end, int(length),
                            np.asarray(vector, dtype=np.float32), Jsonb(draft.metadata)))


def insert_postings(conn: psycopg.Connection, rows: Iterable[tuple[int, str, float, float]]) -> None:
    """Rows of (term_id, chunk_id, tf, dl)."""
    with conn.cursor() as cur, cur.copy("COPY postings (term_id, chunk_id, tf, dl) FROM STDIN WITH (FORMAT BINARY)"
                                        ) as copy:
        copy.set_types(list(_POSTING_TYPES))
        for row in rows:
            copy.write_row(row)


def get_chunks(conn: psycopg.Connection, ids: Sequence[str]) -> dict[str, Chunk]:
    if not ids:
        return {}
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(_CHUNK_SELECT + " WHERE c.id = ANY(%s)", (list(ids),)).fetchall()
    return {row["id"]: Chunk(**row) for row in rows}


def adjoining_chunks(conn: psycopg.Connection, ids: Sequence[str], width: int = 1) -> dict[str, list[Chunk]]:
    """For each chunk id, the chunks up to `width` before and after it in its document (its version), in
    document order."""
    if not ids:
        return {}
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(_CHUNK_SELECT.replace("SELECT ", "SELECT o.id AS origin, ", 1)
                           + " JOIN chunks o ON o.document_id = c.document_id AND c.id <> o.id"
                           " AND c.ordinal BETWEEN o.ordinal - %s AND o.ordinal + %s"
                           " WHERE o.id = ANY(%s) ORDER BY o.id, c.ordinal", (width, width, list(ids))).fetchall()
    out: dict[str, list[Chunk]] = {}
    for row in rows:
        out.setdefault(row.pop("origin"), []).append(Chunk(**row))
    return out


def chunk_embeddings(conn: psycopg.Connection, ids: Sequence[str]) -> dict[str, np.ndarray]:
    """Stored vectors of chunks (as the index holds them)."""
    if not ids:
        return {}
    rows = conn.execute("SELECT id, embedding FROM chunks WHERE id = ANY(%s)", (list(ids),)).fetchall()
    return {row[0]: np.asarray(row[1].to_numpy(), dtype=np.float32) for row in rows}


def chunks_of_document(conn: psycopg.Connection, document_id: str) -> list[Chunk]:
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(_CHUNK_SELECT + " WHERE c.document_id = %s ORDER BY c.ordinal", (document_id,)).fetchall()
    return [Chunk(**row) for row in rows]


def section_chunks(conn: psycopg.Connection, sections: Sequence[tuple[str, str]], *, most: int = 12,
                   around: Mapping[tuple[str, str], str] | None = None, window: int = 0
                   ) -> dict[tuple[str, str], list[Chunk]]:
    """For each (document id, section path), the chunks of that section of that document version in document
    order; of a section of more than `most` chunks (a long list of recitals or definitions is no one matter), only
    those within `window` places of its chunk in `around` (the rest of that chunk's paragraph), else none."""
    if not sections:
        return {}
    docs, paths = [d for d, _ in sections], [p for _, p in sections]
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(_CHUNK_SELECT + " JOIN unnest(%s::text[], %s::text[]) AS s(document_id, section_path)"
                           " ON c.document_id = s.document_id AND c.section_path = s.section_path"
                           " ORDER BY c.document_id, c.ordinal", (docs, paths)).fetchall()
    out: dict[tuple[str, str], list[Chunk]] = {}
    for row in rows:
        out.setdefault((row["document_id"], row["section_path"]), []).append(Chunk(**row))
    around = around or {}
    for key, found in list(out.items()):
        if len(found) <= most:
            continue
        at = next((i for i, c in enumerate(found) if c.id == around.get(key)), None)
        if at is None or not window:
            del out[key]
        else:
            out[key] = found[max(0, at - window): at + window + 1]
    return out


def sibling_sections(conn: psycopg.Connection, sections: Sequence[tuple[str, str]]
                     ) -> dict[tuple[str, str], list[str]]:
    """For each (document id, section path) under a parent heading, the paths of the other sections directly under
    that parent in the same document ("Part 7 Incidents > 7.2 Incident reporting" beside "Part 7 Incidents > 7.4
    Incident records"), in document order."""
    keys = [(d, p) for d, p in sections if " > " in p]
    if not keys:
        return {}
    parents = [p.rsplit(" > ", 1)[0] for _, p in keys]
    rows = conn.execute(
        "SELECT s.document_id, s.parent, c.section_path, min(c.ordinal) AS first FROM chunks c"
        " JOIN unnest(%s::text[], %s::text[]) AS s(document_id, parent) ON c.document_id = s.document_id"
        " AND c.section_path LIKE replace(replace(s.parent, '%%', '\\%%'), '_', '\\_') || ' > %%'"
        " AND position(' > ' IN substr(c.section_path, length(s.parent) + 4)) = 0"
        " GROUP BY s.document_id, s.parent, c.section_path ORDER BY s.document_id, first",
        ([d for d, _ in keys], parents)).fetchall()
    under: dict[tuple[str, str], list[str]] = {}
    for document_id, parent, path, _ in rows:
        under.setdefault((document_id, parent), []).append(path)
    return {(d, p): [q for q in under.get((d, parent), []) if q != p] for (d, p), parent in zip(keys, parents,
                                                                                                strict=True)}


def chunks_by_section(conn: psycopg.Connection, section_number: str, *, document_id: str | None = None,
                      document_ids: Iterable[str] | None = None, limit: int = 20) -> list[Chunk]:
    """Current chunks whose section number is `section_number` or lies below it (4.2 -> 4.2, 4.2.1, 4.2(a)), of
    `document_id` or of `document_ids` where given (the limit counts theirs only: in a library where many texts
    have a section 3, the first `limit` of all of them may hold none of the text asked about)."""
    prefix = section_number.rstrip(".")
    sql = _CHUNK_SELECT + (" WHERE c.is_current AND (rtrim(c.section_number, '.') = %(s)s"
                           " OR c.section_number LIKE %(p1)s OR c.section_number LIKE %(p2)s)")
    params: dict[str, Any] = {"s": prefix, "p1": prefix + ".%", "p2": prefix + "(%", "limit": limit}
    if document_id:
        sql += " AND c.document_id = %(d)s"
        params["d"] = document_id
    if document_ids is not None:
        sql += " AND c.document_id = ANY(%(ds)s)"
        params["ds"] = sorted(document_ids)
    sql += " ORDER BY c.document_id, c.ordinal LIMIT %(limit)s"
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(sql, params).fetchall()
    return [Chunk(**row) for row in rows]


def numbered_within(conn: psycopg.Connection, number: str) -> list[tuple[str, str]]:
    """(document id, section number) of the current blocks numbered `number` within a provision one level up ("38"
    -> "12(38)": a guideline's paragraph, where a text numbers its paragraphs on across its guidelines)."""
    rows = conn.execute("SELECT DISTINCT document_id, section_number FROM chunks WHERE is_current AND "
                        "section_number ~ ('^[^()]+\\(' || %s || '\\)$') ORDER BY 1, 2",
                        (re.escape(number),)).fetchall()
    return [(r[0], r[1]) for r in rows]


def corpus_stats(conn: psycopg.Connection) -> tuple[int, float]:
    """(number of current chunks, mean lexical length), as maintained by ingest."""
    n, sum_dl = one(conn, "SELECT n_chunks, sum_dl FROM corpus_stats")
    return int(n), float(sum_dl) / n if n else 0.0


def adjust_lexical_stats(conn: psycopg.Connection, chunk_ids: Sequence[str], sign: int) -> None:
    """Add (sign=1) or remove (sign=-1) chunks from the BM25 statistics, in the caller's transaction.

    Term rows are locked in id order first, so concurrent ingests cannot deadlock on them.
    """
    ids = list(chunk_ids)
    counts = conn.execute("SELECT term_id, count(*) FROM postings WHERE chunk_id = ANY(%s) GROUP BY term_id "
                          "ORDER BY term_id", (ids,)).fetchall()
    if counts:
        conn.execute("SELECT id FROM lexical_terms WHERE id = ANY(%s) ORDER BY id FOR UPDATE",
                     ([t for t, _ in counts],))
        conn.execute("UPDATE lexical_terms t SET df = t.df + %s * x.n FROM unnest(%s::int[], %s::int[]) AS x(id, n) "
                     "WHERE t.id = x.id", (sign, [t for t, _ in counts], [n for _, n in counts]))
    n, total = one(conn, "SELECT count(*), coalesce(sum(token_count), 0) FROM chunks WHERE id = ANY(%s)", (ids,))
    conn.execute("UPDATE corpus_stats SET n_chunks = n_chunks + %s, sum_dl = sum_dl + %s",
                 (sign * n, sign * float(total)))


def recount_lexical_stats(conn: psycopg.Connection) -> dict[str, Any]:
    """Statistics recomputed from scratch (for checks): {'n_chunks', 'sum_dl', 'df': {term_id: df}}."""
    n, total = one(conn, "SELECT count(*), coalesce(sum(token_count), 0) FROM chunks WHERE is_current")
    df: dict[Any, Any] = dict(conn.execute("SELECT term_id, count(*) FROM postings WHERE is_current "
                                           "GROUP BY term_id").fetchall())
    return {"n_chunks": int(n), "sum_dl": float(total), "df": {int(k): int(v) for k, v in df.items()}}


def filter_sql(alias: str, filters: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """WHERE fragment restricting chunks (alias.id) by document / source type / currency."""
    clauses, params = [], {}
    if filters.get("document_ids"):
        clauses.append(f"{alias}.document_id = ANY(%(f_docs)s)")
        params["f_docs"] = list(filters["document_ids"])
    elif filters.get("current_only", True):
        clauses.append(f"{alias}.is_current")
    if filters.get("source_types"):
        clauses.append(f"{alias}.document_id IN (SELECT id FROM documents WHERE source_type = ANY(%(f_types)s))")
        params["f_types"] = list(filters["source_types"])
    if filters.get("exclude_ids"):
        clauses.append(f"NOT ({alias}.id = ANY(%(f_excl)s))")
        params["f_excl"] = list(filters["exclude_ids"])
    return (" AND ".join(clauses) or "true"), params


def dense_search(conn: psycopg.Connection, vector: np.ndarray, k: int, filters: dict[str, Any],
                 ef_search: int = 100) -> list[tuple[str, float]]:
    """(chunk id, cosine similarity) best first, by the HNSW index."""
    where, params = filter_sql("c", filters)
    params.update(v=np.asarray(vector, dtype=np.float32), k=k)
    with conn.transaction():
        conn.execute(f"SET LOCAL hnsw.ef_search = {int(max(ef_search, k))}")
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        rows = conn.execute(
            f"SELECT c.id, 1 - (c.embedding <=> %(v)s::vector) AS sim FROM chunks c WHERE {where}"
            " ORDER BY c.embedding <=> %(v)s::vector LIMIT %(k)s", params).fetchall()
    return sorted(((r[0], float(r[1])) for r in rows), key=lambda r: -r[1])


def optimize(conn: psycopg.Connection) -> None:
    """Refresh planner statistics and visibility maps after a bulk load (needs autocommit)."""
    if conn.autocommit and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        conn.execute("VACUUM (ANALYZE) postings")
        conn.execute("VACUUM (ANALYZE) chunks")
        conn.execute("ANALYZE lexical_terms")


# What a search reads: the HNSW index, the chunk rows (ids, filters, candidates' text and vectors), the
# BM25 postings' two indexes and the term dictionary. At 1M chunks about 10 GB (docs/scale.md); searching
# from the OS page cache instead of shared buffers costs a 1M-chunk search two to three times its time.
SEARCH_RELATIONS = ("chunks_embedding", "chunks", "postings_current", "postings_by_chunk", "lexical_terms",
                    "lexical_terms_term_key")


_SEARCH_RELATION_ROWS = ("FROM pg_class c WHERE c.relname = ANY(%s) "
                         "AND c.relnamespace = current_schema()::regnamespace ORDER BY c.relname")


def search_working_set(conn: psycopg.Connection) -> tuple[dict[str, int], int]:
    """(bytes of each relation a search reads, the heap's TOAST included; the server's shared_buffers in bytes)."""
    rows = conn.execute("SELECT c.relname, pg_relation_size(c.oid) + coalesce(pg_relation_size(c.reltoastrelid), 0) "
                        + _SEARCH_RELATION_ROWS, (list(SEARCH_RELATIONS),)).fetchall()
    shared = one(conn, "SELECT setting::bigint * pg_size_bytes(unit) FROM pg_settings WHERE name = 'shared_buffers'")[0]
    return {name: int(size) for name, size in rows}, int(shared)


def prewarm(conn: psycopg.Connection) -> dict[str, int]:
    """Read what a search needs into PostgreSQL's shared buffers (pg_prewarm); the blocks read per relation.

    After a server restart the first searches of a large corpus read the HNSW index and the postings
    from disk or the OS cache. pg_prewarm ships with PostgreSQL (contrib) but creating it needs a
    superuser or an administrator once; StorageError says so.
    """
    try:
        if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_prewarm'").fetchone():
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    except (psycopg.errors.InsufficientPrivilege, psycopg.errors.UndefinedFile,
            psycopg.errors.FeatureNotSupported) as exc:
        raise StorageError(f"cannot use pg_prewarm ({str(exc).strip()}); ask an administrator to run "
                           "'CREATE EXTENSION pg_prewarm;' in this database once (it ships with PostgreSQL's "
                           "contrib modules)") from exc
    rows = conn.execute("SELECT c.relname, pg_prewarm(c.oid) " + _SEARCH_RELATION_ROWS,
                        (list(SEARCH_RELATIONS),)).fetchall()
    return {name: int(blocks) for name, blocks in rows}


def count_rows(conn: psycopg.Connection) -> dict[str, int]:
    out = {}
    for table in ("documents", "chunks", "postings", "lexical_terms"):
        out[table] = one(conn, f"SELECT count(*) FROM {table}")[0]
    return out


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def find_documents(conn: psycopg.Connection, name: str) -> list[Document]:
    """Every version of the documents `name` identifies: a document id, a source key, a title or a file
    name; else any unique start of a document id ('doc_e32d93ae', or a pasted 'doc_e32d93aef80d…').

    InputError when the start of an id fits versions of several documents.
    """
    sql = (f"SELECT {_DOC_COLUMNS} FROM documents WHERE source_key IN (SELECT source_key FROM documents "
           "WHERE id = %(n)s OR source_key = %(n)s OR lower(title) = lower(%(n)s) OR source_uri = %(n)s "
           "OR source_uri LIKE %(tail)s) ORDER BY source_key, version")
    tail = "%/" + _escape_like(name)
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(sql, {"n": name, "tail": tail}).fetchall()
        prefix = name.strip().rstrip("…").rstrip(".").strip()
        if not rows and len(prefix) >= 5:
            rows = cur.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE source_key IN (SELECT source_key "
                               "FROM documents WHERE id LIKE %s) ORDER BY source_key, version",
                               (_escape_like(prefix) + "%",)).fetchall()
            if len({r["source_key"] for r in rows}) > 1:
                ids = sorted({r["id"] for r in rows if r["id"].startswith(prefix)})
                raise InputError(f"'{name}' is the start of the ids of several documents ({', '.join(ids[:5])}"
                                 f"{', ...' if len(ids) > 5 else ''}); give more of the id")
    return [Document(**row) for row in rows]


def has_section(conn: psycopg.Connection, document_ids: Sequence[str], section: str) -> bool:
    """Whether any of these document versions has the section `section` (or one below it: 4.2 -> 4.2.1, 4.2(a))."""
    prefix = section.rstrip(".")
    like = _escape_like(prefix)
    row = one(conn, "SELECT EXISTS (SELECT 1 FROM chunks WHERE document_id = ANY(%s) AND "
                    "(rtrim(section_number, '.') = %s OR section_number LIKE %s OR section_number LIKE %s))",
              (list(document_ids), prefix, like + ".%", like + "(%"))
    return bool(row[0])


def document_sections(conn: psycopg.Connection, document_id: str) -> list[dict[str, Any]]:
    """A document version's sections in reading order: number, path, heading, citation and chunk count."""
    sql = ("SELECT section_number, section_path, section_heading, min(metadata->>'citation') AS citation, "
           "count(*) AS chunks, min(ordinal) AS first FROM chunks WHERE document_id = %s "
           "GROUP BY section_number, section_path, section_heading ORDER BY first")
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(sql, (document_id,)).fetchall()


# --- the embedding space of the dense index ------------------------------------------------------

def embedding_space(conn: psycopg.Connection) -> dict[str, Any] | None:
    """The recorded embedder identity of the index (name, backend, sha256, dim), or None."""
    row = conn.execute("SELECT name, backend, sha256, dim FROM embedding_space").fetchone()
    return None if row is None else {"name": row[0], "backend": row[1], "sha256": row[2], "dim": row[3]}


def record_embedding_space(conn: psycopg.Connection, identity: dict[str, Any]) -> None:
    conn.execute("INSERT INTO embedding_space (id, name, backend, sha256, dim) VALUES (true, %s, %s, %s, %s) "
                 "ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, backend = EXCLUDED.backend, "
                 "sha256 = EXCLUDED.sha256, dim = EXCLUDED.dim, recorded_at = now()",
                 (identity["name"], identity["backend"], identity["sha256"], identity["dim"]))


def clear_embedding_space(conn: psycopg.Connection) -> None:
    conn.execute("DELETE FROM embedding_space")


def has_chunks(conn: psycopg.Connection) -> bool:
    return bool(one(conn, "SELECT EXISTS (SELECT 1 FROM chunks)")[0])


def chunks_for_embedding(conn: psycopg.Connection, after: str, limit: int) -> list[tuple[str, str, str, str]]:
    """(chunk id, document title, section heading, text) in id order after `after`, every version."""
    return conn.execute(
        "SELECT c.id, d.title, c.section_heading, c.text FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE c.id > %s ORDER BY c.id LIMIT %s", (after, limit)).fetchall()


def update_embeddings(conn: psycopg.Connection, rows: Sequence[tuple[str, np.ndarray]]) -> None:
    with conn.cursor() as cur:
        cur.executemany("UPDATE chunks SET embedding = %s WHERE id = %s", [(v, cid) for cid, v in rows])


_PROPER: dict[tuple[str, str], bool] = {}  # (document id, word) -> a proper name of it (proper_words)
_PROPER_MAX = 50_000  # answers kept; past it the cache starts again (each answer is one cheap query)


def proper_words(conn: psycopg.Connection, words: Mapping[str, Iterable[str]], *,
                 least: int = 2) -> dict[str, set[str]]:
    """Of each document's `words` (id -> capitalised words of its title, as written), those its text writes
    capitalised at least `least` times and never in lower case as a word of running text (a URL's "apache.org"
    and a mail address's "oauth-ext-review@ietf.org" are not): the document's proper names ("Apache", "Mozilla",
    "OAuth"), not the words its title capitalises ("Security", "Access"). Documents are immutable (an id is a hash
    of the text), so each answer is cached per process, at most `_PROPER_MAX` of them (a server that reads many
    corpora does not grow without end)."""
    out: dict[str, set[str]] = {}
    for doc, found in words.items():
        found = set(found)
        if len(_PROPER) + len(found) > _PROPER_MAX:  # before the asking: what is read below must still be there
            _PROPER.clear()
        asked = sorted({w for w in found if w.isalpha() and (doc, w) not in _PROPER})
        if asked:
            rows = conn.execute(
                "SELECT w, (SELECT count(*) FROM regexp_matches(d.text, '\\m' || w || '\\M', 'g')), "
                "(SELECT count(*) FROM regexp_matches(d.text, '(^|[^[:alnum:]_./@:-])' || lower(w) "
                "|| '\\M(?![[:alnum:]_.+-]*@)', 'g')) "
                "FROM documents d, unnest(%s::text[]) AS w WHERE d.id = %s", (asked, doc)).fetchall()
            _PROPER.update({(doc, w): capitalised >= least and not lower for w, capitalised, lower in rows})
        if kept := {w for w in found if _PROPER.get((doc, w))}:
            out[doc] = kept
    return out

