"""The image lane's build: started in the background as soon as a run collects an image test, awaited by them.

The image and compose tests run last, so the cold build (minutes) overlaps the rest of the suite instead of
adding to it. Without podman nothing starts and those tests skip with the reason.
"""

from __future__ import annotations

import os

import pytest

from tests.deploy.image_build import SKIP_VARIABLE, BackgroundBuild
from tests.deploy.podman import IMAGES, podman, podman_missing

BUILD = pytest.StashKey[BackgroundBuild]()
SPARK_CLIENT_FIXTURE = "spark_client_image"


def _containers(item: pytest.Item) -> bool:
    return item.get_closest_marker("image") is not None or item.get_closest_marker("compose") is not None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Container tests last (a stable sort: every other test keeps its place)."""
    items.sort(key=_containers)


def pytest_collection_finish(session: pytest.Session) -> None:
    image_tests = [item for item in session.items if item.get_closest_marker("image") is not None]
    if not image_tests or session.config.option.collectonly or podman_missing() or os.environ.get(SKIP_VARIABLE):
        return
    targets = ["runtime"]
    if any(SPARK_CLIENT_FIXTURE in getattr(item, "fixturenames", ()) for item in image_tests):
        targets.append("spark-client")
    build = BackgroundBuild(targets)
    build.start()
    session.config.stash[BUILD] = build


def pytest_sessionfinish(session: pytest.Session) -> None:
    if (build := session.config.stash.get(BUILD, None)) is not None:
        build.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if (build := config.stash.get(BUILD, None)) is not None and build.seconds:
        figures = ", ".join(f"{target} {seconds:.0f} s" for target, seconds in build.seconds.items())
        terminalreporter.write_line(f"image build (background, podman layer cache): {figures}; log {build.log}")


def _image(config: pytest.Config, target: str) -> str:
    if reason := podman_missing():
        pytest.skip(reason)
    build = config.stash.get(BUILD, None)
    if build is not None:
        return build.wait(target)
    image = IMAGES[target]  # CATALOG_ES_IMAGE_SKIP_BUILD: test what the store holds
    if podman("image", "exists", image, check=False).returncode != 0:
        raise RuntimeError(f"{image} is not in podman's store: run `task image` or unset {SKIP_VARIABLE}")
    return image


@pytest.fixture(scope="session")
def runtime_image(pytestconfig: pytest.Config) -> str:
    """The server image (default target), built by this run."""
    return _image(pytestconfig, "runtime")


@pytest.fixture(scope="session")
def spark_client_image(pytestconfig: pytest.Config) -> str:
    """The spark-client image (PySpark 3.5 on Debian's Java 17), built by this run after the server image."""
    return _image(pytestconfig, "spark-client")
