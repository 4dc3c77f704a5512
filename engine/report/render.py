"""Auditor-ready reports of stored audits: HTML, Markdown, JSON and PDF/A-3b, single or batch.

Reports are laid out from the trail row alone (`engine.trail.store.get`), plus facts read at render
time: the signed checkpoint and any amendments. The JSON report is the stored canonical text itself,
so its SHA-256 is the record hash; the PDF embeds that same text, the audit's inclusion proof in a
signed checkpoint beside it (`AUD-….proof.json`), and is PAdES-signed (`engine.report.sign`), so
it can be verified offline with nothing but the trail's public key (`engine.trail.standalone_verify`).
The body holds what an auditor files: the answer, the cited requirements, missing evidence,
sign-offs and verification; rejected candidates, unused requirements and the method go to the
appendix (rejected ones as counts by reason unless `include_rejected`).

Templates (`templates/`) are Jinja2 with autoescape on for HTML. Corpus text is hostile input: a
`<script>` or a `javascript:` link in a document must stay text, so nothing from a record is ever
marked safe. Markdown output escapes every value through `md_escape` (the environment's finalize).
The environments are lenient about missing keys on purpose: a report of a record written by an
older engine version must still render.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import psycopg
from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from engine.config import Settings, load_settings, resource_dir
from engine.errors import EngineError
from engine.report import sign as report_sign
from engine.report.pdf import Embedded
from engine.report.terminal import found_line, modality_label
from engine.report.view import audit_view, batch_item_view
from engine.trail import checkpoints, review
from engine.trail import proofs as trail_proofs
from engine.trail import store as audit_trail
from engine.trail.record import build_issued_report

TEMPLATES = resource_dir("templates")
REPORT_TITLE = "Compliance evidence report"
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~&$])")


def md_escape(value: Any) -> Any:
    """A value as inert Markdown text: markup characters backslash-escaped, line breaks as spaces."""
    if value is None:
        return ""
    if isinstance(value, Markup):  # produced by the template itself (md_safe)
        return str(value)
    return _MD_SPECIAL.sub(r"\\\1", re.sub(r"\s+", " ", str(value)))


def utc(value: Any) -> str:
    """`2026-01-31T12:00:00.123456Z` (or a datetime) as `2026-01-31 12:00:00 UTC`."""
    if isinstance(value, datetime):
        value = value.astimezone(UTC).isoformat()
    text = str(value or "")
    match = re.match(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})", text)
    return f"{match.group(1)} {match.group(2)} UTC" if match else text


@lru_cache(maxsize=2)
def environment(markdown: bool = False) -> Environment:
    """The Jinja2 environment for HTML (autoescape) or Markdown (finalize = md_escape) templates."""
    if markdown:
        env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=False, finalize=md_escape,
                          trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
        env.filters["md_safe"] = Markup
    else:
        env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True)
    env.filters["utc"] = utc
    env.filters["found_line"] = found_line  # one wording of a broad answer's counts, in the terminal and reports
    env.filters["modality_label"] = modality_label  # "none: exemption", as the terminal shows it
    return env


@lru_cache(maxsize=1)
def stylesheet() -> Markup:
    """The print stylesheet (our own file, so it may go into the page as is)."""
    return Markup((TEMPLATES / "report.css").read_text(encoding="utf-8"))


def _now() -> str:
    return utc(datetime.now(UTC))


def load_view(conn: psycopg.Connection, audit_id: str, *, prefix: str | None = None,
              checkpoint: dict[str, Any] | None = None, pdf: PdfContext | None = None,
              settings: Settings | None = None, state: review.Review | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The trail row of an answer audit and its report view. Raises NotFoundError / EngineError.

    `pdf` (for signed PDFs) brings the audit's inclusion proof and the signer into the view; the view's
    `review` is the audit's review state now: `state` when the caller read it (a batch reads all its
    audits' at once), else read here (`engine.trail.review`; approvals needed from `settings`, default the
    environment's).
    """
    row = pdf.rows[audit_id] if pdf is not None and audit_id in pdf.rows else audit_trail.get(conn, audit_id)
    if row["record"].get("kind") != "answer":
        amended = row["record"].get("amends")
        raise EngineError(f"{audit_id} is a {row['record'].get('kind')} amending {amended}, not an answer; "
                          f"report {amended} instead (its report lists this {row['record'].get('kind')})")
    if pdf is not None:
        checkpoint = pdf.checkpoint
    view = audit_view(row, checkpoint=checkpoint if checkpoint is not None else checkpoints.latest(conn),
                      amendments=audit_trail.amendments(conn, audit_id), prefix=prefix,
                      proof=pdf.proofs.get(audit_id) if pdf else None, signer=pdf.signer if pdf else None)
    view["review"] = state or review.review_of(conn, audit_id,
                                               required=(settings or load_settings()).review_approvals)
    return row, view


