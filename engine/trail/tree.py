"""The trail as an RFC 6962 Merkle tree: roots, inclusion proofs and consistency proofs.

Leaf `i` (from 0) is the audit at seq `i + 1`; its leaf data is that audit's 32-byte record hash, so
its leaf hash is SHA-256(0x00 || record hash) and interior nodes are SHA-256(0x01 || left || right).
The tree of size n is RFC 6962's MTH(D[0:n]); the empty tree's root is SHA-256 of the empty string.

Proofs are built here from RFC 6962's own recursive definitions (PATH and SUBPROOF, section 2.1);
they are checked by `engine.trail.merkle` (RFC 9162's iterative algorithms), part of the verifier an outside
auditor runs, so the two sides are written independently and tested against each other.
Two ways to the same hashes. The functions over a list of leaf hashes are the reference: pure, no
database, O(n) (`audit_trail.record_hashes`). `StoredTree` reads the perfect subtrees stored as they are
made (`trail_nodes`, sql/015): every hash RFC 6962 asks for is the MTH of a leaf range its recursion
makes, and such a range splits into at most log2(n) perfect subtrees, so a root costs O(log n) reads
and a proof O(log^2 n) at most, whatever the size of the trail. Both are tested equal, proof for proof.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from engine.errors import IntegrityError
from engine.trail.merkle import EMPTY_ROOT, leaf_hash, node_hash

Node = tuple[int, int]
"""(level, index): the perfect subtree of the 2**level leaves from index * 2**level on."""


def leaves(record_hashes: Iterable[str]) -> list[bytes]:
    """Leaf hashes of records given by their hex record hashes, in seq order."""
    return [leaf_hash(bytes.fromhex(h)) for h in record_hashes]


def _split(n: int) -> int:
    """The largest power of two smaller than n (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def root(hashes: Sequence[bytes]) -> bytes:
    """MTH of the leaf hashes: level by level, an odd last node is carried up (equal to RFC 6962's split)."""
    if not hashes:
        return EMPTY_ROOT
    level = list(hashes)
    while len(level) > 1:
        paired = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        level = paired + ([level[-1]] if len(level) % 2 else [])
    return level[0]


def roots_at(hashes: Sequence[bytes], sizes: Iterable[int]) -> dict[int, bytes]:
    """The root of every prefix size in `sizes` (each <= len(hashes)), in one pass over the leaves.

    Keeps the compact range (the perfect subtrees the prefix splits into, largest first); a prefix's
    root folds them from the right. O(n + k log n) for k sizes instead of O(n k).
    """
    wanted = sorted(set(sizes))
    if wanted and (wanted[0] < 0 or wanted[-1] > len(hashes)):
        raise ValueError(f"tree sizes {wanted[0]}..{wanted[-1]} outside 0..{len(hashes)}")
    out: dict[int, bytes] = {}
    stack: list[tuple[int, bytes]] = []  # (height, hash) of perfect subtrees, left to right
    pos = 0
    for size in wanted:
        while pos < size:
            height, node = 0, hashes[pos]
            while stack and stack[-1][0] == height:
                node = node_hash(stack.pop()[1], node)
                height += 1
            stack.append((height, node))
            pos += 1
        if not stack:
            out[size] = EMPTY_ROOT
            continue
        acc = stack[-1][1]
        for _, node in reversed(stack[:-1]):
            acc = node_hash(node, acc)
        out[size] = acc
    return out


def perfect_nodes(hashes: Sequence[bytes]) -> dict[Node, bytes]:
    """Every perfect subtree of the tree of `hashes`, level by level: what `trail_nodes` must hold."""
    out: dict[Node, bytes] = {}
    level, row = 0, list(hashes)
    while row:
        out.update(((level, i), h) for i, h in enumerate(row))
        row = [node_hash(row[i], row[i + 1]) for i in range(0, len(row) - 1, 2)]
        level += 1
    return out


def inclusion_proof(index: int, hashes: Sequence[bytes]) -> list[bytes]:
    """RFC 6962 PATH(m, D[n]): the audit path of leaf `index` in the tree of all `hashes`."""
    if not 0 <= index < len(hashes):
        raise ValueError(f"leaf {index} is not in a tree of size {len(hashes)}")
    return _path(index, hashes, 0, len(hashes))


def _path(m: int, hashes: Sequence[bytes], lo: int, hi: int) -> list[bytes]:
    n = hi - lo
    if n <= 1:
        return []
    k = _split(n)
    if m < k:
        return _path(m, hashes, lo, lo + k) + [root(hashes[lo + k:hi])]
    return _path(m - k, hashes, lo + k, hi) + [root(hashes[lo:lo + k])]


def consistency_proof(old_size: int, hashes: Sequence[bytes]) -> list[bytes]:
    """RFC 6962 PROOF(m, D[n]): shows the tree of `old_size` is a prefix of the tree of all `hashes`."""
    if not 0 <= old_size <= len(hashes):
        raise ValueError(f"tree size {old_size} is not within 0..{len(hashes)}")
    if old_size in (0, len(hashes)):
        return []
    return _subproof(old_size, hashes, 0, len(hashes), True)


def _subproof(m: int, hashes: Sequence[bytes], lo: int, hi: int, complete: bool) -> list[bytes]:
    n = hi - lo
    if m == n:
        return [] if complete else [root(hashes[lo:hi])]
    k = _split(n)
    if m <= k:
        return _subproof(m, hashes, lo, lo + k, complete) + [root(hashes[lo + k:hi])]
    return _subproof(m - k, hashes, lo + k, hi, False) + [root(hashes[lo:lo + k])]


def range_nodes(lo: int, hi: int) -> list[Node]:
    """The perfect subtrees that the leaf range [lo, hi) splits into, largest first: the binary digits of its
    length. The ranges RFC 6962's recursion makes start at a multiple of a power of two >= their length, so
    every piece is aligned and MTH(D[lo:hi]) is `fold` of the pieces."""
    out: list[Node] = []
    while lo < hi:
        level = (hi - lo).bit_length() - 1
        if lo % (1 << level):
            raise ValueError(f"leaves {lo}..{hi - 1} are not a range of an RFC 6962 tree")
        out.append((level, lo >> level))
        lo += 1 << level
    return out


def fold(hashes: Sequence[bytes]) -> bytes:
    """MTH of a range from its perfect subtrees (`range_nodes`), folded from the right."""
    if not hashes:
        return EMPTY_ROOT
    acc = hashes[-1]
    for node in reversed(hashes[:-1]):
        acc = node_hash(node, acc)
    return acc


def path_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """RFC 6962 PATH(index, D[0:size]) as leaf ranges, in proof order: proof item i is MTH of range i."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of size {size}")
    out, lo, hi = [], 0, size
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            out.append((lo + k, hi))
            hi = lo + k
        else:
            out.append((lo, lo + k))
            lo += k
    return out[::-1]


def subproof_ranges(old_size: int, size: int) -> list[tuple[int, int]]:
    """RFC 6962 PROOF(old_size, D[0:size]) as leaf ranges, in proof order."""
    if not 0 <= old_size <= size:
        raise ValueError(f"tree size {old_size} is not within 0..{size}")
    if old_size in (0, size):
        return []
    out, lo, hi, m, complete = [], 0, size, old_size, True
    while m != hi - lo:
        k = _split(hi - lo)
        if m <= k:
            out.append((lo + k, hi))
            hi = lo + k
        else:
            out.append((lo, lo + k))
            lo, m, complete = lo + k, m - k, False
    if not complete:
        out.append((lo, hi))
    return out[::-1]


class StoredTree:
    """The tree of `size` leaves as its stored perfect subtrees give it (sql/015, `trail_nodes`).

    `fetch(nodes)` returns the stored hashes of those nodes it has; each call below makes one fetch. A node
    that should be there and is not raises IntegrityError (the table was cut outside the engine).
    """

    def __init__(self, size: int, fetch: Callable[[list[Node]], Mapping[Node, bytes]]) -> None:
        self.size = size
        self._fetch = fetch

    def _ranges(self, ranges: Sequence[tuple[int, int]]) -> list[bytes]:
        pieces = [range_nodes(lo, hi) for lo, hi in ranges]
        wanted = sorted({node for piece in pieces for node in piece})
        got = self._fetch(wanted) if wanted else {}
        if missing := [n for n in wanted if n not in got]:
            level, index = missing[0]
            raise IntegrityError(f"the stored tree lacks node (level {level}, index {index}) of a tree of size "
                                 f"{self.size}: trail_nodes was cut outside the engine. Run 'evidence trail verify'")
        return [fold([got[n] for n in piece]) for piece in pieces]

    def _within(self, size: int) -> None:
        if not 0 <= size <= self.size:
            raise ValueError(f"tree size {size} is not within 0..{self.size}")

    def roots(self, sizes: Iterable[int]) -> dict[int, bytes]:
        """The root of each tree size in `sizes` (each <= size)."""
        wanted = sorted(set(sizes))
        for size in wanted:
            self._within(size)
        return dict(zip(wanted, self._ranges([(0, size) for size in wanted]), strict=True))

    def root(self) -> bytes:
        return self.roots([self.size])[self.size]

    def leaves(self, indices: Sequence[int]) -> list[bytes]:
        """The stored leaf hashes at `indices`."""
        for index in indices:
            if not 0 <= index < self.size:
                raise ValueError(f"leaf {index} is not in a tree of size {self.size}")
        return self._ranges([(i, i + 1) for i in indices])

    def inclusion_proofs(self, indices: Sequence[int]) -> list[list[bytes]]:
        """RFC 6962 PATH of each leaf index, in the tree of `size`."""
        paths = [path_ranges(index, self.size) for index in indices]
        flat = iter(self._ranges([r for path in paths for r in path]))
        return [[next(flat) for _ in path] for path in paths]

    def consistency_proof(self, old_size: int, size: int | None = None) -> list[bytes]:
        """RFC 6962 PROOF(old_size, D[0:size]); `size` defaults to the whole tree."""
        new = self.size if size is None else size
        self._within(new)
        return self._ranges(subproof_ranges(old_size, new))
