"""S3 remote signing end to end: moto with IAM enforcement, builtin authorization, pyiceberg's S3V4RestSigner.

The pyiceberg client holds no S3 keys: every request it sends to the store is signed by the catalog,
which checks the caller's privilege on the table and that the request stays in the table's location.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import boto3
import httpx
import pyarrow as pa
import pytest
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import SignError

from tests.e2e.auth.conftest import shared_authz_server
from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.auth.test_authorization import _table_id
from tests.e2e.conftest import RunningCatalog
from tests.integration.s3_iam_server import IamS3
from tests.integration.s3_server import REGION

pytestmark = pytest.mark.e2e

ROWS = pa.table({"id": pa.array([1, 2, 3], type=pa.int64()), "item": ["a", "b", "c"]})


@pytest.fixture(scope="module")
def signing_server(
    pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory, idp: OpenIdProvider
) -> Iterator[RunningCatalog]:
    """The module's one builtin-authz catalog (`shared_authz_server`), with a secrets key and allowed
    reads audited: each test on an S3 warehouse and a bucket of its own."""
    more = {"CATALOG_ES__SECRETS_KEY": _secrets_key(), "CATALOG_ES__AUDIT_READS": "true"}
    with shared_authz_server(pg_admin_dsn, tmp_path_factory, idp, **more) as running:
        yield running


@pytest.fixture
def signing(signing_server: RunningCatalog, idp: OpenIdProvider, iam_s3: IamS3) -> tuple[RunningCatalog, str, str, str]:
    """An S3 warehouse of the test's own (remote signing on, keys kept by the catalog) on the module's server;
    alice may create and modify in it, bob may only read; allowed reads are audited. Returns (catalog, warehouse
    id, bucket, warehouse name)."""
    running = signing_server
    name = f"signed-{uuid.uuid4().hex[:12]}"
    bucket = f"signed-{uuid.uuid4().hex[:12]}"
    iam_s3.client().create_bucket(Bucket=bucket)
    profile = {
        "type": "s3",
        "bucket": bucket,
        "key-prefix": "wh",
        "region": REGION,
        "endpoint": iam_s3.endpoint,
        "path-style-access": True,
        "flavor": "s3-compat",  # remote signing is on by default (as in Lakekeeper); STS is off
    }
    credential = {
        "type": "s3",
        "credential-type": "access-key",
        "access-key-id": iam_s3.access_key_id,
        "secret-access-key": iam_s3.secret_access_key,
    }
    admin = _management(running, idp, "admin")
    body = {"warehouse-name": name, "storage-profile": profile, "storage-credential": credential}
    created = admin.post("/warehouse", json=body)
    assert created.status_code == 201, created.text
    warehouse_id = created.json()["warehouse-id"]
    for client in ("alice", "bob"):  # /config provisions the user (even when it may not see the warehouse yet)
        _rest(running, idp, client).get("/v1/config", params={"warehouse": name})
    grants = [
        {"type": "create", "user": "oidc~alice"},
        {"type": "modify", "user": "oidc~alice"},
        {"type": "select", "user": "oidc~bob"},
    ]
    granted = admin.post(f"/permissions/warehouse/{warehouse_id}/assignments", json={"writes": grants, "deletes": []})
    assert granted.status_code == 204, granted.text
    return running, warehouse_id, bucket, name


def _secrets_key() -> str:
    from catalog_es.store.secrets import generate_secrets_key  # noqa: PLC0415

    return generate_secrets_key()


def _management(catalog: RunningCatalog, idp: OpenIdProvider, client: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {idp.token(client)}"}
    return httpx.Client(base_url=f"{catalog.base_url}/management/v1", headers=headers, timeout=30)


def _rest(catalog: RunningCatalog, idp: OpenIdProvider, client: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {idp.token(client)}"}
    return httpx.Client(base_url=catalog.catalog_uri, headers=headers, timeout=30)


def _keyless_pyiceberg(catalog: RunningCatalog, idp: OpenIdProvider, client: str, warehouse: str) -> Catalog:
    secret, _ = idp.clients[client]
    return load_catalog(
        f"{client}-signing",
        type="rest",
        uri=catalog.catalog_uri,
        warehouse=warehouse,
        credential=f"{client}:{secret}",
        **{"oauth2-server-uri": idp.token_endpoint},  # a stock client: the table's config says how to sign
    )


def _sign(http: httpx.Client, path: str, method: str, uri: str) -> httpx.Response:
    return http.post(path, json={"region": REGION, "method": method, "uri": uri, "headers": {}})


def test_keyless_pyiceberg_writes_and_reads_through_remote_signing_and_refusals_hold(
    signing: tuple[RunningCatalog, str, str, str], idp: OpenIdProvider, iam_s3: IamS3
) -> None:
    running, warehouse_id, bucket, name = signing
    alice = _keyless_pyiceberg(running, idp, "alice", name)
    alice.create_namespace("sales")
    orders = alice.create_table("sales.orders", schema=ROWS.schema)
    alice.create_table("sales.items", schema=ROWS.schema)
    orders.append(ROWS)
    read_back = alice.load_table("sales.orders").scan().to_arrow().sort_by("id")
    assert read_back.column("id").to_pylist() == [1, 2, 3]
    assert read_back.column("item").to_pylist() == ["a", "b", "c"]

    # The files are really in the bucket, and the store refuses a request nobody signed.
    keys = [item["Key"] for item in iam_s3.client().list_objects_v2(Bucket=bucket, Prefix="wh/")["Contents"]]
    data_file = next(key for key in keys if key.endswith(".parquet"))
    anonymous = boto3.client(
        "s3",
        endpoint_url=iam_s3.endpoint,
        region_name=REGION,
        config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}),
    )
    with pytest.raises(ClientError):
        anonymous.get_object(Bucket=bucket, Key=data_file)

    # loadTable tells clients where to sign and never hands out the warehouse's keys.
    alice_http = _rest(running, idp, "alice")
    loaded = alice_http.get(f"/v1/{warehouse_id}/namespaces/sales/tables/orders")
    config = loaded.json()["config"]
    assert config["s3.remote-signing-enabled"] == "true"
    assert config["py-io-impl"] == "pyiceberg.io.fsspec.FsspecFileIO"  # pyiceberg's default IO cannot sign
    assert config["s3.signer.uri"] == running.catalog_uri
    assert config["s3.signer.endpoint"] == f"v1/{warehouse_id}/namespaces/sales/tables/orders/sign"
    assert iam_s3.secret_access_key not in loaded.text
    assert iam_s3.access_key_id not in loaded.text

    # A signature for the table's own object works against the IAM-enforcing store.
    orders_uri = f"{iam_s3.endpoint}/{bucket}/{data_file}"
    signed = _sign(alice_http, config["s3.signer.endpoint"], "GET", orders_uri)
    assert signed.status_code == 200, signed.text
    assert signed.headers["cache-control"] == "no-cache"
    fetched = httpx.get(signed.json()["uri"], headers={k: v[0] for k, v in signed.json()["headers"].items()})
    assert fetched.status_code == 200
    assert fetched.content[:4] == b"PAR1"

    # An object of another table, through this table's route: refused with the error envelope.
    items_location = alice.load_table("sales.items").location().removeprefix(f"s3://{bucket}/")
    other = _sign(alice_http, config["s3.signer.endpoint"], "PUT", f"{iam_s3.endpoint}/{bucket}/{items_location}/x")
    assert other.status_code == 403
    assert other.json()["error"]["code"] == 403
    assert other.json()["error"]["type"] == "ForbiddenException"
    outside = _sign(alice_http, config["s3.signer.endpoint"], "GET", f"{iam_s3.endpoint}/{bucket}/wh/x/../y")
    assert outside.status_code == 403

    # Bob may read: a GET is signed; a PUT is not, on any of the signer routes.
    bob_http = _rest(running, idp, "bob")
    assert _sign(bob_http, config["s3.signer.endpoint"], "GET", orders_uri).status_code == 200
    table_id = str(orders.metadata.table_uuid)
    put_uri = f"{iam_s3.endpoint}/{bucket}/{orders.location().removeprefix(f's3://{bucket}/')}/data/evil.parquet"
    for route in (
        config["s3.signer.endpoint"],
        f"v1/signer/{warehouse_id}/tabular-id/{table_id}/v1/aws/s3/sign",
        f"v1/{warehouse_id}/v1/aws/s3/sign",
        "v1/aws/s3/sign",
    ):
        refused = _sign(bob_http, route, "PUT", put_uri)
        assert refused.status_code == 403, (route, refused.text)
        allowed = _sign(alice_http, route, "PUT", put_uri)
        assert allowed.status_code == 200, (route, allowed.text)

    # Alice's PUT signature really writes; the same request is refused by the store without it.
    headers = {k: v[0] for k, v in allowed.json()["headers"].items()}
    assert httpx.put(put_uri, content=b"", headers=headers).status_code == 200
    assert httpx.put(put_uri, content=b"").status_code == 403

    # A reader's keyless pyiceberg reads through the signer too; its writes are refused.
    bob = _keyless_pyiceberg(running, idp, "bob", name)
    assert bob.load_table("sales.orders").scan().to_arrow().num_rows == 3
    with pytest.raises(SignError, match="403"):
        bob.load_table("sales.orders").append(ROWS)
    assert alice.load_table("sales.orders").scan().to_arrow().num_rows == 3


def test_sign_requests_are_in_the_access_log_without_query_strings_or_headers(
    signing: tuple[RunningCatalog, str, str, str], idp: OpenIdProvider, iam_s3: IamS3
) -> None:
    running, warehouse_id, bucket, name = signing
    began = datetime.now(UTC).isoformat()  # the module's earlier tests signed for bob too
    alice = _keyless_pyiceberg(running, idp, "alice", name)
    alice.create_namespace("audit")
    table = alice.create_table("audit.signed", schema=ROWS.schema)
    route = f"v1/{warehouse_id}/namespaces/audit/tables/signed/sign"
    key_uri = f"{iam_s3.endpoint}/{bucket}/{table.location().removeprefix(f's3://{bucket}/')}/data/f.parquet"
    secret_query = "?response-content-disposition=SECRETQUERY&response-content-type=SECRETTOKEN"
    bob_http = _rest(running, idp, "bob")
    body = {
        "region": REGION,
        "method": "GET",
        "uri": key_uri + secret_query,
        "headers": {"x-amz-security-token": ["SECRETHDR"]},
    }
    assert bob_http.post(route, json=body, headers={"x-request-id": "sign-read"}).status_code == 200
    write = {**body, "method": "PUT", "uri": key_uri}
    refused = bob_http.post(route, json=write, headers={"x-request-id": "sign-write"})
    assert refused.status_code == 403
    alien = bob_http.post("v1/aws/s3/sign", json={**body, "uri": f"{iam_s3.endpoint}/elsewhere/k"})
    assert alien.status_code == 403

    admin = _management(running, idp, "admin")
    entries = admin.get("/access-log", params={"actor": "oidc~bob", "since": began}).json()["entries"]
    signs = [e for e in entries if e["operation"].startswith("sign_")]
    summary = [(e["request-id"], e["decision"], e["status"], e["method"], e["path"], e["operation"]) for e in signs]
    assert summary[:2] == [
        ("sign-read", "allowed", 200, "GET", key_uri, "sign_table_request"),
        ("sign-write", "denied", 403, "PUT", key_uri, "sign_table_request"),
    ]
    assert summary[2][1:] == ("denied", 403, "GET", f"{iam_s3.endpoint}/elsewhere/k", "sign_any_request")
    assert f"GetObject: select on table {table.metadata.table_uuid}" in signs[0]["reason"]
    assert signs[0]["reason"].endswith(f"s3://{bucket}/{key_uri.split(f'/{bucket}/', 1)[1]}")
    assert "write" in signs[1]["reason"]
    for secret in ("SECRETQUERY", "SECRETTOKEN", "SECRETHDR", iam_s3.secret_access_key):
        assert secret not in str(entries)


def test_the_signer_signs_only_what_it_checked(
    signing: tuple[RunningCatalog, str, str, str], idp: OpenIdProvider, iam_s3: IamS3
) -> None:
    """The pen-test's probes: each was signed before, and each signature worked against the store."""
    running, warehouse_id, bucket, name = signing
    alice = _keyless_pyiceberg(running, idp, "alice", name)
    alice.create_namespace("probe")
    mine = alice.create_table("probe.mine", schema=ROWS.schema)
    theirs = alice.create_table("probe.theirs", schema=ROWS.schema)
    theirs.append(ROWS)
    s3 = iam_s3.client()
    their_key = next(
        item["Key"]
        for item in s3.list_objects_v2(Bucket=bucket, Prefix=theirs.location().removeprefix(f"s3://{bucket}/"))[
            "Contents"
        ]
        if item["Key"].endswith(".parquet")
    )
    my_prefix = mine.location().removeprefix(f"s3://{bucket}/")
    my_object = f"{iam_s3.endpoint}/{bucket}/{my_prefix}/data/stolen.parquet"
    route = f"v1/{warehouse_id}/namespaces/probe/tables/mine/sign"
    alice_http, bob_http = _rest(running, idp, "alice"), _rest(running, idp, "bob")

    def sign(http: httpx.Client, method: str, uri: str, headers: dict[str, list[str]]) -> httpx.Response:
        return http.post(route, json={"region": REGION, "method": method, "uri": uri, "headers": headers})

    # A confused deputy: a PUT into alice's table that copies another table's object (any key the warehouse reads).
    for header in ("x-amz-copy-source", "X-Amz-Copy-Source"):
        copy = sign(alice_http, "PUT", my_object, {header: [f"{bucket}/{their_key}"]})
        assert copy.status_code == 403, copy.text
        assert copy.json()["error"]["type"] == "ForbiddenException"
    for header, value in [
        ("x-amz-metadata-directive", "REPLACE"),
        ("x-amz-acl", "public-read"),
        ("x-amz-grant-full-control", "id=someone"),
        ("x-amz-website-redirect-location", "/elsewhere"),
    ]:
        assert sign(alice_http, "PUT", my_object, {header: [value]}).status_code == 403, header
    # A Host of another bucket is never signed instead of the checked URL's host.
    other_host = {"host": [f"other-bucket.{iam_s3.endpoint.split('://', 1)[1]}"]}
    assert sign(alice_http, "PUT", my_object, other_host).status_code == 403
    # A listing checked on one `prefix` and run on another; bucket sub-resources, for a select-only user.
    listing = f"{iam_s3.endpoint}/{bucket}?list-type=2&prefix={my_prefix}/&prefix={their_key.rsplit('/', 1)[0]}/"
    assert sign(bob_http, "GET", listing, {}).status_code == 403
    for subresource in ("acl", "policy", "versions"):
        probe = sign(bob_http, "GET", f"{iam_s3.endpoint}/{bucket}?{subresource}&prefix={my_prefix}/", {})
        assert probe.status_code == 403, subresource
    # What held keeps holding: the plain PUT and a listing of the table itself are signed, and the PUT works.
    plain = sign(alice_http, "PUT", my_object, {"content-type": ["application/octet-stream"]})
    assert plain.status_code == 200, plain.text
    sent = {"content-type": "application/octet-stream", **{k: v[0] for k, v in plain.json()["headers"].items()}}
    assert httpx.put(my_object, content=b"x", headers=sent).status_code == 200
    assert sign(bob_http, "GET", f"{iam_s3.endpoint}/{bucket}?list-type=2&prefix={my_prefix}/", {}).status_code == 200
    # A past catalog (as-of prefix) is read-only: no signer is advertised there, and none signs.
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    prefix = alice_http.get("v1/config", params={"warehouse": f"{name}@{now}"}).json()["defaults"]["prefix"]
    past = alice_http.get(f"v1/{prefix}/namespaces/probe/tables/mine")
    assert past.status_code == 200, past.text
    assert past.json()["config"]["s3.remote-signing-enabled"] == "false"
    assert "s3.signer.uri" not in past.json()["config"]
    as_of_route = f"v1/{prefix}/namespaces/probe/tables/mine/sign"
    read = {"region": REGION, "method": "GET", "uri": my_object, "headers": {}}
    assert alice_http.post(as_of_route, json=read).status_code == 403
    stored = s3.list_objects_v2(Bucket=bucket, Prefix=f"{my_prefix}/data/")["Contents"]
    assert [(item["Key"], item["Size"]) for item in stored] == [(f"{my_prefix}/data/stolen.parquet", 1)]


