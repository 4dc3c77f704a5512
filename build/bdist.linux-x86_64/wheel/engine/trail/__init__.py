"""The audit trail: records built from answered questions (record), appended to a hash chain in PostgreSQL
(store) with canonical bytes (canonical), a Merkle tree with signed checkpoints (tree, checkpoints, signing,
proofs), verification (verify), questions asked of it (queries) and reruns of stale audits (rerun)."""
