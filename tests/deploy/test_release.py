"""The release path: one version (pyproject.toml) for the image tag and the chart, and a workflow actionlint accepts."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import yaml

from tests.deploy.tools import DEPLOY, ROOT, tool

SCRIPT = DEPLOY / "release_version.py"
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def _release_version(*arguments: str, root: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), *arguments], capture_output=True, text=True, check=False
    )


def _pyproject_version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def _copy_of_the_version_sources(tmp_path: Path) -> Path:
    (tmp_path / "deploy/helm/catalog-es").mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copy(DEPLOY / "helm/catalog-es/Chart.yaml", tmp_path / "deploy/helm/catalog-es/Chart.yaml")
    return tmp_path


def test_the_chart_version_and_app_version_are_pyprojects_version() -> None:
    result = _release_version()

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == _pyproject_version()


def test_a_tag_that_is_not_v_version_is_refused() -> None:
    version = _pyproject_version()

    assert _release_version("--tag", f"v{version}").returncode == 0
    refused = _release_version("--tag", f"v{version}.1")
    assert refused.returncode == 1
    assert "is not v" in refused.stderr


def test_a_chart_that_lags_behind_pyproject_is_refused(tmp_path: Path) -> None:
    root = _copy_of_the_version_sources(tmp_path)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(f'version = "{_pyproject_version()}"', 'version = "9.9.9"', 1))

    result = _release_version(root=root)

    assert result.returncode == 1
    assert "Chart.yaml version is" in result.stderr
    assert "Chart.yaml appVersion is" in result.stderr


def test_actionlint_accepts_the_workflows() -> None:
    workflows = sorted(str(path) for path in (ROOT / ".github" / "workflows").glob("*.y*ml"))
    result = subprocess.run([tool("actionlint"), *workflows], capture_output=True, text=True, check=False, cwd=ROOT)

    assert workflows
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_release_workflow_checks_the_version_first_and_publishes_both_images_and_the_chart() -> None:
    workflow: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text())
    jobs = workflow["jobs"]
    # PyYAML reads the key `on` as True (YAML 1.1)
    assert workflow[True]["push"]["tags"] == ["v*"]
    assert "deploy/release_version.py --tag" in " ".join(step.get("run", "") for step in jobs["version"]["steps"])
    assert jobs["image"]["needs"] == "version"
    assert set(jobs["chart"]["needs"]) == {"version", "image"}
    pushed = [step["with"] for step in jobs["image"]["steps"] if step.get("with", {}).get("push")]
    assert {push["target"] for push in pushed} == {"runtime", "spark-client"}
    for push in pushed:
        assert push["file"] == "deploy/docker/Dockerfile"
        assert push["tags"].endswith(":${{ env.VERSION }}")
        assert push["platforms"] == "linux/amd64,linux/arm64"
    chart_runs = " ".join(step.get("run", "") for step in jobs["chart"]["steps"])
    assert "helm package deploy/helm/catalog-es" in chart_runs
    assert 'helm push "dist/catalog-es-$VERSION.tgz"' in chart_runs
