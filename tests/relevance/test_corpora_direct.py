"""bench/corpora.py counts direct answers that leave their quote's sentence, marked with an ellipsis or not."""

from __future__ import annotations

import pytest

from bench.corpora import direct_cuts

LONG = ("Convey the object code in a physical product, accompanied by a written offer, valid for at least three years, "
        "to give anyone who possesses the object code a copy of the source.")


@pytest.mark.parametrize(("direct", "cuts"), [
    # a clause of a long sentence, marked
    ("\u2026 a physical product, accompanied by a written offer, valid for at least three years \u2026 [REQ-P001].",
     (1, 0)),
    # ... the same clause unmarked
    ("A physical product, accompanied by a written offer, valid for at least three years [REQ-P001].", (0, 1)),
    # the whole sentence, and a list point without its label: no cut
    (f"{LONG[:-1]} [REQ-P001].", (0, 0)),
    ("Screens lock after ten minutes [REQ-P002].", (0, 0)),
    # both sides of a conflict, one cut
    ("The sources differ: screens lock after ten minutes [REQ-P002], while a physical product, accompanied by a "
     "written offer [REQ-P001].", (0, 1)),
    # a table row read under its header is not looked for
    ("Sev Rating: P0; SLA: 3 days [REQ-P003].", (0, 0)),
], ids=["marked", "unmarked", "whole", "list-point", "conflict", "table-row"])
def test_direct_answers_cut_inside_a_sentence_are_counted(direct: str, cuts: tuple[int, int]) -> None:
    row = {"direct": [direct], "cited": [{"id": "REQ-P001", "quote": LONG},
                                         {"id": "REQ-P002", "quote": "(b) Screens lock after ten minutes."},
                                         {"id": "REQ-P003", "quote": "| P0 | Highest | 3 days |"}]}
    assert direct_cuts(row) == cuts
