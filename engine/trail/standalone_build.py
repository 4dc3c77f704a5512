"""The standalone verifier as one copyable file: `python -m engine.trail.standalone_build evidence_verify.py`.

An outside auditor runs one file with Python's standard library and `cryptography`, no engine. Its code lives in
the modules the trail itself imports (`PARTS`); this joins them: their imports merged (those of one part from
another dropped), then each part's code in order, under the docstring of `standalone_verify`. An import of anything
but the standard library, `cryptography` and an earlier part, or a name defined by two parts, is refused, so the
one file runs the code the engine runs and its tests test.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from engine import __version__

PARTS = ("merkle", "notes", "pades", "standalone_verify")  # each imports only the ones before it
HERE = Path(__file__).resolve().parent
THIRD_PARTY = "cryptography"


class BuildError(Exception):
    """A part cannot go into the one file as it is."""


@dataclass
class Part:
    name: str
    docstring: str
    docstring_source: str  # as written, quotes and escapes included
    imports: list[ast.Import | ast.ImportFrom]
    code: str  # everything after the imports
    defines: set[str]


def _defines(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def read_part(name: str) -> Part:
    """One part: its docstring, its imports (all before its code), its code and the names it defines."""
    text = (HERE / f"{name}.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    last = max(n.end_lineno or n.lineno for n in imports)
    if any(n.lineno <= last for n in tree.body[1:] if n not in imports):
        raise BuildError(f"{name}.py: code before its last top-level import")
    code = "".join(text.splitlines(keepends=True)[last:]).strip("\n")
    first = tree.body[0]
    docstring = ast.get_docstring(tree, clean=False)
    if docstring is None:
        raise BuildError(f"{name}.py: no module docstring")
    return Part(name, docstring, ast.get_source_segment(text, first) or "", imports, code, _defines(tree))


def _import_lines(plain: set[str], froms: dict[str, set[str]]) -> list[str]:
    def order(name: str) -> tuple[int, str]:  # isort's order by type: CONSTANTS, Classes, functions
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    lines = [f"import {m}" for m in sorted(plain)]
    for module in sorted(froms):
        names = ", ".join(sorted(froms[module], key=order))
        line = f"from {module} import {names}"
        lines.append(line if len(line) <= 120 else f"from {module} import (\n    " + ",\n    ".join(
            sorted(froms[module], key=order)) + ",\n)")
    return lines


def merged_imports(parts: list[Part]) -> str:
    """The parts' imports as one block (standard library, then `cryptography`), without those between parts."""
    known = {f"engine.trail.{p.name}" for p in parts}
    sections: dict[bool, tuple[set[str], dict[str, set[str]]]] = {False: (set(), {}), True: (set(), {})}
    defined: set[str] = set()
    for part in parts:
        for node in part.imports:
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if isinstance(node, ast.ImportFrom) and node.module in known and node.level == 0:
                missing = {a.name for a in node.names} - defined
                if missing:
                    raise BuildError(f"{part.name}.py imports {sorted(missing)} from {node.module}, "
                                     "not from an earlier part")
                continue
            for module in modules:
                top = module.split(".")[0]
                if (isinstance(node, ast.ImportFrom) and node.level) or (
                        top != THIRD_PARTY and top not in sys.stdlib_module_names):
                    raise BuildError(f"{part.name}.py imports {module or '.'}: the one file may import only the "
                                     f"standard library and {THIRD_PARTY}")
            plain, froms = sections[modules[0].split(".")[0] == THIRD_PARTY]
            if isinstance(node, ast.Import):
                plain |= {a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names}
            elif node.module != "__future__":
                froms.setdefault(node.module or "", set()).update(
                    a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names)
        defined |= part.defines
    return "\n\n".join("\n".join(_import_lines(*sections[third])) for third in (False, True))


def source() -> str:
    """The text of the one-file verifier."""
    parts = [read_part(name) for name in PARTS]
    seen: dict[str, str] = {}
    for part in parts:
        for name in part.defines - {"__all__"}:
            if name in seen:
                raise BuildError(f"{name} is defined in both {seen[name]}.py and {part.name}.py")
            seen[name] = part.name
    files = ", ".join(f"{p.name}.py" for p in parts)
    out = ["#!/usr/bin/env python3", parts[-1].docstring_source,
           f"# Written by `python -m engine.trail.standalone_build` (Evidence Engine {__version__}) from",
           f"# engine/trail/ {files}: edit those, not this file.", "", "from __future__ import annotations", "",
           merged_imports(parts)]
    for part in parts:
        about = part.docstring.split("\n\n")[0] if part is not parts[-1] else "The report, the state file, the command."
        out += ["" if part is parts[0] else "\n", f"# ==== {part.name}.py " + "=" * (108 - len(part.name)),
                *textwrap.wrap(about, 116, initial_indent="# ", subsequent_indent="# "),
                "", part.code]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the one file to the path given, else to standard output."""
    args = sys.argv[1:] if argv is None else argv
    text = source()
    if args:
        Path(args[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
