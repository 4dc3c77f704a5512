"""The trail as an RFC 6962 Merkle tree: roots, inclusion proofs and consistency proofs.

Leaf `i` (from 0) is the audit at seq `i + 1`; its leaf data is that audit's 32-byte record hash, so
its leaf hash is SHA-256(0x00 || record hash) and interior nodes are SHA-256(0x01 || left || right).
The tree of size n is RFC 6962's MTH(D[0:n]); the empty tree's root is SHA-256 of the empty string.

Proofs are built here from RFC 6962's own recursive definitions (PATH and SUBPROOF, section 2.1);
they are checked by `engine.report.standalone_verify` (RFC 9162's iterative algorithms), the code an outside
auditor runs, so the two sides are written independently and tested against each other.
Pure functions, no database: callers pass the leaf hashes (`audit_trail.record_hashes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.report.standalone_verify import EMPTY_ROOT, leaf_hash, node_hash


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