def test_principal_under_read_policy_gets_signatures_for_its_policy_files_only(
    signing: tuple[RunningCatalog, str, str, str], idp: OpenIdProvider, iam_s3: IamS3
) -> None:
    """Issue 33: under a read policy bob's signatures reach his policy's files only (copies of the allowed rows
    and columns, where every file of his plans is): his keyless pyiceberg reads the allowed rows; a table file,
    a write or a listing is not signed. Plans refuse his hidden column."""
    running, warehouse_id, bucket, name = signing
    alice = _keyless_pyiceberg(running, idp, "alice", name)
    alice.create_namespace("sales")
    orders = alice.create_table("sales.orders", schema=ROWS.schema)
    orders.append(ROWS)
    # Before bob's client exists: s3fs shares one filesystem (and its signer hook) between same-config clients.
    data_file = next(task.file.file_path for task in orders.scan().plan_files())
    table_id = _table_id(running, "orders", warehouse_id)
    admin = _management(running, idp, "admin")
    policy = {"user": "oidc~bob", "row-filter": {"type": "lt", "term": "id", "value": 3}, "columns": ["id"]}
    set_policy = admin.post(f"/permissions/warehouse/{warehouse_id}/table/{table_id}/read-policies", json=policy)
    assert set_policy.status_code == 204, set_policy.text

    bob = _keyless_pyiceberg(running, idp, "bob", name)
    read = bob.load_table("sales.orders").scan(selected_fields=("id",)).to_arrow()
    assert sorted(read["id"].to_pylist()) == [1, 2]

    bob_http = _rest(running, idp, "bob")
    table_path = f"/v1/{warehouse_id}/namespaces/sales/tables/orders"
    loaded = bob_http.get(table_path, headers={"X-Iceberg-Access-Delegation": "vended-credentials,remote-signing"})
    assert loaded.status_code == 200, loaded.text
    assert loaded.json()["config"]["scan-planning-mode"] == "server"
    sign_path = loaded.json()["config"]["s3.signer.endpoint"]
    assert not loaded.json().get("storage-credentials")  # STS is off here
    object_uri = f"{iam_s3.endpoint}/{bucket}/{data_file.removeprefix(f's3://{bucket}/')}"
    refused = _sign(bob_http, sign_path, "GET", object_uri)
    assert refused.status_code == 403
    assert "read policy" in refused.json()["error"]["message"]
    planned = bob_http.post(f"{table_path}/plan", json={"select": ["id"]})
    assert planned.status_code == 200, planned.text
    [copy] = [task["data-file"]["file-path"] for task in planned.json()["file-scan-tasks"]]
    assert copy.startswith(f"{orders.location()}/policy-files/")
    copy_uri = f"{iam_s3.endpoint}/{bucket}/{copy.removeprefix(f's3://{bucket}/')}"
    signed = _sign(bob_http, sign_path, "GET", copy_uri)
    assert signed.status_code == 200, signed.text
    fetched = httpx.get(signed.json()["uri"], headers={k: v[0] for k, v in signed.json()["headers"].items()})
    assert fetched.status_code == 200
    assert fetched.content[:4] == b"PAR1"
    assert _sign(bob_http, sign_path, "PUT", copy_uri).status_code == 403
    listing = f"{iam_s3.endpoint}/{bucket}?list-type=2&prefix={copy.removeprefix(f's3://{bucket}/').rsplit('/', 1)[0]}/"
    assert _sign(bob_http, sign_path, "GET", listing).status_code == 403
    assert bob_http.post(f"{table_path}/plan", json={"select": ["item"]}).status_code == 403
    # Alice, under no policy, still signs the table's files.
    alice_http = _rest(running, idp, "alice")
    assert _sign(alice_http, sign_path, "GET", object_uri).status_code == 200
