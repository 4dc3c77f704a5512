"""The shape of the code: no import cycle in `engine/` or `agents/` (imports inside functions count), packages
that import only the layers below them (LAYERS), the graph module is wiring only, few modules directly in
`engine/`, and the names outside programs import."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from tests.conftest import ROOT

PACKAGES = ("engine", "agents")


def module_names() -> dict[str, Path]:
    """Every module of the two packages, by dotted name (a package by its `__init__`)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _target(name: str, modules: dict[str, Path]) -> str | None:
    """The module of ours that `name` (a module, or a name inside one) resolves to."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """module -> modules of ours it imports, anywhere in its body (inside functions too)."""
    modules = module_names()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = set()
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: up from this module's package
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parent + ([base] if base else []))
                targets = [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                hit = _target(t, modules)
                if hit and hit != name and not (modules[hit].name == "__init__.py" and name.startswith(hit + ".")):
                    edges.add(hit)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_checker_finds_a_cycle_and_accepts_a_chain() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_import_cycle_in_engine_or_agents() -> None:
    graph = import_graph()
    assert {"agents.evidence", "agents.review", "engine.cli.main", "engine.search.store"} <= set(graph)
    assert cycles(graph) == []


# The layers, lowest first: a package imports only packages before it (and the shared modules directly in
# engine/, which import no package; engine.api, the facade, is above every package but web and cli).
LAYERS = ("engine.llm", "engine.relevance", "engine.search", "engine.ingest", "engine.trail", "agents",
          "engine.report", "engine.batch", "engine.web", "engine.cli")
FACADE = "engine.api"


def _layer(module: str) -> str | None:
    """The layer a module belongs to: its package in LAYERS, the facade, else None (a shared module)."""
    if module == FACADE or module.startswith("agents"):
        return FACADE if module == FACADE else "agents"
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 or ".".join(parts[:2]) in LAYERS else None


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports against the layers: a package importing a later one, a shared module importing any package."""
    order = {name: i for i, name in enumerate(LAYERS)}
    order[FACADE] = order["engine.web"] - 0.5
    bad = []
    for source, targets in graph.items():
        here = _layer(source)
        for target in targets:
            there = _layer(target)
            if there is None or there == here:
                continue
            if here is None or order[there] > order[here]:
                bad.append(f"{source} -> {target}")
    return sorted(bad)


def test_the_checker_finds_an_import_against_the_layers() -> None:
    graph = {"engine.search.store": {"engine.ingest.chunking"}, "engine.ingest.pipeline": {"engine.search.store"},
             "engine.config": {"engine.trail.store"}, "engine.web.app": {"engine.api"}}
    assert layer_violations(graph) == ["engine.config -> engine.trail.store",
                                       "engine.search.store -> engine.ingest.chunking"]


def test_packages_import_only_the_layers_below_them() -> None:
    assert layer_violations(import_graph()) == []


def test_engine_keeps_only_shared_modules_at_its_top() -> None:
    top = sorted(p.name for p in (ROOT / "engine").glob("*.py"))
    assert len(top) <= 10, top


def test_the_graph_module_is_wiring_only() -> None:
    """Only builders of graphs: no branching, no loops, no classes; nodes and routing live elsewhere."""
    tree = ast.parse((ROOT / "agents" / "graph.py").read_text())
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert [n.name for n in functions if not n.name.startswith(("build_", "_add_"))] == []
    assert not [n for n in tree.body if isinstance(n, ast.ClassDef)]
    logic = [type(n).__name__ for f in functions for n in ast.walk(f)
             if isinstance(n, ast.If | ast.For | ast.While | ast.Try | ast.With | ast.Lambda)]
    assert logic == []


def test_names_outside_programs_import_stay_importable() -> None:
    assert callable(importlib.import_module("agents.verify").judge)
    assert callable(importlib.import_module("agents.extract").classify_modality)
    assert callable(importlib.import_module("agents.guard").screen)
