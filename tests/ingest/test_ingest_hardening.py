"""Ingest against hostile or careless input: fuzzed files, huge unbroken text, symlinks leaving the
folder, DOCX entities, extension-less text, parser warnings and odd file names."""

from __future__ import annotations

import io
import json
import os
import random
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from engine.errors import IngestError
from engine.ingest.chunking import CHARS_PER_WORD, chunk_document
from engine.ingest.files import find_files
from engine.ingest.formats import ParsedDocument, parse
from engine.ingest.pipeline import IngestProgress, ingest_paths
from engine.search import store
from tests.helpers import RETENTION_MD, write_docx, write_obliqa, write_pdf

FUZZ_SEED = 1313
FUZZ_ROUNDS = 25  # per format; every round is one mutated file


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """One valid file of each fuzzed format."""
    folder = tmp_path_factory.mktemp("fuzz-fixtures")
    html = ("<html><head><title>Retention</title></head><body><h2>4.2 Retention</h2>"
            "<p>A firm must retain records for six years.</p><ul><li>Access is restricted.</li></ul></body></html>")
    return {
        "pdf": write_pdf(folder / "a.pdf", "<h2>4.2 Retention</h2><p>A firm must retain records for six years.</p>"
                         ).read_bytes(),
        "docx": write_docx(folder / "a.docx").read_bytes(),
        "html": html.encode(),
        "json": write_obliqa(folder / "a.json").read_bytes(),
    }


def _rezip(data: bytes, rng: random.Random) -> bytes:
    """The DOCX with one of its entries corrupted, dropped or replaced by broken XML."""
    source = zipfile.ZipFile(io.BytesIO(data))
    names = source.namelist()
    target = rng.choice([n for n in names if n.endswith(".xml") or n.endswith(".rels")])
    how = rng.choice(["truncate", "garbage", "unclosed", "drop", "wrong-root", "entity"])
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dest:
        for item in source.infolist():
            body = source.read(item.filename)
            if item.filename == target:
                if how == "drop":
                    continue
                body = {
                    "truncate": body[: rng.randrange(1, max(2, len(body)))],
                    "garbage": body[: len(body) // 2] + bytes(rng.randrange(256) for _ in range(40)),
                    "unclosed": body.replace(b"</", b"<", 3),
                    "wrong-root": b'<?xml version="1.0"?><unexpected xmlns="urn:x"><a/></unexpected>',
                    "entity": body.replace(b"?>", b'?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>', 1)
                              .replace(b"<w:t>", b"<w:t>&e;", 1),
                }[how]
            dest.writestr(item, body)
    return out.getvalue()


def _mutate(data: bytes, fmt: str, rng: random.Random) -> bytes:
    """Truncate, flip bytes, insert junk, or (DOCX) corrupt a zip entry or the zip structure itself."""
    kinds = ["truncate", "flip", "insert"] + (["entry", "entry", "zip-header"] if fmt == "docx" else [])
    kind = rng.choice(kinds)
    if kind == "truncate":
        return data[: rng.randrange(1, len(data))]
    if kind == "insert":
        at = rng.randrange(len(data))
        return data[:at] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) + data[at:]
    if kind == "entry":
        return _rezip(data, rng)
    mutable = bytearray(data)
    region = range(len(data) - min(len(data), 200), len(data)) if kind == "zip-header" else range(len(data))
    for _ in range(rng.randrange(1, 12)):
        mutable[rng.choice(region)] = rng.randrange(256)
    return bytes(mutable)


@pytest.mark.parametrize("fmt", ["pdf", "docx", "html", "json"])
def test_fuzzed_files_never_raise_anything_but_an_ingest_error(fixtures: dict[str, bytes], tmp_path: Path,
                                                               fmt: str) -> None:
    rng = random.Random(f"{FUZZ_SEED}-{fmt}")
    path = tmp_path / f"fuzzed.{fmt}"
    outcomes = {"parsed": 0, "refused": 0}
    for _ in range(FUZZ_ROUNDS):
        data = _mutate(fixtures[fmt], fmt, rng)
        try:
            parsed = parse(path, data)
        except IngestError as exc:  # anything else fails the test: an uncaught exception
            message = str(exc)
            assert str(path) in message and "\n" not in message and exc.reason
            outcomes["refused"] += 1
        else:
            assert isinstance(parsed, ParsedDocument) and parsed.text.strip()
            assert "root:" not in parsed.text  # an external entity is never resolved
            outcomes["parsed"] += 1
    assert sum(outcomes.values()) == FUZZ_ROUNDS
    assert outcomes["refused"] > 0, "the mutations should break at least some files"


