"""The image build of the image lane, started in the background when the run collects it, awaited by its tests.

A cold build takes minutes (Debian packages and wheels); the rest of the suite runs meanwhile, and the image tests
(ordered last) wait for it. The build is bounded: past CATALOG_ES_IMAGE_BUILD_TIMEOUT seconds (default 1800) it
is killed and the tests waiting for it fail with its log; a failed build fails them the same way.
CATALOG_ES_IMAGE_SKIP_BUILD=1 tests the images already in podman's store as they are.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from tests.deploy.podman import BUILD, IMAGES

TIMEOUT_VARIABLE = "CATALOG_ES_IMAGE_BUILD_TIMEOUT"
SKIP_VARIABLE = "CATALOG_ES_IMAGE_SKIP_BUILD"


def build_timeout() -> float:
    return float(os.environ.get(TIMEOUT_VARIABLE, "1800"))


class BackgroundBuild:
    """`build.sh TARGET` for each target in turn, in a thread; each target's outcome awaitable on its own."""

    def __init__(self, targets: list[str]) -> None:
        self.targets = targets
        self.log = Path(tempfile.mkdtemp(prefix="catalog-es-image-build-")) / "build.log"
        self.outcomes: dict[str, str] = {}  # target -> "ok" or why it failed
        self.seconds: dict[str, float] = {}
        self._done = {target: threading.Event() for target in targets}
        self._process: subprocess.Popen[bytes] | None = None
        self._stopped = False
        self._deadline = time.monotonic() + build_timeout()
        self._thread = threading.Thread(target=self._run, name="image-build", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        for target in self.targets:
            started = time.monotonic()
            self.outcomes[target] = self._build(target)
            self.seconds[target] = time.monotonic() - started
            self._done[target].set()

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

    def wait(self, target: str) -> str:
        """The image of `target` once built; raises with the build log's tail when it could not be."""
        self._done[target].wait(timeout=max(self._deadline - time.monotonic(), 0) + 30)
        outcome = self.outcomes.get(target, "still running past its deadline")
        if outcome != "ok":
            tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-60:]) if self.log.exists() else ""
            raise RuntimeError(f"the {target} image was not built: {outcome} (log {self.log}):\n{tail}")
        return IMAGES[target]

    def stop(self) -> None:
        self._stopped = True
        self._kill()
