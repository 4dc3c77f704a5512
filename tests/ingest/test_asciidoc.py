"""AsciiDoc (engine.ingest.asciidoc): a process, a specification or a handbook kept as .adoc reads as the page
Asciidoctor builds from it shows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.ingest.asciidoc import to_markdown
from engine.ingest.chunking import chunk_document
from engine.ingest.formats import detect_format
from tests.helpers import parsed_file

# In the shape of the Eclipse Foundation's and the Jenkins project's process documents: a licence in a comment
# block, a header with attributes and a renderer's conditional, anchors over sections, a block title over a table,
# admonitions of both forms, lists of each kind, a description list and a Q and A list, a listing, a diagram, a
# passthrough, footnotes, links and cross references, and an include
_PROCESS = r"""////
 * Copyright (C) Example Foundation. SPDX-License-Identifier: EPL-2.0
////
[[edp]]
= Example Development Process
:bylawsUrl: https://example.org/bylaws.pdf
ifdef::env-github[]
:note-caption: :information_source:
GitHub only text.
endif::[]

Version 1.9. Effective March 24, 2020

toc::[]

[#4_Committers]
== 4. Committers

Committers are elected as the {bylawsUrl}[Bylaws] say; see <<review>> and link:https://example.org/x[the handbook].
The vote lasts one week.footnote:[A week is seven calendar days.] An {undefinedUrl} stays as written.

NOTE: A Committer may resign at any time.

[TIP]
====
Elections are announced on the mailing list.
====

=== 4.1 Duties

* A Committer *must* review contributions.
** Reviews are public.
* A Committer must follow the _IP Policy_.

. Nominate the candidate.
. Hold the vote.

[start=4]
. Announce the result.

Project Lead :: A Committer who leads the Project.
Mentor::
  A member who guides a new Project.

[[review]]
## 4.2 Reviews

.Review periods
[cols="2", options="header"]
|===
| Review | Period
| Creation | 7 days
| Release | 14 days
|===

----
# not a heading
git push
----

[plantuml, flow, svg]
....
@startuml
== Initiate ==
@enduml
....

++++
<div>raw</div>
++++

[qanda]
Can a Committer vote twice?::
  No. Each Committer has one vote.

include::terms.adoc[leveloffset=+2]
"""


def _sections(parsed) -> dict[str, str]:  # noqa: ANN001 - engine.ingest.sections.ParsedDocument
    found: dict[str, str] = {}
    for b in parsed.blocks:
        found[b.section_path] = "\n\n".join(filter(None, [found.get(b.section_path), parsed.text[b.start:b.end]]))
    return found


def test_an_asciidoc_process_reads_as_its_built_page_shows_it(tmp_path: Path) -> None:
    parsed = parsed_file(tmp_path / "process.adoc", _PROCESS)
    assert (parsed.format, parsed.title) == ("adoc", "Example Development Process")
    sections = _sections(parsed)
    committers = sections["4 Committers"]
    for shown in ("Committers are elected as the Bylaws say; see 4.2 Reviews and the handbook.",
                  "An {undefinedUrl} stays as written.", "Note: A Committer may resign at any time.",
                  "Tip: Elections are announced on the mailing list."):
        assert shown in committers, committers
    duties = sections["4 Committers > 4.1 Duties"]
    for shown in ("- A Committer must review contributions.", "  - Reviews are public.",
                  "- A Committer must follow the IP Policy.", "1. Nominate the candidate.", "2. Hold the vote.",
                  "4. Announce the result.", "- Project Lead: A Committer who leads the Project.",
                  "- Mentor: A member who guides a new Project."):
        assert shown in duties, duties
    reviews = sections["4.2 Reviews"]  # `##` is a section title of the level `==` is
    for shown in ("Review periods", "| Review | Period |\n|---|---|\n| Creation | 7 days |\n| Release | 14 days |",
                  "# not a heading\ngit push", "Can a Committer vote twice?", "No. Each Committer has one vote."):
        assert shown in reviews, reviews
    # nothing a reader of the built page does not see: the licence comment, the renderer's text, anchors, the
    # table of contents, a diagram's source, raw HTML
    for hidden in ("Copyright", "GitHub only", "[[", "[#", "toc::", "@startuml", "Initiate", "<div>", "raw"):
        assert hidden not in parsed.text, hidden
    assert "A week is seven calendar days." in parsed.text  # the footnote, as a note of the document
    assert any("include::terms.adoc" in w for w in parsed.warnings)  # not read, and the parse says so
    for chunk in chunk_document("doc_x", parsed):
        assert parsed.text[chunk.char_start:chunk.char_end] == chunk.text
    assert detect_format(Path("process.adoc"), _PROCESS.encode()) == "adoc"
    assert detect_format(Path("process.asciidoc"), _PROCESS.encode()) == "adoc"


def test_asciidoc_never_reads_a_file_it_names(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET PASSWORD", encoding="utf-8")
    parsed = parsed_file(tmp_path / "page.adoc", f"= Title\n\ninclude::{secret}[]\n\nimage::{secret}[]\n\n"
                         f"[source]\n----\ninclude::{secret}[]\n----\n\nText stays.\n")
    assert "TOP SECRET" not in parsed.text
    assert "Text stays." in parsed.text


@pytest.mark.parametrize(("text", "title", "shown"), [
    # an author line under the title is metadata; Markdown-style section titles are sections too
    ("= Guide\nJane Doe <jane@example.org>\n\n## Scope\n\nIt applies to all staff.\n", "Guide",
     "## Scope\n\nIt applies to all staff."),
    # an ifndef keeps what it holds when the attribute is not set; a one-line ifdef by its brackets
    ("= Guide\n:site:\n\nifndef::env-github[]\nKept.\nendif::[]\nifdef::site[Shown.]\n", "Guide", "Kept.\nShown."),
    # a hard line break and an inline passthrough read as their text
    ("= Guide\n\nKeys are rotated +\nevery +90+ days.\n", "Guide", "Keys are rotated\nevery 90 days."),
    # a link whose text wraps onto the paragraph's next line reads as its text
    ("= Guide\n\nConsult the link:https://example.org/cal[Event\nCalendar] first.\n", "Guide",
     "Consult the Event\nCalendar first."),
], ids=["author-and-markdown-titles", "conditionals", "breaks-and-passthrough", "wrapped-link"])
def test_asciidoc_header_conditionals_and_inline_text(text: str, title: str, shown: str) -> None:
    markdown, found, _ = to_markdown(text)
    assert found == title
    assert shown in markdown, markdown
    assert "Jane Doe" not in markdown
