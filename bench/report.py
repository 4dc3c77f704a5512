"""Report rendering benchmark: seconds to render one 20-requirement audit to PDF, and a 50-question batch.

Uses its own embedded database (`bench/.cache/report`, reused between runs): the sample corpus,
a few real answers (rules backend, recorded once), and from them synthetic-but-valid audits
appended through the real trail path (`engine.trail.store.append`): one with exactly 20
requirements (every cited one kept, rejected ones added up to 20) and 50 batch questions. Prints
as its last line one JSON object: wall seconds (`single_pdf_s`, `batch_pdf_s`, best of `--repeat`),
CPU seconds of this process for the same renders, pages, and the machine's load average, since
WeasyPrint layout is CPU-bound and other work on the machine shows in the wall time.

    python bench/report.py [--repeat 3] [--batch-size 50]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import db as dbmod  # noqa: E402
from engine import embedded_db  # noqa: E402
from engine.config import Settings  # noqa: E402
from engine.report import render as report  # noqa: E402
from engine.trail import store as audit_trail  # noqa: E402
from engine.trail.record import new_audit_id  # noqa: E402

BASE_QUESTIONS = (
    "What must we document for client assessments, and how often must they be reviewed, and when must a breach "
    "be notified?",
    "How long must transaction records be kept?",
    "When must a personal data breach be notified to the Commissioner?",
    "How often must user access rights be reviewed?",
    "How must paper records containing personal data be disposed of?",
    "What is the capital adequacy ratio for banana plantations on Mars?",
)
BASE_RUN = "run-bench-report-{}"


def base_records(conn: Any, settings: Settings) -> list[dict[str, Any]]:
    """The real answers the synthetic audits are derived from (answered and recorded on first use)."""
    records = []
    for i, question in enumerate(BASE_QUESTIONS):
        run_id = BASE_RUN.format(i)
        row = audit_trail.by_run(conn, run_id)
        if row is None:
            from agents.deps import Deps
            from agents.research import run_research
            from engine.search.embeddings import Embedder
            from engine.trail.record import record_research

            embedder = Embedder.from_settings(settings)
            result = run_research(question, Deps.build(conn, settings, embedder=embedder, backend="rules"),
                                  run_id=run_id)
            record_research(conn, settings, embedder, result.model_dump(mode="json"), actor="bench")
            row = audit_trail.by_run(conn, run_id)
        records.append(audit_trail.get(conn, row["audit_id"])["record"])
    return records


def with_requirements(record: dict[str, Any], n: int) -> dict[str, Any]:
    """A copy of `record` holding exactly `n` requirements: every cited one, then others in order."""
    reqs = record["requirements"]
    cited = [r for r in reqs if r.get("cited")]
    rest = [r for r in reqs if not r.get("cited")]
    if len(reqs) < n or len(cited) > n:
        raise SystemExit(f"base record has {len(reqs)} requirements ({len(cited)} cited); cannot make {n}")
    out = copy.deepcopy(record)
    out["requirements"] = cited + rest[: n - len(cited)]
    return out


def append_copy(conn: Any, record: dict[str, Any], *, batch_id: str | None = None) -> str:
    """Append `record` as a new audit (new id and run id) through the real trail path."""
    clone = copy.deepcopy(record)
    clone.update(audit_id=new_audit_id(), run_id=f"run-bench-{uuid.uuid4().hex[:12]}", batch_id=batch_id)
    return audit_trail.append(conn, clone).audit_id


def timed(fn: Any, repeat: int) -> tuple[float, float]:
    """Best wall and CPU seconds of `repeat` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def pages(path: Path) -> int:
    from pypdf import PdfReader

    return len(PdfReader(str(path)).pages)


def run(settings: Settings, repeat: int, batch_size: int) -> dict[str, Any]:
    """Prepare the audits, render, and return the figures."""
    from engine.ingest.pipeline import ingest_paths

    with dbmod.connection(settings) as conn, tempfile.TemporaryDirectory() as tmp:
        if not conn.execute("SELECT count(*) FROM documents").fetchone()[0]:
            from engine.search.embeddings import Embedder

            ingest_paths(conn, Embedder.from_settings(settings), settings, [ROOT / "examples" / "corpus"])
        bases = base_records(conn, settings)
        single = append_copy(conn, with_requirements(bases[0], 20))
        batch_id = f"B-bench-{uuid.uuid4().hex[:8]}"
        batch_ids = [append_copy(conn, bases[i % len(bases)], batch_id=batch_id) for i in range(batch_size)]
        meta = {"batch_id": batch_id, "name": "Report benchmark", "description": f"{batch_size} synthetic questions",
                "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:10:00Z",
                "questions": {a: {"question_id": f"Q-{i:02d}", "control_id": f"ctl-{i % 7}",
                                  "expectation_met": i % 3 != 0} for i, a in enumerate(batch_ids, 1)}}
        single_pdf, batch_pdf = Path(tmp) / "single.pdf", Path(tmp) / "batch.pdf"
        report.write_pdf(conn, single, single_pdf)  # warm-up: imports, fonts, templates
        single_wall, single_cpu = timed(lambda: report.write_pdf(conn, single, single_pdf), repeat)
        batch_wall, batch_cpu = timed(lambda: report.write_batch_pdf(conn, batch_ids, batch_pdf,
                                                                     title="Report benchmark", batch=meta), 1)
        return {"single_requirements": 20, "single_pdf_s": round(single_wall, 3), "single_cpu_s": round(single_cpu, 3),
                "single_pages": pages(single_pdf), "batch_questions": batch_size, "batch_pdf_s": round(batch_wall, 3),
                "batch_cpu_s": round(batch_cpu, 3), "batch_pages": pages(batch_pdf),
                "load_avg_1m": round(os.getloadavg()[0], 2), "cpus": os.cpu_count()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=ROOT / "bench" / ".cache" / "report",
                        help="benchmark data directory (its own embedded database)")
    parser.add_argument("--repeat", type=int, default=3, help="renders of the single audit (best is reported)")
    parser.add_argument("--batch-size", type=int, default=50)
    args = parser.parse_args(argv)
    args.home.mkdir(parents=True, exist_ok=True)
    settings = Settings(home=args.home)
    started_here = not settings.database_url and not embedded_db.status(settings)["running"]
    try:
        figures = run(settings, args.repeat, args.batch_size)
    finally:
        if started_here:
            embedded_db.stop(settings)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
