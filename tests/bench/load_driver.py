"""The load generator: an aiohttp keep-alive client, open- and closed-model runners, raw samples.

Open model: start times come from a seeded Poisson clock and latency is measured from the scheduled
start (no coordinated omission). Closed model: N coroutines loop until the deadline. Writes retry on
{409, 500} up to 10 tries like the Polaris suite; each operation keeps its attempts and 409 count.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import aiohttp
import msgspec

RETRY_STATUSES = frozenset({409, 500})
REQUEST_TIMEOUT = 30.0  # seconds; a request still open then counts as an error (status 0)
RETRY_BUDGET = 60.0  # seconds after which an operation stops retrying
GRACE = 60.0  # seconds an open-model run waits for late answers after its last arrival


class Sample(msgspec.Struct, frozen=True, gc=False):
    """One operation's outcome; not tracked by the garbage collector, so a million of them cost no pauses."""

    op: str
    start: float  # seconds since the recorder's origin (scheduled start in open-model runs)
    latency: float  # seconds, scheduled start (or first attempt) to the final answer
    status: int  # final status; 0 for a transport error
    attempts: int
    conflicts: int  # 409 answers among the attempts


@dataclass
class Recorder:
    origin: float = field(default_factory=time.perf_counter)
    samples: list[Sample] = field(default_factory=list)


def ns_path(parts: list[str]) -> str:
    """A namespace as a path segment: parts percent-encoded, joined by %1F."""
    return "%1F".join(quote(part, safe="") for part in parts)


class CatalogClient:
    """Iceberg REST calls against one server's catalog root, recorded per operation name."""

    def __init__(self, base_url: str, headers: dict[str, str], recorder: Recorder, connections: int = 256) -> None:
        self.base_url = base_url.rstrip("/")
        self.recorder = recorder
        self._headers = headers | {"Content-Type": "application/json"}
        self._connections = connections
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> CatalogClient:
        connector = aiohttp.TCPConnector(limit=self._connections, force_close=False)
        timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)
        self._session = aiohttp.ClientSession(connector=connector, timeout=timeout, headers=self._headers)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session:
            await self._session.close()

    async def call(
        self,
        op: str,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: dict[str, str] | None = None,
        scheduled: float | None = None,
        retry: frozenset[int] = frozenset(),
        tries: int = 10,
    ) -> tuple[int, bytes]:
        """One operation (with retries on `retry` statuses); returns the final status and body."""
        assert self._session is not None
        url = f"{self.base_url}/{path}" if path else self.base_url
        data = msgspec.json.encode(body) if body is not None else None
        started = scheduled if scheduled is not None else time.perf_counter()
        status, payload, attempts, conflicts = 0, b"", 0, 0
        try:
            while attempts < tries:
                attempts += 1
                try:
                    async with self._session.request(method, url, data=data, params=params) as response:
                        payload = await response.read()
                        status = response.status
                except (aiohttp.ClientError, TimeoutError) as exc:
                    status, payload = 0, str(exc).encode()
                if status == 409:
                    conflicts += 1
                if status not in retry or time.perf_counter() - started > RETRY_BUDGET:
                    break
        except asyncio.CancelledError:  # the run's deadline passed: an error, not a missing sample
            status = 0
            raise
        finally:
            ended = time.perf_counter()
            self.recorder.samples.append(
                Sample(op, started - self.recorder.origin, ended - started, status, attempts, conflicts)
            )
        return status, payload


Operation = Callable[[float | None], Awaitable[object]]


async def open_model(rate: float, duration: float, pick: Callable[[int], Operation], seed: int = 42) -> float:
    """Start `pick(i)(scheduled)` at Poisson arrivals of `rate`/s for `duration` s; returns the wall time."""
    rng = random.Random(seed)
    loop_start = time.perf_counter()
    scheduled, index = loop_start, 0
    tasks: set[asyncio.Task[object]] = set()
    while scheduled - loop_start < duration:
        delay = scheduled - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        task: asyncio.Task[object] = asyncio.ensure_future(pick(index)(scheduled))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        index += 1
        scheduled += rng.expovariate(rate)
    if tasks:
        _, late = await asyncio.wait(tasks, timeout=GRACE)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
    return time.perf_counter() - loop_start


async def closed_model(workers: int, duration: float, pick: Callable[[int, int], Operation]) -> float:
    """`workers` coroutines each run `pick(worker, i)(None)` back to back until `duration` passes."""
    started = time.perf_counter()
    deadline = started + duration

    async def loop(worker: int) -> None:
        index = 0
        while time.perf_counter() < deadline:
            await pick(worker, index)(None)
            index += 1

    await asyncio.gather(*(loop(worker) for worker in range(workers)))
    return time.perf_counter() - started


async def run_all(concurrency: int, jobs: list[Callable[[], Awaitable[object]]], budget: float = math.inf) -> float:
    """Run every job once with at most `concurrency` at a time, starting none after `budget` seconds."""
    started = time.perf_counter()
    queue = iter(jobs)

    async def worker() -> None:
        for job in queue:
            if time.perf_counter() - started > budget:
                return
            await job()

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(jobs))))))
    return time.perf_counter() - started