class PdfContext(NamedTuple):
    """What a signed PDF adds to its views: trail rows, inclusion proofs, the checkpoint, the signer."""

    rows: dict[str, dict[str, Any]]
    proofs: dict[str, dict[str, Any]]
    checkpoint: dict[str, Any]
    signer: dict[str, Any]
    identity: report_sign.Identity


def pdf_context(conn: psycopg.Connection, settings: Settings, audit_ids: list[str]) -> PdfContext:
    """Rows, inclusion proofs (one checkpoint covering all, signed now if needed) and the signing identity."""
    rows = {aid: audit_trail.get(conn, aid) for aid in dict.fromkeys(audit_ids)}
    answers = [r for r in rows.values() if r["record"].get("kind") == "answer"]
    proofs = trail_proofs.inclusion_bundles(conn, settings, answers)
    ident = report_sign.identity(settings)
    any_proof = next(iter(proofs.values()), None)
    checkpoint = {"seq": any_proof["tree_size"], "root_hash": any_proof["root_hash"],
                  "origin": any_proof["checkpoint"].split("\n", 1)[0], "key_fingerprint": any_proof["key_fingerprint"],
                  "signed_at": ""} if any_proof else {}
    signer = {"subject": ident.cert.subject.rfc4514_string(), "fingerprint": ident.fingerprint,
              "by_trail_key": not settings.report_signing_p12}
    return PdfContext(rows, proofs, checkpoint, signer, ident)


