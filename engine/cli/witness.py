"""`evidence trail witness init|cosign`: a witness of the trail (C2SP tlog-witness, cosignature/v1), run with its
own key, on another machine in production."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from engine import db as dbmod
from engine.cli.common import FullHelpGroup, emit_json, err, run, settings
from engine.errors import ConfigError, ExitCode
from engine.report.standalone_verify import VerifyError, load_public_key
from engine.trail import cosignatures, witness
from engine.trail.checkpoints import publish

witness_app = typer.Typer(cls=FullHelpGroup, no_args_is_help=True,
                          help="A witness: checks that the log only grows and cosigns its checkpoints.")

KeyOption = Annotated[Path, typer.Option("--key", help="The witness's private key file (PEM; keep it off the engine's "
                                                       "machine)", dir_okay=False)]


@witness_app.command("init")
def init_cmd(key: KeyOption,
             name: Annotated[str, typer.Option("--name", help="The witness's name, e.g. witness.example.com/w1")]
             ) -> None:
    """Make the witness's Ed25519 key (kept if it exists) and print its verifier key (vkey): what verifiers pin
    with --witness-key."""

    def body() -> int:
        identity, created = witness.init(key, name)
        sys.stdout.write(identity.vkey + "\n")
        err.print(f"{'created' if created else 'existing'} witness key {escape(str(key))}; verifier key also in "
                  f"{escape(str(key))}.vkey", highlight=False, soft_wrap=True)
        return ExitCode.SUCCESS

    run(body)


@witness_app.command("cosign")
def cosign_cmd(
    key: KeyOption,
    state: Annotated[Path, typer.Option("--state", help="The witness's state file: the last checkpoint it cosigned "
                                                        "(made on the first run)", dir_okay=False)],
    log_key: Annotated[Path, typer.Option("--log-key", help="The trail's public key this witness trusts (PEM from "
                                                            "'evidence trail public-key')", exists=True,
                                          dir_okay=False)],
    name: Annotated[str | None, typer.Option("--name", help="The witness's name (default: from KEY.vkey)")] = None,
    origin: Annotated[str | None, typer.Option("--origin", help="The log's origin to require (default: the one in "
                                                                "the state file)")] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Also append the cosigned note to "
                                                 "DIR/trail-checkpoints.txt")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Check that the trail's latest checkpoint extends the last one this witness cosigned (log signature, origin,
    RFC 6962 consistency proof), cosign it, and keep the cosignature in the trail so reports carry it. Exit 6,
    saying what differs, for a fork, a shrunk or rewritten log, or a checkpoint the log key did not sign."""

    def body() -> int:
        identity = witness.load(key, name)
        try:
            trusted = load_public_key(log_key.read_bytes())
        except VerifyError as exc:
            raise ConfigError(f"--log-key {log_key}: {exc}") from exc
        cfg = settings()
        with dbmod.connection(cfg) as conn:
            done = witness.cosign_with_state(identity, trusted, state, lambda old: cosignatures.offer(conn, old),
                                             origin=origin)
            kept = cosignatures.record(conn, done.note, done.line, identity.key.public_key(), identity.name)
        note = witness.add_cosignatures(done.note, [done.line])
        written = publish(note, out_dir) if out_dir is not None else None
        if as_json:
            emit_json({"witness": identity.name, "line": done.line, "note": note, "state": done.state.model_dump(),
                       "previous": done.previous.model_dump() if done.previous else None, "kept": kept,
                       "published_to": str(written) if written else None})
            return ExitCode.SUCCESS
        sys.stdout.write(note)
        before = f"from tree size {done.previous.size}" if done.previous else "first checkpoint seen"
        err.print(f"cosigned tree size {done.state.size} of {escape(done.state.origin)} ({before}) as "
                  f"{escape(identity.name)}; kept in the trail{'' if kept else ' (already)'}"
                  + (f"; appended to {escape(str(written))}" if written else ""), highlight=False, soft_wrap=True)
        return ExitCode.SUCCESS

    run(body)
