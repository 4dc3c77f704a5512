"""reStructuredText (engine.ingest.rst): a Sphinx page or a guide kept as .rst reads as the page it builds shows it."""

from __future__ import annotations

from pathlib import Path

from engine.ingest.chunking import chunk_document
from engine.ingest.formats import detect_format
from tests.helpers import parsed_file

# In the shape of the OpenStack Security Guide's pages: an over- and underlined title, sections by other underlines,
# a link target above a title, Sphinx's roles and directives, a note, lists, a definition list, a list table
_GUIDE = r"""
.. _key-management:

==============
Key management
==============

.. contents::

Passwords
~~~~~~~~~

Passwords must be at least 12 characters long. See :ref:`Key rotation <rotation>`, :doc:`identity` and
:term:`PKI`; the value \*must\* be secret.

.. note::

   Service accounts are exempt from expiry.

.. _rotation:

Key rotation
------------

#. Keys must be rotated every 90 days.
#. Old keys must be destroyed within 7 days.

(a) The first lettered point.
(b) The second lettered point.

Certification Authority (CA)
    The entity that issues certificates.

.. code-block:: bash

   openssl genrsa 4096

.. list-table:: Retention
   :header-rows: 1

   * - Item
     - Period
   * - Logs
     - 1 year

.. toctree::

   other

.. include:: secret.rst

.. unknowndirective:: with an argument

   Its body.
"""


def test_rst_page_reads_as_its_built_page_shows_it(tmp_path: Path) -> None:
    parsed = parsed_file(tmp_path / "keys.rst", _GUIDE)
    assert (parsed.format, parsed.title) == ("rst", "Key management")
    sections: dict[str, str] = {}
    for b in parsed.blocks:
        sections[b.section_path] = "\n\n".join(filter(None, [sections.get(b.section_path), parsed.text[b.start:b.end]]))
    assert sections["Passwords"] == ("Passwords must be at least 12 characters long. See Key rotation, identity and "
                                     "PKI; the value *must* be secret.\n\n"
                                     "Note: Service accounts are exempt from expiry.")
    rotation = "\n\n".join(text for path, text in sections.items() if path.startswith("Passwords > Key rotation"))
    for shown in ("1. Keys must be rotated every 90 days.", "2. Old keys must be destroyed within 7 days.",
                  "(a) The first lettered point.",
                  "Certification Authority (CA): The entity that issues certificates.",
                  "openssl genrsa 4096", "Retention\n\n| Item | Period |\n|---|---|\n| Logs | 1 year |"):
        assert shown in rotation
    assert "other" not in parsed.text.split() and "contents" not in parsed.text and "\x00" not in parsed.text
    assert any("include" in w for w in parsed.warnings)  # the included file is not read, and the parse says so
    for chunk in chunk_document("doc_x", parsed):
        assert parsed.text[chunk.char_start:chunk.char_end] == chunk.text
    assert detect_format(Path("keys.rst"), _GUIDE.encode()) == "rst"


def test_rst_never_reads_a_file_it_names(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET PASSWORD", encoding="utf-8")
    parsed = parsed_file(tmp_path / "page.rst", f"Title\n=====\n\n.. include:: {secret}\n\n.. raw:: html\n\n   "
                         f"<b>raw</b>\n\n.. literalinclude:: {secret}\n\nText stays.\n")
    assert "TOP SECRET" not in parsed.text and "raw" not in parsed.text
    assert "Text stays." in parsed.text
