"""JSON for programs: GET /api/audits, /api/audits/{id}, /api/search?q=. Bearer token (`evidence user
token NAME`) or a browser session; the same roles as the pages (viewer and up)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from engine.errors import InputError
from engine.web.auth import User, need
from engine.web.routes_pages import audit_rows

router = APIRouter(prefix="/api")


@router.get("/audits")
def api_audits(request: Request, user: Annotated[User, Depends(need("viewer"))], q: str = "", status: str = "",
               stale: str = "", signed: Annotated[str, Query(alias="signoff")] = "", document: str = ""
               ) -> list[dict[str, Any]]:
    rows = audit_rows(request, q=q, status=status, stale=stale, signed=signed, document=document)
    return [{**{k: r[k] for k in ("audit_id", "seq", "question", "actor", "created_at", "status",
                                  "grounding_confidence", "hash", "stale", "signoff")},
             "review": _brief(r["review"])} for r in rows]


def _brief(review: Any) -> dict[str, Any]:
    return {k: v for k, v in review.to_dict().items() if k != "decisions"}


@router.get("/audits/{audit_id}")
def api_audit(request: Request, audit_id: str, user: Annotated[User, Depends(need("viewer"))]) -> dict[str, Any]:
    """The stored record with its place in the chain, its review (`engine.trail.review`), and the records that
    amend it (notes, sign-offs)."""
    backend = request.app.state.backend
    row = backend.audit_row(backend.resolve_audit(audit_id))
    amendments = backend.amendments(row["audit_id"])
    review = backend.reviews([row["audit_id"]])[row["audit_id"]]
    return {"audit_id": row["audit_id"], "seq": row["seq"], "hash": row["hash"], "prev_hash": row["prev_hash"],
            "record": row["record"], "review": review.to_dict(),
            "amendments": [{"audit_id": a["audit_id"], "seq": a["seq"], "kind": a["kind"], "hash": a["hash"],
                            "record": a["record"]} for a in amendments]}


@router.get("/search")
def api_search(request: Request, user: Annotated[User, Depends(need("viewer"))],
               q: Annotated[str, Query(max_length=2000)] = "", k: Annotated[int, Query(ge=1, le=50)] = 10
               ) -> list[dict[str, Any]]:
    if not q.strip():
        raise InputError("q is empty: give the words to search for (/api/search?q=breach+notification)")
    hits = request.app.state.backend.search(q, k)
    return [{"chunk_id": h.chunk.id, "document_id": h.chunk.document_id, "document_title": h.chunk.document_title,
             "document_version": h.chunk.document_version, "section_path": h.chunk.section_path,
             "char_start": h.chunk.char_start, "char_end": h.chunk.char_end, "text": h.chunk.text,
             "score": h.score, "dense_score": h.dense_score, "lexical_score": h.lexical_score,
             "relevance": h.relevance, "neighbour_of": h.neighbour_of} for h in hits]
