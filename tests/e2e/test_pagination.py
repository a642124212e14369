"""Pagination stays stable while other clients insert: nothing seen twice, nothing that existed skipped."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import RestApi
from tests.e2e.rest_helpers import create_namespace, create_table

pytestmark = pytest.mark.e2e


def _pages(rest: RestApi, path: str, field: str, on_each_page: object = None) -> list[object]:
    seen: list[object] = []
    token = ""
    for page_number in range(100):
        response = rest.http.get(rest.url(path), params={"pageToken": token, "pageSize": 2})
        assert response.status_code == 200, response.text
        body = response.json()
        seen.extend(body[field])
        if callable(on_each_page):
            on_each_page(page_number)
        token = body.get("next-page-token")
        if not token:
            return seen
    raise AssertionError("pagination did not end")


def test_namespace_pages_stay_stable_when_namespaces_are_created_between_pages(rest: RestApi) -> None:
    before = [f"n{i:02d}" for i in range(0, 20, 2)]
    for name in before:
        create_namespace(rest, name)

    def insert(page_number: int) -> None:
        create_namespace(rest, f"n{2 * page_number + 1:02d}")  # lands between existing names

    seen = [tuple(parts) for parts in _pages(rest, "namespaces", "namespaces", insert)]

    assert len(seen) == len(set(seen)), "no namespace is listed twice"
    assert {(name,) for name in before} <= set(seen), "every namespace that existed is listed"


def test_table_pages_stay_stable_when_tables_are_created_between_pages(rest: RestApi) -> None:
    create_namespace(rest, "p")
    before = [f"t{i:02d}" for i in range(0, 12, 2)]
    for name in before:
        assert create_table(rest, "p", name).status_code == 200

    def insert(page_number: int) -> None:
        assert create_table(rest, "p", f"t{2 * page_number + 1:02d}").status_code == 200

    seen = [identifier["name"] for identifier in _pages(rest, "namespaces/p/tables", "identifiers", insert)]

    assert len(seen) == len(set(seen))
    assert set(before) <= set(seen)
