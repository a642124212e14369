"""The built image against real PostgreSQL: migrate, serve, /health, a pyiceberg and a Spark round trip, SIGTERM.

The image is built by this run (tests/deploy/conftest.py, in the background from the start of the run) with
podman from Debian packages and PyPI (deploy/docker/build.sh), and runs with `--network=host` on loopback ports
of its own. Skipped, with the reason, where podman is not installed.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import httpx
import pyarrow as pa
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from pyiceberg.catalog import load_catalog

from catalog_es.spark import spark_jars
from catalog_es.spark.conf import catalog_conf
from catalog_es.spark.jars import default_jars_dir
from tests.databases import new_database
from tests.deploy.image_build import build_timeout
from tests.deploy.podman import VERSION, container, logs, podman, podman_missing
from tests.e2e.conftest import eventually, free_port

pytestmark = [
    pytest.mark.image,
    pytest.mark.skipif(podman_missing() is not None, reason=str(podman_missing())),
    # The first test also waits for the background build (bounded by its own timeout).
    pytest.mark.timeout(build_timeout() + 300),
]
ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", "c"], pa.string())})


class Database(NamedTuple):
    """One database, as the host's tests and as a container reach it (TCP on the host's loopback, or the socket)."""

    dsn: str
    container_dsn: str
    podman_options: list[str]


@pytest.fixture(scope="module")
def database(pg_admin_dsn: str) -> Iterator[Database]:
    """A fresh database for this module's containers.

    On TCP (CATALOG_ES_TEST_PG_DSN, e.g. 127.0.0.1:5432) a container on the host's network uses the same DSN; the
    embedded server listens on a Unix socket only, which is mounted into the container (the file, not its private
    directory, so uid 10001 can reach it).
    """
    with new_database(pg_admin_dsn, "image") as dsn:
        params = conninfo_to_dict(dsn)
        host = str(params.get("host") or "")
        if host.startswith("/"):
            socket = f".s.PGSQL.{params.get('port') or 5432}"
            container_dsn = make_conninfo(**{**params, "host": "/run/postgresql"})
            options = [f"--volume={host}/{socket}:/run/postgresql/{socket}"]
        else:
            container_dsn, options = dsn, []
        yield Database(dsn, container_dsn, options)


@pytest.fixture(scope="module")
def shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Warehouse files, mounted at the same path in every container (which runs as uid 10001)."""
    directory = tmp_path_factory.mktemp("image-warehouse")
    directory.chmod(0o777)
    return directory


