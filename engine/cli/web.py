"""`evidence serve`, `evidence user add|token|list` and `evidence relevance export-feedback`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from engine import db as dbmod
from engine.cli.common import FullHelpGroup, emit_json, err, out, run, settings
from engine.cli.logs import configure
from engine.config import log_level
from engine.errors import ConfigError, ExitCode, InputError
from engine.relevance.pairs import write_pairs
from engine.trail import store as audit_trail
from engine.web import security, signoff
from engine.web import store as web_store

user_app = typer.Typer(cls=FullHelpGroup, no_args_is_help=True,
                       help="Users of the web view (evidence serve): add them, give them API tokens.")


def _password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    if not sys.stdin.isatty():
        raise InputError("no terminal to ask for the password on: pipe it in with --password-stdin")
    return typer.prompt("password", hide_input=True, confirmation_prompt=True)


@user_app.command("add")
def user_add(
    name: Annotated[str, typer.Argument(help="User name (letters, digits, '.', '_', '@', '-').")],
    role: Annotated[str, typer.Option("--role", help="viewer (reads), analyst (also asks), reviewer (also signs "
                                                     "off), admin (also manages users).")],
    password_stdin: Annotated[bool, typer.Option("--password-stdin", help="Read the password from the first line "
                                                                          "of standard input.")] = False,
) -> None:
    """Add a user; the password is asked for (twice) and stored as an Argon2id hash only."""
    def body() -> int:
        if role not in web_store.ROLES:
            raise InputError(f"--role must be one of {', '.join(web_store.ROLES)}, not '{role}'")
        password = _password(password_stdin)
        if len(password) < security.MIN_PASSWORD_CHARS:
            raise InputError(f"the password has {len(password)} characters; it needs at least "
                             f"{security.MIN_PASSWORD_CHARS}")
        with dbmod.connection(settings()) as conn:
            web_store.add_user(conn, name, role, security.hash_password(password))
        out.print(f"added user {name} ({role})", markup=False, highlight=False)
        return ExitCode.SUCCESS

    run(body)


@user_app.command("token")
def user_token(name: Annotated[str, typer.Argument(help="The user the token acts for.")]) -> None:
    """Make a bearer token for GET /api/* (printed once; only its SHA-256 is stored)."""
    def body() -> int:
        token = security.new_secret()
        with dbmod.connection(settings()) as conn:
            web_store.require_user(conn, name)
            web_store.add_token(conn, name, security.secret_digest(token))
        out.print(token, markup=False, highlight=False)
        err.print(f"bearer token for {name}: send it as 'Authorization: Bearer TOKEN'; it is not shown again",
                  markup=False, highlight=False)
        return ExitCode.SUCCESS

    run(body)


@user_app.command("list")
def user_list(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List users with their roles."""
    def body() -> int:
        with dbmod.connection(settings()) as conn:
            rows = web_store.list_users(conn)
        if as_json:
            emit_json(rows)
        else:
            for r in rows:
                out.print(f"{r['name']}  {r['role']}  {r['tokens']} token(s){'  disabled' if r['disabled'] else ''}",
                          markup=False, highlight=False)
        return ExitCode.SUCCESS

    run(body)


LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]")
ANY_ADDRESS = ("0.0.0.0", "::")


def served_hosts(host: str, allowed: list[str] | None) -> list[str]:
    """The Host header values `serve` answers: those given, else loopback names plus the address bound."""
    if allowed:
        return [h for item in allowed for h in item.split(",") if h.strip()]
    return list(dict.fromkeys([*LOOPBACK_HOSTS, *([] if host in ANY_ADDRESS else [host])]))


def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on; 0.0.0.0 exposes it to the network.")
                    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535)] = 8000,
    tls_cert: Annotated[Path | None, typer.Option("--tls-cert", help="PEM certificate: serve HTTPS (cookies "
                                                                      "then Secure).")] = None,
    tls_key: Annotated[Path | None, typer.Option("--tls-key", help="PEM private key of --tls-cert.")] = None,
    forwarded_allow_ips: Annotated[str | None, typer.Option(
        "--forwarded-allow-ips", envvar="EVIDENCE_FORWARDED_ALLOW_IPS",
        help="Addresses of the reverse proxies whose X-Forwarded-For / -Proto are believed (comma-separated, as "
             "uvicorn reads them). Unset: none are, and the login limit counts the connecting address.")] = None,
    allowed_host: Annotated[list[str] | None, typer.Option(
        "--allowed-host", envvar="EVIDENCE_ALLOWED_HOSTS",
        help="A Host header value served (repeat for several; '*.example.org' for subdomains). Default: "
             "localhost, 127.0.0.1 and ::1, plus --host when it is a name or address other than 0.0.0.0/::.")
    ] = None,
) -> None:
    """Serve the web view: audits, documents with highlighted quotes, asking with live progress, sign-off.

    Behind a TLS proxy, give its address with --forwarded-allow-ips: its X-Forwarded-Proto then makes cookies
    Secure and its X-Forwarded-For names the client the login limit counts.
    """
    import uvicorn  # the web server and its app (FastAPI): only for this command

    from engine.web.app import create_app

    def body() -> int:
        if (tls_cert is None) != (tls_key is None):
            raise ConfigError("--tls-cert and --tls-key go together: give both for HTTPS, or neither")
        configure(log_level(default="INFO"))  # the server's requests and denials are its log
        cfg = settings()
        if host not in ("127.0.0.1", "localhost", "::1") and tls_cert is None:
            err.print(f"warning: listening on {host} without TLS: passwords and session cookies cross the network "
                      "in clear unless a TLS proxy fronts this server (--tls-cert/--tls-key serve HTTPS)",
                      markup=False, highlight=False)
        err.print(f"serving on {'https' if tls_cert else 'http'}://{host}:{port}/ (Ctrl-C stops)",
                  markup=False, highlight=False)
        hosts = served_hosts(host, allowed_host)
        if host in ANY_ADDRESS and not allowed_host:
            err.print(f"note: listening on {host} but answering only Host headers {', '.join(hosts)}; give "
                      "--allowed-host NAME for each name clients use", markup=False, highlight=False)
        uvicorn.run(create_app(cfg, allowed_hosts=hosts), host=host, port=port, log_level="info",
                    proxy_headers=forwarded_allow_ips is not None, forwarded_allow_ips=forwarded_allow_ips or "",
                    ssl_certfile=str(tls_cert) if tls_cert else None, ssl_keyfile=str(tls_key) if tls_key else None)
        return ExitCode.SUCCESS

    run(body)


def export_feedback(
    out_path: Annotated[Path, typer.Option("--out", help="JSONL file to write (the format 'relevance train' reads).")],
) -> None:
    """Write reviewers' sign-offs and rejections, per requirement, as (question, passage, label) pairs."""
    def body() -> int:
        with dbmod.connection(settings()) as conn:
            rows = web_store.signoffs(conn)
            records = {aid: audit_trail.get(conn, aid)["record"] for aid in {r["amends"] for r in rows}}
        pairs = signoff.feedback_pairs(rows, records)
        n = write_pairs(out_path, pairs)
        positives = sum(p["label"] for p in pairs)
        err.print(f"wrote {n} pair(s) ({positives} approved, {n - positives} rejected) from {len(rows)} sign-off(s) "
                  f"to {out_path}", markup=False, highlight=False)
        return ExitCode.SUCCESS

    run(body)
