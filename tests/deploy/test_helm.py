"""deploy/helm/catalog-es: Helm 4 (its SDK, through helm-python-sdk) lints and renders the chart; the manifests hold."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
import yaml
from typer.testing import CliRunner

from api.cli import cli
from catalog_es.store.secrets import generate_secrets_key, parse_secrets_key
from tests.deploy.tools import DEPLOY, catalog_settings

helm = pytest.importorskip("helm_python", reason="helm-python-sdk is not installed (pip install -e '.[dev]')")

CHART = DEPLOY / "helm" / "catalog-es"
DSN = "postgresql://catalog:pw@postgres.db.svc:5432/catalog?sslmode=require"
KEY = generate_secrets_key()
REQUIRED = {"secret": {"pgDsn": DSN, "secretsKey": KEY}, "nats": {"url": "nats://nats.messaging.svc:4222"}}
Manifests = dict[tuple[str, str], dict[str, Any]]


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        merged[key] = _merge(merged[key], value) if isinstance(value, dict) and key in merged else value
    return merged


def _render(values: dict[str, Any] | None = None) -> Manifests:
    """Every rendered object by (kind, name), as `helm template lake . -n data` would print them."""
    with helm.Chart.load(str(CHART)) as chart:
        files = chart.render(_merge(REQUIRED, values or {}), name="lake", namespace="data", is_install=True)
    manifests: Manifests = {}
    for path, text in files.items():
        if not path.endswith(".yaml"):
            continue
        for document in yaml.safe_load_all(text):
            if document:
                manifests[document["kind"], document["metadata"]["name"]] = document
    return manifests


def _workloads(manifests: Manifests) -> Iterator[tuple[str, dict[str, Any]]]:
    for (kind, name), manifest in manifests.items():
        if kind in {"Deployment", "Job"}:
            yield name, manifest["spec"]["template"]["spec"]


def _config_environment(manifests: Manifests) -> dict[str, str]:
    return {**manifests["ConfigMap", "lake-catalog-es"]["data"], **manifests["Secret", "lake-catalog-es"]["stringData"]}


@pytest.mark.parametrize(
    "values",
    [
        {},
        REQUIRED,
        _merge(
            REQUIRED,
            {
                "ingress": {"enabled": True, "hosts": [{"host": "catalog.example.com", "paths": [{"path": "/"}]}]},
                "metrics": {"serviceMonitor": {"enabled": True}},
                "auth": {"openidProviderUri": "https://idp.example.com/realms/lake", "authzBackend": "builtin"},
            },
        ),
    ],
    ids=["defaults", "required", "everything"],
)
def test_helm_lint_strict_finds_no_warning_or_error(values: dict[str, Any]) -> None:
    report = helm.lint(str(CHART), values, strict=True)

    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


def test_rendering_without_a_database_or_with_a_malformed_secrets_key_fails_with_a_clear_message() -> None:
    with helm.Chart.load(str(CHART)) as chart:
        with pytest.raises(helm.HelmError, match=r"secret\.pgDsn is required"):
            chart.render({}, name="lake", namespace="data")
        with pytest.raises(helm.HelmError, match=r"secretsKey must be URL-safe base64 of 32 bytes"):
            chart.render({"secret": {"pgDsn": DSN, "secretsKey": "not-a-key"}}, name="lake", namespace="data")


def test_the_default_release_has_every_process_the_migration_and_nothing_optional() -> None:
    manifests = _render()

    assert {name for kind, name in manifests if kind == "Deployment"} == {
        "lake-catalog-es-api",
        "lake-catalog-es-relay",
        "lake-catalog-es-projector",
        "lake-catalog-es-worker",
        "lake-catalog-es-maintenance",
    }
    assert ("Job", "lake-catalog-es-migrate") in manifests
    assert not {kind for kind, _ in manifests} & {"Ingress", "ServiceMonitor"}


def test_the_settings_the_chart_renders_are_valid_catalog_es_settings() -> None:
    environment = _config_environment(
        _render({"auth": {"openidProviderUri": "https://idp.example.com/realms/lake", "openidAudience": "catalog"}})
    )
    settings = catalog_settings(environment)

    assert settings.pg_dsn == DSN
    assert settings.secrets_key is not None
    assert parse_secrets_key(settings.secrets_key) == parse_secrets_key(KEY)
    assert settings.nats.url == "nats://nats.messaging.svc:4222"
    assert settings.openid_provider_uri == "https://idp.example.com/realms/lake"
    assert settings.openid_audience == "catalog"
    assert settings.host == "0.0.0.0"  # inside a pod: reachable through the Service
    assert settings.metrics.port == 9100


def test_an_unknown_extra_setting_is_caught() -> None:
    """The check above is real: a setting the catalog does not have would stop every pod at start."""
    environment = _config_environment(_render({"settings": {"MAX_NAMESPACE_DEEPTH": "3"}}))

    with pytest.raises(msgspec.ValidationError, match="max_namespace_deepth"):
        catalog_settings(environment)


def test_api_deployment_replicas_probes_resources_and_workers() -> None:
    deployment = _render({"api": {"replicas": 4, "workers": 3}})["Deployment", "lake-catalog-es-api"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}

    assert deployment["spec"]["replicas"] == 4
    assert {"name": "CATALOG_ES__WORKERS", "value": "3"} in container["env"]
    assert ports["http"] == 8181
    for probe in ("startupProbe", "readinessProbe"):
        assert container[probe]["httpGet"] == {"path": "/health", "port": "http"}
    assert container["livenessProbe"]["tcpSocket"] == {"port": "http"}
    assert container["resources"]["requests"]
    assert container["resources"]["limits"]["memory"]
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0


@pytest.mark.parametrize("name", ["lake-catalog-es-api", "lake-catalog-es-relay", "lake-catalog-es-projector"])
def test_every_workload_runs_non_root_on_a_read_only_root_with_an_empty_dir_tmp(name: str) -> None:
    pods = dict(_workloads(_render()))
    for pod_name in (name, "lake-catalog-es-migrate"):  # and the hook Job
        pod = pods[pod_name]
        container = pod["containers"][0]
        volumes = {volume["name"]: volume for volume in pod["volumes"]}
        tmp = next(mount for mount in container["volumeMounts"] if mount["mountPath"] == "/tmp")

        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] != 0
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
        assert "emptyDir" in volumes[tmp["name"]]


def test_every_workload_runs_a_command_the_cli_knows() -> None:
    for name, pod in _workloads(_render()):
        arguments = pod["containers"][0]["args"]
        result = CliRunner().invoke(cli, [*arguments, "--help"])
        assert result.exit_code == 0, (name, result.output)


def test_migration_is_a_pre_install_and_pre_upgrade_hook_with_its_dsn_available_before_the_release() -> None:
    manifests = _render()
    job = manifests["Job", "lake-catalog-es-migrate"]
    secret = manifests["Secret", "lake-catalog-es-migration"]
    pod = job["spec"]["template"]["spec"]
    reference = pod["containers"][0]["env"][0]["valueFrom"]["secretKeyRef"]

    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
    assert secret["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
    assert int(secret["metadata"]["annotations"]["helm.sh/hook-weight"]) < int(
        job["metadata"]["annotations"]["helm.sh/hook-weight"]
    )
    assert reference == {"name": "lake-catalog-es-migration", "key": "CATALOG_ES__PG_DSN"}
    assert secret["stringData"]["CATALOG_ES__PG_DSN"] == DSN
    assert "serviceAccountName" not in pod  # the release's service account does not exist before install
    assert pod["containers"][0]["args"] == ["migrate"]
    assert pod["restartPolicy"] == "Never"


def test_an_existing_secret_replaces_the_charts_secrets_everywhere() -> None:
    manifests = _render({"secret": {"existingSecret": "catalog-credentials", "pgDsn": "", "secretsKey": ""}})

    assert not [name for kind, name in manifests if kind == "Secret"]
    for name, pod in _workloads(manifests):
        container = pod["containers"][0]
        if name.endswith("-migrate"):
            assert container["env"][0]["valueFrom"]["secretKeyRef"]["name"] == "catalog-credentials"
        else:
            assert {"secretRef": {"name": "catalog-credentials"}} in container["envFrom"]


def test_without_nats_there_is_no_relay() -> None:
    manifests = _render({"nats": {"url": ""}})

    assert ("Deployment", "lake-catalog-es-relay") not in manifests
    assert catalog_settings(_config_environment(manifests)).nats.url is None


def test_the_service_and_ingress_reach_the_api_pods_on_their_http_port() -> None:
    manifests = _render(
        {"ingress": {"enabled": True, "hosts": [{"host": "catalog.example.com", "paths": [{"path": "/"}]}]}}
    )
    service = manifests["Service", "lake-catalog-es"]
    pod_labels = manifests["Deployment", "lake-catalog-es-api"]["spec"]["template"]["metadata"]["labels"]
    backend = manifests["Ingress", "lake-catalog-es"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]

    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert {"name": "http", "port": 8181, "targetPort": "http"} in service["spec"]["ports"]
    assert backend == {"name": "lake-catalog-es", "port": {"name": "http"}}


def test_the_service_monitor_scrapes_the_metrics_ports_of_the_api_and_the_relay() -> None:
    manifests = _render({"metrics": {"serviceMonitor": {"enabled": True}}})
    monitor = manifests["ServiceMonitor", "lake-catalog-es"]
    selector = monitor["spec"]["selector"]["matchLabels"]
    scraped = {
        name
        for (kind, name), manifest in manifests.items()
        if kind == "Service"
        and selector.items() <= manifest["metadata"]["labels"].items()
        and any(port["name"] == "metrics" for port in manifest["spec"]["ports"])
    }

    assert monitor["spec"]["endpoints"][0]["port"] == "metrics"
    assert scraped == {"lake-catalog-es", "lake-catalog-es-relay"}