def test_fuzzed_folder_ingest_goes_on_and_keeps_the_good_files(conn, embedder, settings, fixtures,
                                                               tmp_path: Path) -> None:
    rng = random.Random(FUZZ_SEED)
    (tmp_path / "good.md").write_text(RETENTION_MD)
    for fmt in ("pdf", "docx", "html", "json"):
        for i in range(3):
            (tmp_path / f"bad-{fmt}-{i}.{fmt}").write_bytes(_mutate(fixtures[fmt], fmt, rng))
    (tmp_path / "wrong-root.docx").write_bytes(_rezip(fixtures["docx"], _FixedChoice("wrong-root")))
    summary = ingest_paths(conn, embedder, settings, [tmp_path], source_type="regulation")
    by_name = {Path(f.path).name: f for f in summary.files}
    assert len(by_name) == 14 and by_name["good.md"].status == "added"
    assert by_name["wrong-root.docx"].status == "failed" and "AttributeError" in by_name["wrong-root.docx"].error
    for result in summary.files:
        assert result.status != "failed" or (result.error and "\n" not in result.error)
    assert store.count_rows(conn)["documents"] == summary.documents >= 1


class _FixedChoice(random.Random):
    """A Random whose choice() picks the named corruption (and the document part) for `_rezip`."""

    def __init__(self, how: str) -> None:
        super().__init__(0)
        self.how = how

    def choice(self, seq):  # type: ignore[override]
        if self.how in seq:
            return self.how
        return "word/document.xml" if "word/document.xml" in seq else seq[0]


# --- huge and unbroken text, chunk cap, per-file commits, progress ------------------------------------

def _txt(text: str) -> ParsedDocument:
    return parse(Path("big.txt"), text.encode())


@pytest.mark.parametrize(("text", "cut_after"), [
    ("x" * 20_000, None),                                                          # no space at all
    (", ".join(["a firm must keep records of each client transaction"] * 400), ","),  # no sentence end
    ("\n".join(["| col a | col b | col c | col d | col e |"] * 400), None),          # a flattened table
], ids=["no-space", "clauses", "table"])
def test_unbroken_text_is_cut_into_bounded_verbatim_chunks(text: str, cut_after: str | None) -> None:
    parsed = _txt(text)
    drafts = chunk_document("doc_x", parsed, max_words=40)
    assert len(drafts) > 1
    for draft in drafts:
        assert parsed.text[draft.char_start:draft.char_end] == draft.text
        assert len(draft.text) <= 40 * CHARS_PER_WORD and len(draft.text.split()) <= 40
    if cut_after:
        assert all(d.text.endswith(cut_after) for d in drafts[:-1])


def test_ordinary_sentences_are_not_cut() -> None:
    parsed = _txt("A firm must keep records. " * 5)
    drafts = chunk_document("doc_x", parsed, max_words=160)
    assert [d.text for d in drafts] == [parsed.text]


def test_file_over_the_chunk_cap_is_refused_and_the_others_go_in(conn, embedder, settings, tmp_path: Path) -> None:
    (tmp_path / "a-good.md").write_text(RETENTION_MD)
    (tmp_path / "b-long.txt").write_text(" ".join(["word"] * 2000))  # one line, no sentence end
    capped = settings.model_copy(update={"max_chunks_per_file": 5, "chunk_max_words": 100})
    summary = ingest_paths(conn, embedder, capped, [tmp_path], source_type="regulation")
    results = {Path(f.path).name: f for f in summary.files}
    assert results["a-good.md"].status == "added"
    assert results["b-long.txt"].status == "failed"
    assert "20 chunks, over the limit of 5 per file" in results["b-long.txt"].error
    assert "EVIDENCE_MAX_CHUNKS_PER_FILE" in results["b-long.txt"].error


