"""The Iceberg REST wire contract, spoken raw with httpx: error envelope, paging, HEAD, locations, metrics."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx
import pytest

from tests.e2e.conftest import RestApi, RunningCatalog, eventually
from tests.e2e.rest_helpers import (
    SCHEMA,
    append_snapshot_updates,
    assert_error,
    create_namespace,
    create_table,
    load_table,
    main_snapshot_id,
    ns,
    table_url,
)
from tests.e2e.shared_server import module_catalog, module_server, warehouse, warehouse_rest  # noqa: F401 - fixtures

pytestmark = pytest.mark.e2e


def local_path(location: str) -> str:
    """`/abs/path` of a `file:` location, whichever spelling it uses."""
    parts = urlsplit(location)
    assert parts.scheme == "file", location
    return unquote(parts.path)


def list_namespace_pages(rest: RestApi, params: dict[str, str]) -> list[list[list[str]]]:
    """Every page of listNamespaces, following next-page-token from the given first request."""
    pages: list[list[list[str]]] = []
    params = dict(params)
    for _ in range(20):
        response = rest.http.get(rest.url("namespaces"), params=params)
        assert response.status_code == 200, response.text
        body = response.json()
        pages.append(body["namespaces"])
        token = body.get("next-page-token")
        if not token:
            return pages
        params["pageToken"] = token
    raise AssertionError(f"paging did not end: {pages}")


# --- error envelope ---------------------------------------------------------------------------


def test_config_returns_no_such_warehouse_when_warehouse_is_unknown(catalog: RunningCatalog, rest: RestApi) -> None:
    response = rest.http.get("config", params={"warehouse": "no-such-warehouse"})

    assert_error(response, 404, "NoSuchWarehouseException")


def test_config_advertises_prefix_and_endpoints_when_warehouse_is_known(rest: RestApi) -> None:
    body = rest.http.get("config", params={"warehouse": rest.warehouse}).json()

    assert body["defaults"]["prefix"] == rest.prefix
    assert "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}" in body["endpoints"]
    assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics" in body["endpoints"]


def test_unknown_prefix_returns_404_envelope_when_warehouse_id_is_unknown(rest: RestApi) -> None:
    response = rest.http.get("00000000-0000-0000-0000-00000000abcd/namespaces")

    assert_error(response, 404, "NoSuchWarehouseException")


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b'{"namespace": ["a"]',
        b"",
        b"[]",
        b'{"namespace": "a"}',
        b'{"properties": {}}',
        b'{"namespace": ["a"], "properties": {"k": 1}}',
    ],
    ids=["garbage", "truncated", "empty", "array", "namespace-not-list", "no-namespace", "non-string-property"],
)
def test_create_namespace_returns_400_when_body_is_malformed(rest: RestApi, body: bytes) -> None:
    response = rest.http.post(rest.url("namespaces"), content=body, headers={"Content-Type": "application/json"})

    assert_error(response, 400, "BadRequestException")
    assert rest.http.get(rest.url("namespaces")).json()["namespaces"] == []


def test_commit_returns_400_and_leaves_table_unchanged_when_update_action_is_unknown(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    assert create_table(rest, "shop", "t").status_code == 200
    before = load_table(rest, "shop", "t")

    response = rest.http.post(
        table_url(rest, "shop", "t"),
        json={
            "requirements": [{"type": "assert-table-uuid", "uuid": before["metadata"]["table-uuid"]}],
            "updates": [
                {"action": "set-properties", "updates": {"owner": "mallory"}},
                {"action": "frobnicate-table", "level": 11},
            ],
        },
    )

    assert_error(response, 400, "BadRequestException")
    after = load_table(rest, "shop", "t")
    assert after["metadata-location"] == before["metadata-location"]
    assert after["metadata"] == before["metadata"]
    assert "owner" not in after["metadata"].get("properties", {})


def test_commit_returns_400_and_leaves_table_unchanged_when_requirement_type_is_unknown(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    assert create_table(rest, "shop", "t").status_code == 200
    before = load_table(rest, "shop", "t")

    response = rest.http.post(
        table_url(rest, "shop", "t"),
        json={
            "requirements": [{"type": "assert-moon-phase", "phase": "full"}],
            "updates": [{"action": "set-properties", "updates": {"owner": "mallory"}}],
        },
    )

    assert_error(response, 400, "BadRequestException")
    assert load_table(rest, "shop", "t") == before


def test_commit_returns_409_commit_failed_when_asserted_schema_id_is_stale(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    assert create_table(rest, "shop", "t").status_code == 200
    base_schema_id = load_table(rest, "shop", "t")["metadata"]["current-schema-id"]
    evolved = {
        **SCHEMA,
        "schema-id": base_schema_id + 1,
        "fields": [*SCHEMA["fields"], {"id": 3, "name": "note", "type": "string", "required": False}],
    }

    def add_note_column() -> dict[str, object]:
        return {
            "requirements": [{"type": "assert-current-schema-id", "current-schema-id": base_schema_id}],
            "updates": [
                {"action": "add-schema", "schema": evolved, "last-column-id": 3},
                {"action": "set-current-schema", "schema-id": -1},
            ],
        }

    first = rest.http.post(table_url(rest, "shop", "t"), json=add_note_column())
    assert first.status_code == 200, first.text
    committed = load_table(rest, "shop", "t")
    assert committed["metadata"]["current-schema-id"] != base_schema_id

    stale = rest.http.post(table_url(rest, "shop", "t"), json=add_note_column())

    assert_error(stale, 409, "CommitFailedException")
    assert load_table(rest, "shop", "t") == committed


def test_commit_returns_409_commit_failed_when_asserted_main_snapshot_is_stale(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    assert create_table(rest, "shop", "t").status_code == 200
    base = load_table(rest, "shop", "t")["metadata"]
    assert main_snapshot_id(base) is None
    first = rest.http.post(
        table_url(rest, "shop", "t"),
        json={
            "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None}],
            "updates": append_snapshot_updates(base, 101),
        },
    )
    assert first.status_code == 200, first.text
    committed = load_table(rest, "shop", "t")
    assert main_snapshot_id(committed["metadata"]) == 101

    messages = {  # worded as Iceberg's reference server words them
        None: "Requirement failed: branch main was created concurrently",
        999: "Requirement failed: branch main has changed: expected id 999 != 101",
    }
    for stale_id, message in messages.items():  # "main must not exist" and a wrong id are both outdated now
        stale = rest.http.post(
            table_url(rest, "shop", "t"),
            json={
                "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": stale_id}],
                "updates": append_snapshot_updates(base, 202),
            },
        )
        assert assert_error(stale, 409, "CommitFailedException") == message

    assert load_table(rest, "shop", "t") == committed


def test_commit_returns_404_no_such_table_when_table_is_unknown(rest: RestApi) -> None:
    create_namespace(rest, "shop")

    response = rest.http.post(
        table_url(rest, "shop", "missing"),
        json={"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]},
    )

    assert_error(response, 404, "NoSuchTableException")


def _commit_with_and_without_key(rest: RestApi, url: str, body: bytes) -> tuple[httpx.Response, httpx.Response]:
    """The same commit answered bare (no Idempotency-Key) and by the routed handler (through the idempotency
    middleware, which a key sends it to); each successful answer's ETag is the one loadTable then answers with."""
    headers = {"Content-Type": "application/json"}
    answers = []
    for key in ({}, {"Idempotency-Key": str(uuid.uuid4())}):
        answer = rest.http.post(url, content=body, headers={**headers, **key})
        if answer.status_code == 200:
            assert answer.headers["etag"] == rest.http.get(url).headers["etag"]
        answers.append(answer)
    return answers[0], answers[1]


