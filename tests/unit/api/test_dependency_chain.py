"""Catalog routes resolve their dependencies one at a time (no anyio task per dependency, litestar#4563)."""

from __future__ import annotations

from litestar.routes import HTTPRoute

from api.app import create_app
from api.settings import Settings


def test_every_catalog_route_resolves_one_dependency_per_level() -> None:
    app = create_app(Settings(), "postgresql://unused")  # the pool opens only in the lifespan
    checked, concurrent = 0, []
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or not route.path.startswith("/catalog/v1/{prefix"):
            continue
        for method, (_, kwargs_model) in route.route_handler_map.items():
            checked += 1
            levels = [sorted(dependency.key for dependency in level) for level in kwargs_model.dependency_batches]
            concurrent += [(route.path, method, level) for level in levels if len(level) > 1]
    assert checked > 20, "the catalog routes were found"
    assert concurrent == []
