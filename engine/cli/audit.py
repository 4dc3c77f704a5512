"""`evidence audit ...`: run checklists (audits/*.yaml) as batches, resume, compare, export OSCAL."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from engine import db as dbmod
from engine.batch import store as batch_store
from engine.batch.checklist import FAIL_ON, load_definition
from engine.batch.oscal import export_batch
from engine.batch.results import compare, outcome
from engine.cli.common import FullHelpGroup, emit_json, err, out, run, settings
from engine.config import Settings, secret_values
from engine.errors import ExitCode, redact
from engine.search.embeddings import Embedder
from engine.trail.record import default_actor

audit_app = typer.Typer(cls=FullHelpGroup, no_args_is_help=True,
                        help="Audit checklists run as batches (audits/*.yaml).")
FAIL_ON_HELP = "any | no-evidence | expect | never (default: the definition's fail_on)"


class _Display:
    """Rich progress: question k of n, the question and node being worked on, elapsed time."""

    def __init__(self, progress: Progress, total: int, done: int) -> None:
        self.progress = progress
        self.task = progress.add_task("starting", total=total, completed=done, node="")
        self.started: dict[str, float] = {}

    def __call__(self, event: tuple[Any, ...]) -> None:
        kind, qid = event[0], event[1]
        if kind == "start":
            self.started[qid] = time.monotonic()
            self.progress.update(self.task, description=f"{qid}", node="")
        elif kind == "node":
            self.progress.update(self.task, description=f"{qid}", node=event[2])
        elif kind == "done":
            self.progress.advance(self.task)
            secs = time.monotonic() - self.started.get(qid, time.monotonic())
            self.progress.console.print(f"done {qid} -> {event[2]} ({secs:.1f} s)", highlight=False)
        elif kind == "lost":
            self.progress.console.print(f"[yellow]lease lost:[/] {escape(str(event[2]))}", highlight=False)
        elif kind in ("retry", "failed", "reconnect"):
            colour = "red" if kind == "failed" else "yellow"
            label = {"retry": f"{qid} attempt failed", "failed": f"{qid} failed", "reconnect": "database"}[kind]
            self.progress.console.print(f"[{colour}]{escape(label)}:[/] "
                                        f"{escape(redact(str(event[2]), secret_values()))}", highlight=False)
            if kind == "failed":
                self.progress.advance(self.task)
        elif kind == "error":
            self.progress.console.print(f"[red]worker error:[/] {escape(redact(str(event[2]), secret_values()))}")


def _runner() -> ModuleType:
    """`engine.batch.runner`, imported when a batch is started or worked on: its workers answer through the
    research graph (LangGraph, LangChain; about 1.5 s), which `evidence --help` need not wait for."""
    from engine.batch import runner

    return runner


def _execute(cfg: Settings, batch_id: str, workers: int, quiet: bool) -> None:
    runner = _runner()

    with dbmod.connection(cfg) as conn:
        items = batch_store.items(conn, batch_id)
    done = sum(1 for i in items if i["audit_id"])
    columns = (TextColumn("question"), MofNCompleteColumn(), BarColumn(), TextColumn("{task.description}"),
               TextColumn("[dim]{task.fields[node]}[/]"), TimeElapsedColumn())
    with Progress(*columns, console=err, disable=quiet or not err.is_terminal) as progress:
        runner.run_batch(cfg, batch_id, workers=workers, emit=_Display(progress, len(items), done))


def _finish(cfg: Settings, batch_id: str, *, pdf: Path | None, as_json: bool, fail_on: str | None) -> int:

    with dbmod.connection(cfg) as conn:
        result = outcome(conn, batch_id, fail_on=fail_on)
        if pdf is not None:
            _batch_pdf(conn, batch_id, result, pdf)
    if as_json:
        emit_json(result.model_dump())
        return result.exit_code
    out.print(f"[bold]{escape(result.name)}[/] — batch {batch_id}", highlight=False)
    for q in result.questions:  # one line each, the audit id whole (a table would cut it at 80 columns)
        missed = [escape(e["document"] + (f"#{e['section']}" if e["section"] else ""))
                  for e in q.expectations if not e["met"]]
        exp = f"; expectations: {len(q.expectations)} met" if q.expectations else ""
        exp = f"; [red]missed {'; '.join(missed)}[/]" if missed else exp
        status = q.status or (q.state.upper() if q.state in ("failed", "skipped") else f"not run ({q.state})")
        colour = "green" if status == "ANSWERED" else "red"
        tries = f"; attempts {q.attempts}" if q.attempts > 1 or q.state != "done" else ""
        out.print(f"{escape(q.question_id)}  {q.audit_id or '-'}  [{colour}]{status}[/]  "
                  f"{q.grounding_confidence or '-'}  {q.verified_requirements} verified{exp}{tries}", highlight=False)
        if q.last_error and q.state != "done":
            out.print(f"    last error: {escape(q.last_error)}", highlight=False)
    queue = result.queue
    out.print(f"queue: {queue['done']} done, {queue['failed']} failed, {queue['skipped']} skipped, "
              f"{queue['leased']} leased, {queue['retrying']} retrying, {queue['open']} open; "
              f"{queue['attempts']} attempts" + (f"; oldest lease {queue['oldest_lease_age_s']:.0f} s"
                                                 if queue["oldest_lease_age_s"] is not None else ""), highlight=False)
    if result.failed:
        out.print(f"[red]failed[/]: {', '.join(result.failed)} (every attempt raised; 'evidence audit retry "
                  f"{batch_id}' tries again, 'evidence audit skip {batch_id} QUESTION' sets one aside)",
                  highlight=False)
    if result.exit_code and not result.failed:
        out.print(f"[red]gate failed[/] (fail_on {result.fail_on}): no evidence {result.no_evidence or '-'}, "
                  f"expectations missed {result.expectations_missed or '-'}; exit status {result.exit_code}")
    return result.exit_code


def _batch_pdf(conn: Any, batch_id: str, result: Any, path: Path) -> None:
    from engine.report.render import write_batch_pdf  # the PDF stack (Jinja2, WeasyPrint, signing): not for --help

    batch = batch_store.get(conn, batch_id)
    finished = [i["finished_at"] for i in batch_store.items(conn, batch_id) if i["finished_at"]]
    meta = {"batch_id": batch_id, "name": batch["name"], "description": batch["definition"].get("description", ""),
            "started_at": batch["started_at"], "finished_at": max(finished) if finished else None,
            "questions": {q.audit_id: {"question_id": q.question_id, "control_id": q.control_id,
                                       "expectations": q.expectations} for q in result.questions if q.audit_id}}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_batch_pdf(conn, [q.audit_id for q in result.questions if q.audit_id], path, title=batch["name"], batch=meta,
                    settings=settings())
    err.print(f"batch report written to {path}", highlight=False)


@audit_app.command("run")
def run_cmd(definition: Annotated[Path, typer.Argument(help="audits/NAME.yaml")],
            workers: Annotated[int, typer.Option("--workers", min=1, max=32, help="Parallel worker processes")] = 1,
            pdf: Annotated[Path | None, typer.Option("--pdf", help="Write the batch report here")] = None,
            as_json: Annotated[bool, typer.Option("--json")] = False,
            fail_on: Annotated[str | None, typer.Option("--fail-on", help=FAIL_ON_HELP)] = None,
            actor: Annotated[str | None, typer.Option("--actor")] = None) -> None:
    """Answer every question of a checklist (each a full audit), then write the batch report."""
    runner = _runner()

    if fail_on is not None and fail_on not in FAIL_ON:
        raise typer.BadParameter(f"--fail-on must be one of {', '.join(FAIL_ON)}")

    def body() -> int:
        cfg = settings()
        parsed, sha = load_definition(definition)
        with dbmod.connection(cfg) as conn:
            batch_id = runner.start_batch(conn, cfg, parsed, path=definition, sha256=sha, actor=actor)
        err.print(f"batch {batch_id}: {len(parsed.questions)} question(s) "
                  f"(if interrupted: evidence audit resume {batch_id})", highlight=False)
        _execute(cfg, batch_id, workers, as_json)
        return _finish(cfg, batch_id, pdf=pdf, as_json=as_json, fail_on=fail_on)

    run(body)


@audit_app.command("start")
def start_cmd(definition: Annotated[Path, typer.Argument(help="audits/NAME.yaml")],
              as_json: Annotated[bool, typer.Option("--json")] = False,
              actor: Annotated[str | None, typer.Option("--actor")] = None) -> None:
    """Create the batch of a checklist without answering it: `evidence audit worker BATCH` on any machine
    sharing the database answers it."""
    runner = _runner()

    def body() -> int:
        cfg = settings()
        parsed, sha = load_definition(definition)
        with dbmod.connection(cfg) as conn:
            batch_id = runner.start_batch(conn, cfg, parsed, path=definition, sha256=sha, actor=actor)
        if as_json:
            emit_json({"batch_id": batch_id, "questions": len(parsed.questions)})
        else:
            out.print(batch_id, highlight=False)
            err.print(f"{len(parsed.questions)} question(s); answer with 'evidence audit worker {batch_id}' on one "
                      "or more machines sharing this database", highlight=False)
        return ExitCode.SUCCESS

    run(body)


@audit_app.command("worker")
def worker_cmd(batch_id: str, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Answer questions of a batch until every one is recorded (run one or more per machine; they share the
    queue in PostgreSQL). A worker that dies has its question taken over by another."""
    runner = _runner()

    def body() -> int:
        cfg = settings()
        worker_id = runner.new_worker_id()

        def emit(event: tuple[Any, ...]) -> None:
            if as_json or event[0] == "node":
                return
            if event[0] == "start":
                err.print(f"{worker_id}: {event[1]} (question {event[2] + 1})", highlight=False, markup=False)
            else:
                err.print(f"{worker_id}: {event[0]} {event[1]} -> {redact(str(event[2]), secret_values())}",
                          highlight=False, markup=False)

        answered = runner.work(batch_id, cfg, Embedder.from_settings(cfg), emit, worker_id=worker_id)
        if as_json:
            emit_json({"worker": worker_id, "batch_id": batch_id, "answered": answered})
        else:
            out.print(f"worker {worker_id} recorded {answered} question(s); batch {batch_id} has no question left "
                      f"to answer (done, failed or skipped: 'evidence audit status {batch_id}')", highlight=False,
                      markup=False)
        return ExitCode.SUCCESS

    run(body)


