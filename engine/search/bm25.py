"""BM25 over the postings ingest wrote: document frequencies, and the search itself (whole for a small corpus;
on a large one the rarest query terms' postings give the candidates and the best are completed on the
commoner terms, `docs/scale.md`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import psycopg

from engine.search.store import corpus_stats, filter_sql


def document_frequencies(conn: psycopg.Connection, term_ids_: Sequence[int]) -> dict[int, int]:
    """Number of current chunks holding each term, as maintained by ingest."""
    rows = conn.execute("SELECT id, df FROM lexical_terms WHERE id = ANY(%s) AND df > 0", (list(term_ids_),)).fetchall()
    return {int(t): int(n) for t, n in rows}


LEXICAL_WORK_MEM = "64MB"
LEXICAL_DIGITS = 9
# The BM25 search reads whole only the postings of its rarest terms, up to this many (see lexical_search) ...
LEXICAL_FIRST_POSTINGS = 20_000
# ... and scores at most this many of their best candidates on the commoner terms too.
LEXICAL_COMPLETED = 300
_BOUND_SLACK = 1e-9  # relative: float sums of the same terms in another order differ in the last bits


def _bm25_idf(conn: psycopg.Connection, weights: dict[int, float]) -> tuple[dict[int, float], dict[int, int], float]:
    """(query weight x IDF by term, document frequency by term, mean chunk length) for terms in the corpus."""
    n, avgdl = corpus_stats(conn)
    df = document_frequencies(conn, list(weights))
    if n == 0:
        return {}, {}, 0.0
    idf = {t: weights[t] * math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in sorted(df.items())}
    return idf, df, avgdl or 1.0


def _lexical_query(conn: psycopg.Connection, sql: str, params: dict[str, Any]) -> list[tuple[str, float]]:
    with conn.transaction():
        conn.execute("SET LOCAL max_parallel_workers_per_gather = 0")
        # The per-chunk sums of a common query term outgrow the default 4 MB at a few 100K chunks and the
        # aggregate spills to disk (bench/scale.py: 300K chunks, 570 -> 400 ms for one query).
        conn.execute(f"SET LOCAL work_mem = '{LEXICAL_WORK_MEM}'")
        rows = conn.execute(sql, params).fetchall()  # type: ignore[arg-type]
    # A float sum depends on the order PostgreSQL adds the terms in, which a plan may change between two
    # runs (3.651328740679762 vs 3.6513287406797623): rounded, the same question gets the same scores.
    return [(r[0], round(float(r[1]), LEXICAL_DIGITS)) for r in rows]


_TERM_SCORE = "p.tf / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.dl / %(avgdl)s))"


def lexical_search(conn: psycopg.Connection, weights: dict[int, float], k: int, filters: dict[str, Any],
                   *, k1: float, b: float, exact_scan: bool = False, first_postings: int | None = None,
                   completed: int | None = None) -> list[tuple[str, float]]:
    """(chunk id, BM25 score) best first, ties by chunk id. IDF and mean length come from the current corpus.

    BM25 (Lucene form): sum over query terms of qtf * ln(1 + (N - df + 0.5)/(df + 0.5))
    * tf / (tf + k1 * (1 - b + b * dl / avgdl)). Each term adds less than qtf * IDF (its bound).

    Every score returned is exact; which chunks are returned is exact unless the query has common terms
    beyond what the rarest ones can decide. The rarest terms, about LEXICAL_FIRST_POSTINGS postings,
    give the candidates and partial scores; theta, the k-th best partial score, is a floor under the k-th
    best full score, so a candidate whose partial score plus the bounds of the commoner terms is below
    theta cannot make the top k (MaxScore). Of the others, the LEXICAL_COMPLETED best by partial score are
    scored on every term through the (chunk_id, term_id) index, and the best k of them returned. That is
    the exact top k when no more than LEXICAL_COMPLETED candidates survived and the commoner terms'
    bounds add up to less than the k-th best full score (no chunk holding only commoner terms can
    reach it); else commoner-term-only chunks and candidates ranked lower on the rarest terms are not
    considered: the approximation, measured in docs/scale.md. When the rarest terms are all the terms
    (any query on a corpus of a few thousand chunks), when `exact_scan` is set or `first_postings` is 0,
    for a version-scoped search (`document_ids`) and over superseded chunks, every posting of every term
    is read and summed. `first_postings` and `completed` (the settings `bm25_first_postings` and
    `bm25_completed`) default to LEXICAL_FIRST_POSTINGS and LEXICAL_COMPLETED.
    """
    if not weights:
        return []
    idf, df, avgdl = _bm25_idf(conn, weights)
    if not idf:
        return []
    where, params = filter_sql("c", filters)
    restrict = "" if where == "c.is_current" else f" AND p.chunk_id IN (SELECT c.id FROM chunks c WHERE {where})"
    params.update(avgdl=avgdl, k1=k1, b=b, k=k)
    scoped = bool(filters.get("document_ids")) or not filters.get("current_only", True)
    order = sorted(idf, key=lambda t: (-idf[t], t))  # highest bound (rarest) first
    budget = LEXICAL_FIRST_POSTINGS if first_postings is None else first_postings
    m, read = 1, df[order[0]]
    while m < len(order) and read + df[order[m]] <= budget:
        read += df[order[m]]
        m += 1
    if exact_scan or scoped or budget == 0 or m == len(order):
        return _lexical_full(conn, idf, params, restrict, current="true" if filters.get("document_ids")
                             else "p.is_current")
    bound = sum(idf[t] for t in order[m:]) * (1 + _BOUND_SLACK)
    return _lexical_pruned(conn, order[:m], idf, bound, {**params, "completed": max(
        LEXICAL_COMPLETED if completed is None else completed, k)}, restrict)


def _lexical_full(conn: psycopg.Connection, idf: dict[int, float], params: dict[str, Any], restrict: str,
                  current: str) -> list[tuple[str, float]]:
    """Every posting of every query term, summed per chunk (exact; reads all of a common term)."""
    sql = f"""
    SELECT p.chunk_id, sum(q.w * {_TERM_SCORE}) AS score
    FROM unnest(%(t)s::int[], %(w)s::float8[]) AS q(term_id, w)
    JOIN postings p ON p.term_id = q.term_id
    WHERE {current}{restrict}
    GROUP BY p.chunk_id ORDER BY score DESC, p.chunk_id LIMIT %(k)s"""
    return _lexical_query(conn, sql, {**params, "t": list(idf), "w": list(idf.values())})


def _lexical_pruned(conn: psycopg.Connection, first: list[int], idf: dict[int, float], bound: float,
                    params: dict[str, Any], restrict: str) -> list[tuple[str, float]]:
    """Top k over the chunks holding a term of `first`, scored on every query term; candidates whose
    partial score plus `bound` (what the other terms can add) is below the k-th best partial are dropped,
    and only the `completed` best of the rest by partial score are scored on every term."""
    sql = f"""
    WITH part AS MATERIALIZED (
        SELECT p.chunk_id, sum(q.w * {_TERM_SCORE}) AS s
        FROM unnest(%(t)s::int[], %(w)s::float8[]) AS q(term_id, w)
        JOIN postings p ON p.term_id = q.term_id
        WHERE p.is_current{restrict}
        GROUP BY p.chunk_id),
    floor AS (SELECT coalesce((SELECT s FROM part ORDER BY s DESC LIMIT 1 OFFSET %(k)s - 1), 0) - %(bound)s AS bar)
    SELECT part.chunk_id,
           (SELECT sum((%(aw)s::float8[])[array_position(%(at)s::int[], p.term_id)] * {_TERM_SCORE})
            FROM postings p WHERE p.chunk_id = part.chunk_id AND p.term_id = ANY(%(at)s::int[]) AND p.is_current)
           AS score
    FROM (SELECT part.chunk_id FROM part, floor WHERE part.s >= floor.bar
          ORDER BY part.s DESC, part.chunk_id LIMIT %(completed)s) AS part
    ORDER BY score DESC, part.chunk_id LIMIT %(k)s"""
    return _lexical_query(conn, sql, {**params, "t": first, "w": [idf[t] for t in first], "bound": bound,
                                      "at": list(idf), "aw": list(idf.values())})
