"""Witnesses (issue 32 item 2): C2SP tlog-witness checks and cosignature/v1 lines; `evidence trail witness`; reports
carrying the cosignatures; verifiers requiring N of them from pinned keys."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from typer.testing import CliRunner

from engine.cli.main import app
from engine.errors import ConfigError, InputError, IntegrityError
from engine.report.render import write_pdf
from engine.trail import signing, standalone_build, witness
from engine.trail import standalone_verify as sv
from engine.trail import store as audit_trail
from engine.trail import tree as trail_tree
from engine.trail.proofs import inclusion_bundle

runner = CliRunner()
ORIGIN = "example.com/test-log"

# A witness of the public witness network, as transparency-dev/formats pins it (note/note_cosigv1_test.go).
REMORA = "remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2"
# C2SP tlog-cosignature's example checkpoint with a witness's cosignature line.
SPEC_NOTE = ("example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n"
             "\u2014 example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gG"
             "zGku9nTo+zyWE+xeMcTOAYQ8=\n"
             "\u2014 witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1"
             "nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n")


class Log:
    """A small log signed with its own key: notes of any prefix, and consistency proofs between them."""

    def __init__(self, n: int = 12, salt: str = "") -> None:
        self.key = Ed25519PrivateKey.generate()
        self.leaves = [hashlib.sha256(f"{salt}leaf {i}".encode()).digest() for i in range(n)]

    def note(self, size: int, leaves: list[bytes] | None = None, origin: str = ORIGIN) -> str:
        root = base64.b64encode(trail_tree.root((leaves or self.leaves)[:size])).decode()
        return signing.sign_note(self.key, origin, f"{origin}\n{size}\n{root}\n")

    def proof(self, old: int, new: int) -> list[bytes]:
        return trail_tree.consistency_proof(old, self.leaves[:new])


def _witness(name: str) -> witness.Identity:
    return witness.Identity(name, Ed25519PrivateKey.generate())


def _pin(identity: witness.Identity) -> sv.WitnessKey:
    return sv.load_witness_key(identity.vkey)


def test_key_id_and_verifier_key_match_a_published_witness() -> None:
    name, key = sv.load_witness_key(REMORA)
    assert name == "remora.n621.de" and sv.note_key_id(name, key, sv.COSIG_ALG).hex() == "da77ade7"
    assert witness.verifier_key(name, key) == REMORA


def test_signed_message_is_the_spec_example() -> None:
    body = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    assert sv.cosignature_message(body, 1679315147) == (
        b"cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\n"
        b"CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n")
    blob = base64.b64decode(SPEC_NOTE.split(" ")[-1])  # the spec's line: key ID, then its example's timestamp
    assert len(blob) == 76 and int.from_bytes(blob[4:12], "big") == 1679315147


def test_unknown_signers_are_ignored_not_counted() -> None:
    """The spec's cosigned note: a pinned witness of the same name but another key neither counts nor fails."""
    good, bad = sv.cosigned_by(SPEC_NOTE, [_pin(_witness("witness.example.com/w1"))])
    assert good == [] and bad == []


@pytest.mark.parametrize("vkey, says", [
    ("not-a-key", "not a cosignature/v1 verifier key"),
    (REMORA.replace("da77ade7", "00000000"), "its key ID 00000000 is not the one"),
], ids=["garbage", "wrong-key-id"])
def test_bad_witness_keys_are_refused(vkey: str, says: str) -> None:
    with pytest.raises(sv.VerifyError, match=says):
        sv.load_witness_key(vkey)


def test_a_log_note_key_is_not_a_witness_key() -> None:
    """The trail's own vkey (type 0x01) pinned as a witness is refused: a log signature is no cosignature."""
    key = Ed25519PrivateKey.generate()
    with pytest.raises(sv.VerifyError, match="type 0x01 key is a log's note key"):
        sv.load_witness_key(signing.verifier_key("w1", key.public_key()))


def _cosigned(log: Log, size: int, *identities: witness.Identity) -> str:
    note = log.note(size)
    lines = [witness.cosign(w, note, log.proof(0, size), log.key.public_key(), None)[0] for w in identities]
    return witness.add_cosignatures(note, lines)


