"""Asking from the browser and watching long runs: GET/POST /ask, re-asking a stale audit, the progress page
and its server-sent events, the batches and a batch's events. The events are plain `text/event-stream` (the
browser's EventSource reads them; no library).

Event streams are asynchronous (they hold no worker thread while they wait) and capped per user and in
all (`Streams`): a page full of open streams cannot starve the other pages.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any
from urllib.parse import quote as urlquote

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from engine.errors import NotFoundError
from engine.web.auth import Denied, User, need
from engine.web.pages import render

router = APIRouter()
MAX_QUESTION_CHARS = 2000
SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
POLL_S = 0.25  # how often a stream looks at its job (in memory)
BATCH_POLL_S = 2.0  # how often a batch stream reads the batch's progress from the database
KEEPALIVE_S = 15.0


class Streams:
    """How many event streams are open, per user and in all; a new one over either cap is refused (429)."""

    def __init__(self, per_user: int = 6, total: int = 200) -> None:
        self.per_user, self.total = per_user, total
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()

    def acquire(self, user: User) -> None:
        with self._lock:
            mine, everyone = self._open.get(user.name, 0), sum(self._open.values())
            if mine >= self.per_user or everyone >= self.total:
                raise Denied(429, f"too many live-progress streams open ({mine} of yours, {everyone} in all; at "
                                  f"most {self.per_user} per user): close other progress tabs", user,
                             headers={"Retry-After": "15"})
            self._open[user.name] = mine + 1

    def release(self, user: User) -> None:
        with self._lock:
            left = self._open.get(user.name, 1) - 1
            if left > 0:
                self._open[user.name] = left
            else:
                self._open.pop(user.name, None)


def sse(event: str, data: dict[str, Any]) -> str:
    """One server-sent event (JSON data on one line)."""
    return f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n"


def _streamed(request: Request, user: User, events: AsyncIterator[str]) -> StreamingResponse:
    """`events` as a text/event-stream response counted against the caps until it ends or the client goes."""
    streams: Streams = request.app.state.streams
    streams.acquire(user)

    async def counted() -> AsyncIterator[str]:
        try:
            async for chunk in events:
                yield chunk
        finally:
            streams.release(user)

    return StreamingResponse(counted(), media_type="text/event-stream", headers=SSE_HEADERS)


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


@router.post("/audits/{audit_id}/rerun")
def rerun_post(request: Request, audit_id: str, user: Annotated[User, Depends(need("analyst"))]) -> Response:
    """Answer a stale audit's question again against the current documents (`evidence trail rerun`), as a job."""
    backend = request.app.state.backend
    full = backend.resolve_audit(audit_id)
    question = backend.audit_row(full)["record"]["question"]

    def again(_question: str, *, actor: str, progress: Any) -> dict[str, Any]:
        return backend.rerun(full, actor=actor, progress=progress)

    job = request.app.state.jobs.start(question, user.name, again)
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
async def ask_events(request: Request, job_id: str, user: Annotated[User, Depends(need("analyst"))]) -> Response:
    job = _job(request, job_id, user)

    async def stream() -> AsyncIterator[str]:
        seen, quiet = 0, 0.0
        while True:
            events = job.events[seen:]
            if not events:
                if await request.is_disconnected():
                    return
                await asyncio.sleep(POLL_S)
                quiet += POLL_S
                if quiet >= KEEPALIVE_S:
                    yield ": keep-alive\n\n"
                    quiet = 0.0
                continue
            quiet = 0.0
            for e in events:
                seen += 1
                payload = {k: v for k, v in e.items() if k != "event"}
                if e["event"] == "done":
                    payload["url"] = f"/audits/{urlquote(e['audit_id'])}"
                yield sse(e["event"], payload)
                if e["event"] in ("done", "failed"):
                    return

    return _streamed(request, user, stream())


def shared_progress(request: Request, batch_id: str) -> dict[str, Any]:
    """`batch_progress`, read at most once per BATCH_POLL_S for all the streams that follow one batch."""
    cache: dict[str, tuple[float, dict[str, Any]]] = request.app.state.progress_cache
    now = time.monotonic()
    hit = cache.get(batch_id)
    if hit is None or now - hit[0] >= BATCH_POLL_S:
        hit = (now, batch_progress(request, batch_id))
        cache[batch_id] = hit
    return hit[1]


def batch_progress(request: Request, batch_id: str) -> dict[str, Any]:
    """A batch's questions with their state, result, confidence, review and gate, and the checklist's gate."""
    backend = request.app.state.backend
    batch, result, states = backend.batch(batch_id)
    reviews = backend.reviews([q.audit_id for q in result.questions if q.audit_id])
    failing = result.gate_failures()
    items = []
    for q in result.questions:
        state = states.get(q.question_id, {})
        items.append({"question_id": q.question_id, "question": q.question, "control_id": q.control_id,
                      "audit_id": q.audit_id, "state": state.get("state", "open"), "status": q.status,
                      "grounding_confidence": q.grounding_confidence, "finished_at": state.get("finished_at"),
                      "last_error": state.get("last_error"),
                      "review": reviews[q.audit_id].label if q.audit_id else None,
                      "review_state": reviews[q.audit_id].state if q.audit_id else None,
                      "gate_passed": None if q.audit_id is None else q.question_id not in failing})
    done = sum(1 for i in items if i["audit_id"])
    finished = all(i["state"] in ("done", "failed", "skipped") for i in items)
    return {"batch_id": batch["batch_id"], "name": batch["name"], "total": len(items), "done": done,
            "failed": sum(1 for i in items if i["state"] == "failed"), "finished": finished,
            "gate": {"fail_on": result.fail_on, "passed": result.exit_code == 0 if finished else None,
                     "no_evidence": result.no_evidence, "expectations_missed": result.expectations_missed,
                     "failed": result.failed},
            "items": items}


@router.get("/batches")
def batches_page(request: Request, user: Annotated[User, Depends(need("viewer"))]) -> Response:
    return render(request, "batches.html.j2", batches=list(reversed(request.app.state.backend.batches())))


@router.get("/batches/{batch_id}")
def batch_page(request: Request, batch_id: str, user: Annotated[User, Depends(need("viewer"))]) -> Response:
    progress = batch_progress(request, batch_id)
    return render(request, "batch.html.j2", progress=progress)


@router.get("/batches/{batch_id}/events")
async def batch_events(request: Request, batch_id: str, user: Annotated[User, Depends(need("viewer"))]
                       ) -> Response:
    first = await run_in_threadpool(shared_progress, request, batch_id)  # NotFoundError before the stream starts

    async def stream() -> AsyncIterator[str]:
        last, quiet, current = None, 0.0, first
        while True:
            if current != last:
                yield sse("progress", current)
                last, quiet = current, 0.0
            if current["finished"]:
                yield sse("finished", {"batch_id": batch_id})
                return
            await asyncio.sleep(BATCH_POLL_S)
            if await request.is_disconnected():
                return
            quiet += BATCH_POLL_S
            if quiet >= KEEPALIVE_S:
                yield ": keep-alive\n\n"
                quiet = 0.0
            current = await run_in_threadpool(shared_progress, request, batch_id)

    return _streamed(request, user, stream())
