"""`--dist loadfile` with the slow modules first and each JVM suite (Spark, the Java client) on one worker.

pytest-xdist hands out whole files, by default the files with the most tests first: a slow module of few tests
(Spark maintenance, the schemathesis runs) then starts last and the run ends with one worker busy and the others
idle. Here the files go out heaviest first by a measured ranking (`SLOW_FIRST`, then e2e/security/deploy before
integration before unit; the image lane last, as tests/deploy/conftest.py wants), and the files of tests/e2e/spark
(and tests/e2e/java) form one unit each, so one worker starts one JVM and one SparkSession for all of them instead
of every worker starting its own.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
from xdist.scheduler import LoadFileScheduling

# Folders whose files share a per-process JVM (session fixtures): scheduled as one unit.
SHARED_JVM_FOLDERS = ("tests/e2e/spark/", "tests/e2e/java/")
# The slowest units of a measured run, slowest first (`--durations`, summed per file).
SLOW_FIRST = (
    "tests/e2e/spark/",
    "tests/e2e/test_conformance.py",
    "tests/security/test_outage.py",
    "tests/security/test_management_fuzz.py",
    "tests/e2e/test_catalog_import.py",
    "tests/e2e/java/",
)
LAST = ("tests/deploy/test_image.py",)
FOLDER_RANK = (("tests/unit/", 3), ("tests/integration/", 2))


def unit_of(nodeid: str) -> str:
    """The file of a test, or its shared-JVM folder."""
    path = nodeid.split("::", 1)[0]
    return next((folder for folder in SHARED_JVM_FOLDERS if path.startswith(folder)), path)


def rank(unit: str) -> int:
    if unit in SLOW_FIRST:
        return SLOW_FIRST.index(unit) - len(SLOW_FIRST)
    if unit in LAST:
        return 100
    return next((value for folder, value in FOLDER_RANK if unit.startswith(folder)), 1)


class _HeaviestFirst(OrderedDict[str, Any]):
    """xdist's work queue: `popitem(last=False)` gives the best-ranked unit (insertion order among equals)."""

    def popitem(self, last: bool = True) -> tuple[str, Any]:
        if last or not self:
            return super().popitem(last=last)
        unit = min(self, key=rank)
        return unit, self.pop(unit)


class HeaviestFirstScheduling(LoadFileScheduling):  # type: ignore[misc]
    """LoadFileScheduling over `unit_of` units, handed out by `rank`."""

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        self.workqueue = _HeaviestFirst()

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadFileScheduling | None:
    """`--dist loadfile` (what `task test` runs) gets the heaviest-first scheduler; other modes stay xdist's."""
    return HeaviestFirstScheduling(config, log) if config.getvalue("dist") == "loadfile" else None