@pytest.mark.parametrize("cosigners, pinned, minimum, ok", [
    (1, 1, 1, True), (2, 2, 2, True), (2, 2, 1, True), (1, 2, 2, False), (0, 1, 1, False), (2, 3, 2, True),
], ids=["1-of-1", "2-of-2", "1-of-2-both-cosigned", "2-of-2-one-cosigned", "none-cosigned", "2-of-3"])
def test_cosign_then_require_n_witnesses(cosigners: int, pinned: int, minimum: int, ok: bool) -> None:
    log = Log()
    ws = [_witness(f"witness.example.com/w{i}") for i in range(1, 4)]
    note = _cosigned(log, 7, *ws[:cosigners])
    assert sv.verified_checkpoint(note, log.key.public_key()).size == 7  # the log's signature still verifies
    result = sv.Result(file="r", checkpoints=[note])
    sv.check_witnesses(result, [_pin(w) for w in ws[:pinned]], minimum)
    assert [c["name"] for c in result.witnesses[0]["cosigned_by"]] == [w.name for w in ws[:min(cosigners, pinned)]]
    assert (not result.problems) == ok, result.problems
    if not ok:
        missing = ", ".join(w.name for w in ws[cosigners:pinned])
        assert f"carries {cosigners} valid cosignature(s) from the pinned witnesses, {minimum} required (none from: " \
               f"{missing})" in result.problems[0]


def test_forged_and_misplaced_cosignatures_are_not_counted() -> None:
    log, w1, w2 = Log(), _witness("w1"), _witness("w2")
    note = log.note(7)
    impostor = witness.Identity("w1", Ed25519PrivateKey.generate())  # w1's name, another key: another key ID
    other = witness.cosign(w2, log.note(6), log.proof(0, 6), log.key.public_key(), None)[0]  # over another tree
    forged = base64.b64decode(other.split(" ")[2])
    forged_line = f"\u2014 w2 {base64.b64encode(forged[:12] + bytes(64)).decode()}"
    plain = signing.sign_note(w1.key, "w1", sv.split_note(note)[0]).splitlines()[-1]  # a note signature, not a cosig
    lines = [witness.cosign(impostor, note, log.proof(0, 7), log.key.public_key(), None)[0], plain]
    for extra in (other, forged_line):
        good, bad = sv.cosigned_by(witness.add_cosignatures(note, [*lines, extra]), [_pin(w1), _pin(w2)])
        assert good == [] and len(bad) == 1 and "witness w2 does not verify" in bad[0]


def test_add_cosignatures_keeps_one_line_per_key() -> None:
    log, w1 = Log(), _witness("w1")
    note = log.note(5)
    first = witness.cosign(w1, note, [], log.key.public_key(), None, now=1_700_000_000)[0]
    again = witness.cosign(w1, note, [], log.key.public_key(), None, now=1_700_000_060)[0]
    both = witness.add_cosignatures(note, [first, again])
    assert both == note + first + "\n" and witness.add_cosignatures(both, [again]) == both


def _state(path: Path, log: Log, w: witness.Identity, size: int, note: str | None = None) -> witness.Cosigned:
    """`w` offered `note` (default: the honest one of `size`) with the honest consistency proof from its state."""
    return witness.cosign_with_state(w, log.key.public_key(), path, lambda old: (
        note or log.note(size), log.proof(old, size) if old <= size else []))


def test_witness_follows_a_growing_log(tmp_path) -> None:
    log, w1, state = Log(), _witness("w1"), tmp_path / "w1.state"
    first = _state(state, log, w1, 4)
    assert first.previous is None and witness.read_state(state).size == 4
    again = _state(state, log, w1, 4)  # the same checkpoint again: cosigned again
    grown = _state(state, log, w1, 11)
    assert again.previous.size == 4 and grown.previous.size == 4 and witness.read_state(state).size == 11
    assert sv.cosigned_by(witness.add_cosignatures(grown.note, [grown.line]), [_pin(w1)])[0][0]["name"] == "w1"


FORKED = Log(12, salt="forked ")


