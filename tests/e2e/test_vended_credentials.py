"""Vended S3 credentials end to end: moto enforcing IAM, builtin authorization, pyiceberg with no keys of its own."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pyarrow as pa
import pytest
from botocore.exceptions import ClientError
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from catalog_es.store.secrets import generate_secrets_key
from tests.databases import new_database
from tests.e2e.auth.conftest import bootstrapped, catalog_server
from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.conftest import RunningCatalog, free_port, stop_catalog
from tests.integration.s3_server import REGION, IamStore, s3_iam  # noqa: F401 - the IAM-enforcing fixture

pytestmark = pytest.mark.e2e

CLIENTS = {"admin": ("admin-secret", []), "alice": ("alice-secret", []), "bob": ("bob-secret", [])}
SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
ROWS = pa.table({"id": pa.array([1, 2, 3], type=pa.int64())})
VENDED = {"X-Iceberg-Access-Delegation": "vended-credentials"}
# The characters of Lakekeeper's special-character tests that an S3 key and pyiceberg's paths both keep.
SPECIAL = "tab le$'+\"*x"


@pytest.fixture(scope="module")
def idp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenIdProvider]:
    provider = OpenIdProvider(tmp_path_factory.mktemp("oidc"), free_port(), CLIENTS)
    provider.start()
    yield provider
    provider.stop()


@pytest.fixture(scope="module")
def database(pg_admin_dsn: str) -> Iterator[str]:
    with new_database(pg_admin_dsn) as dsn:
        yield dsn


@pytest.fixture(scope="module")
def server(
    database: str,
    tmp_path_factory: pytest.TempPathFactory,
    idp: OpenIdProvider,
    s3_iam: IamStore,  # noqa: F811
) -> Iterator[RunningCatalog]:
    """Builtin authorization; the server has no AWS keys in its environment (tests/conftest.py strips them)."""
    tmp = tmp_path_factory.mktemp("vend")
    secrets = {"CATALOG_ES__SECRETS_KEY": generate_secrets_key()}
    running = bootstrapped(catalog_server(database, tmp, idp, "builtin", **secrets), idp)
    assert not any(key.startswith("AWS_ACCESS") for key in running.env)
    bucket = f"vend-{uuid.uuid4().hex[:12]}"
    s3_iam.s3(s3_iam.admin).create_bucket(Bucket=bucket)
    profile = {
        "type": "s3",
        "bucket": bucket,
        "key-prefix": "lake",
        "region": REGION,
        "endpoint": s3_iam.endpoint,
        "path-style-access": True,
        "sts-enabled": True,
        "sts-role-arn": s3_iam.role_arn,
        "sts-token-validity-seconds": 900,
    }
    access_key_id, secret = s3_iam.warehouse
    credential = {
        "type": "s3",
        "credential-type": "access-key",
        "aws-access-key-id": access_key_id,
        "aws-secret-access-key": secret,
    }
    body = {"warehouse-name": "vend", "storage-profile": profile, "storage-credential": credential}
    created = _management(running, idp, "admin").post("/warehouse", json=body)
    assert created.status_code in (200, 201), created.text
    yield running
    stop_catalog(running)


def _management(catalog: RunningCatalog, idp: OpenIdProvider, client: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {idp.token(client)}"}
    return httpx.Client(base_url=f"{catalog.base_url}/management/v1", headers=headers, timeout=30)


def _pyiceberg(catalog: RunningCatalog, idp: OpenIdProvider, client: str) -> Catalog:
    """pyiceberg with a token and nothing else: no S3 keys, so every data file goes through vended ones."""
    secret, _ = idp.clients[client]
    return load_catalog(
        client,
        type="rest",
        uri=catalog.catalog_uri,
        warehouse="vend",
        credential=f"{client}:{secret}",
        **{"oauth2-server-uri": idp.token_endpoint},
    )


def _catalog_http(catalog: RunningCatalog, idp: OpenIdProvider, client: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {idp.token(client)}"}
    http = httpx.Client(base_url=f"{catalog.catalog_uri}/v1", headers=headers, timeout=30)
    config = http.get("/config", params={"warehouse": "vend"})
    if config.status_code == 200:
        http.base_url = httpx.URL(f"{catalog.catalog_uri}/v1/{config.json()['defaults']['prefix']}")
    return http


def _grant(catalog: RunningCatalog, idp: OpenIdProvider, table: str, user: str, privilege: str) -> None:
    with psycopg.connect(catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        row = conn.execute("SELECT id, warehouse_id FROM tables WHERE name = %s", (table,)).fetchone()
    assert row is not None
    response = _management(catalog, idp, "admin").post(
        f"/permissions/warehouse/{row[1]}/table/{row[0]}/assignments",
        json={"writes": [{"type": privilege, "user": f"oidc~{user}"}], "deletes": []},
    )
    assert response.status_code == 204, response.text


def _s3(store: IamStore, config: dict[str, str]) -> Any:
    return store.s3((config["s3.access-key-id"], config["s3.secret-access-key"]), config["s3.session-token"])


def _bucket_key(location: str) -> tuple[str, str]:
    bucket, _, key = location.removeprefix("s3://").partition("/")
    return bucket, key


def test_a_client_without_keys_creates_appends_reads_and_drops_when_credentials_are_vended(
    server: RunningCatalog, idp: OpenIdProvider
) -> None:
    admin = _pyiceberg(server, idp, "admin")
    admin.create_namespace("sales")
    table = admin.create_table("sales.orders", schema=SCHEMA)
    table.append(ROWS)
    assert sorted(admin.load_table("sales.orders").scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    loaded = _catalog_http(server, idp, "admin").get("/namespaces/sales/tables/orders", headers=VENDED).json()
    [credential] = loaded["storage-credentials"]
    assert credential["prefix"] == loaded["metadata"]["location"]
    assert credential["config"]["s3.session-token"] == loaded["config"]["s3.session-token"]
    assert credential["config"]["client.refresh-credentials-endpoint"].endswith("/tables/orders/credentials")
    admin.drop_table("sales.orders")
    assert not admin.table_exists("sales.orders")


def test_read_only_credentials_cannot_put_when_the_caller_may_only_select(
    server: RunningCatalog,
    idp: OpenIdProvider,
    s3_iam: IamStore,  # noqa: F811
) -> None:
    admin = _pyiceberg(server, idp, "admin")
    admin.create_namespace("reports")
    admin.create_table("reports.daily", schema=SCHEMA).append(ROWS)
    _catalog_http(server, idp, "alice")  # /config provisions alice, so she can be granted
    _grant(server, idp, "daily", "alice", "select")
    alice = _catalog_http(server, idp, "alice")
    loaded = alice.get("/namespaces/reports/tables/daily", headers=VENDED).json()
    s3, (bucket, key) = _s3(s3_iam, loaded["config"]), _bucket_key(loaded["metadata"]["location"])
    assert s3.get_object(Bucket=bucket, Key=_bucket_key(loaded["metadata-location"])[1])["Body"].read()
    with pytest.raises(ClientError) as refused:
        s3.put_object(Bucket=bucket, Key=f"{key}/data/evil.parquet", Body=b"x")
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
    assert sorted(_pyiceberg(server, idp, "alice").load_table("reports.daily").scan().to_arrow()["id"].to_pylist()) == [
        1,
        2,
        3,
    ]


def test_load_credentials_answers_fresh_keys_when_the_caller_may_read(
    server: RunningCatalog,
    idp: OpenIdProvider,
    s3_iam: IamStore,  # noqa: F811
) -> None:
    admin = _pyiceberg(server, idp, "admin")
    admin.create_namespace("metrics")
    admin.create_table("metrics.hits", schema=SCHEMA).append(ROWS)
    http = _catalog_http(server, idp, "admin")
    config = http.get(f"{server.catalog_uri}/v1/config", params={"warehouse": "vend"}).json()
    assert "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials" in config["endpoints"]
    answer = http.get("/namespaces/metrics/tables/hits/credentials")
    assert answer.status_code == 200, answer.text
    [credential] = answer.json()["storage-credentials"]
    location = admin.load_table("metrics.hits").location()
    assert credential["prefix"] == location
    bucket, key = _bucket_key(location)
    _s3(s3_iam, credential["config"]).put_object(Bucket=bucket, Key=f"{key}/data/extra.parquet", Body=b"ok")
    _catalog_http(server, idp, "bob")
    hidden = _catalog_http(server, idp, "bob").get("/namespaces/metrics/tables/hits/credentials")
    assert hidden.status_code == 404  # bob sees neither warehouse nor table: answered like a missing one


def test_special_characters_in_a_table_location_are_served_when_credentials_are_vended(
    server: RunningCatalog,
    idp: OpenIdProvider,
    s3_iam: IamStore,  # noqa: F811
) -> None:
    admin = _pyiceberg(server, idp, "admin")
    admin.create_namespace("odd")
    base = admin.load_namespace_properties("odd")["location"].rstrip("/")
    table = admin.create_table("odd.chars", schema=SCHEMA, location=f"{base}/{SPECIAL}")
    table.append(ROWS)
    assert admin.load_table("odd.chars").scan().to_arrow().num_rows == 3
    loaded = _catalog_http(server, idp, "admin").get("/namespaces/odd/tables/chars", headers=VENDED).json()
    bucket, key = _bucket_key(loaded["metadata"]["location"])
    assert SPECIAL in key
    s3 = _s3(s3_iam, loaded["config"])
    with pytest.raises(ClientError):  # `*` is a literal: a sibling that the wildcard would match stays out of reach
        s3.put_object(Bucket=bucket, Key=key.replace("*x", "ANYx") + "/data/evil.parquet", Body=b"x")
    admin.drop_table("odd.chars")


def test_vended_secrets_are_in_no_table_and_no_log_when_credentials_were_served(
    server: RunningCatalog, idp: OpenIdProvider
) -> None:
    admin = _pyiceberg(server, idp, "admin")
    admin.create_namespace("audit")
    admin.create_table("audit.trail", schema=SCHEMA).append(ROWS)
    config = _catalog_http(server, idp, "admin").get("/namespaces/audit/tables/trail", headers=VENDED).json()["config"]
    secrets = (config["s3.secret-access-key"], config["s3.session-token"])
    with psycopg.connect(server.env["CATALOG_ES__PG_DSN"]) as conn:
        tables = conn.execute(
            "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'"
        ).fetchall()
        assert any(name == "public.catalog_events" for (name,) in tables)
        for (name,) in tables:
            text = "".join(str(row) for row in conn.execute(f"SELECT t::text FROM {name} t"))
            assert not any(secret in text for secret in secrets), name
    log = (server.data_dir.parent / f"serve-{server.base_url.rsplit(':', 1)[1]}.log").read_text()
    assert log
    assert not any(secret in log for secret in secrets)


def test_credentials_under_an_as_of_prefix_are_read_only_and_none_for_a_table_dropped_now(
    server: RunningCatalog,
    idp: OpenIdProvider,
    s3_iam: IamStore,  # noqa: F811
) -> None:
    admin = _pyiceberg(server, idp, "admin")
    admin.create_namespace("past")
    admin.create_table("past.kept", schema=SCHEMA).append(ROWS)
    admin.create_table("past.gone", schema=SCHEMA).append(ROWS)
    http = _catalog_http(server, idp, "admin")
    before = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    time.sleep(0.01)
    admin.drop_table("past.gone")  # not purged: its files stay in the bucket
    config = http.get(f"{server.catalog_uri}/v1/config", params={"warehouse": f"vend@{before}"}).json()
    past = f"{server.catalog_uri}/v1/{config['defaults']['prefix']}"

    kept = http.get(f"{past}/namespaces/past/tables/kept", headers=VENDED)
    assert kept.status_code == 200, kept.text
    s3, (bucket, key) = _s3(s3_iam, kept.json()["config"]), _bucket_key(kept.json()["metadata"]["location"])
    assert s3.get_object(Bucket=bucket, Key=_bucket_key(kept.json()["metadata-location"])[1])["Body"].read()
    with pytest.raises(ClientError) as refused:  # the admin may modify the table now, yet the past is read-only
        s3.put_object(Bucket=bucket, Key=f"{key}/data/evil.parquet", Body=b"x")
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
    refreshed = http.get(f"{past}/namespaces/past/tables/kept/credentials")
    assert refreshed.status_code == 200, refreshed.text
    [credential] = refreshed.json()["storage-credentials"]
    with pytest.raises(ClientError):
        _s3(s3_iam, credential["config"]).put_object(Bucket=bucket, Key=f"{key}/data/evil.parquet", Body=b"x")

    gone = http.get(f"{past}/namespaces/past/tables/gone", headers=VENDED)
    assert gone.status_code == 200, gone.text  # the past catalog still describes it ...
    assert "s3.session-token" not in gone.json()["config"]  # ... but hands out no access to its files
    assert "storage-credentials" not in gone.json()
    assert http.get(f"{past}/namespaces/past/tables/gone/credentials").json() == {"storage-credentials": []}


def _duckdb(server: RunningCatalog, idp: OpenIdProvider, delegation: str) -> Any:
    """A fresh DuckDB (extensions from the PyPI wheels, no downloads) with warehouse `vend` attached as `lake`."""
    duckdb = pytest.importorskip("duckdb")
    connection = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for name in ("httpfs", "avro", "iceberg"):
        module = pytest.importorskip(f"duckdb_extension_{name}")
        [binary] = Path(str(module.__file__)).parent.glob(f"extensions/*/{name}.duckdb_extension")
        connection.execute(f"LOAD '{binary}'")
    connection.execute(f"CREATE SECRET catalog_es (TYPE iceberg, TOKEN '{idp.token('admin')}')")
    options = f"TYPE iceberg, ENDPOINT '{server.catalog_uri}', SECRET catalog_es, ACCESS_DELEGATION_MODE '{delegation}'"
    connection.execute(f"ATTACH 'vend' AS lake ({options})")
    return connection


def test_duckdb_reads_and_writes_with_vended_credentials_only(server: RunningCatalog, idp: OpenIdProvider) -> None:
    """DuckDB 1.5's iceberg extension holds a token and no S3 keys: it reads what pyiceberg wrote and inserts, each
    through the table's vended credentials; without them the IAM-enforcing store refuses the same read."""
    duckdb = pytest.importorskip("duckdb")
    admin = _pyiceberg(server, idp, "admin")
    admin.create_namespace("duck")
    admin.create_table("duck.events", schema=SCHEMA).append(ROWS)
    keyless = _duckdb(server, idp, "none")
    with pytest.raises(duckdb.Error):
        keyless.execute("SELECT id FROM lake.duck.events").fetchall()
    keyless.close()
    vended = _duckdb(server, idp, "vended_credentials")
    assert sorted(row[0] for row in vended.execute("SELECT id FROM lake.duck.events").fetchall()) == [1, 2, 3]
    vended.execute("INSERT INTO lake.duck.events VALUES (4)")
    vended.close()
    assert sorted(admin.load_table("duck.events").scan().to_arrow()["id"].to_pylist()) == [1, 2, 3, 4]


