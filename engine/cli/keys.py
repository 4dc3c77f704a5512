"""`evidence trail public-key` and `evidence trail rotate-key`: the trail's keys, by role (engine.trail.keyring)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from engine import db as dbmod
from engine.cli.common import emit_json, err, out, run, settings
from engine.errors import ConfigError, ExitCode
from engine.trail import keyring, rotation, signing
from engine.trail.checkpoints import origin_of, signing_key


def _write(text: str, out_file: Path | None) -> None:
    if out_file is None:
        sys.stdout.write(text)
        return
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(text)
    err.print(f"wrote {escape(str(out_file))}", highlight=False)


def public_key_cmd(
    vkey: Annotated[bool, typer.Option("--vkey", help="The C2SP note verifier key instead of PEM")] = False,
    certificates: Annotated[bool, typer.Option(
        "--certificates", help="The certificate key (it issues the report-signing certificate) instead of the "
                               "checkpoint key")] = False,
    every: Annotated[bool, typer.Option(
        "--all", help="The current key and every retired one (several PEM blocks): what verifiers need across a "
                      "rotation")] = False,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write it to this file")] = None,
) -> None:
    """Print the trail's public key (PEM): what an outside verifier needs. Created on first use (only while the
    log has no signed checkpoint: a lost key is restored, never replaced)."""

    def body() -> int:
        cfg = settings()
        if certificates:
            keys = keyring.cert_public_keys(cfg)
            if keys is None:
                raise ConfigError("this installation has no certificate key of its own: its checkpoint key issues "
                                  "the report certificate ('evidence trail public-key' prints it); 'evidence trail "
                                  "rotate-key --certificates' gives certificates a key")
            _write("".join(signing.public_pem(k) for k in (keys if every else keys[:1])), out_file)
            err.print(f"certificate key {keyring.cert_key_file(cfg)}; fingerprint (SHA-256) "
                      f"{signing.fingerprint(keys[0])}", highlight=False, soft_wrap=True)
            return ExitCode.SUCCESS
        with dbmod.connection(cfg) as conn:
            key, created = signing_key(conn, cfg)
        public = key.public_key()
        fp = signing.fingerprint(public)
        if vkey:
            text = signing.verifier_key(origin_of(cfg, fp), public) + "\n"
        else:
            text = "".join(signing.public_pem(k) for k in (keyring.public_keys(cfg) if every else [public]))
        _write(text, out_file)
        err.print(f"{'created ' if created else ''}key {cfg.signing_key_file}; fingerprint (SHA-256) {fp}",
                  highlight=False, soft_wrap=True)
        return ExitCode.SUCCESS

    run(body)


def rotate_key_cmd(
    certificates: Annotated[bool, typer.Option(
        "--certificates", help="Rotate the certificate key instead (on an installation with one key: give "
                               "certificates a key of their own)")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Replace the checkpoint key with a new one: the engine checks the log, signs a checkpoint with the new key
    and the old one, archives the old key in keys/retired/ and records the rotation in keys/key-history.jsonl.
    Give verifiers both public keys ('evidence trail public-key --all'). Exit 6 when the log fails its checks."""

    def body() -> int:
        cfg = settings()
        if certificates:
            done = rotation.rotate_cert_key(cfg)
        else:
            with dbmod.connection(cfg) as conn:
                done = rotation.rotate_checkpoint_key(conn, cfg)
        if as_json:
            emit_json(done)
            return ExitCode.SUCCESS
        what = "certificate" if certificates else "checkpoint"
        out.print(f"rotated the {what} key: {done['retired'][:16]}… retired, {done['new'][:16]}… in its place",
                  highlight=False)
        if not certificates:
            out.print(f"the checkpoint of tree size {done['tree_size']} is signed by both keys", highlight=False)
        for label in ("archived", "archived_identity"):
            if done.get(label):
                out.print(f"{label.replace('_', ' ')}: {escape(done[label])}", highlight=False, soft_wrap=True)
        err.print(f"recorded in {escape(str(keyring.history_path(cfg)))}; give verifiers the new public key too "
                  f"('evidence trail public-key{' --certificates' if certificates else ''} --all')",
                  highlight=False, soft_wrap=True)
        return ExitCode.SUCCESS

    run(body)