@pytest.mark.parametrize(
    "body",
    [
        b'{"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}',
        b'{"updates": [{"action": "set-properties", "updates": {"k": "v"}}], "requirements": "none"}',
        b'{"requirements": []}',
        b"[]",
        b"",
        b'{"requirements": [], "updates": [{"action": "frobnicate-table"}]}',
    ],
    ids=["valid", "requirements-not-list", "no-updates", "array", "empty", "unknown-action"],
)
def test_commit_answers_alike_with_and_without_an_idempotency_key(rest: RestApi, body: bytes) -> None:
    """Without a key most commits are answered below the framework (api/catalog/commit_table.py): same status,
    headers and body as the routed handler's, whose 400s for a body its `data` refuses stay its own."""
    create_namespace(rest, "shop")
    assert create_table(rest, "shop", "t").status_code == 200

    bare, routed = _commit_with_and_without_key(rest, table_url(rest, "shop", "t"), body)

    assert bare.status_code == routed.status_code, (bare.text, routed.text)
    volatile = {"date", "x-request-id"}
    assert {k for k in bare.headers if k not in volatile} == {k for k in routed.headers if k not in volatile}
    assert bare.headers["content-type"] == routed.headers["content-type"]
    assert bare.headers["content-length"] == str(len(bare.content))
    if bare.status_code != 200:
        assert bare.json() == routed.json()
        return
    first, second = bare.json(), routed.json()
    assert set(first) == set(second) == {"metadata-location", "metadata"}
    assert first["metadata"]["properties"]["k"] == second["metadata"]["properties"]["k"] == "v"
    assert load_table(rest, "shop", "t")["metadata"] == second["metadata"]


