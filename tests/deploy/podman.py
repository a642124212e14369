"""podman for the image and compose lanes: the wrapper these machines need, a skip reason, containers that clean up."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.metadata import version

from tests.deploy.tools import DEPLOY

PODMAN = str(DEPLOY / "docker" / "podman.sh")  # runc + cgroupfs + ulimits this process may set (see the script)
BUILD = str(DEPLOY / "docker" / "build.sh")
VERSION = version("catalog-es")
IMAGES = {
    "runtime": f"localhost/catalog-es:{VERSION}",
    "spark-client": f"localhost/catalog-es-spark:{VERSION}",
}


def podman_missing() -> str | None:
    """Why the container lanes cannot run here, or None when podman (and runc) are installed."""
    if shutil.which("podman") is None:
        return "podman is not installed (apt-get install podman runc debootstrap; .ci/run does it)"
    return None


def podman(*arguments: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run `podman ARGUMENTS` through the wrapper; a failure carries podman's output."""
    result = subprocess.run(
        [PODMAN, *arguments], capture_output=True, text=True, errors="replace", timeout=timeout, check=False
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"podman {' '.join(arguments)} exited {result.returncode}:\n{result.stdout}{result.stderr}"
        )
    return result


@contextmanager
def container(image: str, run_options: Sequence[str], command: Sequence[str] = ()) -> Iterator[str]:
    """A detached container on the host's network (loopback only is used); removed, whatever happens."""
    name = f"catalog-es-test-{uuid.uuid4().hex[:10]}"
    podman("run", "-d", "--name", name, "--network=host", *run_options, image, *command)
    try:
        yield name
    finally:
        podman("rm", "-f", "-t", "0", name, check=False)


def logs(name: str) -> str:
    result = podman("logs", name, check=False)
    return result.stdout + result.stderr
