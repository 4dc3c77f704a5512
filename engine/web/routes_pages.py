"""Pages: the audit list, a reviewer's queue, one audit (with its review and sign-off), its report downloads,
the documents, a document with the quote highlighted at its recorded offsets, and the users page (admin)."""

from __future__ import annotations

from pathlib import PurePath
from typing import Annotated, Any
from urllib.parse import quote as urlquote

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import RedirectResponse, Response

from engine.errors import InputError, NotFoundError
from engine.text import normalize_ws
from engine.trail import review
from engine.web import security, signoff
from engine.web import store as web_store
from engine.web.auth import User, flash, need
from engine.web.pages import render

router = APIRouter()
REPORT_FORMATS = ("pdf", "html", "json", "csv")
REVIEW_STATES = review.STATES
WAITING = ("unreviewed", "in_review")  # what a reviewer's queue holds (changes requested: the asker acts first)


def audit_rows(request: Request, *, q: str = "", status: str = "", stale: str = "", signed: str = "",
               document: str = "") -> list[dict[str, Any]]:
    """Answer audits, newest first, filtered; each with `stale` and its `review` (`engine.trail.review`),
    whose state is also `signoff` (the filter's and the API's name)."""
    backend = request.app.state.backend
    rows = backend.list_audits(status=status or None, documents=[document] if document else None)
    reviews, unreviewed = backend.reviews(), backend.unreviewed()
    needle = q.strip().lower()
    out = []
    for r in rows:
        state = reviews.get(r["audit_id"], unreviewed)
        row = {**r, "stale": state.stale_since is not None, "review": state, "signoff": state.state}
        if needle and needle not in r["question"].lower() and needle not in r["audit_id"].lower():
            continue
        if (stale == "yes" and not row["stale"]) or (stale == "no" and row["stale"]):
            continue
        if signed and row["signoff"] != signed:
            continue
        out.append(row)
    return out


@router.get("/audits")
def audits(request: Request, user: Annotated[User, Depends(need("viewer"))], q: str = "", status: str = "",
           stale: str = "", signed: Annotated[str, Query(alias="signoff")] = "", document: str = "") -> Response:
    rows = audit_rows(request, q=q, status=status, stale=stale, signed=signed, document=document)
    documents = request.app.state.backend.documents()
    return render(request, "audits.html.j2", rows=rows, documents=documents, heading="Audits",
                  filters={"q": q, "status": status, "stale": stale, "signoff": signed, "document": document},
                  statuses=("ANSWERED", "NO_AUTHORITATIVE_EVIDENCE", "REJECTED"), signoff_states=REVIEW_STATES,
                  labels=review.LABELS)


def waiting_for(rows: list[dict[str, Any]], user: User) -> list[dict[str, Any]]:
    """The audits `user` can review now: not theirs, not stale, not approved, and not approved by them this round."""
    return [r for r in rows if r["actor"] != user.name and r["review"].state in WAITING
            and user.name not in r["review"].approvers]


@router.get("/reviews")
def review_queue(request: Request, user: Annotated[User, Depends(need("reviewer"))]) -> Response:
    rows = waiting_for(audit_rows(request), user)
    return render(request, "audits.html.j2", rows=rows, documents=[], heading="Waiting for my review", queue=True,
                  filters={}, statuses=(), signoff_states=(), labels=review.LABELS)


def document_link(req: dict[str, Any], audit_id: str) -> str:
    """Where a REQ-ID leads: its document version, the quote highlighted at the offsets the audit recorded."""
    return (f"/documents/{urlquote(req['document_id'])}?audit={urlquote(audit_id)}"
            f"&req={urlquote(req['requirement_id'])}#quote")


def _plain(parts: list[dict[str, Any]]) -> str:
    return normalize_ws("".join(p.get("text", "") for p in parts)).strip(" .")


def _audit_page(request: Request, full: str, user: User, *, status: int = 200, form_error: str | None = None,
                form: dict[str, str] | None = None) -> Response:
    backend = request.app.state.backend
    row, view = backend.audit_view(full)
    report = backend.verify_audit(full)
    links = {r["requirement_id"]: document_link(r, full) for r in row["record"].get("requirements", [])}
    asker = row["record"].get("actor")
    state = view["review"]
    statements = view["answer"].get("statements") or []
    if statements and view["direct_parts"] and _plain(view["direct_parts"]) == _plain(statements[0]["parts"]):
        view["direct_parts"] = []  # the direct answer would repeat the first statement word for word
    return render(request, "audit.html.j2", status=status, row=row, v=view, links=links, verify=report,
                  review=state, formats=REPORT_FORMATS, form_error=form_error, form=form or {},
                  may_sign=security.allows(user.role, "reviewer") and asker != user.name,
                  may_rerun=security.allows(user.role, "analyst") and state.state == "stale",
                  own_audit=asker == user.name)


@router.get("/audits/{audit_id}")
def audit_page(request: Request, audit_id: str, user: Annotated[User, Depends(need("viewer"))]) -> Response:
    full = request.app.state.backend.resolve_audit(audit_id)
    if full != audit_id:
        return RedirectResponse(f"/audits/{urlquote(full)}", status_code=303)
    return _audit_page(request, full, user)


@router.get("/audits/{audit_id}/report.{fmt}")
def audit_report(request: Request, audit_id: str, fmt: str, user: Annotated[User, Depends(need("viewer"))]
                 ) -> Response:
    if fmt not in REPORT_FORMATS:
        raise NotFoundError(f"no report format '{fmt}'; one of {', '.join(REPORT_FORMATS)}")
    full = request.app.state.backend.resolve_audit(audit_id)
    content, media = request.app.state.backend.report(full, fmt)
    headers = {"Content-Disposition": f'attachment; filename="{full}.{fmt}"'}
    if fmt == "html":  # the standalone report may carry inline style; it is a download, never shown here
        headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    return Response(content, media_type=media, headers=headers)


