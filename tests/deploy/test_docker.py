"""deploy/docker/Dockerfile: hadolint-clean, non-root, healthy on /health, no jars or compilers in the server image.

Building and running it is tests/deploy/test_image.py (podman); these read the file.
"""

from __future__ import annotations

import re
import subprocess

from tests.deploy.tools import DEPLOY, ROOT, catalog_settings, tool

DOCKERFILE = DEPLOY / "docker" / "Dockerfile"


def _stages() -> dict[str, list[tuple[str, str]]]:
    """Each stage's instructions as (INSTRUCTION, arguments), continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    stages: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        instruction, _, arguments = line.strip().partition(" ")
        if instruction.upper() == "FROM":
            current = stages.setdefault(arguments.split()[-1], [])
        current.append((instruction.upper(), arguments.strip()))
    return stages


def _environment(instructions: list[tuple[str, str]]) -> dict[str, str]:
    environment: dict[str, str] = {}
    for instruction, arguments in instructions:
        if instruction == "ENV":
            environment.update(dict(re.findall(r"(\w+)=(\S+)", arguments)))
    return environment


def test_hadolint_finds_nothing() -> None:
    result = subprocess.run([tool("hadolint"), str(DOCKERFILE)], capture_output=True, text=True, check=False)

    assert result.returncode == 0, result.stdout + result.stderr


def test_the_default_target_is_the_slim_non_root_server_with_a_python_healthcheck_on_health() -> None:
    stages = _stages()
    runtime = stages[list(stages)[-1]]  # `docker build` without --target builds the last stage
    instructions = [instruction for instruction, _ in runtime]
    arguments = dict(reversed(runtime))  # the first of each instruction

    assert list(stages)[-1] == "runtime"
    assert arguments["FROM"] == "python AS runtime"
    assert re.fullmatch(r"\d+:\d+", arguments["USER"])
    assert not arguments["USER"].startswith("0:")
    assert instructions.index("USER") < instructions.index("ENTRYPOINT")
    assert arguments["ENTRYPOINT"] == '["catalog-es"]'
    assert arguments["CMD"] == '["serve"]'
    healthcheck = arguments["HEALTHCHECK"]
    assert '"python"' in healthcheck
    assert "/health" in healthcheck
    assert "curl" not in healthcheck
    assert "8181" in arguments["EXPOSE"]


def test_every_stage_builds_on_the_base_argument_whose_default_is_debians_slim_image() -> None:
    text = DOCKERFILE.read_text()
    stages = _stages()
    default = re.search(r"^ARG BASE_IMAGE=(\S+)$", text, re.MULTILINE)

    assert default is not None
    assert default.group(1) == "docker.io/library/debian:bookworm-slim"  # what users pull; build.sh passes its own
    assert dict(stages["python"])["FROM"] == "${BASE_IMAGE} AS python"
    parents = {name: dict(instructions)["FROM"].split()[0] for name, instructions in stages.items() if name != "python"}

    def origin(stage: str) -> str:  # a stage may build on another stage of the file, which builds on `python`
        while stage in parents:
            stage = parents[stage]
        return stage

    assert {origin(name) for name in parents} == {"python"}


def test_the_shared_python_stage_adds_only_python_and_ca_certificates_and_keeps_no_apt_lists() -> None:
    runs = [arguments for instruction, arguments in _stages()["python"] if instruction == "RUN"]

    assert len(runs) == 1
    installed = re.search(r"--no-install-recommends ([^&]+)&&", runs[0])
    assert installed is not None
    assert installed.group(1).split() == ["python3", "ca-certificates"]
    assert "rm -rf /var/lib/apt/lists/*" in runs[0]


def test_the_server_image_has_no_compilers_package_manager_runs_or_spark_jars() -> None:
    runtime_text = " ".join(arguments for _, arguments in _stages()["runtime"])

    for forbidden in ("apt-get", "gcc", "build-essential", "pip install", ".jar", "iceberg-spark-runtime", "pyspark"):
        assert forbidden not in runtime_text


def test_the_spark_client_is_a_separate_stage_that_fetches_iceberg_at_run_time() -> None:
    spark = " ".join(arguments for _, arguments in _stages()["spark-client"])

    assert "pyspark==3.5" in spark
    assert ".jar" not in spark  # the runtime comes through spark.jars.packages (deploy/compose/spark-defaults.conf)


def test_the_image_settings_are_catalog_es_settings_and_listen_on_every_interface() -> None:
    settings = catalog_settings(_environment(_stages()["runtime"]))

    assert settings.host == "0.0.0.0"  # inside a container: reachable from the proxy
    assert settings.port == 8181
    assert settings.data_dir == "/var/lib/catalog-es"


def test_dockerignore_lets_in_exactly_what_the_build_stage_copies() -> None:
    lines = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    copied = {
        source
        for instruction, arguments in _stages()["build"]
        if instruction == "COPY" and "--from" not in arguments
        for source in arguments.split()[:-1]
    }

    assert "*" in lines  # everything else (tests, .venv, data dirs, .git) stays out of the context
    assert copied == allowed
    for source in copied:
        assert (ROOT / source).exists(), source
