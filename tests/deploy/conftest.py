"""The image lane's fixtures: the images this run built (tests/deploy/image_build.py), container tests last.

The image and compose tests run last, so the cold image build (minutes), started in the background as soon as the
run is collected, overlaps the rest of the suite instead of adding to it. Without podman they skip with the reason.
"""

from __future__ import annotations

import pytest

from tests.deploy.image_build import built_image


def _containers(item: pytest.Item) -> bool:
    return item.get_closest_marker("image") is not None or item.get_closest_marker("compose") is not None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Container tests last (a stable sort: every other test keeps its place)."""
    items.sort(key=_containers)


@pytest.fixture(scope="session")
def runtime_image() -> str:
    """The server image (default target), built by this run."""
    return built_image("runtime")


@pytest.fixture(scope="session")
def spark_client_image() -> str:
    """The spark-client image (PySpark 3.5 on Debian's Java 17), built by this run after the server image."""
    return built_image("spark-client")
