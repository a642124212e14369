"""The Events endpoint's request decoding: opaque tokens, both draft generations of field names, operation types."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import msgspec
import pytest

from api.catalog.events_wire import QueryEventsRequest, decode_token, encode_token
from catalog_es.errors import BadRequestError
from projections.audit.iceberg_operations import OPERATIONS, custom_type


def _request(**fields) -> QueryEventsRequest:
    return msgspec.convert(fields, QueryEventsRequest)


def test_a_token_round_trips_and_foreign_ones_are_refused():
    for position in (0, 1, 10_000, 2**63 - 1):
        assert decode_token(encode_token(position)) == position
    for bad in ("", "x", encode_token(5)[:-1] + "!", "Y2VzdjE6LTE", "Y2VzdjE6wrI", "MTIz", encode_token(2**63)):
        with pytest.raises(BadRequestError, match="continuation-token"):
            decode_token(bad)


def test_both_names_of_the_time_filter_mean_the_next_millisecond_on():
    expected = datetime(2025, 1, 1, 0, 0, 0, 124000, tzinfo=UTC)
    millis = int(datetime(2025, 1, 1, 0, 0, 0, 123000, tzinfo=UTC).timestamp() * 1000)
    assert _request(**{"after-timestamp-ms": millis}).since() == expected
    assert _request(**{"since-timestamp-ms": millis}).since() == expected
    assert _request(**{"after-timestamp-ms": millis, "since-timestamp-ms": millis}).since() == expected
    with pytest.raises(BadRequestError, match="give one"):
        _request(**{"after-timestamp-ms": 1, "since-timestamp-ms": 2}).since()


def test_object_ids_come_as_strings_or_objects_under_either_name():
    a, b = uuid.uuid4(), uuid.uuid4()
    request = _request(
        **{"catalog-objects-by-id": [{"uuid": str(a), "type": "table"}], "catalog-objects-by-uuid": [str(b)]}
    )
    assert request.object_ids() == [a, b]
    assert _request().object_ids() is None


def test_custom_stands_for_every_type_that_is_not_catalog_shaped():
    types = _request(**{"operation-types": ["custom"]}).event_types()
    assert types is not None
    assert "io.catalog-es.warehouse.renamed.v1" in types
    assert not set(types) & set(OPERATIONS)
    assert custom_type("io.catalog-es.warehouse.renamed.v1") == "x-catalog-es-warehouse.renamed"
    with pytest.raises(BadRequestError, match="drop-everything"):
        _request(**{"operation-types": ["drop-everything"]}).event_types()
