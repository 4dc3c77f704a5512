"""Asking from the browser and watching long runs: GET/POST /ask, the ask's progress page and its
server-sent events, GET /batches/{id} and its events. The events are plain `text/event-stream`
(the browser's EventSource reads them; no library)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Annotated, Any
from urllib.parse import quote as urlquote

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response, StreamingResponse

from engine.errors import NotFoundError
from engine.web.auth import Denied, User, need
from engine.web.pages import render

router = APIRouter()
MAX_QUESTION_CHARS = 2000
SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
BATCH_POLL_S = 1.0
KEEPALIVE_S = 15.0


def sse(event: str, data: dict[str, Any]) -> str:
    """One server-sent event (JSON data on one line)."""
    return f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n"


@router.get("/ask")
def ask_form(request: Request, user: Annotated[User, Depends(need("analyst"))]) -> Response:
    return render(request, "ask.html.j2", error=None, question="")


@router.post("/ask")
def ask_post(request: Request, user: Annotated[User, Depends(need("analyst"))],
             question: Annotated[str, Form()]) -> Response:
    text = question.strip()
    if not text or len(text) > MAX_QUESTION_CHARS:
        return render(request, "ask.html.j2", status=400, question=question,
                      error=f"A question needs 1 to {MAX_QUESTION_CHARS} characters (got {len(text)}).")
    job = request.app.state.jobs.start(text, user.name, request.app.state.backend.ask)
    return RedirectResponse(f"/ask/{job.job_id}", status_code=303)


def _job(request: Request, job_id: str, user: User) -> Any:
    job = request.app.state.jobs.get(job_id)
    if job is None:
        raise NotFoundError(f"no question '{job_id}' running here (a restarted server forgets them; the trail "
                            "keeps every recorded audit)")
    if job.actor != user.name and user.role != "admin":
        raise Denied(403, f"{job_id} was asked by another user", user)
    return job


@router.get("/ask/{job_id}")
def ask_progress(request: Request, job_id: str, user: Annotated[User, Depends(need("analyst"))]) -> Response:
    job = _job(request, job_id, user)
    return render(request, "ask_progress.html.j2", job=job)


@router.get("/ask/{job_id}/events")
def ask_events(request: Request, job_id: str, user: Annotated[User, Depends(need("analyst"))]) -> Response:
    job = _job(request, job_id, user)

    def stream() -> Iterator[str]:
        seen = 0
        while True:
            events = job.wait(seen, KEEPALIVE_S)
            if not events:
                yield ": keep-alive\n\n"
            for e in events:
                seen += 1
                payload = {k: v for k, v in e.items() if k != "event"}
                if e["event"] == "done":
                    payload["url"] = f"/audits/{urlquote(e['audit_id'])}"
                yield sse(e["event"], payload)
                if e["event"] in ("done", "failed"):
                    return

    return StreamingResponse(stream(), media_type="text/event-stream", headers=SSE_HEADERS)


def batch_progress(request: Request, batch_id: str) -> dict[str, Any]:
    batch, items = request.app.state.backend.batch(batch_id)
    done = [i for i in items if i["audit_id"]]
    return {"batch_id": batch["batch_id"], "name": batch["name"], "total": len(items), "done": len(done),
            "finished": len(done) == len(items),
            "items": [{"question_id": i["question_id"], "audit_id": i["audit_id"],
                       "finished_at": i["finished_at"]} for i in items]}


@router.get("/batches/{batch_id}")
def batch_page(request: Request, batch_id: str, user: Annotated[User, Depends(need("viewer"))]) -> Response:
    batch, items = request.app.state.backend.batch(batch_id)
    questions = {q["id"]: q for q in (batch["definition"] or {}).get("questions", []) if isinstance(q, dict)}
    return render(request, "batch.html.j2", batch=batch, items=items, questions=questions,
                  progress=batch_progress(request, batch_id))


@router.get("/batches/{batch_id}/events")
def batch_events(request: Request, batch_id: str, user: Annotated[User, Depends(need("viewer"))]) -> Response:
    first = batch_progress(request, batch_id)  # NotFoundError before the stream starts

    def stream() -> Iterator[str]:
        last, quiet = None, 0.0
        current = first
        while True:
            if current != last:
                yield sse("progress", current)
                last, quiet = current, 0.0
            if current["finished"]:
                yield sse("finished", {"batch_id": batch_id})
                return
            time.sleep(BATCH_POLL_S)
            quiet += BATCH_POLL_S
            if quiet >= KEEPALIVE_S:
                yield ": keep-alive\n\n"
                quiet = 0.0
            current = batch_progress(request, batch_id)

    return StreamingResponse(stream(), media_type="text/event-stream", headers=SSE_HEADERS)

