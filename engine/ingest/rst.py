"""reStructuredText (.rst: Sphinx and docutils documentation, a project's policies and guides, PEPs) read as a document.
Pure: no I/O (the caller gives the text; nothing it includes or links to is read).

docutils parses the text into its document tree, rendered to Markdown and read like any Markdown document (as
legislation's XML is, `engine.ingest.legalxml`): a section's title is a heading at its depth, paragraphs and list
items are paragraphs (an enumerated list's items with the labels a reader sees: "(a)", "2.", "iv."), a note or
warning (`.. note::`) opens with its kind ("Note: ..."), a definition its term ("Term: ..."), a field its name, a
table is a Markdown table under its header row. Sphinx's own roles (":ref:`Key management <keys>`", ":doc:",
":term:") read as the words a built page shows, and its directives that hold no text of the document (`toctree`,
`index`, `highlight`) as nothing, `code-block` as its code; comments, substitution definitions, link targets and
docutils' own messages are left out. Files are never included (`.. include::` is dropped with a warning kept in
the parse) and raw HTML is not read.
"""

from __future__ import annotations

import io
import re
from typing import Any

from engine.ingest.numbering import formatted
from engine.ingest.sections import markdown_table
from engine.text import normalize_ws

# The labels an enumerated list's items show, by docutils' `enumtype`, in numbering's formats
_FORMATS = {"arabic": "decimal", "loweralpha": "lowerLetter", "upperalpha": "upperLetter",
            "lowerroman": "lowerRoman", "upperroman": "upperRoman"}
_ADMONITIONS = ("note", "warning", "tip", "important", "caution", "attention", "danger", "error", "hint")
# Sphinx's directives that hold no text of the document itself
_SPHINX_EMPTY = ("toctree", "index", "highlight", "only", "tabularcolumns", "sectionauthor", "moduleauthor",
                 "codeauthor", "currentmodule", "module", "automodule", "autoclass", "autofunction", "literalinclude",
                 "graphviz", "mermaid", "todo")
# ... and those whose body is text (a note's kind of aside, code)
_SPHINX_ASIDES = {"seealso": "See also", "versionadded": "New in version", "versionchanged": "Changed in version",
                  "deprecated": "Deprecated since version"}
_SPHINX_ROLES = ("ref", "doc", "term", "abbr", "command", "file", "option", "program", "envvar", "guilabel",
                 "menuselection", "kbd", "samp", "mimetype", "makevar", "dfn", "numref", "download", "any",
                 "py:class", "py:func", "py:meth", "py:mod", "py:attr", "py:data", "py:exc", "class", "func", "meth",
                 "mod", "attr", "data", "exc", "rfc", "pep")


def _literal(text: str) -> str:
    """Text as Markdown writes it to be read as it stands: an asterisk or an underscore escaped, so that the Markdown
    reader takes "*must*" (written `\\*must\\*` in the reStructuredText) for the characters, not for emphasis."""
    return re.sub(r"([*_])", r"\\\1", text)


_EXPLICIT_TITLE = re.compile(r"^(.+?)\s*<[^<>]+>$", re.DOTALL)
_registered = False