def test_under_the_cap_is_ingested(conn, embedder, settings, tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text(" ".join(["word"] * 2000))
    capped = settings.model_copy(update={"max_chunks_per_file": 20, "chunk_max_words": 100})
    result = ingest_paths(conn, embedder, capped, [tmp_path], source_type="regulation").files[0]
    assert (result.status, result.chunks) == ("added", 20)


class _DiesOn:
    """An embedder that fails (like a killed run) when it meets a marker word."""

    def __init__(self, embedder, marker: str) -> None:
        self.inner, self.marker, self.dim = embedder, marker, embedder.dim
        self.identity = embedder.identity

    def encode(self, texts: list[str]) -> np.ndarray:
        if any(self.marker in t for t in texts):
            raise KeyboardInterrupt("killed while embedding the big file")
        return self.inner.encode(texts)


def test_files_finished_before_a_crash_are_kept(conn, embedder, settings, tmp_path: Path) -> None:
    (tmp_path / "a-small.md").write_text(RETENTION_MD)
    (tmp_path / "b-big.txt").write_text(" ".join(f"Zebra rule {i} applies to every firm." for i in range(300)))
    with pytest.raises(KeyboardInterrupt):
        ingest_paths(conn, _DiesOn(embedder, "Zebra"), settings, [tmp_path], embed_batch_chunks=5,
                     source_type="regulation")
    titles = [d.title for d in store.list_documents(conn)]
    assert titles == ["Test Retention Regulation"]


def test_progress_reports_files_chunks_rate_and_eta(conn, embedder, settings, tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / f"doc{i}.md").write_text(RETENTION_MD.replace("six years", f"{i + 6} years"))
    seen: list[IngestProgress] = []
    summary = ingest_paths(conn, embedder, settings, [tmp_path], on_progress=seen.append, source_type="regulation")
    assert seen and seen[-1].files_done == seen[-1].files_total == 3
    assert seen[-1].chunks_done == summary.chunks and seen[-1].bytes_done == seen[-1].bytes_total
    assert [p.chunks_done for p in seen] == sorted(p.chunks_done for p in seen)
    assert seen[-1].eta_seconds == 0 and seen[-1].chunks_per_second > 0


def test_progress_eta_is_unknown_before_any_work() -> None:
    start = IngestProgress(files_done=0, files_total=2, chunks_done=0, bytes_done=0, bytes_total=100, seconds=1.0)
    half = start.model_copy(update={"bytes_done": 50, "seconds": 10.0})
    assert start.eta_seconds is None and half.eta_seconds == pytest.approx(10.0)


# --- symlinks ------------------------------------------------------------------------------------------

@pytest.fixture()
def linked_folder(tmp_path: Path) -> tuple[Path, Path]:
    """A folder with a good file, a link to a secret outside it, a link inside it and a link loop."""
    root, outside = tmp_path / "corpus", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "reg.md").write_text(RETENTION_MD)
    secret = outside / "passwd.txt"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    (root / "passwd-link.txt").symlink_to(secret)
    (root / "inside-link.md").symlink_to(root / "reg.md")
    (root / "sub").mkdir()
    (root / "sub" / "loop").symlink_to(root, target_is_directory=True)
    (root / "outside-dir").symlink_to(outside, target_is_directory=True)
    return root, secret


def test_links_leaving_the_folder_are_refused_and_named(linked_folder: tuple[Path, Path]) -> None:
    root, secret = linked_folder
    found = {f.path.name: f.refused for f in find_files([root])}
    assert found["reg.md"] is None and found["inside-link.md"] is None
    for name in ("passwd-link.txt", "outside-dir"):
        assert str(secret.parent) in found[name] and "--follow-symlinks" in found[name]
    assert "passwd.txt" not in found  # the loop back into the root is walked once, nothing outside is read


def test_follow_symlinks_reads_them(linked_folder: tuple[Path, Path]) -> None:
    root, _ = linked_folder
    found = {f.path.name: f.refused for f in find_files([root], follow_symlinks=True)}
    assert found["passwd-link.txt"] is None and found["passwd.txt"] is None
    assert all(reason is None for reason in found.values())


def test_refused_link_is_a_failed_file_and_not_searchable(conn, embedder, settings,
                                                          linked_folder: tuple[Path, Path]) -> None:
    root, _ = linked_folder
    summary = ingest_paths(conn, embedder, settings, [root], source_type="regulation")
    failed = {Path(f.path).name for f in summary.failed}
    assert failed == {"passwd-link.txt", "outside-dir"}
    assert not any("root:x" in (store.document_text(conn, d.id) or "") for d in store.list_documents(conn))