@pytest.mark.parametrize("size, note, says", [
    (7, lambda log: log.note(7, FORKED.leaves), "fork: offered tree size 7 with root"),
    (5, lambda log: log.note(5), "the log shrank: offered tree size 5, but this witness cosigned tree size 7"),
    (9, lambda log: log.note(9, log.leaves[:3] + FORKED.leaves[3:]), "does not extend what this witness cosigned"),
    (9, lambda log: FORKED.note(9), "not cosigned: the checkpoint is not signed by the given public key"),
    (9, lambda log: log.note(9, origin="example.com/other-log"), "names the log 'example.com/other-log'"),
], ids=["fork-same-size", "shrunk", "rewritten", "other-log-key", "other-origin"])
def test_witness_refuses_and_keeps_its_state(tmp_path, size: int, note, says: str) -> None:
    log, w1, state = Log(), _witness("w1"), tmp_path / "w1.state"
    _state(state, log, w1, 7)
    before = state.read_text()
    with pytest.raises(IntegrityError, match=says):
        _state(state, log, w1, size, note=note(log))
    assert state.read_text() == before


def test_state_of_another_log_key_is_refused(tmp_path) -> None:
    log, other, w1, state = Log(), Log(), _witness("w1"), tmp_path / "w1.state"
    _state(state, log, w1, 3)
    with pytest.raises(ConfigError, match="kept for the log key"):
        witness.cosign_with_state(w1, other.key.public_key(), state, lambda old: (other.note(3), []))


def test_requests_round_trip_and_malformed_ones_are_refused() -> None:
    log = Log()
    body = witness.format_request(4, log.proof(4, 9), log.note(9))
    assert body.startswith("old 4\n") and witness.parse_request(body) == (4, log.proof(4, 9), log.note(9))
    for bad in (body.replace("old 4", "old 04"), body.replace("old 4", "old 10"),
                "old 0\nnot base64!\n\n" + log.note(9), body.replace("\n\n", "\n", 1)):
        with pytest.raises(InputError, match="not a tlog-witness add-checkpoint request"):
            witness.parse_request(bad)


def test_a_request_from_another_size_names_the_witness_size(tmp_path) -> None:
    """C2SP's 409: the witness says which size it last cosigned, and the log asks again from there."""
    log, w1, state = Log(), _witness("w1"), tmp_path / "w1.state"
    _state(state, log, w1, 4)
    stale = witness.request_offer(witness.format_request(0, [], log.note(9)))
    with pytest.raises(InputError, match="this witness last cosigned tree size 4: .*request --old 4"):
        witness.cosign_with_state(w1, log.key.public_key(), state, stale)
    done = witness.cosign_with_state(w1, log.key.public_key(), state,
                                     witness.request_offer(witness.format_request(4, log.proof(4, 9), log.note(9))))
    assert done.state.size == 9


# --- against the trail ----------------------------------------------------------------------------------------

def _cli(settings, *args: str):
    env = {"DATABASE_URL": settings.database_url, "EVIDENCE_HOME": str(settings.home)}
    return runner.invoke(app, list(args), env=env)


def _setup(trail, tmp_path, *names: str) -> tuple[Path, dict[str, str]]:
    log_key = tmp_path / "trail-key.pem"
    assert _cli(trail.settings, "trail", "public-key", "--out", str(log_key)).exit_code == 0
    vkeys = {}
    for name in names:
        made = _cli(trail.settings, "trail", "witness", "init", "--key", str(tmp_path / f"{name}.key"),
                    "--name", f"witness.example.com/{name}")
        assert made.exit_code == 0, made.output
        vkeys[name] = made.stdout.strip()
        assert (tmp_path / f"{name}.key.vkey").read_text().strip() == vkeys[name]
    return log_key, vkeys


def _cosign(trail, tmp_path, log_key: Path, name: str, *extra: str):
    return _cli(trail.settings, "trail", "witness", "cosign", "--key", str(tmp_path / f"{name}.key"),
                "--state", str(tmp_path / f"{name}.state"), "--log-key", str(log_key), *extra)


def _standalone(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """The auditor's run: the one-file verifier as the operator writes it, no engine on the path."""
    script = folder / "evidence_verify.py"
    if not script.exists():
        standalone_build.main([str(script)])
    return subprocess.run([sys.executable, "-I", str(script), *args],
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})


