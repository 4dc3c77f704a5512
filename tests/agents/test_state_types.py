"""The typed rows in graph state (agents/state.py) name exactly the keys their makers write: an evidence
item is what `evidence_entry` builds, a requirement / judged / part row is its pydantic model dumped."""

from __future__ import annotations

import typing

import pytest
from pydantic import BaseModel

from agents.crossref import evidence_entry
from agents.extract import Requirement
from agents.select import Part, RankedChunk
from agents.state import EvidenceItem, JudgedRow, PartRow, RankedRow, RequirementRow
from agents.verify import JudgedRequirement
from engine.models import Chunk, Hit


def _keys(row: type) -> set[str]:
    return set(typing.get_type_hints(row))


@pytest.mark.parametrize(("row", "model"), [
    (RequirementRow, Requirement), (JudgedRow, JudgedRequirement), (PartRow, Part), (RankedRow, RankedChunk),
], ids=["requirement", "judged", "part", "ranked"])
def test_a_row_has_the_fields_of_its_model(row: type, model: type[BaseModel]) -> None:
    assert _keys(row) == set(model.model_fields)


def test_an_evidence_item_has_the_keys_evidence_entry_writes() -> None:
    chunk = Chunk(id="c1", document_id="doc_1", document_title="Rules", document_version=1, source_type="policy",
                  is_current=True, ordinal=0, section_number="4.2", section_path="4 > 4.2", section_heading="Records",
                  text="A firm must keep records.", char_start=0, char_end=25)
    searched = evidence_entry(chunk, score=0.5, query="records", hit=Hit(chunk=chunk, score=0.5, dense_rank=1))
    followed = evidence_entry(chunk, score=0.0, query="", via="section 4.2 (from c0)", depth=1)
    # a spreadsheet row's describing columns are written only for such a row (engine.ingest.sheets)
    assert set(searched) == set(followed) == _keys(EvidenceItem) - {"fields"}
    assert searched["dense_rank"] == 1 and followed["cross_reference"] == "section 4.2 (from c0)"
    row = chunk.model_copy(update={"metadata": {"fields": ["Level 1", "Testing Procedure(s)"]}})
    assert set(evidence_entry(row, score=0.5, query="records")) == _keys(EvidenceItem)


def test_a_row_differs_from_a_model_it_does_not_mirror() -> None:
    """The comparison above can fail: a row is not the dump of another model."""
    assert _keys(RequirementRow) != set(JudgedRequirement.model_fields)
    assert _keys(PartRow) != set(RankedChunk.model_fields)