def _register() -> None:
    """Teach docutils Sphinx's roles and directives, once per process (docutils keeps them in a registry)."""
    global _registered
    if _registered:
        return
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives, roles

    def shown(name: str, rawtext: str, text: str, lineno: int, inliner: Any,  # noqa: ARG001 - docutils' role API
              options: Any = None, content: Any = None) -> tuple[list[Any], list[Any]]:  # noqa: ARG001
        titled = _EXPLICIT_TITLE.match(text)
        words = titled.group(1) if titled else text.lstrip("~!")
        if name in ("rfc", "pep") and not titled:
            words = f"{name.upper()} {words}"
        return [nodes.Text(words)], []

    for name in _SPHINX_ROLES:
        if name not in ("rfc", "pep"):  # docutils reads these two itself
            roles.register_local_role(name, shown)

    class Nothing(Directive):
        has_content = True
        optional_arguments = 99
        final_argument_whitespace = True
        option_spec = None

        def run(self) -> list[Any]:
            return []

    class Code(Nothing):
        def run(self) -> list[Any]:
            return [nodes.literal_block("\n".join(self.content), "\n".join(self.content))]

    def aside(label: str) -> type[Directive]:
        class Aside(Nothing):
            def run(self) -> list[Any]:
                node = nodes.admonition()
                words = " ".join(self.arguments)
                node += nodes.title("", f"{label} {words}".strip() if label.endswith("version") else label)
                self.state.nested_parse(self.content, self.content_offset, node)
                return [node]
        return Aside

    for name in _SPHINX_EMPTY:
        directives.register_directive(name, Nothing)
    for name in ("code-block", "sourcecode"):
        directives.register_directive(name, Code)
    for name, label in _SPHINX_ASIDES.items():
        directives.register_directive(name, aside(label))
    _registered = True


def to_markdown(text: str) -> tuple[str, str | None, list[str]]:
    """The document as Markdown, its title (None where it has none) and the warnings to keep (an include not
    read). Pure: file insertion and raw input are disabled, and docutils' messages are not printed."""
    from docutils.core import publish_doctree

    _register()
    warnings: list[str] = []
    if re.search(r"(?m)^\.\.\s+include::", text):
        warnings.append("an `.. include::` directive was not followed: the file it names is not read with this one")
    tree = publish_doctree(text, settings_overrides={
        "file_insertion_enabled": False, "raw_enabled": False, "report_level": 5, "halt_level": 5,
        "warning_stream": io.StringIO(), "input_encoding": "unicode", "doctitle_xform": True,
        "sectsubtitle_xform": False, "syntax_highlight": "none"})
    title = tree.get("title") or None
    out: list[str] = []
    _Renderer(out).body(tree, 2)
    return "\n\n".join(block for block in out if block.strip()).replace("\x00", "") + "\n", title, warnings


