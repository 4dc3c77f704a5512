"""`evidence trail witness init|cosign|request|add`: a witness of the trail (C2SP tlog-witness, cosignature/v1),
run with its own key, on another machine in production: against the engine's database, or without one, on a
request (the add-checkpoint body) made by `request` and its answer kept by `add`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from engine import db as dbmod
from engine.cli.common import FullHelpGroup, emit_json, err, run, settings
from engine.errors import ConfigError, ExitCode
from engine.trail import cosignatures, witness
from engine.trail.checkpoints import publish
from engine.trail.standalone_verify import VerifyError, load_public_key, load_witness_key

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
    request: Annotated[Path | None, typer.Option(
        "--request", help="Cosign this add-checkpoint request ('evidence trail witness request') instead of reading "
                          "the database; give the printed note to 'evidence trail witness add'", exists=True,
        dir_okay=False)] = None,
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
        kept = None
        if request is not None:
            done = witness.cosign_with_state(identity, trusted, state,
                                             witness.request_offer(request.read_text(encoding="utf-8")), origin=origin)
        else:
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
        where = "not kept yet: give this note to 'evidence trail witness add'" if kept is None else \
            f"kept in the trail{'' if kept else ' (already)'}"
        err.print(f"cosigned tree size {done.state.size} of {escape(done.state.origin)} ({before}) as "
                  f"{escape(identity.name)}; {where}"
                  + (f"; appended to {escape(str(written))}" if written else ""), highlight=False, soft_wrap=True)
        return ExitCode.SUCCESS

    run(body)


@witness_app.command("request")
def request_cmd(
    old: Annotated[int, typer.Option("--old", help="The tree size the witness last cosigned (0: never)", min=0)] = 0,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write the request to this file")] = None,
) -> None:
    """Print a C2SP tlog-witness add-checkpoint request for the latest checkpoint: `old <size>`, the consistency
    proof from that size, an empty line, the signed note. For a witness without access to the database."""

    def body() -> int:
        cfg = settings()
        with dbmod.connection(cfg) as conn:
            note, proof = cosignatures.offer(conn, old)
        text = witness.format_request(old, proof, note)
        if out_file is None:
            sys.stdout.write(text)
        else:
            out_file.write_text(text, encoding="utf-8")
            err.print(f"wrote {escape(str(out_file))}", highlight=False)
        return ExitCode.SUCCESS

    run(body)


@witness_app.command("add")
def add_cmd(
    file: Annotated[Path, typer.Argument(help="Cosigned notes ('witness cosign --request' output, or a witness file)",
                                         exists=True, dir_okay=False)],
    witness_key: Annotated[list[str], typer.Option("--witness-key", help="A witness's verifier key (or a file "
                                                                         "holding one) whose lines to keep")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Keep in the trail the cosignature lines of the pinned witnesses found in FILE, each verified with its key
    over a checkpoint this trail's key signed, so reports carry them. Exit 6 when none verifies."""

    def body() -> int:
        try:
            pins = [load_witness_key(Path(w).read_text() if Path(w).is_file() else w) for w in witness_key]
        except VerifyError as exc:
            raise ConfigError(str(exc)) from exc
        cfg = settings()
        with dbmod.connection(cfg) as conn:
            found = cosignatures.keep(conn, cfg, file.read_text(encoding="utf-8"), pins)
        if as_json:
            emit_json(found)
            return ExitCode.SUCCESS
        for f in found:
            err.print(f"tree size {f['tree_size']}: cosignature of {escape(f['witness'])} "
                      f"{'kept' if f['kept'] else 'kept before'}", highlight=False, soft_wrap=True)
        return ExitCode.SUCCESS

    run(body)