def test_create_namespace_returns_409_already_exists_when_it_exists(rest: RestApi) -> None:
    create_namespace(rest, "shop")

    response = rest.http.post(rest.url("namespaces"), json={"namespace": ["SHOP"]})

    assert_error(response, 409, "AlreadyExistsException")


def test_drop_namespace_returns_409_namespace_not_empty_when_it_holds_a_table(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    assert create_table(rest, "shop", "t").status_code == 200

    response = rest.http.delete(rest.url(f"namespaces/{ns('shop')}"))

    assert_error(response, 409, "NamespaceNotEmptyException")


def test_load_returns_404_envelope_when_namespace_or_table_is_unknown(rest: RestApi) -> None:
    create_namespace(rest, "shop")

    assert_error(rest.http.get(rest.url(f"namespaces/{ns('nope')}")), 404, "NoSuchNamespaceException")
    assert_error(rest.http.get(table_url(rest, "shop", "nope")), 404, "NoSuchTableException")
    assert_error(rest.http.delete(table_url(rest, "shop", "nope")), 404, "NoSuchTableException")


def test_update_namespace_properties_returns_400_when_location_is_outside_the_warehouse(
    rest: RestApi, tmp_path: Path
) -> None:
    create_namespace(rest, "shop")
    url = rest.url(f"namespaces/{ns('shop')}")
    before = rest.http.get(url).json()["properties"]["location"]
    outside = (tmp_path / "elsewhere").as_uri()
    # creating a namespace there is refused; moving one there must be refused the same way
    assert_error(
        rest.http.post(rest.url("namespaces"), json={"namespace": ["other"], "properties": {"location": outside}}),
        400,
        "BadRequestException",
    )

    response = rest.http.post(f"{url}/properties", json={"updates": {"location": outside}})

    assert_error(response, 400, "BadRequestException")
    assert rest.http.get(url).json()["properties"]["location"] == before
    assert create_table(rest, "shop", "t").status_code == 200


# --- pagination -------------------------------------------------------------------------------


@pytest.mark.parametrize("page_size", ["0", "-1"])
def test_list_returns_400_when_page_size_is_not_positive(rest: RestApi, page_size: str) -> None:
    create_namespace(rest, "shop")

    assert_error(rest.http.get(rest.url("namespaces"), params={"pageSize": page_size}), 400, "BadRequestException")
    assert_error(
        rest.http.get(rest.url(f"namespaces/{ns('shop')}/tables"), params={"pageSize": page_size}),
        400,
        "BadRequestException",
    )


def test_namespace_pages_hold_every_namespace_once_when_following_next_page_token(rest: RestApi) -> None:
    names = ["ns-c", "ns-a", "ns-e", "ns-b", "ns-d"]
    for name in names:
        create_namespace(rest, name)

    pages = list_namespace_pages(rest, {"pageSize": "2"})

    assert all(len(page) <= 2 for page in pages)
    assert len(pages) >= 3
    collected = [tuple(namespace) for page in pages for namespace in page]
    assert len(collected) == len(names)
    assert sorted(collected) == sorted((name,) for name in names)


def test_empty_page_token_means_first_page_when_listing_namespaces(rest: RestApi) -> None:
    for i in range(5):
        create_namespace(rest, f"ns{i}")
    first = rest.http.get(rest.url("namespaces"), params={"pageSize": "2"}).json()

    with_empty_token = rest.http.get(rest.url("namespaces"), params={"pageSize": "2", "pageToken": ""})

    assert with_empty_token.status_code == 200, with_empty_token.text
    assert with_empty_token.json() == first
    everything = [tuple(n) for page in list_namespace_pages(rest, {"pageToken": ""}) for n in page]
    assert sorted(everything) == [(f"ns{i}",) for i in range(5)]


def test_table_pages_hold_every_table_once_when_following_next_page_token(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    names = ["t3", "t1", "t5", "t2", "t4"]
    for name in names:
        assert create_table(rest, "shop", name).status_code == 200

    collected: list[str] = []
    params = {"pageSize": "2", "pageToken": ""}
    for _ in range(10):
        body = rest.http.get(rest.url(f"namespaces/{ns('shop')}/tables"), params=params).json()
        assert len(body["identifiers"]) <= 2
        collected += [identifier["name"] for identifier in body["identifiers"]]
        if not body.get("next-page-token"):
            break
        params["pageToken"] = body["next-page-token"]

    assert sorted(collected) == sorted(names)


def test_child_namespaces_are_listed_when_parent_is_given(rest: RestApi) -> None:
    create_namespace(rest, "a")
    create_namespace(rest, "a", "b")
    create_namespace(rest, "a", "b", "c")

    top = rest.http.get(rest.url("namespaces")).json()["namespaces"]
    children = rest.http.get(rest.url("namespaces"), params={"parent": "a\x1fb"}).json()["namespaces"]

    assert top == [["a"]]
    assert children == [["a", "b", "c"]]
    assert_error(rest.http.get(rest.url("namespaces"), params={"parent": "zz"}), 404, "NoSuchNamespaceException")


# --- HEAD -------------------------------------------------------------------------------------


def test_head_namespace_returns_204_when_it_exists_and_404_when_not(rest: RestApi) -> None:
    create_namespace(rest, "a")
    create_namespace(rest, "a", "b")

    assert rest.http.head(rest.url(f"namespaces/{ns('a')}")).status_code == 204
    assert rest.http.head(rest.url(f"namespaces/{ns('a', 'b')}")).status_code == 204
    assert rest.http.head(rest.url(f"namespaces/{ns('A', 'B')}")).status_code == 204
    assert rest.http.head(rest.url(f"namespaces/{ns('b')}")).status_code == 404
    assert rest.http.head(rest.url(f"namespaces/{ns('a', 'x')}")).status_code == 404


def test_head_table_returns_204_when_it_exists_and_404_when_not(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    assert create_table(rest, "shop", "Orders").status_code == 200

    assert rest.http.head(table_url(rest, "shop", "Orders")).status_code == 204
    assert rest.http.head(table_url(rest, "shop", "orders")).status_code == 204
    assert rest.http.head(table_url(rest, "shop", "missing")).status_code == 404
    assert rest.http.head(table_url(rest, "nowhere", "Orders")).status_code == 404


def test_staged_create_commits_nothing_when_stage_create_is_true(rest: RestApi) -> None:
    create_namespace(rest, "shop")

    response = create_table(rest, "shop", "t", {"stage-create": True})

    assert response.status_code == 200, response.text
    assert response.json().get("metadata-location") is None
    assert rest.http.head(table_url(rest, "shop", "t")).status_code == 404
    assert rest.http.get(rest.url(f"namespaces/{ns('shop')}/tables")).json()["identifiers"] == []


# --- locations --------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["", "/", "/sub", "/data/nested"])
def test_create_table_returns_400_when_location_respells_another_tables_location(rest: RestApi, suffix: str) -> None:
    create_namespace(rest, "shop")
    first = create_table(rest, "shop", "first")
    assert first.status_code == 200, first.text
    first_location = first.json()["metadata"]["location"]
    respelled = "file:" + local_path(first_location) + suffix

    response = create_table(rest, "shop", "second", {"location": respelled})

    assert_error(response, 400, "BadRequestException")
    assert rest.http.head(table_url(rest, "shop", "second")).status_code == 404


def test_create_table_returns_400_when_location_is_a_parent_of_another_tables_location(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    first = create_table(rest, "shop", "first")
    assert first.status_code == 200, first.text
    parent = Path(local_path(first.json()["metadata"]["location"])).parent

    response = create_table(rest, "shop", "second", {"location": f"file:{parent}"})

    assert_error(response, 400, "BadRequestException")


def test_create_table_accepts_location_when_it_only_shares_a_name_prefix_with_another(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    first = create_table(rest, "shop", "first")
    assert first.status_code == 200, first.text
    sibling = "file:" + local_path(first.json()["metadata"]["location"]) + "-sibling"

    response = create_table(rest, "shop", "second", {"location": sibling})

    assert response.status_code == 200, response.text
    assert local_path(response.json()["metadata"]["location"]) == local_path(sibling)


def test_create_table_returns_400_when_location_is_outside_the_warehouse(rest: RestApi, tmp_path: Path) -> None:
    create_namespace(rest, "shop")
    outside = tmp_path / "elsewhere" / "t"

    response = create_table(rest, "shop", "t", {"location": outside.as_uri()})

    assert_error(response, 400, "BadRequestException")
    assert rest.http.head(table_url(rest, "shop", "t")).status_code == 404
    assert not outside.exists()


def test_create_table_returns_400_when_location_escapes_the_warehouse_through_dot_dot(
    rest: RestApi, tmp_path: Path
) -> None:
    create_namespace(rest, "shop")
    namespace_location = rest.http.get(rest.url(f"namespaces/{ns('shop')}")).json()["properties"]["location"]
    outside = tmp_path / "escaped" / "t"
    # <namespace location>/../../..../escaped/t: starts inside the warehouse, resolves outside it
    escaping = f"{namespace_location}/{os.path.relpath(outside, local_path(namespace_location))}"
    assert "/../" in escaping

    response = create_table(rest, "shop", "t", {"location": escaping})

    assert_error(response, 400, "BadRequestException")
    assert rest.http.head(table_url(rest, "shop", "t")).status_code == 404
    assert not (tmp_path / "escaped").exists()


def test_commit_returns_400_when_set_location_dot_dot_covers_another_table(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    first = create_table(rest, "shop", "first")
    victim = create_table(rest, "shop", "victim")
    assert first.status_code == victim.status_code == 200
    first_location = first.json()["metadata"]["location"]
    victim_metadata_file = Path(local_path(victim.json()["metadata-location"]))
    # `<first>/..` is the directory that also holds the victim table
    assert victim_metadata_file.is_relative_to(Path(local_path(first_location)).parent)

    response = rest.http.post(
        table_url(rest, "shop", "first"),
        json={"requirements": [], "updates": [{"action": "set-location", "location": f"{first_location}/.."}]},
    )

    assert_error(response, 400, "BadRequestException")
    assert load_table(rest, "shop", "first")["metadata"]["location"] == first_location
    # purging the first table must not touch the victim's files
    assert rest.http.delete(table_url(rest, "shop", "first"), params={"purgeRequested": "true"}).status_code == 204
    first_metadata_file = Path(local_path(first.json()["metadata-location"]))
    assert eventually(lambda: not first_metadata_file.exists())  # the purge ran
    assert victim_metadata_file.exists()
    assert load_table(rest, "shop", "victim")["metadata-location"] == victim.json()["metadata-location"]


# --- metrics ----------------------------------------------------------------------------------


def test_report_metrics_returns_204_when_table_exists(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    assert create_table(rest, "shop", "t").status_code == 200
    report = {
        "report-type": "scan-report",
        "table-name": "shop.t",
        "snapshot-id": -1,
        "filter": True,
        "schema-id": 0,
        "projected-field-ids": [1, 2],
        "projected-field-names": ["id", "name"],
        "metrics": {"total-planning-duration": {"count": 1, "time-unit": "nanoseconds", "total-duration": 5}},
    }

    response = rest.http.post(f"{table_url(rest, 'shop', 't')}/metrics", json=report)

    assert response.status_code == 204, response.text
    assert response.content == b""
