"""No module of the product imports itself back through others: cycles are removed, not worked around with lazy
imports (the layer contracts in .importlinter say who may import whom; this says nothing goes round)."""

from __future__ import annotations

import grimp

PACKAGES = ("api", "catalog_es", "commands", "projections")


def _cycles(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    """Each direct import `a -> b` of the product from which a chain of imports leads back from `b` to `a`."""
    modules = sorted(m for m in graph.modules if m.split(".")[0] in PACKAGES)
    return [
        (importer, imported)
        for importer in modules
        for imported in sorted(graph.find_modules_directly_imported_by(importer))
        if imported.split(".")[0] in PACKAGES and graph.chain_exists(importer=imported, imported=importer)
    ]


def test_the_product_has_no_import_cycles() -> None:
    assert _cycles(grimp.build_graph(*PACKAGES)) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for module in ("api.a", "api.b", "api.c"):
        graph.add_module(module)
    graph.add_import(importer="api.a", imported="api.b")
    graph.add_import(importer="api.b", imported="api.a")
    graph.add_import(importer="api.b", imported="api.c")
    assert _cycles(graph) == [("api.a", "api.b"), ("api.b", "api.a")]