def test_witnesses_cosign_the_trail_and_proofs_carry_their_lines(trail, tmp_path) -> None:
    log_key, vkeys = _setup(trail, tmp_path, "w1", "w2", "w3")
    first = _cosign(trail, tmp_path, log_key, "w1", "--out", str(tmp_path / "published"), "--json")
    assert first.exit_code == 0, first.output
    done = json.loads(first.stdout)
    assert done["state"]["size"] == 3 and done["previous"] is None and done["kept"]
    assert done["note"].endswith(done["line"] + "\n")
    assert (tmp_path / "published" / "trail-checkpoints.txt").read_text() == done["note"]
    human = _cosign(trail, tmp_path, log_key, "w2")
    assert human.exit_code == 0 and "cosigned tree size 3" in human.output
    lines = audit_trail.cosignature_lines(trail.conn, done["state"]["origin"], 3, done["state"]["root_hash"])
    assert len(lines) == 2 and lines[0] == done["line"]
    bundle = inclusion_bundle(trail.conn, trail.settings, trail.audits[0].audit_id)
    assert bundle["checkpoint"].count("\u2014 witness.example.com/") == 2
    proof, record = tmp_path / "proof.json", tmp_path / "record.json"
    proof.write_text(json.dumps(bundle))
    record.write_text(audit_trail.get(trail.conn, trail.audits[0].audit_id)["canonical"])
    base = ["--proof", str(proof), "--record", str(record), "--public-key", str(log_key)]
    ok = _standalone(tmp_path, *base, "--witness-key", vkeys["w1"], "--witness-key", str(tmp_path / "w2.key.vkey"),
                     "--json")
    assert ok.returncode == 0, ok.stderr
    assert [c["name"] for c in json.loads(ok.stdout)["witnesses"][0]["cosigned_by"]] == [
        "witness.example.com/w1", "witness.example.com/w2"]
    every = [a for v in vkeys.values() for a in ("--witness-key", v)]
    two_of_three = _standalone(tmp_path, *base, *every, "--min-witnesses", "2")
    assert two_of_three.returncode == 0 and "cosigned by witness.example.com/w1" in two_of_three.stdout
    missing = _standalone(tmp_path, *base, "--witness-key", vkeys["w1"], "--witness-key", vkeys["w3"])
    assert missing.returncode == 6
    assert "1 valid cosignature(s) from the pinned witnesses, 2 required (none from: witness.example.com/w3)" in \
        missing.stderr
    usage = _standalone(tmp_path, *base, "--witness-key", vkeys["w1"], "--min-witnesses", "2")
    assert usage.returncode == 2 and "--min-witnesses 2 needs at least that many --witness-key" in usage.stderr


def test_a_witness_refuses_a_forked_trail(trail, tmp_path) -> None:
    """The trail's key signs another root for the tree size a witness cosigned (a stolen key, an equivocating
    host): the witness says so, exits 6, and keeps its state."""
    log_key, _ = _setup(trail, tmp_path, "w1")
    assert _cosign(trail, tmp_path, log_key, "w1").exit_code == 0
    state = (tmp_path / "w1.state").read_text()
    latest = audit_trail.latest_note_checkpoint(trail.conn)
    origin, leaves = latest["origin"], [hashlib.sha256(f"other {i}".encode()).digest() for i in range(3)]
    root = trail_tree.root(leaves)
    key = signing.load_existing(trail.settings.signing_key_file)
    body = f"{origin}\n3\n{base64.b64encode(root).decode()}\n"
    note = signing.sign_note(key, origin, body)
    audit_trail.insert_checkpoint(trail.conn, seq=3, head_hash=latest["head_hash"], signed_at=latest["signed_at"],
                                  key_fingerprint=latest["key_fingerprint"], payload=body,
                                  signature=sv.split_note(note)[1][0][1][4:].hex(), format="c2sp-note",
                                  root_hash=root.hex(), origin=origin, note=note)
    refused = _cosign(trail, tmp_path, log_key, "w1")
    assert refused.exit_code == 6
    assert "fork: offered tree size 3 with root" in refused.output and "two roots for one tree size" in refused.output
    assert (tmp_path / "w1.state").read_text() == state


def test_cosignatures_are_append_only(trail, tmp_path) -> None:
    log_key, _ = _setup(trail, tmp_path, "w1")
    assert _cosign(trail, tmp_path, log_key, "w1").exit_code == 0
    for statement in ("UPDATE trail_cosignatures SET line = line", "DELETE FROM trail_cosignatures",
                      "TRUNCATE trail_cosignatures"):
        for role in ("SET LOCAL ROLE evidence_trail_writer", "SELECT 1"):  # the writer role, then the owner
            with pytest.raises(psycopg.Error), trail.conn.transaction():
                trail.conn.execute(role)
                trail.conn.execute(statement)


