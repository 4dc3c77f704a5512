"""Batch runs of checklists: the checklist format (checklist), the run and its workers (runner) and the SQL of
batches, items and leases (store)."""
