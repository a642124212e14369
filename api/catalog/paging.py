"""Spec pagination: `pageToken` (empty = first page) and `pageSize` (at least 1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import msgspec

from catalog_es.errors import BadRequestError
from projections.catalog_queries import decode_page_token, encode_page_token

_T = TypeVar("_T")


class PageRequest(msgspec.Struct, frozen=True):
    after: str
    limit: int | None

    @classmethod
    def parse(cls, page_token: str | None, page_size: int | None) -> PageRequest:
        """Raises: BadRequestError for a malformed token or a size below 1."""
        if page_size is not None and page_size < 1:
            raise BadRequestError("pageSize must be at least 1")
        try:
            after = decode_page_token(page_token)
        except ValueError as exc:
            raise BadRequestError(str(exc)) from None
        return cls(after=after, limit=page_size + 1 if page_size is not None else None)

    def cut(self, rows: list[_T], key: Callable[[_T], str]) -> tuple[list[_T], str | None]:
        """The page and the token of the next one (None on the last page)."""
        if self.limit is None or len(rows) < self.limit:
            return rows, None
        page = rows[: self.limit - 1]
        return page, encode_page_token(key(page[-1]))
