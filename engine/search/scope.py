"""Which documents a question may draw on (`evidence ask --document ... --source-type ...`).

Names are resolved to exact document versions when the question is asked; the audit records the
scope (ids, source keys, titles, versions and types), so the answer can be read against it later and
`trail rerun` can ask again within the same documents' current versions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from engine.config import SOURCE_TYPES
from engine.errors import InputError, NotFoundError
from engine.models import Document
from engine.search import store
from engine.search.retrieval import Filters


def _version(conn: psycopg.Connection, name: str) -> Document:
    versions = store.find_documents(conn, name)
    if not versions:
        raise NotFoundError(f"--document '{name}' names no document: give a document id (or a unique start of one), "
                            "path, file name or title ('evidence documents' lists them)")
    exact = next((d for d in versions if d.id == name), None)
    current = [d for d in versions if d.is_current]
    if exact is None and len({d.source_key for d in current}) > 1:
        titles = ", ".join(f"{d.title} ({d.id})" for d in current)
        raise InputError(f"--document '{name}' names several documents ({titles}); give one id")
    return exact or (current[0] if current else versions[-1])


def resolve(conn: psycopg.Connection, documents: Sequence[str] = (), source_types: Sequence[str] = ()
            ) -> tuple[Filters | None, dict[str, Any] | None]:
    """(search filters, the scope as recorded in the audit); (None, None) when nothing limits the question.

    A name gives the document's current version; the id of a superseded version pins that version. An
    empty corpus is refused: there is nothing to answer from, which is not the same as finding no evidence.
    """
    if not store.has_chunks(conn):
        raise NotFoundError("nothing is ingested yet, so there is nothing to answer from: ingest your "
                            "regulations and policies first with 'evidence ingest PATH' (files or folders; for "
                            "example 'evidence ingest examples/corpus'), then ask again")
    bad = [t for t in source_types if t not in SOURCE_TYPES]
    if bad:
        raise InputError(f"--source-type {bad[0]!r} is not a source type; use one of {', '.join(SOURCE_TYPES)}")
    if not documents and not source_types:
        return None, None
    chosen = list({d.id: d for d in (_version(conn, name) for name in documents)}.values())
    types = tuple(dict.fromkeys(source_types))
    pool = chosen or store.list_documents(conn)
    if not [d for d in pool if not types or d.source_type in types]:
        what = " and ".join(x for x in ((f"documents {', '.join(d.id for d in chosen)}" if chosen else ""),
                                        (f"source type(s) {', '.join(types)}" if types else "")) if x)
        raise NotFoundError(f"no document in scope: nothing matches {what} ('evidence documents' lists the corpus)")
    filters = Filters(source_types=types, document_ids=tuple(d.id for d in chosen),
                      current_only=all(d.is_current for d in chosen))
    record = {"documents": [{"document_id": d.id, "source_key": d.source_key, "title": d.title, "version": d.version,
                             "source_type": d.source_type} for d in chosen],
              "source_types": list(types)}
    return filters, record


def filters_of(recorded: dict[str, Any] | None) -> Filters | None:
    """The search filters of a recorded scope, exactly as recorded (a resumed run)."""
    if not recorded:
        return None
    return Filters(source_types=tuple(recorded.get("source_types") or ()),
                   document_ids=tuple(d["document_id"] for d in recorded.get("documents") or []))


def current(conn: psycopg.Connection, recorded: dict[str, Any] | None) -> tuple[Filters | None, dict[str, Any] | None]:
    """The recorded scope over today's documents: each document's current version (for `trail rerun`)."""
    if not recorded:
        return None, None
    names = []
    for doc in recorded.get("documents") or []:
        latest = store.current_document(conn, doc.get("source_key") or "")
        names.append(latest.id if latest else doc["document_id"])
    return resolve(conn, names, recorded.get("source_types") or ())
