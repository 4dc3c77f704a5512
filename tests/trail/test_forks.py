"""Fork detection offline (issue 32 item 3): `trail consistency` reads every note of a witness file, and the
standalone verifier remembers the checkpoints it accepted (`--state`) and pins the log's name (`--origin`)."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from typer.testing import CliRunner

from engine.cli.main import app
from engine.trail import signing, standalone_verify
from engine.trail import store as audit_trail
from engine.trail import tree as trail_tree
from engine.trail.checkpoints import publish
from engine.trail.proofs import inclusion_bundle

runner = CliRunner()


def _cli(settings, *args: str):
    env = {"DATABASE_URL": settings.database_url, "EVIDENCE_HOME": str(settings.home)}
    return runner.invoke(app, list(args), env=env)


def _forked_note(trail, size: int, leaves: list[bytes] | None = None) -> str:
    """A note signed by the trail's own key (a stolen key, or a signer that equivocated) for another tree."""
    key = signing.load_existing(trail.settings.signing_key_file)
    origin = audit_trail.latest_note_checkpoint(trail.conn)["origin"]
    leaves = leaves or [hashlib.sha256(f"other {i}".encode()).digest() for i in range(size)]
    root = base64.b64encode(trail_tree.root(leaves)).decode()
    return signing.sign_note(key, origin, f"{origin}\n{size}\n{root}\n")


@pytest.mark.parametrize("forked_first", [True, False], ids=["fork-then-honest", "honest-then-fork"])
def test_consistency_reads_every_note_of_a_witness_file(trail, tmp_path, forked_first: bool) -> None:
    witness = tmp_path / "witness"
    honest = audit_trail.latest_note_checkpoint(trail.conn)["note"]
    for note in ((_forked_note(trail, 3), honest) if forked_first else (honest, _forked_note(trail, 3))):
        publish(note, witness)
    path = str(witness / "trail-checkpoints.txt")
    result = _cli(trail.settings, "trail", "consistency", path, "--json")
    outcome = json.loads(result.stdout)
    assert result.exit_code == 6 and not outcome["consistent"] and outcome["notes_checked"] == 2
    assert any(p.startswith("fork: ") and "both sign tree size 3" in p for p in outcome["problems"])
    human = _cli(trail.settings, "trail", "consistency", path)
    assert "INCONSISTENT" in human.output and "fork" in human.output


def test_consistency_of_an_honest_witness_file_with_several_notes(trail, tmp_path, embedder) -> None:
    witness = tmp_path / "witness"
    for row in audit_trail.checkpoints(trail.conn):
        publish(row["note"], witness)
    result = _cli(trail.settings, "trail", "consistency", str(witness / "trail-checkpoints.txt"), "--json")
    outcome = json.loads(result.stdout)
    assert result.exit_code == 0 and outcome["consistent"] and outcome["notes_checked"] == 4, outcome


def test_an_older_forked_note_is_caught_even_when_sizes_differ(trail, tmp_path) -> None:
    """A note of size 2 that the live log does not reproduce forks from it, whatever the last note says."""
    witness = tmp_path / "witness"
    publish(_forked_note(trail, 2), witness)
    publish(audit_trail.latest_note_checkpoint(trail.conn)["note"], witness)
    outcome = json.loads(_cli(trail.settings, "trail", "consistency", str(witness / "trail-checkpoints.txt"),
                              "--json").stdout)
    assert not outcome["consistent"] and "tree size 2 has root" in outcome["problem"]


def _bundle_files(trail, tmp_path, bundle: dict, name: str) -> list[str]:
    record = audit_trail.get(trail.conn, bundle["audit_id"])["canonical"]
    (tmp_path / f"{name}.json").write_text(json.dumps(bundle))
    (tmp_path / f"{name}.record.json").write_text(record)
    key = tmp_path / "trail-key.pem"
    key.write_text(signing.public_pem(signing.load_public(trail.settings.signing_key_file)))
    return ["--proof", str(tmp_path / f"{name}.json"), "--record", str(tmp_path / f"{name}.record.json"),
            "--public-key", str(key)]


def _forked_bundle(trail, honest: dict) -> dict:
    """The same record proven in another tree of the same size, under a checkpoint the same key signed."""
    leaves = [trail_tree.leaves([honest["record_hash"]])[0]] + [hashlib.sha256(b"x%d" % i).digest() for i in (1, 2)]
    return {**honest, "leaf_index": 0, "root_hash": trail_tree.root(leaves).hex(),
            "inclusion_path": [h.hex() for h in trail_tree.inclusion_proof(0, leaves)],
            "checkpoint": _forked_note(trail, 3, leaves)}


def test_standalone_state_refuses_a_fork_from_what_it_accepted(trail, tmp_path, capsys) -> None:
    state = tmp_path / "seen.txt"
    honest = inclusion_bundle(trail.conn, trail.settings, trail.audits[0].audit_id)
    args = _bundle_files(trail, tmp_path, honest, "honest")
    assert standalone_verify.main([*args, "--state", str(state)]) == 0
    assert "OK" in capsys.readouterr().out and standalone_verify.witness_notes(state.read_text())[0][1] == \
        honest["checkpoint"]
    assert standalone_verify.main([*args, "--state", str(state)]) == 0  # the same checkpoint again: not added
    assert len(standalone_verify.witness_notes(state.read_text())) == 1
    forked = _forked_bundle(trail, honest)
    fork_args = _bundle_files(trail, tmp_path, forked, "forked")
    assert standalone_verify.main(fork_args) == 0  # alone, the forked proof is a valid proof...
    capsys.readouterr()
    assert standalone_verify.main([*fork_args, "--state", str(state)]) == 6  # ...but not the log accepted before
    assert "fork:" in capsys.readouterr().err and len(standalone_verify.witness_notes(state.read_text())) == 1


def test_standalone_origin_is_pinned(trail, tmp_path, capsys) -> None:
    honest = inclusion_bundle(trail.conn, trail.settings, trail.audits[0].audit_id)
    args = _bundle_files(trail, tmp_path, honest, "honest")
    origin = audit_trail.latest_note_checkpoint(trail.conn)["origin"]
    assert standalone_verify.main([*args, "--origin", origin]) == 0
    assert standalone_verify.main([*args, "--origin", "example.com/another-log"]) == 6
    assert "expected 'example.com/another-log'" in capsys.readouterr().err
