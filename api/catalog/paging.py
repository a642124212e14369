"""Spec pagination: `pageToken` (empty = first page) and `pageSize` (at least 1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import msgspec

from catalog_es.errors import BadRequestError

_T = TypeVar("_T")

# The page token is the sort key of the page's last item: any string is a valid position, pages stay
# stable under concurrent inserts, and a client can never make us scan past the end.
MAX_PAGE_SIZE = 1000


class PageRequest(msgspec.Struct, frozen=True):
    after: str
    limit: int | None

    @classmethod
    def parse(cls, page_token: str | None, page_size: int | None) -> PageRequest:
        """Raises: BadRequestError for a malformed token or a size below 1."""
        if page_size is not None and page_size < 1:
            raise BadRequestError("pageSize must be at least 1")
        limit = min(page_size, MAX_PAGE_SIZE) + 1 if page_size is not None else None
        return cls(after=page_token or "", limit=limit)

    def cut(self, rows: list[_T], key: Callable[[_T], str]) -> tuple[list[_T], str | None]:
        """The page and the token of the next one (None on the last page)."""
        if self.limit is None or len(rows) < self.limit:
            return rows, None
        page = rows[: self.limit - 1]
        return page, key(page[-1])