def test_reports_carry_cosignatures_and_verifiers_can_require_them(trail, tmp_path) -> None:
    log_key, vkeys = _setup(trail, tmp_path, "w1", "w2")
    audit = trail.audits[1].audit_id
    before = write_pdf(trail.conn, audit, tmp_path / "before.pdf", settings=trail.settings)  # not witnessed yet
    cosigned = _cosign(trail, tmp_path, log_key, "w1", "--json")
    size = json.loads(cosigned.stdout)["state"]["size"]
    after = write_pdf(trail.conn, audit, tmp_path / "after.pdf", settings=trail.settings)
    again = write_pdf(trail.conn, audit, tmp_path / "again.pdf", settings=trail.settings)
    # issuing a report appends a record and a checkpoint; later reports still use the cosigned checkpoint
    assert audit_trail.latest_note_checkpoint(trail.conn)["seq"] == size + 2
    pin = ["--public-key", str(log_key), "--witness-key", vkeys["w1"]]
    for path in (after, again):
        ok = _cli(trail.settings, "report", "verify", str(path), *pin)
        assert ok.exit_code == 0, ok.output
        assert f"WITNESSED tree size {size}: cosigned by witness.example.com/w1" in ok.output and "ISSUED" in ok.output
    unwitnessed = _cli(trail.settings, "report", "verify", str(before), "--offline", *pin)
    assert unwitnessed.exit_code == 6 and "NOT WITNESSED" in unwitnessed.output
    assert "0 valid cosignature(s) from the pinned witnesses, 1 required (none from: witness.example.com/w1)" in \
        unwitnessed.output
    both = _cli(trail.settings, "report", "verify", str(after), "--offline", *pin, "--witness-key", vkeys["w2"],
                "--json")
    outcome = json.loads(both.stdout)
    assert both.exit_code == 6 and outcome["witnesses"][0]["required"] == 2
    assert any("none from: witness.example.com/w2" in p for p in outcome["problems"])
    assert _standalone(tmp_path, str(after), *pin).returncode == 0
    assert _standalone(tmp_path, str(before), *pin).returncode == 6
    no_witness = _standalone(tmp_path, str(before), "--public-key", str(log_key))
    assert no_witness.returncode == 0  # no witness required: as before


def test_a_witness_without_the_database_answers_a_request(trail, tmp_path) -> None:
    """The log writes a request, the witness (no database) cosigns it, the log keeps the answer."""
    log_key, vkeys = _setup(trail, tmp_path, "w1", "w2")
    request = tmp_path / "request.txt"
    assert _cli(trail.settings, "trail", "witness", "request", "--out", str(request)).exit_code == 0
    offline = {"DATABASE_URL": "postgresql://nobody@127.0.0.1:9/none", "EVIDENCE_HOME": str(tmp_path / "elsewhere")}
    answer = runner.invoke(app, ["trail", "witness", "cosign", "--key", str(tmp_path / "w1.key"), "--state",
                                 str(tmp_path / "w1.state"), "--log-key", str(log_key), "--request", str(request)],
                           env=offline)
    assert answer.exit_code == 0 and "not kept yet" in answer.output, answer.output
    cosigned = tmp_path / "cosigned.txt"
    cosigned.write_text(answer.stdout)
    wrong = _cli(trail.settings, "trail", "witness", "add", str(cosigned), "--witness-key", vkeys["w2"])
    assert wrong.exit_code == 6 and "no cosignature of a pinned witness verifies" in wrong.output
    added = _cli(trail.settings, "trail", "witness", "add", str(cosigned), "--witness-key", vkeys["w1"], "--json")
    assert added.exit_code == 0 and json.loads(added.stdout) == [{"tree_size": 3, "witness": "witness.example.com/w1",
                                                                   "kept": True}]
    bundle = inclusion_bundle(trail.conn, trail.settings, trail.audits[2].audit_id)
    assert bundle["checkpoint"] == answer.stdout
    # the next request starts from the size the witness cosigned; an older one is refused, naming that size
    stale = runner.invoke(app, ["trail", "witness", "cosign", "--key", str(tmp_path / "w1.key"), "--state",
                                str(tmp_path / "w1.state"), "--log-key", str(log_key), "--request", str(request)],
                          env=offline)
    assert stale.exit_code == 2 and "request --old 3" in stale.output