def _settings(database: Database, port: int, shared_dir: Path) -> list[str]:
    environment = {
        "CATALOG_ES__PG_DSN": database.container_dsn,
        "CATALOG_ES__HOST": "127.0.0.1",  # the host's network: stay on loopback
        "CATALOG_ES__PORT": str(port),
        "CATALOG_ES__FILE_STORAGE_ROOTS": str(shared_dir),
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    options = [f"--env={name}={value}" for name, value in environment.items()]
    return [*options, *database.podman_options, f"--volume={shared_dir}:{shared_dir}"]


def _serving(name: str, base_url: str) -> bool:
    def healthy() -> bool:
        try:
            return httpx.get(f"{base_url}/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return podman("inspect", "--format", "{{.State.Running}}", name).stdout.strip() != "true"

    return eventually(healthy, timeout=90) and httpx.get(f"{base_url}/health", timeout=2).status_code == 200


class Served(NamedTuple):
    container: str
    base_url: str


@pytest.fixture(scope="module")
def served(runtime_image: str, database: Database, shared_dir: Path) -> Iterator[Served]:
    """`migrate`, then `serve` in the image; its container and base URL once /health answers."""
    port = free_port()
    options = _settings(database, port, shared_dir)
    migrated = podman("run", "--rm", "--network=host", *options, runtime_image, "migrate", timeout=180)
    assert "0001_event_store" in migrated.stdout, migrated.stdout + migrated.stderr
    with container(runtime_image, options) as name:
        base_url = f"http://127.0.0.1:{port}"
        assert _serving(name, base_url), logs(name)
        yield Served(name, base_url)


@pytest.fixture
def catalog(served: Served) -> str:
    return served.base_url


def test_the_image_is_the_projects_version_and_runs_as_uid_10001(runtime_image: str) -> None:
    version = podman("run", "--rm", "--network=none", runtime_image, "--version")
    uid = podman("run", "--rm", "--network=none", "--entrypoint=id", runtime_image, "-u")

    assert version.stdout.strip() == f"catalog-es {VERSION}"
    assert uid.stdout.strip() == "10001"


def test_migrate_is_idempotent_on_a_migrated_database(runtime_image: str, database: Database, catalog: str) -> None:
    options = [f"--env=CATALOG_ES__PG_DSN={database.container_dsn}", *database.podman_options]
    again = podman("run", "--rm", "--network=host", *options, runtime_image, "migrate")

    assert "0001_event_store" not in again.stdout  # nothing left to apply; exit 0 (podman() checks it)


def test_serve_answers_health_and_the_images_own_healthcheck_passes(served: Served) -> None:
    health = httpx.get(f"{served.base_url}/health", timeout=5)
    # The image's HEALTHCHECK, run by podman in the container on demand (no systemd timers here to run it)
    check = podman("healthcheck", "run", served.container, check=False)

    assert health.status_code == 200
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_pyiceberg_round_trip_through_the_container(catalog: str, shared_dir: Path) -> None:
    profile = {"type": "file", "location": str(shared_dir / "py")}
    created = httpx.post(
        f"{catalog}/management/v1/warehouse", json={"warehouse-name": "py", "storage-profile": profile}, timeout=30
    )
    assert created.status_code in (200, 201), created.text
    ice = load_catalog("image", type="rest", uri=f"{catalog}/catalog", warehouse="py")
    ice.create_namespace("shop")
    table = ice.create_table("shop.items", schema=ROWS.schema)
    table.append(ROWS)

    read = ice.load_table("shop.items").scan().to_arrow().sort_by("id")

    assert read.to_pylist() == ROWS.to_pylist()
    assert list((shared_dir / "py").rglob("*.metadata.json"))  # written by the server inside the container


def test_sigterm_stops_the_server_with_exit_0(runtime_image: str, database: Database, shared_dir: Path) -> None:
    port = free_port()
    with container(runtime_image, _settings(database, port, shared_dir)) as name:
        assert _serving(name, f"http://127.0.0.1:{port}"), logs(name)
        # SIGTERM, then SIGKILL (exit 137) after 20 s: exit 0 means the server drained and left on SIGTERM.
        podman("stop", "--time=20", name, timeout=60)
        code = podman("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip()
        output = logs(name)

    assert code == "0", output
    assert "Traceback" not in output


SPARK_ROUND_TRIP = textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.master("local[1]")
    for key, value in json.loads(sys.argv[1]).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lake.sales")
    spark.sql("CREATE TABLE lake.sales.orders (id BIGINT, item STRING) USING iceberg")
    spark.sql("INSERT INTO lake.sales.orders VALUES (1, 'tea'), (2, 'cake')")
    rows = [row.asDict() for row in spark.sql("SELECT * FROM lake.sales.orders ORDER BY id").collect()]
    print("ROWS " + json.dumps(rows))
    spark.stop()
    """
)


def test_a_spark_round_trip_from_the_spark_client_image(
    spark_client_image: str, catalog: str, shared_dir: Path
) -> None:
    profile = {"type": "file", "location": str(shared_dir / "spark")}
    created = httpx.post(
        f"{catalog}/management/v1/warehouse", json={"warehouse-name": "spark", "storage-profile": profile}, timeout=30
    )
    assert created.status_code in (200, 201), created.text
    # No Maven here: the jars `catalog-es spark jars` assembles from PyPI and Debian, mounted read-only.
    jars = spark_jars(default_jars_dir())
    conf = catalog_conf(f"{catalog}/catalog", "spark", catalog="lake", jars=[Path("/jars") / jar.name for jar in jars])
    conf |= {
        "spark.ui.enabled": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.sql.shuffle.partitions": "1",
    }
    script = shared_dir / "spark_round_trip.py"
    script.write_text(SPARK_ROUND_TRIP)
    mounts = [f"--volume={jar}:/jars/{jar.name}:ro" for jar in jars]

    result = podman(
        "run", "--rm", "--network=host", f"--volume={shared_dir}:{shared_dir}", *mounts,
        spark_client_image, "python", str(script), json.dumps(conf),
        timeout=240,
    )  # fmt: skip
    rows_line = next((line for line in result.stdout.splitlines() if line.startswith("ROWS ")), None)

    assert rows_line is not None, result.stdout + result.stderr
    assert json.loads(rows_line.removeprefix("ROWS ")) == [{"id": 1, "item": "tea"}, {"id": 2, "item": "cake"}]
    # and pyiceberg on the host reads what Spark in the container committed through the catalog container
    written = load_catalog("host", type="rest", uri=f"{catalog}/catalog", warehouse="spark").load_table("sales.orders")
    assert sorted(written.scan().to_arrow().to_pylist(), key=lambda row: row["id"]) == [
        {"id": 1, "item": "tea"},
        {"id": 2, "item": "cake"},
    ]
