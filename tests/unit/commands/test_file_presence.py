"""Metadata-file presence checks: each answers for its own location, after it was asked; a local file's at once on
the loop, an object store's in batches (stood in for by local storage taken for a remote one)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fakes import file_warehouse

from catalog_es.errors import InvalidLocationError
from catalog_es.storage.files import WarehouseStorage
from catalog_es.storage.profiles import decode_profile
from commands.file_presence import FilePresence


class _AsIfRemote(WarehouseStorage):
    """Local files checked as an object store's are: in batches, off the loop."""

    @property
    def local(self) -> bool:
        return False


def _storage(tmp_path: Path, remote: bool = True) -> tuple[WarehouseStorage, str]:
    warehouse = file_warehouse(tmp_path)
    kind = _AsIfRemote if remote else WarehouseStorage
    return kind(decode_profile(warehouse.storage_profile), None), warehouse.location


@pytest.mark.parametrize("remote", [True, False])
def test_each_check_answers_for_its_own_location_when_many_are_asked_at_once(tmp_path: Path, remote: bool) -> None:
    storage, base = _storage(tmp_path, remote)
    present = Path(base.removeprefix("file://"), "t", "metadata", "00001.metadata.json")
    present.parent.mkdir(parents=True)
    present.write_text("{}")
    here, gone = f"{base}/t/metadata/00001.metadata.json", f"{base}/t/metadata/00002.metadata.json"
    presence = FilePresence()

    async def scenario() -> list[bool]:
        return await asyncio.gather(*(presence.missing(storage, loc) for loc in [here, gone, here, gone, here]))

    assert asyncio.run(scenario()) == [False, True, False, True, False]


def test_a_check_sees_a_file_deleted_before_it_was_asked_when_a_batch_was_running(tmp_path: Path) -> None:
    """No answer looked up before the request came: a check asked while a batch runs waits for the next one."""
    storage, base = _storage(tmp_path)
    path = Path(base.removeprefix("file://"), "t", "metadata", "00001.metadata.json")
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    location = f"{base}/t/metadata/00001.metadata.json"
    presence = FilePresence()

    async def scenario() -> tuple[bool, bool]:
        first = asyncio.ensure_future(presence.missing(storage, location))
        await asyncio.sleep(0)  # the first batch is under way
        await asyncio.to_thread(path.unlink)
        second = await presence.missing(storage, location)
        return await first, second

    assert asyncio.run(scenario())[1] is True


@pytest.mark.parametrize("remote", [True, False])
def test_a_check_raises_its_own_error_when_its_location_is_outside_the_warehouse(tmp_path: Path, remote: bool) -> None:
    storage, _ = _storage(tmp_path, remote)
    presence = FilePresence()

    async def scenario() -> bool:
        return await presence.missing(storage, "file:///elsewhere/metadata/00001.metadata.json")

    with pytest.raises(InvalidLocationError):
        asyncio.run(scenario())


def test_a_local_check_is_answered_on_the_loop_without_a_worker_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage, base = _storage(tmp_path, remote=False)

    async def no_thread(*args: object) -> object:
        raise AssertionError("a local check went to a worker thread")

    monkeypatch.setattr(asyncio, "to_thread", no_thread)
    presence = FilePresence()
    assert asyncio.run(presence.missing(storage, f"{base}/t/metadata/00001.metadata.json")) is True
