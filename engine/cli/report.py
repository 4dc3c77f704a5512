"""`evidence report AUD-… [--pdf F] [--html F] [--md F] [--json F]` and `evidence report verify FILE.pdf`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import psycopg
import typer
from cryptography import x509
from rich.markup import escape

from engine import db as dbmod
from engine import embedded_db
from engine.cli.common import FullHelpGroup, emit_json, engine_api, err, out, run, settings
from engine.config import Settings
from engine.errors import ConfigError, ExitCode, StorageError
from engine.report.sign import identity
from engine.trail import keyring
from engine.trail import standalone_verify as evidence_verify


class _AuditFirst(FullHelpGroup):
    """`evidence report AUD-…` runs `render`; `evidence report verify FILE` runs `verify`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["render", *args]
        return super().parse_args(ctx, args)


report_app = typer.Typer(cls=_AuditFirst, no_args_is_help=True,
                         help="Auditor-ready reports of stored audits (PDF/A-3b, HTML, Markdown, JSON); verify.")


@report_app.command("render")
def render_cmd(
    audit_id: Annotated[str, typer.Argument(help="The audit (AUD-…, or a unique start of one); 'evidence trail list' "
                                                 "shows them")],
    pdf: Annotated[Path | None, typer.Option("--pdf", help="PDF/A-3b with the record embedded")] = None,
    html: Annotated[Path | None, typer.Option("--html", help="Standalone HTML page")] = None,
    md: Annotated[Path | None, typer.Option("--md", help="Markdown")] = None,
    json_file: Annotated[Path | None, typer.Option("--json", help="The canonical record (hashes to the record hash)")
                         ] = None,
    include_rejected: Annotated[bool, typer.Option(
        "--include-rejected", help="List every rejected candidate in the appendix (default: counts by reason)")
    ] = False,
) -> None:
    """Write the report of an audit (`evidence report AUD-…`; with no format given: ./AUD-….pdf, signed)."""

    def body() -> int:
        written = engine_api().write_reports(audit_id, pdf=pdf, html=html, md=md, json_file=json_file,
                                    include_rejected=include_rejected)
        for path in written:
            out.print(f"wrote {escape(str(path))}", highlight=False)
        return ExitCode.SUCCESS

    run(body)


@contextmanager
def _trail(cfg: Settings, offline: bool) -> Iterator[tuple[psycopg.Connection | None, str]]:
    """A read connection to the trail, or None (with the reason) when there is none to reach."""
    if offline:
        yield None, "--offline"
        return
    if not cfg.database_url and not embedded_db.status(cfg)["initialized"]:
        yield None, f"no database configured and no embedded one in {cfg.home}"
        return
    try:
        conn = dbmod.connect(cfg, auto_migrate=False)
    except (StorageError, psycopg.Error) as exc:
        yield None, f"the database cannot be reached ({str(exc).splitlines()[0]})"
        return
    try:
        yield conn, ""
    finally:
        conn.close()


