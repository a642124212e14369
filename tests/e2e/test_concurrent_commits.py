"""Racing commits from parallel clients on one table: one winner per base, no lost or phantom update."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
import pytest

from tests.e2e.conftest import RestApi
from tests.e2e.rest_helpers import (
    append_snapshot_updates,
    assert_error,
    create_namespace,
    create_table,
    load_table,
    main_snapshot_id,
    table_url,
)

pytestmark = pytest.mark.e2e

WRITERS = 8


def race(rest: RestApi, url: str, bodies: list[dict[str, Any]]) -> list[httpx.Response]:
    """POST each body from its own thread and HTTP client, all released at once by a barrier."""
    barrier = threading.Barrier(len(bodies))
    responses: list[httpx.Response | None] = [None] * len(bodies)
    errors: list[BaseException] = []

    def writer(i: int) -> None:
        try:
            with httpx.Client(base_url=str(rest.http.base_url), timeout=60) as client:
                client.get("config", params={"warehouse": "demo"}).raise_for_status()  # connection is warm
                barrier.wait(timeout=30)
                responses[i] = client.post(url, json=bodies[i])
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(len(bodies))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert all(response is not None for response in responses)
    return [response for response in responses if response is not None]


def metadata_files(location: str) -> list[Path]:
    return sorted((Path(unquote(urlsplit(location).path)) / "metadata").glob("*.metadata.json"))


def test_exactly_one_commit_wins_when_writers_race_on_the_same_main_snapshot(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    assert create_table(rest, "shop", "orders").status_code == 200
    url = table_url(rest, "shop", "orders")
    winners: list[int] = []

    for round_no in range(3):  # main is null in the first round, a snapshot afterwards
        base = load_table(rest, "shop", "orders")["metadata"]
        base_main = main_snapshot_id(base)
        assert base_main == (winners[-1] if winners else None)
        snapshot_ids = [1000 * (round_no + 1) + i for i in range(WRITERS)]
        bodies = [
            {
                "requirements": [
                    {"type": "assert-table-uuid", "uuid": base["table-uuid"]},
                    {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": base_main},
                ],
                "updates": [
                    *append_snapshot_updates(base, snapshot_ids[i]),
                    {"action": "set-properties", "updates": {"writer": str(i), "round": str(round_no)}},
                ],
            }
            for i in range(WRITERS)
        ]

        responses = race(rest, url, bodies)

        statuses = [response.status_code for response in responses]
        assert statuses.count(200) == 1, statuses
        winner = statuses.index(200)
        for i, response in enumerate(responses):
            if i != winner:
                assert_error(response, 409, "CommitFailedException")
        winners.append(snapshot_ids[winner])

        current = load_table(rest, "shop", "orders")
        metadata = current["metadata"]
        assert current["metadata-location"] == responses[winner].json()["metadata-location"]
        assert metadata["properties"]["writer"] == str(winner)
        assert metadata["properties"]["round"] == str(round_no)
        assert main_snapshot_id(metadata) == snapshot_ids[winner]

    # every winner's snapshot is there, in order, chained by parent; no loser's snapshot slipped in
    snapshots = load_table(rest, "shop", "orders")["metadata"]["snapshots"]
    assert [snapshot["snapshot-id"] for snapshot in snapshots] == winners
    assert [snapshot.get("parent-snapshot-id") for snapshot in snapshots] == [None, *winners[:-1]]
    # the losers' metadata files were not left behind: the create plus one per winning commit
    assert len(metadata_files(load_table(rest, "shop", "orders")["metadata"]["location"])) == 1 + len(winners)


def test_every_acknowledged_commit_is_kept_when_writers_race_on_disjoint_properties(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    assert create_table(rest, "shop", "orders").status_code == 200
    table_uuid = load_table(rest, "shop", "orders")["metadata"]["table-uuid"]
    bodies = [
        {
            "requirements": [{"type": "assert-table-uuid", "uuid": table_uuid}],
            "updates": [{"action": "set-properties", "updates": {f"writer-{i}": "done"}}],
        }
        for i in range(WRITERS)
    ]

    responses = race(rest, table_url(rest, "shop", "orders"), bodies)

    acknowledged = {i for i, response in enumerate(responses) if response.status_code == 200}
    assert acknowledged
    for i, response in enumerate(responses):
        if i not in acknowledged:
            assert_error(response, 409, "CommitFailedException")
    properties = load_table(rest, "shop", "orders")["metadata"].get("properties", {})
    written = {int(key.removeprefix("writer-")) for key in properties if key.startswith("writer-")}
    assert written == acknowledged
