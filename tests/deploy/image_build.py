"""The image build of the image lane, started in the background when the run collects it, awaited by its tests.

A cold build takes minutes (Debian packages and wheels); the rest of the suite runs meanwhile, and the image tests
(ordered last) wait for it. One process starts it: pytest itself, or under pytest-xdist the controller, as soon as
a worker reports the image tests among its collected ones; the tests, on whichever worker, wait for its outcome
files in CATALOG_ES_IMAGE_BUILD_DIR (made by the controller before the workers start, inherited by them). The build
is bounded: past CATALOG_ES_IMAGE_BUILD_TIMEOUT seconds (default 1800) it is killed and the tests waiting for it
fail with its log; a failed build fails them the same way. CATALOG_ES_IMAGE_SKIP_BUILD=1 tests the images already
in podman's store as they are. These hooks are imported into tests/conftest.py: the xdist controller collects
nothing, so it never loads tests/deploy/conftest.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.deploy.podman import BUILD, IMAGES, podman, podman_missing

TIMEOUT_VARIABLE = "CATALOG_ES_IMAGE_BUILD_TIMEOUT"
SKIP_VARIABLE = "CATALOG_ES_IMAGE_SKIP_BUILD"
DIR_VARIABLE = "CATALOG_ES_IMAGE_BUILD_DIR"
IMAGE_TESTS = "tests/deploy/test_image.py::"
SPARK_CLIENT_TEST = "spark_client"  # in the name of the test that needs the spark-client image


def build_timeout() -> float:
    return float(os.environ.get(TIMEOUT_VARIABLE, "1800"))


class BackgroundBuild:
    """`build.sh TARGET` for each target in turn, in a thread; each target's outcome written to `directory`."""

    def __init__(self, directory: Path, targets: list[str]) -> None:
        self.directory = directory
        self.targets = targets
        self.log = directory / "build.log"
        self.seconds: dict[str, float] = {}
        self._process: subprocess.Popen[bytes] | None = None
        self._stopped = False
        self._deadline = time.monotonic() + build_timeout()
        (directory / "deadline").write_text(str(time.time() + build_timeout()))
        self._thread = threading.Thread(target=self._run, name="image-build", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        for target in self.targets:
            started = time.monotonic()
            outcome = self._build(target)
            self.seconds[target] = time.monotonic() - started
            (self.directory / f"{target}.outcome").write_text(outcome)

    def _build(self, target: str) -> str:
        if self._stopped:
            return "the test run ended first"
        with self.log.open("ab") as log:
            # Its own process group, so a timeout or the end of the run stops podman and its children too.
            self._process = subprocess.Popen(
                [BUILD, target], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
            try:
                code = self._process.wait(timeout=max(self._deadline - time.monotonic(), 1))
            except subprocess.TimeoutExpired:
                self._kill()
                return f"timed out after {build_timeout():.0f} s ({TIMEOUT_VARIABLE})"
        return "ok" if code == 0 else f"build.sh {target} exited {code}"

    def _kill(self) -> None:
        if self._process is not None and self._process.poll() is None:
            os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait()

    def stop(self) -> None:
        self._stopped = True
        self._kill()


_BUILD: list[BackgroundBuild] = []  # the one this process started, if any


def _start(config: pytest.Config, test_ids: Iterable[str]) -> None:
    image_tests = [test_id for test_id in test_ids if IMAGE_TESTS in test_id]
    if _BUILD or not image_tests or config.option.collectonly or podman_missing() or os.environ.get(SKIP_VARIABLE):
        return
    targets = ["runtime"] + (["spark-client"] if any(SPARK_CLIENT_TEST in test for test in image_tests) else [])
    build = BackgroundBuild(Path(os.environ[DIR_VARIABLE]), targets)
    _BUILD.append(build)
    build.start()


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and DIR_VARIABLE not in os.environ:
        os.environ[DIR_VARIABLE] = tempfile.mkdtemp(prefix="catalog-es-image-build-")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Without xdist: this process collected the tests and starts the build."""
    if not hasattr(session.config, "workerinput") and not session.config.pluginmanager.hasplugin("dsession"):
        _start(session.config, (item.nodeid for item in session.items))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: object, ids: list[str]) -> None:
    """Under xdist: the controller starts the build when the first worker reports what it collected."""
    _start(node.config, ids)  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session) -> None:
    for build in _BUILD:
        build.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for build in _BUILD:
        if build.seconds:
            figures = ", ".join(f"{target} {seconds:.0f} s" for target, seconds in build.seconds.items())
            terminalreporter.write_line(f"image build (background, podman layer cache): {figures}; log {build.log}")


def built_image(target: str) -> str:
    """The image of `target` once the run's build made it; raises with the build log's tail when it could not."""
    if reason := podman_missing():
        pytest.skip(reason)
    image = IMAGES[target]
    if os.environ.get(SKIP_VARIABLE):
        if podman("image", "exists", image, check=False).returncode != 0:
            raise RuntimeError(f"{image} is not in podman's store: run `task image` or unset {SKIP_VARIABLE}")
        return image
    directory = Path(os.environ[DIR_VARIABLE])
    outcome_file, deadline_file = directory / f"{target}.outcome", directory / "deadline"
    give_up = time.time() + 120  # the build starts right after collection: its deadline appears within seconds
    while not outcome_file.exists() and time.time() < give_up:
        if deadline_file.exists():
            give_up = float(deadline_file.read_text()) + 30
        time.sleep(1)
    outcome = outcome_file.read_text() if outcome_file.exists() else "no build finished (none started, or too late)"
    if outcome != "ok":
        log = directory / "build.log"
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-60:]) if log.exists() else ""
        raise RuntimeError(f"the {target} image was not built: {outcome} (log {log}):\n{tail}")
    return image
