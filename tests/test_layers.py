"""The import layers of bgfast (docs/architecture.md), checked from the source.

Every module of the package belongs to one layer.  A module imports only from
its own layer or lower ones, and the imports among the modules of a layer
have no cycle.  Imports inside functions count like module-level ones, and
so do ``importlib.import_module("bgfast.x")`` calls.
"""
from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "bgfast"

#: The layers, lowest first.  A new module must be placed here (and in
#: docs/architecture.md) before the test passes.
LAYERS = {
    "core": ("bgfast", "errors", "_files", "_progress", "svg", "_board", "_movegen",
             "position", "formats", "movegen"),
    "tables": ("_bearoff", "bearoff", "met"),
    "evaluation": ("_evaluate", "_net", "_cube", "_evaluator", "net", "evaluate", "cube",
                   "metgen"),
    "search": ("_rollout", "rollout", "_workers", "_ray", "levels"),
    "play": ("game", "players", "matfile", "sgf", "savegame", "duel", "lessons"),
    "analysis": ("_analyze", "analyze", "hint", "traindata", "train", "onesided", "benchmark"),
    "interfaces": ("__main__", "cli", "server"),
}

#: Edges inside a layer left out of the cycle check, each with its reason.
#: Position and the types of its convenience methods (Play, XGID) refer to each
#: other; the methods hand the work to the module that holds the rule.
DELEGATIONS = {
    ("bgfast.position", "bgfast.movegen"): "Position.legal_plays and Position.shots",
    ("bgfast.position", "bgfast.formats"): "Position.from_xgid and Position.xgid",
    ("bgfast.cli", "bgfast.server"): "bgfast serve starts the server, which answers with "
                                     "the CLI's documents and context options",
}

#: Imports from a higher layer that are known and being removed elsewhere.
PENDING: dict = {}

LEVEL = {("bgfast" if name == "bgfast" else f"bgfast.{name}"): i
         for i, names in enumerate(LAYERS.values()) for name in names}
LAYER_NAMES = tuple(LAYERS)


def node(module: str) -> str:
    """The layer-table entry of a module: a subpackage (``bgfast.cli``) is one entry."""
    parts = module.split(".")
    return ".".join(parts[:2])


