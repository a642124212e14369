"""The release version, from one place: pyproject.toml's; the Helm chart (and a release tag) must agree with it.

    python3 deploy/release_version.py               # prints the version; exit 1 when Chart.yaml disagrees
    python3 deploy/release_version.py --tag v0.2.0  # also requires the tag to be v<version> (the release workflow)

The image tag is this version (deploy/docker/build.sh, .github/workflows/release.yml); the chart's `version` and
`appVersion` must equal it, so `helm install` of a release runs the image of that release. Standard library only:
it runs on a bare CI runner before anything is installed.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHART = Path("deploy/helm/catalog-es/Chart.yaml")


def chart_field(text: str, name: str) -> str | None:
    """A top-level scalar of Chart.yaml (quoted or not)."""
    match = re.search(rf"^{name}:\s*[\"']?([^\"'\s#]+)", text, re.MULTILINE)
    return match.group(1) if match else None


def problems(root: Path, tag: str | None) -> tuple[str, list[str]]:
    """The version and every place that disagrees with it."""
    version = str(tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"])
    chart = (root / CHART).read_text()
    found = []
    for field in ("version", "appVersion"):
        if (value := chart_field(chart, field)) != version:
            found.append(f"{CHART} {field} is {value!r}, pyproject.toml's version is {version!r}")
    if tag is not None and tag != f"v{version}":
        found.append(f"the tag {tag!r} is not v{version} (pyproject.toml's version)")
    return version, found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tag", help="a release tag that must be v<version>")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository root")
    arguments = parser.parse_args(argv)
    version, found = problems(arguments.root, arguments.tag)
    for problem in found:
        print(f"release_version: {problem}", file=sys.stderr)
    if found:
        return 1
    print(version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
