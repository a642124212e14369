"""No module of the product imports itself back through others: cycles are removed, not worked around with lazy
imports (the layer contracts in .importlinter say who may import whom; this says nothing goes round)."""

from __future__ import annotations

import grimp

PACKAGES = ("api", "catalog_es", "commands", "projections")


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    modules = sorted(m for m in graph.modules if m.split(".")[0] in PACKAGES)
    inside = set(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in modules:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root) & inside)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child) & inside))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_product_has_no_import_cycles() -> None:
    assert _cycles(grimp.build_graph(*PACKAGES)) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for module in ("api.a", "api.b", "api.c"):
        graph.add_module(module)
    graph.add_import(importer="api.a", imported="api.b")
    graph.add_import(importer="api.b", imported="api.a")
    graph.add_import(importer="api.b", imported="api.c")
    assert _cycles(graph) == [["api.a", "api.b"]]
