"""Read policies as the planner applies them: the rows a principal may read and the columns it may select."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import msgspec
from pyiceberg.expressions import AlwaysTrue, And, BooleanExpression
from pyiceberg.expressions.visitors import bind, extract_field_ids
from pyiceberg.schema import Schema, index_by_id

from catalog_es.errors import BadRequestError, NotAuthorizedError
from catalog_es.planning.request import expression_json, parse_expression

_ALWAYS_TRUE = AlwaysTrue()  # a singleton in pyiceberg: one shared default


@dataclass(frozen=True)
class ReadPolicy:
    """What one principal may read of one table: rows matching `row_filter`, the `columns` named (None: all).

    Several policies on a principal (its own and its roles') combine restrictively: every row filter must hold
    and only columns every policy allows may be read. Fail closed: a policy never widens another.
    """

    row_filter: BooleanExpression = _ALWAYS_TRUE
    columns: frozenset[str] | None = None

    @staticmethod
    def combined(policies: Iterable[tuple[object, Sequence[str] | None]]) -> ReadPolicy | None:
        """The restrictive combination of (row filter JSON or None, allowed columns or None) pairs; None: no policy.

        Raises: BadRequestError when a stored row filter is not an expression (never, as it was parsed when set).
        """
        found = list(policies)
        if not found:
            return None
        row_filter: BooleanExpression = _ALWAYS_TRUE
        columns: frozenset[str] | None = None
        for filter_json, allowed in found:
            if filter_json is not None:
                row_filter = And(row_filter, parse_expression(filter_json))
            if allowed is not None:
                columns = frozenset(allowed) if columns is None else columns & frozenset(allowed)
        return ReadPolicy(row_filter, columns)

    def fingerprint(self) -> str:
        """Stable across processes: part of the plan cache key, so two policies never share a plan."""
        document = {"rows": expression_json(self.row_filter), "columns": sorted(self.columns or ()) or None}
        return hashlib.sha256(msgspec.json.encode(document, order="sorted")).hexdigest()[:32]

    def allowed_ids(self, schema: Schema) -> set[int] | None:
        """Field ids of the allowed columns and everything nested in them; None: every column."""
        if self.columns is None:
            return None
        ids: set[int] = set()
        for name in self.columns:
            try:
                field = schema.find_field(name)
            except ValueError:
                continue  # a dropped column: nothing of it is left to allow
            ids.update(index_by_id(Schema(field)))  # the column and everything nested in it
        return ids

    def enforce(
        self, schema: Schema, select: list[str] | None, client_filter: BooleanExpression, case_sensitive: bool
    ) -> tuple[list[str], BooleanExpression]:
        """The projection and filter to plan with for this principal.

        Raises:
            NotAuthorizedError: the client selects a column the policy hides (or all columns, `select` absent,
                while some are hidden), or filters on one (a filter on a hidden column would tell its values).
        """
        allowed = self.allowed_ids(schema)
        selected = select if select is not None else [field.name for field in schema.fields]
        if allowed is not None:
            forbidden = [name for name in selected if _field_id(schema, name, case_sensitive) not in allowed]
            if forbidden:
                shown = ", ".join(sorted(self.columns or ()))
                what = "all columns (no select)" if select is None else f"columns {forbidden}"
                raise NotAuthorizedError(
                    f"A read policy hides {what} from this principal: select only the allowed columns [{shown}]"
                )
            try:
                filtered = extract_field_ids(bind(schema, client_filter, case_sensitive))
            except ValueError as exc:
                raise BadRequestError(f"Invalid filter: {exc}") from None
            if hidden := sorted(filtered - allowed):
                names = [schema.find_column_name(field_id) for field_id in hidden]
                raise NotAuthorizedError(
                    f"A read policy hides columns {names} from this principal: it may not filter on them"
                )
        return selected, And(client_filter, self.row_filter)


def _field_id(schema: Schema, name: str, case_sensitive: bool) -> int | None:
    try:
        return schema.find_field(name, case_sensitive=case_sensitive).field_id
    except ValueError:
        raise BadRequestError(f"Cannot select unknown column {name!r}") from None