def test_credentials_under_a_read_policy_reach_only_its_policy_files_and_pyiceberg_reads_allowed_rows(
    server: RunningCatalog,
    idp: OpenIdProvider,
    s3_iam: IamStore,  # noqa: F811
) -> None:
    people = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "dept", StringType(), required=False),
        NestedField(3, "salary", LongType(), required=False),
    )
    rows = [{"id": i, "dept": ["eng", "ops"][i % 2], "salary": 100 * i} for i in range(8)]
    admin = _pyiceberg(server, idp, "admin")
    admin.create_namespace("hr")
    table = admin.create_table("hr.people", schema=people)
    table.append(pa.Table.from_pylist(rows, schema=people.as_arrow()))
    originals = [task.file.file_path for task in table.scan().plan_files()]
    _catalog_http(server, idp, "alice")  # /config provisions alice, so she can be granted
    _grant(server, idp, "people", "alice", "select")
    with psycopg.connect(server.env["CATALOG_ES__PG_DSN"]) as conn:
        found = conn.execute("SELECT id, warehouse_id FROM tables WHERE name = 'people'").fetchone()
    assert found is not None
    policy = {"user": "oidc~alice", "row-filter": {"type": "eq", "term": "dept", "value": "eng"}, "columns": ["id"]}
    path = f"/permissions/warehouse/{found[1]}/table/{found[0]}/read-policies"
    assert _management(server, idp, "admin").post(path, json=policy).status_code == 204

    alice = _pyiceberg(server, idp, "alice")  # no keys: the vended ones reach its policy's files only
    read = alice.load_table("hr.people").scan(selected_fields=("id",)).to_arrow()
    assert sorted(read["id"].to_pylist()) == [0, 2, 4, 6]

    http = _catalog_http(server, idp, "alice")
    loaded = http.get("/namespaces/hr/tables/people", headers=VENDED).json()
    [credential] = loaded["storage-credentials"]
    policy_files = credential["prefix"]
    assert policy_files.startswith(f"{loaded['metadata']['location']}/policy-files/")
    planned = http.post("/namespaces/hr/tables/people/plan", json={"select": ["id"]}, headers=VENDED).json()
    assert [c["prefix"] for c in planned["storage-credentials"]] == [policy_files]
    planned_files = [task["data-file"]["file-path"] for task in planned["file-scan-tasks"]]
    assert planned_files
    assert all(path.startswith(policy_files + "/") for path in planned_files)
    refreshed = http.get("/namespaces/hr/tables/people/credentials").json()["storage-credentials"]
    assert [c["prefix"] for c in refreshed] == [policy_files]
    for config in (loaded["config"], planned["storage-credentials"][0]["config"], refreshed[0]["config"]):
        s3 = _s3(s3_iam, config)
        for planned_file in planned_files:
            assert s3.get_object(Bucket=_bucket_key(planned_file)[0], Key=_bucket_key(planned_file)[1])["Body"].read()
        for original in originals:  # the table's own files: every row, every column
            bucket, key = _bucket_key(original)
            with pytest.raises(ClientError) as refused:
                s3.get_object(Bucket=bucket, Key=key)
            assert refused.value.response["Error"]["Code"] == "AccessDenied"
        with pytest.raises(ClientError) as refused:
            s3.get_object(Bucket=bucket, Key=_bucket_key(loaded["metadata-location"])[1])
        assert refused.value.response["Error"]["Code"] == "AccessDenied"
