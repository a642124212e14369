"""The banner's text for each mode (issue 31): what runs where, never a task queue silently unserved, the Spark
conf of the warehouse's storage, and how to authenticate."""

from __future__ import annotations

from api.cli.serve import _process_lines
from api.runtime.front_door import FrontDoor, Warehouse, banner
from api.settings import load_settings

DSN = "postgresql://c@127.0.0.1:5432/c"


def test_two_workers_with_the_task_worker_off_name_the_worker_command_that_must_run_beside() -> None:
    settings = load_settings({}, pg_dsn=DSN, workers=2, task_worker={"enabled": False}, nats={"url": "nats://n:4222"})

    own, beside = _process_lines(settings, relay=None)

    assert "2 API worker(s)" in own
    assert "task worker" not in own
    assert "`catalog-es worker` (purges and expiries run nowhere else)" in beside
    assert "`catalog-es relay`" in beside
    assert "`catalog-es projector run --all`" in beside


def test_two_workers_keep_one_task_worker_in_this_process_by_default() -> None:
    own, beside = _process_lines(load_settings({}, pg_dsn=DSN, workers=2), relay=None)

    assert "the task worker (purges, expiries)" in own
    assert "`catalog-es worker`" not in beside


def test_embedded_mode_runs_the_projectors_and_the_relay_in_process() -> None:
    own, _ = _process_lines(load_settings({}), relay="nats://127.0.0.1:4222")

    assert "the projectors" in own
    assert "the NATS relay" in own


def test_an_s3_warehouse_gets_s3_file_io_its_delegation_header_and_the_aws_bundle() -> None:
    text = banner(FrontDoor(base_url="http://127.0.0.1:9", warehouses=(Warehouse("lake", "s3"),)))

    assert "Warehouses: lake (s3)" in text
    assert "spark.sql.catalog.catalog_es.io-impl=org.apache.iceberg.aws.s3.S3FileIO" in text
    assert "spark.sql.catalog.catalog_es.header.X-Iceberg-Access-Delegation=vended-credentials,remote-signing" in text
    assert "org.apache.iceberg:iceberg-aws-bundle:1.10.2" in text
    assert "HadoopFileIO" not in text


def test_with_oidc_on_and_no_discovery_the_banner_still_says_where_the_token_endpoint_is_named() -> None:
    door = FrontDoor(base_url="http://127.0.0.1:9", warehouses=(), provider="https://idp.example/realms/x")

    text = banner(door)

    assert "OpenID Connect (https://idp.example/realms/x)" in text
    assert "https://idp.example/realms/x/.well-known/openid-configuration" in text
    assert 'credential="<client-id>:<client-secret>"' in text
    assert "Warehouses: none yet" in text
