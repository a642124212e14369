"""A planTableScan request as the planner takes it: decoded, validated, and spelled one way for the cache key."""

from __future__ import annotations

from typing import Any

import msgspec
from pydantic import TypeAdapter, ValidationError
from pyiceberg.expressions import AlwaysTrue, BooleanExpression, SerializableBooleanExpression

from catalog_es.errors import BadRequestError

_EXPRESSION: TypeAdapter[BooleanExpression] = TypeAdapter(BooleanExpression)
# Dumping needs SerializeAsAny: through the base class pydantic writes a subclass as `{}`.
_EXPRESSION_OUT: TypeAdapter[BooleanExpression] = TypeAdapter(SerializableBooleanExpression)


class ScanRequest(msgspec.Struct, frozen=True, kw_only=True, rename="kebab", omit_defaults=True):
    """The spec's PlanTableScanRequest (1.11); `filter` stays JSON until `expression()` parses it with pyiceberg."""

    snapshot_id: int | None = None
    select: list[str] | None = None
    filter: Any = None
    min_rows_requested: int | None = None
    case_sensitive: bool = True
    use_snapshot_schema: bool = False
    start_snapshot_id: int | None = None
    end_snapshot_id: int | None = None
    stats_fields: list[str] | None = None

    def validated(self) -> ScanRequest:
        """Raises: BadRequestError for the combinations the spec calls invalid, or a filter pyiceberg cannot read."""
        if self.start_snapshot_id is not None and self.end_snapshot_id is None:
            raise BadRequestError("end-snapshot-id is required when start-snapshot-id is given")
        if self.snapshot_id is not None and (self.start_snapshot_id is not None or self.end_snapshot_id is not None):
            raise BadRequestError("A scan is either point-in-time (snapshot-id) or incremental (start/end-snapshot-id)")
        self.expression()
        return self

    @property
    def incremental(self) -> bool:
        return self.end_snapshot_id is not None

    def expression(self) -> BooleanExpression:
        """The filter as pyiceberg's expression (its JSON form is the spec's `Expression`).

        Raises: BadRequestError when it is not one.
        """
        if self.filter is None:
            return AlwaysTrue()
        try:
            return _EXPRESSION.validate_python(self.filter)
        except (ValidationError, ValueError, TypeError) as exc:
            raise BadRequestError(f"Invalid filter expression: {_first_error(exc)}") from None

    def key(self) -> bytes:
        """The request spelled one way (the filter re-serialized by pyiceberg), for cache keys and plan tasks."""
        canonical = msgspec.structs.replace(self, filter=expression_json(self.expression()), min_rows_requested=None)
        return msgspec.json.encode(canonical, order="sorted")


def expression_json(expression: BooleanExpression) -> Any:
    """An expression in the spec's JSON form (`true` for no filter)."""
    return msgspec.json.decode(_EXPRESSION_OUT.dump_json(expression))


def parse_expression(document: Any) -> BooleanExpression:
    """Raises: BadRequestError when `document` is not an expression in the spec's JSON form."""
    return ScanRequest(filter=document).expression()


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        return str(errors[0].get("msg", exc)) if errors else str(exc)
    return str(exc)
