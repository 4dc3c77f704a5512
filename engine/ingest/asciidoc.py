"""AsciiDoc (.adoc, .asciidoc: specifications, development and governance processes, handbooks written for
Asciidoctor) read as a document. Pure: no I/O (the caller gives the text; nothing it includes or links to is read).

The text is rendered to Markdown as Asciidoctor would show it and read like any Markdown document (as
reStructuredText is, `engine.ingest.rst`): a section title (`== 4.7 Committers`, or `## ...` as Asciidoctor also
reads) is a heading at its level and the document title (`= Title`) the title; list items are list items (`*`,
`-`, `.` numbered as shown, `[start=4]` kept), a description list's term opens its description ("Committer: A
developer who ..."), a question of a Q and A list its own paragraph; an admonition (`NOTE:`, `[TIP]` over a
`====` block) opens with its kind ("Note: ..."); a table (`|===`) is a Markdown table under its header row; a
listing or literal block is code, a quote block a quotation. Attribute references are replaced by their values
where the document or Asciidoctor defines them (`{nbsp}`), a link whose target is an attribute reads as its text
(`{bylawsUrl}[Bylaws]`), an undefined one is kept as written (Asciidoctor's default); `ifdef::`/`ifndef::`
keep or drop what they hold by the attributes defined (none of a renderer's, such as `env-github`). Links and
cross references read as their text, footnotes as Markdown footnotes. Left out: comments, block attributes and
anchors, passthrough blocks (raw HTML), diagram blocks (`[plantuml]`, `[graphviz]`: a diagram's source is no
text a reader sees) and block macros (`toc::[]`, `image::`). A file named by `include::` is never read; the
directive is dropped and a note returned.

Hand-written rather than a library's: the one Python implementation (asciidoc-py) runs shell filters named in
the document (`[graphviz]` calls graphviz, source blocks source-highlight), follows includes, fails on a missing
include and does not read Asciidoctor's syntax (`#` section titles, `[#id]` anchors), which is what these
documents are written in.
"""

from __future__ import annotations

import re

from engine.ingest.sections import markdown_table

# Asciidoctor's built-in attributes that stand for characters
_BUILT_IN = {"nbsp": "\u00a0", "sp": " ", "empty": "", "zwsp": "\u200b", "wj": "\u2060", "amp": "&", "lt": "<",
             "gt": ">", "startsb": "[", "endsb": "]", "vbar": "|", "caret": "^", "asterisk": "*", "tilde": "~",
             "plus": "+", "backslash": "\\", "backtick": "`", "apos": "'", "quot": '"', "lsquo": "\u2018",
             "rsquo": "\u2019", "ldquo": "\u201c", "rdquo": "\u201d", "deg": "\u00b0", "brvbar": "\u00a6",
             "two-colons": "::", "two-semicolons": ";;", "cpp": "C++", "pp": "++"}
_ADMONITIONS = ("NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION")
_DIAGRAMS = ("plantuml", "graphviz", "ditaa", "mermaid", "svgbob", "blockdiag", "seqdiag", "actdiag", "nwdiag",
             "erd", "vega", "wavedrom", "bytefield", "pikchr", "d2", "a2s", "barcode", "dot")
_DELIMITER = re.compile(r"^(?:-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|--|`{3}.*)$")  # comment blocks: `preprocess`
_TITLE = re.compile(r"^(?P<marks>={1,6}|#{1,6})[ \t]+(?P<title>\S.*?)(?:[ \t]+(?P=marks))?[ \t]*$")
_ATTRIBUTE_ENTRY = re.compile(r"^:(?P<name>!?[\w][\w-]*!?):(?:[ \t]+(?P<value>.*?))?[ \t]*$")
_CONDITION = re.compile(r"^(?P<kind>ifdef|ifndef|ifeval|endif)::(?P<names>[^\[]*)\[(?P<text>.*)\][ \t]*$")
_BLOCK_MACRO = re.compile(r"^(?P<name>[a-z][\w-]*)::(?P<target>\S*?)\[(?P<attrs>.*)\][ \t]*$")
_BLOCK_ATTRIBUTES = re.compile(r"^\[(?P<attrs>[^\[\]].*|\[[^\[\]]+\])\][ \t]*$")
_BLOCK_TITLE = re.compile(r"^\.(?P<title>[^\s.].*)$")
_ADMONITION_PARAGRAPH = re.compile(rf"^(?P<kind>{'|'.join(_ADMONITIONS)}):[ \t]+(?P<text>.*)$")
_UNORDERED = re.compile(r"^[ \t]*(?P<marks>\*{1,5}|-)[ \t]+(?P<text>\S.*)$")
_ORDERED = re.compile(r"^[ \t]*(?P<marks>\.{1,5})[ \t]+(?P<text>\S.*)$")
_DESCRIPTION = re.compile(r"^(?P<term>[^\s:][^:]*?|\S.*?\?)[ \t]*(?P<marks>:{2,4}|;;)(?:[ \t]+(?P<text>.*))?$")
_ANCHOR = re.compile(r"\[\[(?P<id>[\w:.-]+)(?:,[^\]]*)?\]\]|\banchor:[\w:.-]+\[[^\]]*\]")
_TABLE = re.compile(r"^[|!,:]={3,}[ \t]*$")