@audit_app.command("resume")
def resume_cmd(batch_id: str,
               workers: Annotated[int, typer.Option("--workers", min=1, max=32)] = 1,
               pdf: Annotated[Path | None, typer.Option("--pdf")] = None,
               as_json: Annotated[bool, typer.Option("--json")] = False,
               fail_on: Annotated[str | None, typer.Option("--fail-on", help=FAIL_ON_HELP)] = None) -> None:
    """Continue a batch: finished questions are skipped, the interrupted one resumes from its checkpoint."""

    def body() -> int:
        cfg = settings()
        _execute(cfg, batch_id, workers, as_json)
        return _finish(cfg, batch_id, pdf=pdf, as_json=as_json, fail_on=fail_on)

    run(body)


@audit_app.command("status")
def status_cmd(batch_id: Annotated[str | None, typer.Argument()] = None,
               as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List batches (or show one batch's questions and results)."""

    def body() -> int:
        cfg = settings()
        if batch_id is not None:
            _finish(cfg, batch_id, pdf=None, as_json=as_json, fail_on=None)
            return ExitCode.SUCCESS  # status shows a batch; only run / resume apply its gate
        with dbmod.connection(cfg) as conn:
            rows = batch_store.list_batches(conn)
        if as_json:
            emit_json(rows)
            return ExitCode.SUCCESS
        for r in rows:
            ends = "".join(f", {r[k]} {k}" for k in ("failed", "skipped") if r[k])
            out.print(f"{r['batch_id']}  {r['started_at']:%Y-%m-%d %H:%M}  {r['done']}/{r['questions']} done{ends}  "
                      f"{escape(r['actor'])}  {escape(r['name'])}", highlight=False)
        return ExitCode.SUCCESS

    run(body)


@audit_app.command("retry")
def retry_cmd(batch_id: str,
              questions: Annotated[list[str] | None, typer.Argument(help="Question ids (default: every failed "
                                                                         "or skipped one)")] = None,
              as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Give failed (or skipped) questions a fresh set of attempts; running workers claim them at once, else
    answer them with 'evidence audit resume BATCH' or 'evidence audit worker BATCH'."""

    def body() -> int:
        with dbmod.connection(settings()) as conn:
            reset = batch_store.retry(conn, batch_id, questions or [])
        if as_json:
            emit_json({"batch_id": batch_id, "retried": reset})
        else:
            out.print(f"{len(reset)} question(s) to try again: {', '.join(reset) or '-'}; answer them with "
                      f"'evidence audit resume {batch_id}'", highlight=False, markup=False)
        return ExitCode.SUCCESS

    run(body)


@audit_app.command("skip")
def skip_cmd(batch_id: str, questions: Annotated[list[str], typer.Argument(help="Question ids")],
             reason: Annotated[str, typer.Option("--reason", help="Why (kept with the item)")],
             actor: Annotated[str | None, typer.Option("--actor")] = None,
             as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Set unanswered questions aside: no worker answers them (one answering now records nothing), and the
    batch finishes without them. 'evidence audit retry' takes them back."""

    def body() -> int:
        cfg = settings()
        with dbmod.connection(cfg) as conn:
            skipped = batch_store.skip(conn, batch_id, questions, actor=actor or cfg.actor or default_actor(),
                                       reason=reason)
        if as_json:
            emit_json({"batch_id": batch_id, "skipped": skipped})
        else:
            out.print(f"skipped {len(skipped)} question(s): {', '.join(skipped) or '-'}", highlight=False,
                      markup=False)
        return ExitCode.SUCCESS

    run(body)


@audit_app.command("compare")
def compare_cmd(batch_a: str, batch_b: str, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """What changed between two runs of the same checklist, question by question."""

    def body() -> int:
        with dbmod.connection(settings()) as conn:
            result = compare(conn, batch_a, batch_b)
        if as_json:
            emit_json(result)
            return ExitCode.SUCCESS
        for side, ids in (("only in " + batch_a, result["only_in_a"]), ("only in " + batch_b, result["only_in_b"])):
            if ids:
                out.print(f"{side}: {', '.join(ids)}")
        for qid, d in result["questions"].items():
            if "note" in d:
                out.print(f"[bold]{qid}[/]: {d['note']}")
                continue
            changes = (len(d["requirements_added"]), len(d["requirements_removed"]), len(d["verdicts_changed"]))
            verb = "answer changed" if d["answer_changed"] else "answer unchanged"
            out.print(f"[bold]{qid}[/]: {d['status'][0]} -> {d['status'][1]}; {verb}; requirements +{changes[0]} "
                      f"-{changes[1]}, verdicts changed {changes[2]}; corpus changes {len(d['corpus_changes'])}")
        return ExitCode.SUCCESS

    run(body)


@audit_app.command("export")
def export_cmd(batch_id: str,
               oscal: Annotated[Path, typer.Option("--oscal", help="OSCAL Assessment Results JSON to write")]) -> None:
    """Export a batch as an OSCAL Assessment Results document."""

    def body() -> int:
        with dbmod.connection(settings()) as conn:
            document = export_batch(conn, batch_id)
        oscal.parent.mkdir(parents=True, exist_ok=True)
        oscal.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        results = document["assessment-results"]["results"][0]
        out.print(f"wrote {oscal}: {len(results['observations'])} observation(s), "
                  f"{len(results.get('findings', []))} finding(s)", highlight=False)
        return ExitCode.SUCCESS

    run(body)