def _print_verify(result: Any, why_offline: str) -> None:
    sig = result.signature
    if sig.get("signer"):
        covered = "covers the whole file" if sig.get("covers_whole_file") else "[red]does NOT cover the whole file[/]"
        out.print(f"signature: {escape(sig['signer'])}, signed {sig.get('signing_time')}; {covered}; chain: "
                  f"{escape(' <- '.join(sig.get('trust_path') or ['not trusted']))}", highlight=False, soft_wrap=True)
    stamp = result.timestamp
    if stamp is not None and stamp.time:
        flag = "[green]TIMESTAMPED[/]" if stamp.trusted else "[yellow]TIMESTAMP NOT TRUSTED[/]"
        out.print(f"{flag} {stamp.time} by {escape(stamp.authority or '?')}", highlight=False, soft_wrap=True)
        for note in stamp.notes:
            err.print(f"    [yellow]{escape(note)}[/]", highlight=False, soft_wrap=True)
    out.print(f"level: PAdES {result.level}" + ("" if result.level == "B-T" else " (no trusted signing time)"),
              highlight=False)
    for p in result.proofs:
        out.print(f"[green]PROVEN[/] {p['audit_id']}: leaf {p['leaf_index']} of the tree of size {p['tree_size']}, "
                  f"root {p['root_hash']}, checkpoint signed by {escape(p['origin'])}", highlight=False, soft_wrap=True)
    if not result.trail_checked:
        out.print(f"[yellow]live trail not checked[/]: {escape(why_offline)}")
    elif result.issued:
        i = result.issued
        out.print(f"[green]ISSUED[/] by the engine as {i['record_id']} (seq {i['seq']}) on {i['issued_at']} for "
                  f"{escape(i['actor'])}", highlight=False, soft_wrap=True)
    for c in result.consistency:
        flag = "[green]CONSISTENT[/]" if c["consistent"] else "[red]INCONSISTENT[/]"
        out.print(f"{flag} live log at tree size {c['tree_size']}"
                  + (f", and on to the latest checkpoint (size {c['latest_size']})" if c.get("latest_size") else ""),
                  highlight=False)
    for r in result.records:
        flag = "[green]MATCH[/]" if r.ok else "[red]MISMATCH[/]"
        out.print(f"{flag} {r.audit_id} ({escape(r.attachment)}) sha256 {r.sha256}", highlight=False, soft_wrap=True)
        out.print(f"    trail {r.trail} · printed hash {r.printed} · attachment description {r.described} · "
                  f"canonical form {'yes' if r.canonical else 'no'}", highlight=False)
        for p in r.problems:
            err.print(f"    [red]{escape(p)}[/]", highlight=False)
    for w in result.witnesses:
        names = ", ".join(f"{c['name']} ({c['time']})" for c in w["cosigned_by"]) or "no pinned witness"
        flag = "[green]WITNESSED[/]" if len(w["cosigned_by"]) >= w["required"] else "[red]NOT WITNESSED[/]"
        out.print(f"{flag} tree size {w['tree_size']}: cosigned by {escape(names)}; {w['required']} required",
                  highlight=False, soft_wrap=True)
        for line in w["not_counted"]:
            err.print(f"    [yellow]{escape(line)}[/]", highlight=False, soft_wrap=True)
    for p in result.problems:
        err.print(f"[red]FAIL[/] {escape(p)}", highlight=False, soft_wrap=True)
    out.print("[green]OK: the report verifies[/]" if result.ok else "[red]FAILED: the report does not verify[/]")


def _public_key(cfg: Settings, path: Path | None) -> Any:
    """The trail's checkpoint keys: from --public-key (one PEM block, or several across a rotation), else this
    engine's own, current and retired (None when it has none)."""
    if path is None:
        return keyring.public_keys(cfg) or None
    return _keys_file(path, "--public-key")


def _cert_keys(path: Path | None) -> Any:
    """The certificate keys given with --cert-key; None: the certificate chain must reach a checkpoint key (the
    engine's certificate key is itself certified by the checkpoint key)."""
    return None if path is None else _keys_file(path, "--cert-key")


def _keys_file(path: Path, option: str) -> list[Any]:
    try:
        return evidence_verify.load_public_keys(path.read_bytes())
    except evidence_verify.VerifyError as exc:
        raise ConfigError(f"{option} {path}: {exc}") from exc


def _tsa_trust(cfg: Settings, paths: list[Path]) -> list[Any]:
    """Certificates trusted for signature timestamps: --trust-tsa files, else EVIDENCE_TSA_TRUST_CERT."""
    chosen = paths or ([cfg.tsa_trust_cert] if cfg.tsa_trust_cert else [])
    return [cert for path in chosen for cert in _certificates(path, "--trust-tsa")]


def _certificates(path: Path, option: str) -> list[Any]:
    data = path.read_bytes()
    try:
        return (x509.load_pem_x509_certificates(data) if b"-----BEGIN" in data
                else [x509.load_der_x509_certificate(data)])
    except ValueError as exc:
        raise ConfigError(f"{option} {path} is not a PEM or DER certificate: {exc}") from exc