def package_modules() -> dict[str, tuple[str, bool]]:
    """``{module name: (source, is_package)}`` of every Python module of bgfast."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts.pop()
        out[".".join(parts)] = (path.read_text(encoding="utf-8"), is_pkg)
    return out


def kernel_modules() -> set[str]:
    """The compiled kernels (``bgfast._board`` ...), from their ``.pyx`` sources."""
    return {f"bgfast.{p.stem}" for p in PACKAGE.glob("*.pyx")}


def _resolve(target: str, known: set[str]) -> str:
    """The longest known module that ``target`` (``a.b.c``) names or lies in."""
    parts = target.split(".")
    while parts:
        name = ".".join(parts)
        if name in known:
            return name
        parts.pop()
    return target


def imports(module: str, source: str, is_pkg: bool, known: set[str]) -> list[tuple[str, int]]:
    """``[(imported bgfast module, line)]`` of every import in ``source``, at
    any depth (module level, functions, classes, try blocks)."""
    package = module if is_pkg else module.rpartition(".")[0]
    found = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Import):
            for alias in n.names:
                if alias.name.split(".")[0] == "bgfast":
                    found.append((_resolve(alias.name, known), n.lineno))
        elif isinstance(n, ast.ImportFrom):
            if n.level:
                base = package.split(".")
                base = base[:len(base) - (n.level - 1)]
                where = ".".join(base + ([n.module] if n.module else []))
            else:
                where = n.module or ""
            if where.split(".")[0] != "bgfast":
                continue
            for alias in n.names:
                sub = f"{where}.{alias.name}"
                found.append((_resolve(sub if sub in known else where, known), n.lineno))
        elif isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name not in ("import_module", "__import__") or not n.args:
                continue
            arg = n.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                if arg.value.split(".")[0] == "bgfast":
                    found.append((_resolve(arg.value, known), n.lineno))
            elif isinstance(arg, ast.JoinedStr):
                head = arg.values[0] if arg.values else None
                if (isinstance(head, ast.Constant) and str(head.value).startswith("bgfast")):
                    found.append(("bgfast.?", n.lineno))     # a name made at run time
    return found


def import_graph(modules: dict[str, tuple[str, bool]]) -> dict[str, dict[str, str]]:
    """``{importer: {imported: "module:line"}}`` between layer-table entries."""
    known = set(modules) | kernel_modules()
    graph: dict[str, dict[str, str]] = {}
    for module, (source, is_pkg) in modules.items():
        edges = graph.setdefault(node(module), {})
        for target, line in imports(module, source, is_pkg, known):
            t = node(target) if target != "bgfast.?" else target
            if t != node(module):
                edges.setdefault(t, f"{module}:{line}")
    return graph


def problems(graph: dict[str, dict[str, str]]) -> list[str]:
    """Every breach of the layering, one sentence each (empty: none)."""
    out = []
    for module in sorted(graph):
        if module not in LEVEL:
            out.append(f"{module} is in no layer: add it to LAYERS and docs/architecture.md")
    for module, edges in sorted(graph.items()):
        for target, where in sorted(edges.items()):
            if target == "bgfast.?":
                if LEVEL.get(module) != len(LAYERS) - 1:
                    out.append(f"{where}: an import whose module is named at run time "
                               "cannot be checked")
                continue
            if target not in LEVEL or module not in LEVEL:
                continue
            if LEVEL[target] > LEVEL[module] and (module, target) not in PENDING:
                out.append(f"{where}: {module} ({LAYER_NAMES[LEVEL[module]]}) imports "
                           f"{target} ({LAYER_NAMES[LEVEL[target]]}), a higher layer")
    for cycle in cycles(graph):
        path = " -> ".join(f"{a} ({graph[a][b]})" for a, b in zip(cycle, cycle[1:] + cycle[:1]))
        out.append(f"import cycle: {path} -> {cycle[0]}")
    return out


def cycles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """One cycle of each strongly connected group of modules (Tarjan), the
    delegation and pending edges left out."""
    succ = {m: sorted(t for t in edges if t in graph and (m, t) not in DELEGATIONS
                      and (m, t) not in PENDING)
            for m, edges in graph.items()}
    index, low, stack, on, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(set(group))

    for v in sorted(succ):
        if v not in index:
            visit(v)
    out = []
    for group in groups:
        start = min(group)
        path, seen = [start], {start}
        while True:                    # walk inside the group until it closes
            nxt = [w for w in succ[path[-1]] if w in group]
            back = [w for w in nxt if w in seen]
            if back:
                out.append(path[path.index(back[0]):])
                break
            path.append(nxt[0])
            seen.add(nxt[0])
    return out


# ---------------------------------------------------------------------------

def test_every_module_has_a_layer():
    names = {node(m) for m in package_modules()} | {node(k) for k in kernel_modules()}
    assert sorted(names - set(LEVEL)) == []
    assert sorted(set(LEVEL) - names) == []        # no stale entry either


def test_the_docs_table_is_the_tests_table():
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d)\. [^|]+\| (.+) \|$", text, re.M)
    documented = {int(k) - 1: tuple(re.findall(r"`([^`]+)`", names)) for k, names in rows}
    assert documented == dict(enumerate(LAYERS.values()))


def test_no_import_goes_up_a_layer_or_round_a_cycle():
    assert problems(import_graph(package_modules())) == []


def test_pending_and_delegation_edges_still_exist():
    # an entry whose import is gone must be removed from the table
    graph = import_graph(package_modules())
    for a, b in list(PENDING) + list(DELEGATIONS):
        assert b in graph[a], f"{a} no longer imports {b}: drop the entry"


def _graph_with(extra: dict[str, str]) -> dict[str, dict[str, str]]:
    modules = package_modules()
    for name, source in extra.items():
        modules[name] = (textwrap.dedent(source), False)
    return import_graph(modules)


def test_an_import_from_a_higher_layer_is_named():
    graph = _graph_with({"bgfast.met": """
        import numpy as np

        def generate():
            from .analyze import run       # tables reaching into the analysis
            return run
        """})
    found = problems(graph)
    assert [p for p in found if p.startswith("bgfast.met:")] == ["bgfast.met:5: bgfast.met (tables) imports bgfast.analyze (analysis), "
                     "a higher layer"]
    # the upward import also closes a cycle (met is imported by cube, cube by analyze)
    assert any(p.startswith("import cycle:") and "bgfast.met (bgfast.met:5)" in p for p in found)


def test_a_cycle_inside_a_layer_is_named():
    graph = _graph_with({"bgfast.bearoff": """
        from . import _bearoff
        from .met import MatchScore
        """, "bgfast.met": """
        def table():
            import bgfast.bearoff
        """})
    cyc = [p for p in problems(graph) if p.startswith("import cycle")]
    assert cyc == ["import cycle: bgfast.bearoff (bgfast.bearoff:3) -> "
                   "bgfast.met (bgfast.met:3) -> bgfast.bearoff"]


def test_import_module_strings_and_packages_are_followed():
    graph = _graph_with({"bgfast.errors": """
        import importlib

        def late():
            importlib.import_module("bgfast.cli.core")
            return importlib.import_module(f"bgfast.{'x'}")
        """})
    assert graph["bgfast.errors"] == {"bgfast.cli": "bgfast.errors:5", "bgfast.?": "bgfast.errors:6"}
    found = [p for p in problems(graph) if p.startswith("bgfast.errors:")]
    assert found == [
        "bgfast.errors:6: an import whose module is named at run time cannot be checked",
        "bgfast.errors:5: bgfast.errors (core) imports bgfast.cli (interfaces), a higher layer"]


@pytest.mark.parametrize("source, target", [
    ("from . import _net", "bgfast._net"),
    ("from . import __version__", "bgfast"),
    ("from .evaluate import get_evaluator", "bgfast.evaluate"),
    ("from bgfast.cli import main", "bgfast.cli"),
    ("import bgfast.net as n", "bgfast.net"),
])
def test_import_forms_resolve_to_modules(source, target):
    known = set(package_modules()) | kernel_modules()
    assert imports("bgfast.levels", source, False, known) == [(target, 1)]


def test_relative_imports_from_a_subpackage():
    known = set(package_modules()) | kernel_modules()
    got = imports("bgfast.cli.game", "from .. import matfile\nfrom . import main\n", False, known)
    assert got == [("bgfast.matfile", 1), ("bgfast.cli", 2)]