# --- DOCX entities, extension-less text, warnings, names ---------------------------------------------

def _docx_with(xml_edit: Callable[[bytes], bytes], path: Path) -> bytes:
    base = write_docx(path.with_name("base.docx")).read_bytes()
    source = zipfile.ZipFile(io.BytesIO(base))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dest:
        for item in source.infolist():
            body = source.read(item.filename)
            dest.writestr(item, xml_edit(body) if item.filename == "word/document.xml" else body)
    return out.getvalue()


def test_docx_entity_keeps_the_text_after_it_and_never_resolves_external_ones(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    doctype = (f'<!DOCTYPE w:document [<!ENTITY inner "quarterly"> <!ENTITY ext SYSTEM "file://{secret}">]>')

    def edit(xml: bytes) -> bytes:
        xml = xml.replace(b"?>", b"?>" + doctype.encode(), 1)
        return xml.replace(b"every quarter", b"every &inner; &ext; quarter")

    parsed = parse(tmp_path / "x.docx", _docx_with(edit, tmp_path / "x.docx"))
    assert "Managers must review user access rights every quarterly &ext; quarter." in parsed.text
    assert "Access shall be revoked within 24 hours of termination." in parsed.text
    assert "TOP-SECRET" not in parsed.text


def test_docx_without_entities_reads_as_before(tmp_path: Path) -> None:
    parsed = parse(tmp_path / "x.docx", _docx_with(lambda xml: xml, tmp_path / "x.docx"))
    assert "every quarter. Access shall be revoked" in parsed.text and "&" not in parsed.text


@pytest.mark.parametrize("name", ["NOTICE", "GPL-3", "Apache-2.0", "COPYING"])
def test_extensionless_plain_text_is_read_as_text(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("NOTICE\n\nThis product must be distributed with this notice. Licensees may copy it.\n")
    parsed = parse(path, path.read_bytes())
    assert parsed.format == "txt" and "must be distributed" in parsed.text


@pytest.mark.parametrize(("name", "data", "message"), [
    ("BLOB", bytes(range(256)) * 40, "no extension, and the content is binary"),
    ("data.xyz", b"hello", "unknown format '.xyz'"),
], ids=["binary-without-extension", "unknown-extension"])
def test_extensionless_binary_and_unknown_extensions_are_refused(tmp_path: Path, name: str, data: bytes,
                                                                 message: str) -> None:
    with pytest.raises(IngestError, match=message):
        parse(tmp_path / name, data)


def test_extensionless_pdf_is_sniffed(fixtures: dict[str, bytes], tmp_path: Path) -> None:
    assert parse(tmp_path / "SCAN", fixtures["pdf"]).format == "pdf"


def test_pypdf_warnings_are_attributed_to_their_file(fixtures: dict[str, bytes], tmp_path: Path,
                                                     capfd: pytest.CaptureFixture[str]) -> None:
    parsed = parse(tmp_path / "a.pdf", b"junk" + fixtures["pdf"])
    assert any("invalid pdf header" in w for w in parsed.warnings)
    with pytest.raises(IngestError) as info:
        parse(tmp_path / "b.pdf", fixtures["pdf"][: len(fixtures["pdf"]) // 2])
    assert any("EOF marker not found" in w for w in info.value.warnings)
    assert "invalid pdf header" not in capfd.readouterr().err  # nothing reaches stderr unattributed


def test_newline_in_a_file_name_is_escaped_in_messages(tmp_path: Path) -> None:
    path = tmp_path / "bad\nname.txt"
    path.write_bytes(b"")
    with pytest.raises(IngestError) as info:
        parse(path, b"")
    assert "bad\\nname.txt" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_refused_not_read(conn, embedder, settings, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    result = ingest_paths(conn, embedder, settings, [fifo], source_type="regulation").files[0]
    assert result.status == "failed" and "not a regular file" in result.error


def test_obliqa_json_mutations_fail_with_json_reason(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    with pytest.raises(IngestError, match="invalid JSON"):
        parse(path, json.dumps([{"ID": "a"}]).encode()[:-3])