def _trust(cfg: Settings, paths: list[Path]) -> list[Any]:
    """Certificates trusted to sign reports: --trust-cert files, and this engine's configured PKCS#12 chain."""
    certs = [cert for path in paths for cert in _certificates(path, "--trust-cert")]
    if cfg.report_signing_p12:
        ident = identity(cfg)
        certs += [ident.cert, *ident.chain][-1:]  # the organisation's root (or its own certificate)
    return certs


def _witnesses(given: list[str], minimum: int | None) -> tuple[list[evidence_verify.WitnessKey], int]:
    """Pinned witness keys (each a vkey or a file holding one) and how many must have cosigned."""
    try:
        keys = [evidence_verify.load_witness_key(Path(w).read_text() if Path(w).is_file() else w) for w in given]
    except evidence_verify.VerifyError as exc:
        raise ConfigError(str(exc)) from exc
    needed = len(keys) if minimum is None else minimum
    if not 0 <= needed <= len(keys):
        raise ConfigError(f"--min-witnesses {needed} needs at least that many --witness-key (given {len(keys)})")
    return keys, needed


@report_app.command("verify")
def verify_cmd(
    file: Annotated[Path, typer.Argument(help="A PDF written by 'evidence report' or 'evidence ask --pdf'",
                                         exists=True, dir_okay=False, readable=True)],
    offline: Annotated[bool, typer.Option("--offline", help="Do not consult the trail: the signature, embedded proofs "
                                                            "and checkpoints only")] = False,
    public_key: Annotated[Path | None, typer.Option(
        "--public-key", help="The trail's public key (PEM from 'evidence trail public-key'; several PEM blocks "
                             "across a key rotation: 'public-key --all'); default: this engine's", exists=True,
        dir_okay=False)] = None,
    cert_key: Annotated[Path | None, typer.Option(
        "--cert-key", help="Pin the trail's certificate key (PEM from 'evidence trail public-key --certificates') "
                           "instead of reaching it through the checkpoint key that certifies it",
        exists=True, dir_okay=False)] = None,
    trust_tsa: Annotated[list[Path] | None, typer.Option(
        "--trust-tsa", help="A timestamp authority's certificate (or its CA) trusted for signature timestamps "
                            "(PAdES B-T); default EVIDENCE_TSA_TRUST_CERT; repeatable", exists=True,
        dir_okay=False)] = None,
    trust_cert: Annotated[list[Path] | None, typer.Option(
        "--trust-cert", help="A certificate trusted to sign reports (an organisation's CA); repeatable",
        exists=True, dir_okay=False)] = None,
    witness_key: Annotated[list[str] | None, typer.Option(
        "--witness-key", help="A witness's verifier key (name+id+base64, or a file holding one) whose cosignatures "
                              "count; repeatable")] = None,
    min_witnesses: Annotated[int | None, typer.Option(
        "--min-witnesses", help="Cosignatures from this many pinned witnesses each checkpoint must carry (default: "
                                "every --witness-key)")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Check the PDF signature, each record's inclusion proof and signed checkpoint (and its witnesses'
    cosignatures when --witness-key is given), and (unless --offline) the trail and its consistency with the
    checkpoint. Exit 6 on any failure."""
    from engine.report.verify import verify_pdf  # Jinja2 and asn1crypto: not for --help

    def body() -> int:
        cfg = settings()
        key, trust = _public_key(cfg, public_key), _trust(cfg, trust_cert or [])
        certs, stamps = _cert_keys(cert_key), _tsa_trust(cfg, trust_tsa or [])
        witnesses, needed = _witnesses(witness_key or [], min_witnesses)
        with _trail(cfg, offline) as (conn, why):
            result = verify_pdf(file, conn, public_key=key, trust=trust, witnesses=witnesses, min_witnesses=needed,
                                cert_keys=certs, tsa_trust=stamps)
        if as_json:
            emit_json(result.model_dump())
        else:
            _print_verify(result, why)
        return ExitCode.SUCCESS if result.ok else ExitCode.INTEGRITY

    run(body)