@router.post("/audits/{audit_id}/signoff")
def signoff_post(request: Request, audit_id: str, user: Annotated[User, Depends(need("reviewer"))],
                 decision: Annotated[str, Form()], comment: Annotated[str, Form(max_length=4000)] = "",
                 requirement_id: Annotated[str, Form()] = "") -> Response:
    """Record a decision; a refused one (no comment on a rejection, a repeat, stale evidence) comes back on the
    audit page with the form as it was filled in."""
    backend = request.app.state.backend
    full = backend.resolve_audit(audit_id)
    form = {"decision": decision, "comment": comment, "requirement_id": requirement_id}
    try:
        if decision not in signoff.DECISIONS:
            raise InputError(f"decision must be one of {', '.join(signoff.DECISIONS)}, not '{decision}'")
        ask = signoff.SignoffRequest(decision=decision, comment=comment,  # type: ignore[arg-type]
                                     requirement_id=requirement_id.strip() or None)
        record = signoff.build_signoff(backend.audit_row(full), signer=user.name, role=user.role, request=ask,
                                       amendment=backend.amendment)
        appended = backend.append_signoff(record)
    except InputError as exc:
        return _audit_page(request, full, user, status=409 if isinstance(exc, review.DuplicateDecision) else 400,
                           form_error=str(exc), form=form)
    flash(request, f"Recorded {record['reason']} as {appended.audit_id} (seq {appended.seq}).")
    return RedirectResponse(f"/audits/{urlquote(full)}#signoffs", status_code=303)


def _highlight(text: str, start: int, end: int) -> dict[str, Any]:
    if not (0 <= start < end <= len(text)):
        return {"before": text, "quote": None, "after": ""}
    return {"before": text[:start], "quote": text[start:end], "after": text[end:]}


def _located(request: Request, doc: Any, text: str, audit: str, req: str, start: int | None, end: int | None
             ) -> tuple[dict[str, Any], dict[str, Any] | None, str | None]:
    """The text split around the quote, the requirement it belongs to, and a note when it is not where recorded."""
    requirement, note = None, None
    if audit and req:
        row = request.app.state.backend.audit_row(request.app.state.backend.resolve_audit(audit))
        requirement = next((r for r in row["record"].get("requirements", []) if r["requirement_id"] == req), None)
        if requirement is None:
            raise NotFoundError(f"{audit} has no requirement '{req}'")
        quote = requirement["exact_quote"]
        if requirement["document_id"] == doc.id:
            start, end = int(requirement["doc_char_start"]), int(requirement["doc_char_end"])
        else:  # another version of the document: find the quote word for word, if it is still there
            at = text.find(quote)
            start, end = (at, at + len(quote)) if at >= 0 else (None, None)
            note = (f"{req} was recorded in version {requirement['document_version']}; "
                    + ("the same words are highlighted in this version." if at >= 0
                       else "its quote is not in this version word for word."))
        if start is not None and normalize_ws(text[start:end]) != normalize_ws(quote):
            note = f"the text at the recorded offsets is not {req}'s quote: the document changed or the record is wrong"
    parts = _highlight(text, start if start is not None else -1, end if end is not None else -1)
    return parts, requirement, note


@router.get("/documents")
def documents_page(request: Request, user: Annotated[User, Depends(need("viewer"))]) -> Response:
    return render(request, "documents.html.j2", documents=request.app.state.backend.documents())


@router.get("/documents/{document_id}")
def document_page(request: Request, document_id: str, user: Annotated[User, Depends(need("viewer"))],
                  version: int | None = None, audit: str = "", req: str = "", start: int | None = None,
                  end: int | None = None) -> Response:
    backend = request.app.state.backend
    doc, text, versions = backend.document(document_id)
    if version is not None and version != doc.version:
        other = next((d for d in versions if d.version == version), None)
        if other is None:
            raise NotFoundError(f"{doc.title} has no version {version} (versions: "
                                f"{', '.join(str(d.version) for d in versions)})")
        doc, text, versions = backend.document(other.id)
    parts, requirement, note = _located(request, doc, text, audit, req, start, end)
    # Where the file lay on the server is for admins; others see its name only.
    source = doc.source_key if user.role == "admin" else PurePath(doc.source_key).name
    return render(request, "document.html.j2", doc=doc, parts=parts, versions=versions, requirement=requirement,
                  note=note, audit=audit, req=req, source=source)


@router.get("/users")
def users_page(request: Request, user: Annotated[User, Depends(need("admin"))]) -> Response:
    with request.app.state.backend.connection() as conn:
        rows = web_store.list_users(conn)
    return render(request, "users.html.j2", users=rows, roles=web_store.ROLES)


@router.post("/users")
def users_add(request: Request, user: Annotated[User, Depends(need("admin"))], name: Annotated[str, Form()],
              role: Annotated[str, Form()], password: Annotated[str, Form()]) -> Response:
    if role not in web_store.ROLES:
        raise InputError(f"role must be one of {', '.join(web_store.ROLES)}, not '{role}'")
    if len(password) < security.MIN_PASSWORD_CHARS:
        raise InputError(f"a password needs at least {security.MIN_PASSWORD_CHARS} characters")
    with request.app.state.backend.connection() as conn:
        web_store.add_user(conn, name, role, security.hash_password(password))
    flash(request, f"Added {name} ({role}).")
    return RedirectResponse("/users", status_code=303)