def _meta(title: str, subject: str, keywords: list[str], author: str) -> dict[str, Any]:
    """PDF document information: title, author = engine, subject = question, keywords = audit id(s)."""
    return {"title": title, "subject": subject, "keywords": ", ".join(keywords), "author": author,
            "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}


def _embedded(row: dict[str, Any]) -> Embedded:
    recorded = row.get("created_at")  # WeasyPrint writes attachment dates with a literal "Z": give it UTC
    return Embedded(row["audit_id"], row["canonical"], row["hash"],
                    recorded.astimezone(UTC) if isinstance(recorded, datetime) else None)


def _author(record: dict[str, Any]) -> str:
    engine = record.get("engine") or {}
    return f"{engine.get('name', 'evidence-engine')} {engine.get('version', '')}".strip()


def _single(conn: psycopg.Connection, audit_id: str, *, include_rejected: bool = False,
            pdf: PdfContext | None = None) -> tuple[str, list[Embedded]]:
    row, view = load_view(conn, audit_id, pdf=pdf)
    records = [_embedded(row)]
    meta = _meta(f"{REPORT_TITLE} {audit_id}", row["record"]["question"], [audit_id], _author(row["record"]))
    html = environment().get_template("audit_report.html.j2").render(
        v=view, meta=meta, css=stylesheet(), title=REPORT_TITLE, rendered_at=_now(), include_rejected=include_rejected)
    return html, records


def render_html(conn: psycopg.Connection, audit_id: str, *, include_rejected: bool = False) -> str:
    """The report of one audit as a standalone HTML page (stylesheet inline, nothing fetched)."""
    return _single(conn, audit_id, include_rejected=include_rejected)[0]


def render_markdown(conn: psycopg.Connection, audit_id: str, *, include_rejected: bool = False) -> str:
    """The report of one audit as Markdown (every value from the record escaped)."""
    _, view = load_view(conn, audit_id)
    return environment(markdown=True).get_template("audit_report.md.j2").render(
        v=view, title=REPORT_TITLE, rendered_at=_now(), include_rejected=include_rejected)


def render_json(conn: psycopg.Connection, audit_id: str) -> str:
    """The stored canonical text of the audit, byte for byte: its SHA-256 is the record hash."""
    return audit_trail.get(conn, audit_id)["canonical"]


def pdf_bytes(conn: psycopg.Connection, audit_id: str, *, settings: Settings | None = None,
              include_rejected: bool = False) -> bytes:
    """The signed PDF/A-3b report of one audit, in memory: the canonical record and its inclusion proof
    (with the signed checkpoint) attached, PAdES-signed, and its issue recorded in the trail (`issue`).
    `settings` default: the environment's."""
    settings = settings or load_settings()
    pdf = pdf_context(conn, settings, [audit_id])
    html, records = _single(conn, audit_id, include_rejected=include_rejected, pdf=pdf)
    return issue(conn, settings, _signed(html, records, pdf, reason=f"Evidence Engine report of {audit_id}"),
                 [audit_id], pdf)


def issue(conn: psycopg.Connection, settings: Settings, data: bytes, audit_ids: list[str], pdf: PdfContext) -> bytes:
    """Record in the trail that the engine issued `data` (a signed report of `audit_ids`): a 'report' record with
    the file's SHA-256, covered by a checkpoint, so `report verify` can tell it from a file assembled around a
    genuine record. Returns `data`."""
    if not audit_ids:
        return data  # nothing to amend: a report of no audit holds no record to vouch for either
    first = pdf.rows[audit_ids[0]] if audit_ids[0] in pdf.rows else audit_trail.get(conn, audit_ids[0])
    record = build_issued_report(first["record"], sha256=hashlib.sha256(data).hexdigest(), size=len(data),
                                 audit_ids=audit_ids, fmt="pdf", signer_sha256=pdf.identity.fingerprint,
                                 actor=settings.actor)
    appended = audit_trail.append(conn, record)
    checkpoints.after_append(conn, settings, appended.seq)
    return data


def write_pdf(conn: psycopg.Connection, audit_id: str, path: Path | str, *, settings: Settings | None = None,
              include_rejected: bool = False) -> Path:
    """Write the signed PDF/A-3b report of one audit (see `pdf_bytes`). Returns the path."""
    return _write(pdf_bytes(conn, audit_id, settings=settings, include_rejected=include_rejected), Path(path))


def _signed(html: str, records: list[Embedded], pdf: PdfContext, *, reason: str) -> bytes:
    from engine.report.pdfa import html_to_pdf  # WeasyPrint: loaded when a PDF is written

    buffer = io.BytesIO()
    html_to_pdf(html, buffer, records, pdf.proofs)
    return report_sign.sign_pdf(buffer.getvalue(), pdf.identity, reason=reason)


def _write(data: bytes, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    tmp.write_bytes(data)
    tmp.replace(path)
    return path


_BATCH_FACTS = (("definition_sha256", "Definition SHA-256"), ("actor", "Actor"), ("settings_hash", "Settings hash"),
                ("fail_on", "Fails on"))


def _batch_items(conn: psycopg.Connection, audit_ids: list[str], batch: dict[str, Any], pdf: PdfContext | None
                 ) -> tuple[list[dict[str, Any]], list[Embedded]]:
    checkpoint = checkpoints.latest(conn) if pdf is None else None
    extras = batch.get("questions") or {}
    items: list[dict[str, Any]] = []
    records: dict[str, Embedded] = {}
    # One read of the reviews for the whole batch (each reads every citation to find stale evidence).
    states = review.reviews(conn, list(audit_ids), required=load_settings().review_approvals)
    for i, audit_id in enumerate(audit_ids, 1):
        row, view = load_view(conn, audit_id, prefix=f"q{i}-{audit_id}", checkpoint=checkpoint, pdf=pdf,
                              state=states[audit_id])
        items.append({"v": view, "x": batch_item_view(row["record"], extras.get(audit_id))})
        records.setdefault(audit_id, _embedded(row))
    return items, list(records.values())


def _batch_context(items: list[dict[str, Any]], batch: dict[str, Any]) -> dict[str, Any]:
    statuses = [i["v"]["answer"].get("status") for i in items]
    met = [i["x"]["expectation_met"] for i in items if i["x"]["expectation_met"] is not None]
    same = len({i["v"]["record"].get("settings_hash") for i in items}) == 1
    snapshots = {json.dumps(i["v"]["record"].get("corpus"), sort_keys=True) for i in items}
    return {"counts": {s: statuses.count(s) for s in ("ANSWERED", "NO_AUTHORITATIVE_EVIDENCE", "REJECTED")},
            "expect_counts": {"total": len(met), "met": sum(met), "missed": len(met) - sum(met)},
            "common": items[0]["v"] if items and same else None,
            "common_corpus": [{**d, "cited": False} for d in items[0]["v"]["record"].get("corpus", [])]
            if items and same and len(snapshots) == 1 else None,
            "batch_facts": [(label, batch[k]) for k, label in _BATCH_FACTS if batch.get(k) not in (None, "")]}


def _batch(conn: psycopg.Connection, audit_ids: list[str], title: str, batch: dict[str, Any], *,
           include_rejected: bool = False, pdf: PdfContext | None = None) -> tuple[str, list[Embedded]]:
    items, records = _batch_items(conn, audit_ids, batch, pdf)
    subject = batch.get("description") or batch.get("name") or title
    author = _author(items[0]["v"]["record"]) if items else "evidence-engine"
    meta = _meta(title, str(subject), [str(batch.get("batch_id") or ""), *dict.fromkeys(audit_ids)], author)
    html = environment().get_template("batch_report.html.j2").render(
        items=items, batch=batch, meta=meta, css=stylesheet(), title=title, rendered_at=_now(),
        include_rejected=include_rejected, **_batch_context(items, batch))
    return html, records


def render_batch(conn: psycopg.Connection, audit_ids: list[str], *, title: str, batch: dict[str, Any],
                 include_rejected: bool = False) -> str:
    """The report of a batch as one HTML page: a summary table, then one section per question, then the
    appendix (rejected candidates by reason, listed in full only with `include_rejected`; method).

    Args:
        conn: a connection to the trail.
        audit_ids: the audits to show, in this order (each must be an answer audit).
        title: the report title (page header, PDF title).
        batch: at least `batch_id`, `name`, `description`, `started_at`, `finished_at`; optional
            `definition_sha256`, `actor`, `settings_hash`, `fail_on`; and per audit, under
            `batch["questions"][audit_id]`: `question_id`, `control_id`, `expectations` (list of
            `{document, section, met, requirement_ids}`), `expectation_met` (bool), `expectation`
            (text), other scalar keys (shown as they are). Missing per-audit keys fall back to the
            record's own `batch` context.
        include_rejected: list every rejected candidate in the appendix, not only counts by reason.

    Raises:
        NotFoundError: an audit id is not in the trail.
    """
    return _batch(conn, list(audit_ids), title, batch, include_rejected=include_rejected)[0]


def write_batch_pdf(conn: psycopg.Connection, audit_ids: list[str], path: Path | str, *, title: str,
                    batch: dict[str, Any], settings: Settings | None = None, include_rejected: bool = False) -> Path:
    """Write the batch report (see `render_batch`) as signed PDF/A-3b with every audit's canonical JSON and
    inclusion proof attached."""
    settings = settings or load_settings()
    pdf = pdf_context(conn, settings, list(audit_ids))
    html, records = _batch(conn, list(audit_ids), title, batch, include_rejected=include_rejected, pdf=pdf)
    data = _signed(html, records, pdf, reason=f"Evidence Engine batch report {batch.get('batch_id') or ''}")
    return _write(issue(conn, settings, data, list(audit_ids), pdf), Path(path))
