"""The benchmark workloads: Polaris' five simulations plus paging, long histories and transactions."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgspec

from tests.bench.load_driver import (
    RETRY_STATUSES,
    CatalogClient,
    Operation,
    Sample,
    closed_model,
    ns_path,
    open_model,
    run_all,
)
from tests.bench.polaris_dataset import Dataset, initial_properties, schema

SETUP_BUDGET = 120.0  # seconds a workload may spend creating its own tables
CREATE_RETRY = frozenset({500})  # CreateTreeDataset: "already exists" is a failure, not a retry


@dataclass(frozen=True)
class Target:
    """One catalog under test: where its API is, where tables may live, what it lacks."""

    name: str
    base_url: str
    headers: dict[str, str]
    root: tuple[str, ...] = ()  # lakana-server: tables only below bronze/silver/gold
    lacks: frozenset[str] = frozenset()  # "views", "head", "transactions"

    def ns(self, parts: list[str]) -> list[str]:
        return [*self.root, *parts]

    def path(self, parts: list[str]) -> str:
        return ns_path(self.ns(parts))


@dataclass
class Params:
    duration: float = 20.0
    mix_rate: float = 100.0
    read_ratio: float = 0.8
    table_commit_rate: float = 20.0
    view_commit_rate: float = 10.0
    load_workers: int = 16
    commit_workers: int = 8
    list_tables: int = 1000
    page_size: int = 100
    snapshots: int = 10_000
    snapshot_batch: int = 500
    probe_loads: int = 100
    columns: int = 10
    properties: int = 10


@dataclass
class Outcome:
    """What one workload produced; `notes` says what a peer lacked or what else was measured."""

    samples: list[Sample]
    wall: float
    notes: list[str] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)


def _view_body(target: Target, ns: list[str], name: str, params: Params) -> dict[str, Any]:
    version = {
        "version-id": 1,
        "timestamp-ms": int(time.time() * 1000),
        "schema-id": 0,
        "summary": {"engine-name": "bench"},
        "representations": [{"type": "sql", "sql": "SELECT 1 AS column1", "dialect": "spark"}],
        "default-namespace": target.ns(ns),
    }
    return {
        "name": name,
        "schema": schema(params.columns),
        "view-version": version,
        "properties": initial_properties(params.properties),
    }


def _set_properties(key: str, value: str) -> dict[str, Any]:
    return {"requirements": [], "updates": [{"action": "set-properties", "updates": {key: value}}]}


def _job(client: CatalogClient, op: str, method: str, path: str, body: Any = None, **kw: Any) -> Operation:
    async def run(scheduled: float | None) -> object:
        return await client.call(op, method, path, body, scheduled=scheduled, **kw)

    return run


async def create_tree(t: Target, c: CatalogClient, ds: Dataset, p: Params) -> Outcome:
    """CreateTreeDataset: namespaces level by level (20 at a time), tables (20), views (10)."""
    wall = 0.0
    props = initial_properties(p.properties)
    for depth in sorted({len(ns) for ns in ds.namespaces}):
        level = [ns for ns in ds.namespaces if len(ns) == depth]
        body = [{"namespace": t.ns(ns), "properties": props} for ns in level]
        jobs = [_job(c, "createNamespace", "POST", "namespaces", b, retry=CREATE_RETRY, tries=5) for b in body]
        wall += await run_all(20, [lambda j=j: j(None) for j in jobs])
    table_jobs = [
        _job(
            c,
            "createTable",
            "POST",
            f"namespaces/{t.path(ns)}/tables",
            {"name": name, "schema": schema(p.columns), "properties": props},
            retry=CREATE_RETRY,
            tries=5,
        )
        for ns, name in ds.tables
    ]
    wall += await run_all(20, [lambda j=j: j(None) for j in table_jobs])
    notes = []
    if "views" in t.lacks:
        notes.append("createView: n/a (no views)")
    else:
        view_jobs = [
            _job(
                c,
                "createView",
                "POST",
                f"namespaces/{t.path(ns)}/views",
                _view_body(t, ns, name, p),
                retry=CREATE_RETRY,
                tries=5,
            )
            for ns, name in ds.views
        ]
        wall += await run_all(10, [lambda j=j: j(None) for j in view_jobs])
    return Outcome(c.recorder.samples, wall, notes)


def _reads(t: Target, c: CatalogClient, ds: Dataset) -> list[tuple[str, list[Operation]]]:
    """The nine reads of ReadTreeDataset per entity kind, minus what the target lacks."""
    head = "head" not in t.lacks
    ns_ops = []
    for ns in ds.namespaces:
        parent = "\x1f".join(t.ns(ns))
        ns_ops.append(_job(c, "listNamespaces", "GET", "namespaces", params={"parent": parent}))
        if head:
            ns_ops.append(_job(c, "headNamespace", "HEAD", f"namespaces/{t.path(ns)}"))
        ns_ops.append(_job(c, "getNamespace", "GET", f"namespaces/{t.path(ns)}"))
    table_ops = []
    for ns, name in ds.tables:
        table_ops.append(_job(c, "listTables", "GET", f"namespaces/{t.path(ns)}/tables"))
        if head:
            table_ops.append(_job(c, "headTable", "HEAD", f"namespaces/{t.path(ns)}/tables/{name}"))
        table_ops.append(_job(c, "loadTable", "GET", f"namespaces/{t.path(ns)}/tables/{name}"))
    view_ops = []
    if "views" not in t.lacks:
        for ns, name in ds.views:
            view_ops.append(_job(c, "listViews", "GET", f"namespaces/{t.path(ns)}/views"))
            if head:
                view_ops.append(_job(c, "headView", "HEAD", f"namespaces/{t.path(ns)}/views/{name}"))
            view_ops.append(_job(c, "loadView", "GET", f"namespaces/{t.path(ns)}/views/{name}"))
    return [("namespaces", ns_ops), ("tables", table_ops), ("views", view_ops)]


def _lacking(t: Target) -> list[str]:
    return [f"{what}: n/a" for what in sorted(t.lacks)]


async def read_tree(t: Target, c: CatalogClient, ds: Dataset, p: Params) -> Outcome:
    """ReadTreeDataset: every entity once (list, HEAD, GET), 20/20/10 at a time."""
    wall = 0.0
    for kind, ops in _reads(t, c, ds):
        wall += await run_all(10 if kind == "views" else 20, [lambda o=o: o(None) for o in ops])
    return Outcome(c.recorder.samples, wall, _lacking(t), {"seconds_to_read_all": wall})


def _writes(t: Target, c: CatalogClient, ds: Dataset, tag: str) -> list[Any]:
    """Makers of the three ReadUpdate writes: namespace property, table commit, view commit."""

    def namespace(i: int) -> Operation:
        ns = ds.namespaces[i % len(ds.namespaces)]
        body = {"updates": {f"{tag}_{i}": str(i)}}
        return _job(c, "updateNamespace", "POST", f"namespaces/{t.path(ns)}/properties", body, retry=RETRY_STATUSES)

    def table(i: int) -> Operation:
        ns, name = ds.tables[i % len(ds.tables)]
        body = _set_properties(f"{tag}_{i}", str(i))
        return _job(c, "commitTable", "POST", f"namespaces/{t.path(ns)}/tables/{name}", body, retry=RETRY_STATUSES)

    def view(i: int) -> Operation:
        ns, name = ds.views[i % len(ds.views)]
        body = _set_properties(f"{tag}_{i}", str(i))
        return _job(c, "commitView", "POST", f"namespaces/{t.path(ns)}/views/{name}", body, retry=RETRY_STATUSES)

    return [namespace, table] if "views" in t.lacks else [namespace, table, view]


async def read_update(t: Target, c: CatalogClient, ds: Dataset, p: Params) -> Outcome:
    """ReadUpdateTreeDataset: open model at `mix_rate`/s, reads with probability `read_ratio`."""
    reads = [op for _, ops in _reads(t, c, ds) for op in ops]
    writes = _writes(t, c, ds, "NewAttribute")
    rng = random.Random(7)
    counters = Counter[str]()

    def pick(i: int) -> Operation:
        if rng.random() < p.read_ratio:
            counters["r"] += 1
            return reads[counters["r"] % len(reads)]
        counters["w"] += 1
        return writes[counters["w"] % len(writes)](counters["w"])

    wall = await open_model(p.mix_rate, p.duration, pick)
    return Outcome(c.recorder.samples, wall, _lacking(t), {"offered_rate": p.mix_rate})


async def fixed_rate_commits(t: Target, c: CatalogClient, ds: Dataset, p: Params) -> Outcome:
    """CreateCommits: table commits and view commits at fixed rates, in parallel (open model)."""
    makers = _writes(t, c, ds, "CommitAttribute")
    runs = [open_model(p.table_commit_rate, p.duration, makers[1], seed=1)]
    if "views" not in t.lacks:
        runs.append(open_model(p.view_commit_rate, p.duration, makers[2], seed=2))
    walls = await asyncio.gather(*runs)
    figures = {"table_commit_rate": p.table_commit_rate, "view_commit_rate": p.view_commit_rate}
    return Outcome(c.recorder.samples, max(walls), _lacking(t), figures)


async def max_load_table(t: Target, c: CatalogClient, ds: Dataset, p: Params) -> Outcome:
    """Closed model: `load_workers` clients loading tables round-robin as fast as the server answers."""

    def pick(worker: int, i: int) -> Operation:
        ns, name = ds.tables[(worker + i * p.load_workers) % len(ds.tables)]
        return _job(c, "loadTable", "GET", f"namespaces/{t.path(ns)}/tables/{name}")

    wall = await closed_model(p.load_workers, p.duration, pick)
    ok = sum(1 for s in c.recorder.samples if s.status == 200)
    return Outcome(c.recorder.samples, wall, [], {"max_rate": ok / wall, "workers": p.load_workers})


async def load_table_at(rate: float, t: Target, c: CatalogClient, ds: Dataset, p: Params) -> Outcome:
    """Open model: loadTable at a fixed offered `rate`/s (half the measured maximum)."""

    def pick(i: int) -> Operation:
        ns, name = ds.tables[i % len(ds.tables)]
        return _job(c, "loadTable", "GET", f"namespaces/{t.path(ns)}/tables/{name}")

    wall = await open_model(rate, p.duration, pick)
    return Outcome(c.recorder.samples, wall, [], {"offered_rate": rate})


async def max_commits(t: Target, c: CatalogClient, ds: Dataset, p: Params) -> Outcome:
    """Closed model: `commit_workers` committers, each on its own tables (no conflicts by design)."""
    workers = min(p.commit_workers, len(ds.tables))

    def pick(worker: int, i: int) -> Operation:
        ns, name = ds.tables[(worker + i * workers) % len(ds.tables)]
        body = _set_properties(f"MaxCommit_{worker}", str(i))
        return _job(c, "commitTable", "POST", f"namespaces/{t.path(ns)}/tables/{name}", body, retry=RETRY_STATUSES)

    wall = await closed_model(workers, p.duration, pick)
    ok = sum(1 for s in c.recorder.samples if s.status == 200)
    return Outcome(c.recorder.samples, wall, [], {"max_rate": ok / wall, "workers": workers})


def _truncated_normal(rng: random.Random, mean: float, variance: float) -> float:
    while True:
        value = rng.gauss(mean, variance**0.5)
        if 0.0 <= value <= 1.0:
            return value


async def skewed(t: Target, c: CatalogClient, ds: Dataset, p: Params) -> Outcome:
    """WeightedWorkloadOnTreeDataset: 8 readers (mean 0.3) and 2 writers (mean 0.7) on hot tables."""
    readers, writers, variance = 8, 2, 0.0278
    rngs = [random.Random(42 + worker) for worker in range(readers + writers)]
    hits = Counter[int]()

    def pick(worker: int, i: int) -> Operation:
        writer = worker >= readers
        index = int(_truncated_normal(rngs[worker], 0.7 if writer else 0.3, variance) * (len(ds.tables) - 1))
        hits[index] += 1
        ns, name = ds.tables[index]
        path = f"namespaces/{t.path(ns)}/tables/{name}"
        if writer:
            body = _set_properties("last_updated", str(int(time.time() * 1000)))
            return _job(c, "commitTable", "POST", path, body, retry=RETRY_STATUSES)
        return _job(c, "loadTable", "GET", path)

    wall = await closed_model(readers + writers, p.duration, pick)
    hottest, count = hits.most_common(1)[0] if hits else (0, 0)
    share = count / max(1, sum(hits.values()))
    return Outcome(c.recorder.samples, wall, [], {"hottest_table": hottest, "hottest_share": share})


async def list_pages(t: Target, c: CatalogClient, ds: Dataset, p: Params) -> Outcome:
    """A namespace of `list_tables` tables, then listed page by page (`page_size`) five times."""
    ns = ["LIST_NS"]
    await c.call("setup", "POST", "namespaces", {"namespace": t.ns(ns), "properties": {}})
    small = schema(2)
    jobs = [
        _job(
            c,
            "setup",
            "POST",
            f"namespaces/{t.path(ns)}/tables",
            {"name": f"L_{i:06d}", "schema": small},
            tries=3,
            retry=CREATE_RETRY,
        )
        for i in range(p.list_tables)
    ]
    created = await run_all(20, [lambda j=j: j(None) for j in jobs], budget=SETUP_BUDGET)
    tables = sum(1 for s in c.recorder.samples if s.op == "setup" and s.status == 200)
    c.recorder.samples.clear()
    pages, started = 0, time.perf_counter()
    seen = 0
    for _ in range(5):
        token: str | None = None
        seen = 0
        while True:
            query = {"pageSize": str(p.page_size)} | ({"pageToken": token} if token else {})
            status, body = await c.call("listTablesPage", "GET", f"namespaces/{t.path(ns)}/tables", params=query)
            pages += 1
            if status != 200:
                break
            answer = msgspec.json.decode(body)
            seen += len(answer.get("identifiers", []))
            token = answer.get("next-page-token")
            if not token:
                break
    wall = time.perf_counter() - started
    figures = {"tables": tables, "seen_per_pass": seen, "pages": pages, "create_seconds": created}
    figures["pass_ms"] = wall * 1000 / 5
    notes = [] if pages > 5 else ["listTablesPage: no paging, one page per pass"]
    if tables < p.list_tables:
        notes.append(f"listTablesPage: only {tables} of {p.list_tables} tables created within {SETUP_BUDGET:.0f} s")
    return Outcome(c.recorder.samples, wall, notes, figures)


def _snapshot_updates(start: int, count: int, parent: int | None, base_ms: int, location: str) -> list[dict[str, Any]]:
    updates: list[dict[str, Any]] = []
    for seq in range(start, start + count):
        snapshot_id = 1_000_000 + seq
        snapshot = {
            "snapshot-id": snapshot_id,
            "sequence-number": seq,
            "timestamp-ms": base_ms + seq,
            "manifest-list": f"{location}/metadata/snap-{snapshot_id}.avro",
            "summary": {"operation": "append"},
            "schema-id": 0,
        }
        if parent is not None:
            snapshot["parent-snapshot-id"] = parent
        updates.append({"action": "add-snapshot", "snapshot": snapshot})
        parent = snapshot_id
    assert parent is not None
    updates.append({"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": parent})
    return updates


async def long_history(t: Target, c: CatalogClient, ds: Dataset, p: Params) -> Outcome:
    """loadTable latency on a fresh table, then after `snapshots` snapshots (added in batched commits)."""
    ns = ds.leaves[0]
    path = f"namespaces/{t.path(ns)}/tables/HISTORY"
    status, body = await c.call(
        "setup", "POST", f"namespaces/{t.path(ns)}/tables", {"name": "HISTORY", "schema": schema(2)}
    )
    if status != 200:
        return Outcome([], 0.0, [f"history: n/a (create answered {status})"])
    location = msgspec.json.decode(body)["metadata"]["location"]
    for _ in range(p.probe_loads):
        await c.call("loadTable@0", "GET", path)
    base_ms, parent, added = int(time.time() * 1000), None, 0
    started = time.perf_counter()
    while added < p.snapshots:
        batch = min(p.snapshot_batch, p.snapshots - added)
        updates = _snapshot_updates(added + 1, batch, parent, base_ms, location)
        status, answer = await c.call("commitSnapshots", "POST", path, {"requirements": [], "updates": updates})
        if status != 200:
            reason = answer[:100].decode(errors="replace")
            return Outcome(c.recorder.samples, 0.0, [f"history: n/a (adding snapshots answered {status}: {reason})"])
        added += batch
        parent = 1_000_000 + added
    build = time.perf_counter() - started
    for _ in range(p.probe_loads):
        await c.call(f"loadTable@{added} all", "GET", path)
    for _ in range(p.probe_loads):
        await c.call(f"loadTable@{added} refs", "GET", path, params={"snapshots": "refs"})
    return Outcome(c.recorder.samples, build, [], {"snapshots": added, "build_seconds": build})


async def transactions(t: Target, c: CatalogClient, ds: Dataset, p: Params) -> Outcome:
    """Closed model: 4 clients committing two-table transactions (set-properties on each)."""
    if "transactions" in t.lacks:
        return Outcome([], 0.0, ["commitTransaction: n/a"])
    workers = 4

    def pick(worker: int, i: int) -> Operation:
        first = ds.tables[(worker + 2 * i * workers) % len(ds.tables)]
        second = ds.tables[(worker + (2 * i + 1) * workers) % len(ds.tables)]
        changes = [
            {"identifier": {"namespace": t.ns(ns), "name": name}} | _set_properties(f"Tx_{worker}", str(i))
            for ns, name in (first, second)
        ]
        return _job(
            c, "commitTransaction", "POST", "transactions/commit", {"table-changes": changes}, retry=RETRY_STATUSES
        )

    wall = await closed_model(workers, p.duration, pick)
    ok = sum(1 for s in c.recorder.samples if s.status == 204)
    return Outcome(c.recorder.samples, wall, [], {"max_rate": ok / wall, "workers": workers})
