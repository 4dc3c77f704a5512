"""Ingest into the real database: each format, idempotency, versions, bad files, sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.ingest.pipeline import ingest_paths
from engine.search import store
from tests.helpers import RETENTION_MD, write_docx, write_obliqa, write_pdf


def _one(conn, embedder, settings, path: Path, **kw):
    summary = ingest_paths(conn, embedder, settings, [path], **{"source_type": "regulation", **kw})
    assert len(summary.files) == 1
    return summary.files[0]


@pytest.mark.parametrize("fmt", ["md", "txt", "html", "pdf", "docx", "obliqa"])
def test_each_format_ingests_with_verbatim_offsets(conn, embedder, settings, tmp_path: Path, fmt: str) -> None:
    makers = {
        "md": lambda p: p.write_text(RETENTION_MD),
        "txt": lambda p: p.write_text("4.2 Retention periods\n\nA firm must retain records for six years."),
        "html": lambda p: p.write_text("<h2>4.2 Retention</h2><p>A firm must retain records for six years.</p>"),
        "pdf": lambda p: write_pdf(p, "<h2>4.2 Retention</h2><p>A firm must retain records for six years.</p>"),
        "docx": write_docx,
        "obliqa": write_obliqa,
    }
    path = tmp_path / f"doc.{ 'json' if fmt == 'obliqa' else fmt}"
    makers[fmt](path)
    result = _one(conn, embedder, settings, path)
    assert result.status == "added", result.error
    text = store.document_text(conn, result.document_id)
    chunks = store.chunks_of_document(conn, result.document_id)
    assert chunks
    for chunk in chunks:
        assert text[chunk.char_start:chunk.char_end] == chunk.text


def test_reingest_same_content_is_not_duplicated(conn, embedder, settings, tmp_path: Path) -> None:
    path = tmp_path / "reg.md"
    path.write_text(RETENTION_MD)
    first = _one(conn, embedder, settings, path, source_type="regulation")
    again = _one(conn, embedder, settings, path, source_type="regulation")
    assert (first.status, again.status) == ("added", "unchanged")
    assert again.document_id == first.document_id
    assert store.count_rows(conn)["documents"] == 1


def test_changed_content_makes_new_version_and_old_stays_readable(conn, embedder, settings, tmp_path: Path) -> None:
    path = tmp_path / "reg.md"
    path.write_text(RETENTION_MD)
    v1 = _one(conn, embedder, settings, path)
    path.write_text(RETENTION_MD.replace("six years", "seven years"))
    v2 = _one(conn, embedder, settings, path)
    assert (v2.status, v2.version) == ("new_version", 2)
    old = store.get_document(conn, v1.document_id)
    assert old is not None and not old.is_current and old.superseded_by == v2.document_id
    assert "six years" in store.document_text(conn, v1.document_id)
    versions = store.document_versions(conn, old.source_key)
    assert [d.version for d in versions] == [1, 2]
    old_chunks = store.chunks_of_document(conn, v1.document_id)
    assert old_chunks and not any(c.is_current for c in old_chunks)
    _assert_stats_consistent(conn)


def test_a_text_changed_back_is_current_again(conn, embedder, settings, tmp_path: Path) -> None:
    """A policy changed and then changed back: the old text is the current one again, in a version of its own
    (it was reported "unchanged" and the changed text stayed current)."""
    path = tmp_path / "reg.md"
    path.write_text(RETENTION_MD)
    v1 = _one(conn, embedder, settings, path)
    path.write_text(RETENTION_MD.replace("six years", "seven years"))
    _one(conn, embedder, settings, path)
    path.write_text(RETENTION_MD)
    v3 = _one(conn, embedder, settings, path)
    assert (v3.status, v3.version) == ("new_version", 3)
    assert v3.document_id != v1.document_id and "the text is that of version 1 again" in v3.notes
    assert store.get_document(conn, v3.document_id).metadata["same_text_as"] == v1.document_id
    current = store.current_document(conn, store.get_document(conn, v1.document_id).source_key)
    assert current is not None and current.id == v3.document_id
    assert "six years" in store.document_text(conn, v3.document_id)
    assert {c.id for c in store.chunks_of_document(conn, v1.document_id)}.isdisjoint(
        c.id for c in store.chunks_of_document(conn, v3.document_id))
    assert _one(conn, embedder, settings, path).status == "unchanged"
    _assert_stats_consistent(conn)


def test_a_text_read_into_other_chunks_is_a_new_version(conn, embedder, settings, tmp_path: Path) -> None:
    """The same text read into other chunks (a newer reader; here a smaller chunk size) is stored again as a new
    version, the old one kept for the audits that cite it; read as before, it is unchanged."""
    path = tmp_path / "reg.md"
    path.write_text(RETENTION_MD + "\n" + " ".join(["A firm must keep a log of each request it receives."] * 12) + "\n")
    v1 = _one(conn, embedder, settings, path)
    assert _one(conn, embedder, settings, path).status == "unchanged"
    small = settings.model_copy(update={"chunk_max_words": 40})
    v2 = _one(conn, embedder, small, path)
    assert (v2.status, v2.version) == ("new_version", 2) and v2.chunks > v1.chunks
    assert any(n.startswith("read again: the text is that of version 1") for n in v2.notes)
    assert store.get_document(conn, v2.document_id).metadata["same_text_as"] == v1.document_id
    assert not store.get_document(conn, v1.document_id).is_current
    assert _one(conn, embedder, small, path).status == "unchanged"
    _assert_stats_consistent(conn)


def test_the_same_text_under_another_name_is_stored_once(conn, embedder, settings, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(RETENTION_MD)
    (tmp_path / "b.md").write_text(RETENTION_MD)
    first = _one(conn, embedder, settings, tmp_path / "a.md")
    copy = _one(conn, embedder, settings, tmp_path / "b.md")
    assert (copy.status, copy.document_id) == ("unchanged", first.document_id)


def _assert_stats_consistent(conn) -> None:
    """The incrementally kept BM25 statistics equal a recount over current chunks."""
    truth = store.recount_lexical_stats(conn)
    n, avgdl = store.corpus_stats(conn)
    assert n == truth["n_chunks"]
    assert avgdl * n == pytest.approx(truth["sum_dl"])
    kept = dict(conn.execute("SELECT id, df FROM lexical_terms WHERE df > 0").fetchall())
    assert kept == truth["df"]


def test_bad_files_fail_alone_and_store_nothing(conn, embedder, settings, tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text(RETENTION_MD)
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4 garbage")
    (tmp_path / "x.bin").write_bytes(b"\x00\x01")
    summary = ingest_paths(conn, embedder, settings, [tmp_path, tmp_path / "missing.md"], source_type="regulation")
    status = {Path(f.path).name: (f.status, f.error) for f in summary.files}
    assert status["good.md"][0] == "added"
    for name in ("empty.txt", "bad.pdf", "x.bin", "missing.md"):
        assert status[name][0] == "failed" and status[name][1], name
    assert store.count_rows(conn)["documents"] == 1


def test_file_over_size_limit_is_refused(conn, embedder, settings, tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_text(RETENTION_MD)
    small = settings.model_copy(update={"max_file_bytes": 100})
    result = _one(conn, embedder, small, path)
    assert result.status == "failed" and "over the limit" in result.error
    assert store.count_rows(conn)["documents"] == 0


def test_failure_mid_transaction_leaves_nothing(conn, embedder, settings, tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "reg.md"
    path.write_text(RETENTION_MD)

    def boom(*args, **kwargs):
        raise RuntimeError("connection dropped")

    monkeypatch.setattr(store, "insert_postings", boom)
    with pytest.raises(RuntimeError):
        ingest_paths(conn, embedder, settings, [path], source_type="regulation")
    assert store.count_rows(conn) == {"documents": 0, "chunks": 0, "postings": 0, "lexical_terms": 0}