class _Renderer:
    """A doctree's blocks as Markdown blocks, appended to `out`."""

    def __init__(self, out: list[str]) -> None:
        from docutils import nodes  # loaded with the first .rst file, as each format's reader is

        self.out = out
        self.nodes = nodes

    def inline(self, node: Any) -> str:
        """A text element's words as a page shows them: markup gone, a footnote reference its mark."""
        nodes = self.nodes
        parts: list[str] = []
        for child in node.children:
            if isinstance(child, nodes.Text):
                parts.append(_literal(child.astext()))  # a backslash escape read (docutils keeps it as a NUL)
            elif isinstance(child, (nodes.footnote_reference, nodes.citation_reference)):
                parts.append(f"[{child.astext()}]")
            elif isinstance(child, (nodes.system_message, nodes.target, nodes.substitution_definition,
                                    nodes.comment, nodes.raw)):
                continue
            elif isinstance(child, nodes.image):
                parts.append(child.get("alt", ""))
            else:
                parts.append(self.inline(child))
        return "".join(parts)

    def paragraph(self, text: str, label: str = "") -> None:
        text = normalize_ws(text)
        if text:
            self.out.append(f"{label} {text}" if label else text)

    def body(self, node: Any, depth: int) -> None:
        for child in node.children:
            self.block(child, depth)

    def block(self, node: Any, depth: int, label: str = "") -> None:
        nodes = self.nodes
        start = len(self.out)
        if isinstance(node, (nodes.comment, nodes.substitution_definition, nodes.target, nodes.system_message,
                             nodes.raw, nodes.transition, nodes.pending, nodes.title, nodes.subtitle,
                             nodes.decoration)):
            return
        if isinstance(node, nodes.topic) and "contents" in node.get("classes", []):
            return  # a table of contents: the headings it lists are read where they stand
        if isinstance(node, nodes.section):
            title = next((c for c in node.children if isinstance(c, nodes.title)), None)
            if title is not None:
                self.out.append(f"{'#' * min(depth, 6)} {normalize_ws(self.inline(title))}")
            self.body(node, depth + 1)
            return
        if isinstance(node, (nodes.paragraph, nodes.line, nodes.rubric, nodes.caption, nodes.attribution)):
            self.paragraph(self.inline(node), label)
            return
        if isinstance(node, nodes.literal_block):
            self.paragraph(_literal(node.astext()), label)
            return
        if isinstance(node, nodes.line_block):
            self.paragraph("\n".join(normalize_ws(_literal(line.astext())) for line in node.traverse(nodes.line)),
                           label)
            return
        if isinstance(node, nodes.bullet_list):
            for item in node.children:
                self.item(item, depth, "*")
        elif isinstance(node, nodes.enumerated_list):
            start_at = int(node.get("start", 1))
            fmt = _FORMATS.get(node.get("enumtype", "arabic"), "decimal")
            for i, item in enumerate(node.children):
                mark = f"{node.get('prefix', '')}{formatted(start_at + i, fmt)}{node.get('suffix', '.')}"
                self.item(item, depth, mark)
        elif isinstance(node, nodes.definition_list):
            for item in node.children:
                term = normalize_ws(" ".join(self.inline(t) for t in item.children if isinstance(t, nodes.term)))
                for definition in (c for c in item.children if isinstance(c, nodes.definition)):
                    self.item(definition, depth, f"{term}{'' if term.endswith((':', '.')) else ':'}")
        elif isinstance(node, nodes.field_list):
            for field in node.children:
                name = normalize_ws(field.children[0].astext())
                self.item(field.children[1], depth, f"{name}:")
        elif isinstance(node, nodes.option_list):
            for item in node.children:
                options = normalize_ws(item.children[0].astext())
                self.item(item.children[1], depth, options)
        elif isinstance(node, nodes.table):
            self.table(node)
        elif isinstance(node, nodes.Admonition):
            title = next((c for c in node.children if isinstance(c, nodes.title)), None)
            kind = normalize_ws(self.inline(title)) if title is not None else node.tagname.capitalize()
            self.body(node, depth)
            if start < len(self.out):
                self.out[start] = f"{kind}{'' if kind.endswith((':', '.')) else ':'} {self.out[start]}"
            return
        elif isinstance(node, (nodes.footnote, nodes.citation)):
            mark = normalize_ws(node.children[0].astext()) if node.children else ""
            self.item(node, depth, f"[{mark}]", skip_first=True)
        elif isinstance(node, nodes.Element):
            self.body(node, depth)  # a block quote, a container, a compound, a figure: what it holds
        if label and start < len(self.out) and not self.out[start].startswith(label):
            self.out[start] = f"{label} {self.out[start]}"

    def item(self, item: Any, depth: int, mark: str, *, skip_first: bool = False) -> None:
        """A list item, a definition or a field: its first block opens with the mark a reader sees, the rest
        follow."""
        children = item.children[1:] if skip_first else item.children
        for i, child in enumerate(children):
            self.block(child, depth, mark if i == 0 else "")

    def table(self, node: Any) -> None:
        nodes = self.nodes
        header: list[str] | None = None
        rows: list[list[str]] = []
        for group in node.traverse(nodes.tgroup):
            for part in group.children:
                if not isinstance(part, (nodes.thead, nodes.tbody)):
                    continue
                for row in part.children:
                    cells = [normalize_ws(" ".join(self.inline(p) if isinstance(p, nodes.TextElement) else p.astext()
                                                   for p in entry.children)).replace("|", "/")
                             for entry in row.children]
                    if isinstance(part, nodes.thead) and header is None:
                        header = cells
                    else:
                        rows.append(cells)
        title = next((c for c in node.children if isinstance(c, nodes.title)), None)
        if title is not None:
            self.paragraph(self.inline(title))
        if rows:
            self.out.append(markdown_table(rows, header))