def _attribute_list(attrs: str) -> tuple[str, dict[str, str]]:
    """A block attribute line's style (its first positional attribute: "NOTE", "source", "plantuml", "qanda") and
    its named attributes ("start", "cols", "options"); an id (`#id`) or role (`.role`) shorthand is no style."""
    named: dict[str, str] = {}
    style = ""
    for i, piece in enumerate(p.strip() for p in re.split(r",(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", attrs)):
        if "=" in piece:
            key, _, value = piece.partition("=")
            named[key.strip()] = value.strip().strip("\"'")
        elif i == 0:
            style = re.split(r"[#.%]", piece, maxsplit=1)[0]
            for option in re.findall(r"%([\w-]+)", piece):
                named.setdefault("options", "")
                named["options"] += f",{option}"
    return style, named


class _Plain(str):
    """A line of a paragraph's text, its inline markup not yet rendered."""


class _Reader:
    """One document's conversion: its attributes, anchors' titles, footnotes and notes."""

    def __init__(self, text: str) -> None:
        self.attributes: dict[str, str] = dict(_BUILT_IN)
        self.footnotes: list[str] = []
        self.footnote_ids: dict[str, int] = {}
        self.notes: list[str] = []
        self.title: str | None = None
        self.anchors = self._anchor_titles(text.split("\n"))

    @staticmethod
    def _anchor_titles(lines: list[str]) -> dict[str, str]:
        """The title of the section each anchor stands over (`[[id]]`, `[#id]` on the line above it), which a
        cross reference without text shows (`<<efspo-faq>>`)."""
        titles: dict[str, str] = {}
        for before, line in zip(lines, lines[1:], strict=False):
            found = _TITLE.match(line)
            anchor = re.match(r"^\[\[([\w:.-]+)(?:,[^\]]*)?\]\]|^\[#([\w:.-]+)", before)
            if found and anchor:
                titles[anchor.group(1) or anchor.group(2)] = found.group("title")
        return titles

    # -- the preprocessor: attribute entries, conditionals, includes, comments --------------------------------

    def _defined(self, names: str) -> bool:
        """`ifdef::a,b[]` (any of them) or `ifdef::a+b[]` (all of them) against the attributes defined."""
        if "+" in names:
            return all(n in self.attributes for n in names.split("+"))
        return any(n in self.attributes for n in names.split(","))

    def preprocess(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        keep: list[bool] = []
        in_comment = False
        for line in lines:
            if in_comment:
                in_comment = not re.fullmatch(r"/{4,}[ \t]*", line)
                continue
            if re.fullmatch(r"/{4,}[ \t]*", line):
                in_comment = True
                continue
            condition = _CONDITION.match(line)
            if condition is not None:
                kind, names, text = condition.group("kind", "names", "text")
                if kind == "endif":
                    if keep:
                        keep.pop()
                elif kind == "ifeval":
                    keep.append(True)  # an expression over attributes: its text is kept
                else:
                    wanted = self._defined(names) == (kind == "ifdef")
                    if text:  # the one-line form holds its text in the brackets
                        if wanted and all(keep):
                            out.append(text)
                    else:
                        keep.append(wanted)
                continue
            if not all(keep):
                continue
            if line.startswith("include::"):
                self.notes.append(f"an AsciiDoc include was not followed: {line.strip()[:120]}")
                continue
            entry = _ATTRIBUTE_ENTRY.match(line)
            if entry is not None:
                name = entry.group("name")
                if name.startswith("!") or name.endswith("!"):
                    self.attributes.pop(name.strip("!"), None)
                else:
                    self.attributes[name] = self.inline(entry.group("value") or "", attributes_only=True)
                continue
            out.append(line)
        return out

    # -- inline text ----------------------------------------------------------------------------------------

    def _footnote(self, ident: str, text: str) -> str:
        if ident and ident in self.footnote_ids and not text:
            return f"[^{self.footnote_ids[ident]}]"
        self.footnotes.append(text)
        number = len(self.footnotes)
        if ident:
            self.footnote_ids[ident] = number
        return f"[^{number}]"

    def _attribute(self, m: re.Match[str]) -> str:
        return self.attributes.get(m.group(1), m.group(0))

    def inline(self, text: str, *, attributes_only: bool = False) -> str:
        """A line of text as Asciidoctor shows it, in Markdown's inline syntax."""
        text = re.sub(r"\{([\w][\w-]*)\}\[([^\]]*)\]", lambda m: m.group(2) or self.attributes.get(m.group(1), ""),
                      text)  # a link to an attribute's address reads as its text
        text = re.sub(r"(?<!\\)\{([\w][\w-]*)\}", self._attribute, text)
        if attributes_only:
            return text
        text = re.sub(r"\bfootnote(?:ref)?:(?P<id>[\w-]*)\[(?P<text>(?:[^\[\]]|\[[^\]]*\])*)\]",
                      lambda m: self._footnote(m.group("id"), m.group("text")), text)
        text = re.sub(r"\bfootnoteref:\[(?P<id>[\w-]+)(?:,(?P<text>[^\]]*))?\]",
                      lambda m: self._footnote(m.group("id"), m.group("text") or ""), text)
        text = _ANCHOR.sub("", text)
        text = re.sub(r"\b(?:pass|kbd|btn):[a-z,]*\[([^\]]*)\]", r"\1", text)
        text = re.sub(r"\bmenu:([^\[\s]+)\[([^\]]*)\]", lambda m: " > ".join(filter(None, [m.group(1), m.group(2)])),
                      text)
        text = re.sub(r"\b(?:image|icon):[^\[\s]+\[([^\],]*)[^\]]*\]", r"\1", text)
        text = re.sub(r"\bindexterm2?:\[[^\]]*\]|\({3}[^()]*\){3}", "", text)
        text = re.sub(r"\({2}([^()]+)\){2}", r"\1", text)
        text = re.sub(r"\b(?:link|xref|mailto):([^\[\s]*)\[([^\]]*)\]",
                      lambda m: m.group(2).split(",")[0].strip("\"") or m.group(1), text)
        text = re.sub(r"\b((?:https?|ftp|irc)://[^\s\[\]]+)\[([^\]]*)\]",
                      lambda m: m.group(2).split(",")[0].strip("\"") or m.group(1), text)
        text = re.sub(r"<<([\w:.#/-]+)(?:,\s*([^>]*))?>>",
                      lambda m: m.group(2) or self.anchors.get(m.group(1)) or m.group(1), text)
        text = re.sub(r"\[\.[\w.-]+\]#([^#]+)#", r"\1", text)  # a role on marked text
        text = re.sub(r"(?<![\w*])\*\*?(?=\S)([^*\n]+?)(?<=\S)\*\*?(?![\w*])", r"\1", text)  # bold
        text = re.sub(r"(?<![\w_])__?(?=\S)([^_\n]+?)(?<=\S)__?(?![\w_])", r"\1", text)  # italic
        text = re.sub(r"(?<![\w#])##?(?=\S)([^#\n]+?)(?<=\S)##?(?![\w#])", r"\1", text)  # marked
        text = re.sub(r"`\+([^`]+)\+`", r"`\1`", text)  # a literal code span
        text = re.sub(r"(?<![\w+])\+\+?(?=\S)([^+\n]+?)(?<=\S)\+\+?(?![\w+])", r"\1", text)  # inline passthrough
        text = re.sub(r"[ \t]\+$", "", text, flags=re.MULTILINE)  # a hard line break
        return re.sub(r"\\([*_`#+{}\[\]@<>~^|.:-])", r"\1", text)

    # -- blocks ---------------------------------------------------------------------------------------------

    def _table(self, rows_text: list[str], named: dict[str, str]) -> list[str]:
        """A table's cells (`| a | b`, one or more per line, `a|`/`2+|` specifiers) as a Markdown table; rows by
        the column count `cols` gives or the first line's cells; the first row a header where the table says so or
        a blank line follows it (Asciidoctor's implicit header)."""
        cells: list[str] = []
        first = next((i for i, line in enumerate(rows_text) if line.strip()), len(rows_text))
        first_line = rows_text[first] if first < len(rows_text) else ""
        header_blank = first + 1 < len(rows_text) and not rows_text[first + 1].strip()
        for line in rows_text:
            if not line.strip():
                continue
            if re.match(r"^\s*(?:\d+[+*])?[adehlmsv]?\|", line):
                pieces = re.split(r"(?:^|(?<=\s))(?:\d+[+*])?(?:[<^>]?\.?[<^>]?)?[adehlmsv]?\|", line)
                cells.extend(self.inline(p.strip()) for p in pieces[1:])
            elif cells:
                cells[-1] = f"{cells[-1]} {self.inline(line.strip())}".strip()
        cols_spec = named.get("cols", "")
        multiplied = re.fullmatch(r"(\d+)\*.*|(\d+)", cols_spec)  # "3*", "2": that many columns
        if multiplied is not None:
            width = int(multiplied.group(1) or multiplied.group(2))
        else:  # "1,3", "<1,^2": one entry a column
            width = len([c for c in cols_spec.split(",") if c.strip()]) if cols_spec else 0
        width = width or max(1, len(re.findall(r"(?:^|\s)[a-z]?\|", first_line)))
        rows = [cells[i:i + width] for i in range(0, len(cells), width)]
        if not rows:
            return []
        rows[-1] += [""] * (width - len(rows[-1]))
        header = "header" in named.get("options", "") or (header_blank and "noheader" not in named.get("options", ""))
        table = markdown_table(rows[1:], rows[0]) if header and len(rows) > 1 else markdown_table(rows, None)
        return ["", *table.split("\n"), ""]

    def blocks(self, lines: list[str]) -> list[str]:
        """The Markdown lines of `lines`, a document's body or a compound block's content."""
        out: list[str] = []
        style, title = "", ""
        named: dict[str, str] = {}
        counters: dict[int, int] = {}
        term: str | None = None
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            stripped = line.strip()
            if term is not None and stripped and not _DELIMITER.match(stripped):
                out.append(f"{term} {self.inline(stripped)}" if term.endswith(":") else self.inline(stripped))
                term = None
                continue
            if line.startswith("//"):
                continue  # a line comment (comment blocks went in `preprocess`)
            if _DELIMITER.match(stripped) and not line[:1].isspace():
                end = next((j for j in range(i, len(lines)) if lines[j].strip() == stripped), len(lines))
                if stripped.startswith("```"):  # a fenced block closes on a fence, whatever its language
                    end = next((j for j in range(i, len(lines)) if lines[j].strip() == "```"), len(lines))
                inner = lines[i:end]
                i = end + 1
                out.extend(self._delimited(stripped, inner, style, named, title))
                style, named, title = "", {}, ""
                continue
            if _TABLE.match(stripped):
                end = next((j for j in range(i, len(lines)) if _TABLE.match(lines[j].strip())), len(lines))
                if title:
                    out.extend(["", self.inline(title), ""])
                out.extend(self._table(lines[i:end], named))
                i = end + 1
                style, named, title = "", {}, ""
                continue
            if not stripped:
                out.append("")
                if style not in ("qanda", "glossary"):
                    counters = {}
                continue
            attributes = _BLOCK_ATTRIBUTES.match(stripped)
            if attributes is not None and not line[:1].isspace():
                if stripped.startswith("[["):
                    continue  # a block anchor
                style, named = _attribute_list(attributes.group("attrs"))
                if "start" in named and named["start"].isdigit():
                    counters = {1: int(named["start"]) - 1}
                continue
            block_title = _BLOCK_TITLE.match(line)
            if block_title is not None and not _ORDERED.match(line):
                title = block_title.group("title")
                continue
            heading = _TITLE.match(line)
            if heading is not None:
                text = self.inline(_ANCHOR.sub("", heading.group("title"))).strip()
                if len(heading.group("marks")) == 1 and self.title is None:
                    self.title = text
                out.extend(["", f"{'#' * len(heading.group('marks'))} {text}", ""])
                style, named, title = "", {}, ""
                counters = {}
                continue
            macro = _BLOCK_MACRO.match(stripped)
            if macro is not None and macro.group("name") in ("toc", "image", "video", "audio"):
                continue
            admonition = _ADMONITION_PARAGRAPH.match(line)
            if admonition is not None:
                out.append(f"{admonition.group('kind').title()}: {self.inline(admonition.group('text'))}")
                continue
            if style.upper() in _ADMONITIONS and (not out or not out[-1].strip()):  # [NOTE] over a paragraph
                out.append(f"{style.title()}: {self.inline(stripped)}")
                style = ""
                continue
            item = _UNORDERED.match(line)
            if item is not None:
                depth = 1 if item.group("marks") == "-" else len(item.group("marks"))
                out.append(f"{'  ' * (depth - 1)}- {self.inline(item.group('text'))}")
                continue
            item = _ORDERED.match(line)
            if item is not None:
                depth = len(item.group("marks"))
                counters = {d: n for d, n in counters.items() if d <= depth}
                counters[depth] = counters.get(depth, 0) + 1
                out.append(f"{'   ' * (depth - 1)}{counters[depth]}. {self.inline(item.group('text'))}")
                continue
            described = _DESCRIPTION.match(stripped)
            if described is not None and not re.match(r"^[a-z]+:", stripped) and "://" not in stripped:
                name = self.inline(described.group("term").strip())
                text = described.group("text")
                question = style == "qanda" or name.endswith("?")
                if text:
                    out.extend([name, "", self.inline(text)] if question else [f"- {name}: {self.inline(text)}"])
                else:
                    if question:
                        out.extend(["", name, ""])
                    else:
                        term = f"- {name}:"
                continue
            if stripped == "+":
                out.append("")  # a list continuation: the next block belongs to the item
                continue
            out.append(_Plain(line.rstrip()))
        return self._inlined(out)

    def _inlined(self, out: list[str]) -> list[str]:
        """`out` with each run of plain lines (a paragraph's, `_Plain`) rendered together, so that a link or a
        footnote whose text wraps onto the next line ("link:https://...[Jenkins Event" / "Calendar]") reads whole."""
        done: list[str] = []
        run: list[str] = []
        for line in [*out, ""]:
            if isinstance(line, _Plain):
                run.append(line)
                continue
            if run:
                done.append(self.inline("\n".join(run)))
                run = []
            done.append(line)
        return done[:-1]

    def _delimited(self, delimiter: str, inner: list[str], style: str, named: dict[str, str], title: str) -> list[str]:
        kind = delimiter[:1]
        if kind == "+" or style.lower() in _DIAGRAMS:
            return []  # raw output, a diagram's source
        caption = ["", self.inline(title), ""] if title else []
        if kind in "-." and delimiter != "--" or kind == "`":
            return [*caption, "", "```", *inner, "```", ""]
        content = self.blocks(inner)
        if style.upper() in _ADMONITIONS:
            label = f"{style.title()}: "
            marked: list[str] = []
            opens = True
            for line in content:
                if not line.strip():
                    opens = True
                    marked.append(line)
                    continue
                marked.append(f"{label}{line.lstrip()}" if opens and not re.match(r"^\s*(?:-|\d+\.)\s", line)
                              else line)
                opens = False
            content = marked
        elif kind == "_" or style in ("quote", "verse"):
            content = [f"> {line}" if line.strip() else ">" for line in content]
        return [*caption, "", *content, ""]

    def convert(self, text: str) -> str:
        lines = self.preprocess(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
        lines = self._header(lines)
        body = self.blocks(lines)
        if self.footnotes:
            body += ["", *(f"[^{n}]: {note}" for n, note in enumerate(self.footnotes, 1))]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(body)).strip() + "\n"

    def _header(self, lines: list[str]) -> list[str]:
        """The document header: its title (`= Title`) stays as the title's heading; the author and revision lines
        under it, metadata, go."""
        start = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
        while start < len(lines) and (lines[start].startswith("[[") or lines[start].startswith("[#")):
            start += 1
        found = _TITLE.match(lines[start]) if start < len(lines) else None
        if found is None or len(found.group("marks")) != 1:
            return lines
        j = start + 1
        while j < len(lines) and lines[j].strip() and j < start + 3 and not _ATTRIBUTE_ENTRY.match(lines[j]) and (
                not _BLOCK_ATTRIBUTES.match(lines[j].strip())):
            j += 1
        return [*lines[:start + 1], *lines[j:]]


def to_markdown(text: str) -> tuple[str, str | None, list[str]]:
    """(the Markdown an AsciiDoc text renders to, its title (`= Title`) or None, notes on what was not read)."""
    reader = _Reader(text)
    markdown = reader.convert(text)
    return markdown, reader.title, reader.notes
