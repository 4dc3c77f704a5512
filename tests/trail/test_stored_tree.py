"""The tree read from its stored perfect subtrees (issue 34, item 5): the same roots and the same proofs, byte
for byte, as the reference functions over every leaf, in O(log n) stored nodes, whatever the trail's size.

Without a database, `StoredTree` reads a dictionary of perfect subtrees computed by RFC 6962's definition; with
one, `trail_nodes` as the append trigger (sql/015) and its fill leave it.
"""

from __future__ import annotations

import random

import pytest

from engine.errors import IntegrityError
from engine.trail import store as audit_trail
from engine.trail import tree as trail_tree
from engine.trail.checkpoints import create_checkpoint
from engine.trail.record import build_amendment
from engine.trail.standalone_verify import leaf_hash, verify_consistency, verify_inclusion
from engine.trail.verify import verify_trail
from tests.trail.conftest import superuser
from tests.trail.test_trail_tree import HASHES, ROOTS, mth


def _defined_nodes(hashes: list[bytes]) -> dict[trail_tree.Node, bytes]:
    """Every perfect subtree by RFC 6962's MTH, independently of `tree.perfect_nodes`."""
    out = {}
    level = 0
    while (1 << level) <= len(hashes):
        width = 1 << level
        out.update({(level, i): mth(hashes[i * width:(i + 1) * width]) for i in range(len(hashes) // width)})
        level += 1
    return out


class Fetches:
    def __init__(self, nodes: dict[trail_tree.Node, bytes]) -> None:
        self.nodes, self.calls, self.read = nodes, 0, 0

    def __call__(self, wanted: list[trail_tree.Node]) -> dict[trail_tree.Node, bytes]:
        self.calls += 1
        self.read += len(wanted)
        return {n: self.nodes[n] for n in wanted if n in self.nodes}


def _stored(hashes: list[bytes]) -> tuple[trail_tree.StoredTree, Fetches]:
    fetch = Fetches(_defined_nodes(hashes))
    return trail_tree.StoredTree(len(hashes), fetch), fetch


def _hashes(n: int, seed: int = 0) -> list[bytes]:
    rng = random.Random(seed)
    return [leaf_hash(rng.randbytes(32)) for _ in range(n)]


def test_perfect_nodes_are_the_definition() -> None:
    for n in (0, 1, 2, 3, 7, 8, 9, 33):
        hashes = _hashes(n)
        assert trail_tree.perfect_nodes(hashes) == _defined_nodes(hashes)


@pytest.mark.parametrize("n", range(1, 9))
def test_rfc6962_vectors_from_stored_nodes(n: int) -> None:
    tree, _ = _stored(HASHES[:n])
    assert tree.root().hex() == ROOTS[n - 1]
    assert tree.roots(range(n + 1)) == trail_tree.roots_at(HASHES[:n], range(n + 1))
    assert tree.inclusion_proofs(range(n)) == [trail_tree.inclusion_proof(i, HASHES[:n]) for i in range(n)]
    for m in range(n + 1):
        assert tree.consistency_proof(m) == trail_tree.consistency_proof(m, HASHES[:n])


@pytest.mark.parametrize("n", range(1, 70))
def test_every_root_and_proof_equals_the_reference(n: int) -> None:
    hashes = _hashes(n, seed=n)
    tree, _ = _stored(hashes)
    assert tree.inclusion_proofs(range(n)) == [trail_tree.inclusion_proof(i, hashes) for i in range(n)]
    for m in range(n + 1):
        assert tree.consistency_proof(m) == trail_tree.consistency_proof(m, hashes)
        assert tree.consistency_proof(m, n - 1 if m < n else n) == trail_tree.consistency_proof(
            m, hashes[:n - 1 if m < n else n])


@pytest.mark.parametrize("seed", range(6))
def test_random_large_trees_agree_and_read_log_n_nodes(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randrange(1000, 5000)
    hashes = _hashes(n, seed)
    tree, fetch = _stored(hashes)
    root = tree.root()
    assert root == trail_tree.root(hashes) and fetch.read == n.bit_count() and fetch.calls == 1
    indices = [rng.randrange(n) for _ in range(20)]
    paths = tree.inclusion_proofs(indices)
    for index, path in zip(indices, paths, strict=True):
        assert path == trail_tree.inclusion_proof(index, hashes)
        assert verify_inclusion(hashes[index], index, n, path, root)
    for m in [rng.randrange(1, n) for _ in range(20)]:
        before = fetch.read
        proof = tree.consistency_proof(m)
        assert proof == trail_tree.consistency_proof(m, hashes)
        assert verify_consistency(m, n, tree.roots([m])[m], root, proof)
        assert fetch.read - before <= n.bit_length() ** 2


def test_a_missing_node_is_an_integrity_error() -> None:
    nodes = _defined_nodes(HASHES)
    del nodes[(1, 1)]
    with pytest.raises(IntegrityError, match=r"lacks node \(level 1, index 1\)"):
        trail_tree.StoredTree(8, Fetches(nodes)).inclusion_proofs([0])


@pytest.mark.parametrize(("lo", "hi"), [(1, 3), (2, 6)])
def test_ranges_rfc6962_never_makes_are_refused(lo: int, hi: int) -> None:
    with pytest.raises(ValueError):
        trail_tree.range_nodes(lo, hi)


# With the database: the trigger's nodes, the fill, and what checkpoints and verification make of them.

def _notes(trail, count: int) -> None:
    target = audit_trail.get(trail.conn, trail.audits[0].audit_id)
    for i in range(count):
        audit_trail.append(trail.conn, build_amendment(target, kind="note", reason=f"note {i}", text="", actor="t"))


def _live(trail) -> list[bytes]:
    return trail_tree.leaves(audit_trail.record_hashes(trail.conn))


def test_appends_store_exactly_the_perfect_subtrees(trail) -> None:
    _notes(trail, 30)
    leaves = _live(trail)
    assert len(leaves) == 33 and audit_trail.all_tree_nodes(trail.conn) == trail_tree.perfect_nodes(leaves)
    tree = audit_trail.stored_tree(trail.conn, len(leaves))
    assert tree.roots(range(34)) == trail_tree.roots_at(leaves, range(34))
    assert tree.inclusion_proofs(range(33)) == [trail_tree.inclusion_proof(i, leaves) for i in range(33)]
    assert [tree.consistency_proof(m) for m in range(34)] == [trail_tree.consistency_proof(m, leaves)
                                                            for m in range(34)]


def test_a_lagging_node_table_is_filled_on_read_and_on_append(trail) -> None:
    """Rows loaded with triggers off (a restore, the benchmark's COPY) leave the table behind; it catches up."""
    _notes(trail, 10)
    superuser(trail.conn, "DELETE FROM trail_nodes WHERE level > 0 OR idx >= 4")
    tree = audit_trail.stored_tree(trail.conn, 13)
    assert tree.root() == trail_tree.root(_live(trail))
    superuser(trail.conn, "DELETE FROM trail_nodes WHERE idx >= 1")
    _notes(trail, 1)
    assert audit_trail.all_tree_nodes(trail.conn) == trail_tree.perfect_nodes(_live(trail))
    assert create_checkpoint(trail.conn, trail.settings).root_hash == trail_tree.root(_live(trail)).hex()
    assert verify_trail(trail.conn, trail.settings).ok


@pytest.mark.parametrize("what", ["head-leaf", "inner-node"])
def test_an_altered_node_is_never_signed_and_verify_names_it(trail, what: str) -> None:
    _notes(trail, 5)  # 8 audits: the head is leaf 7, node (2, 1) covers audits 5..8
    node = (0, 7) if what == "head-leaf" else (2, 1)
    superuser(trail.conn, "UPDATE trail_nodes SET hash = %s WHERE level = %s AND idx = %s", (b"\x07" * 32, *node))
    if what == "head-leaf":
        with pytest.raises(IntegrityError, match="stored tree"):
            create_checkpoint(trail.conn, trail.settings)
    report = verify_trail(trail.conn, trail.settings)
    problem = next(p for p in report.problems if p.check == "tree")
    assert f"node (level {node[0]}, index {node[1]})" in problem.message and "differs" in problem.message


def test_a_node_made_up_ahead_of_its_leaf_stops_the_append(trail) -> None:
    """The writer role may INSERT: a node written before its leaf would be built on; the append refuses."""
    audit_trail.fill_nodes(trail.conn)
    with trail.conn.transaction():
        trail.conn.execute("SET LOCAL ROLE evidence_trail_writer")
        trail.conn.execute("INSERT INTO trail_nodes VALUES (0, 3, %s)", (b"\x01" * 32,))
    with pytest.raises(Exception, match="already holds node"):
        _notes(trail, 1)
    assert audit_trail.head(trail.conn)[0] == 3
