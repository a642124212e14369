"""What the ADLS and GCS backends share: IO through the store's own client object, vending by config keys."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Literal, Protocol

from pyiceberg.io import FileIO

from catalog_es.errors import StorageAccessError
from catalog_es.storage.backends.base import VendedConfig
from catalog_es.storage.session_policy import AccessLevel

Permissions = Literal["read", "read-write-delete"]


class StoreIO(Protocol):
    """The store's own IO (`AdlsIO`, `GcsIO`): blocking calls on locations the backend checked."""

    def describe(self) -> str: ...

    def file_io(self) -> FileIO: ...

    def is_empty(self, location: str) -> bool: ...

    def files_below(self, location: str) -> list[str]: ...

    def purge(self, location: str) -> None: ...

    def probe(self) -> None: ...


class ObjectStoreBackend:
    """Delegates IO to the store's client object; a subclass adds ownership, client config and vending."""

    signer = None

    def __init__(self, io: StoreIO, log_reason: Callable[[Exception, str], str]) -> None:
        self._io, self._log_reason = io, log_reason

    def describe(self) -> str:
        return self._io.describe()

    def file_io(self, location: str) -> FileIO:
        return self._io.file_io()

    def delete_file(self, location: str) -> None:
        self._io.file_io().delete(location)

    def is_empty(self, location: str) -> bool:
        return self._io.is_empty(location)

    def files_below(self, location: str) -> list[str]:
        return self._io.files_below(location)

    def purge(self, location: str) -> None:
        self._io.purge(location)

    def probe(self) -> None:
        self._io.probe()

    def failure_reason(self, location: str, exc: OSError) -> str:
        self._log_reason(exc, location)  # the store's text goes to the log only
        return f"storage error in {self.describe()}"


def vending_call(
    issue: Callable[[Permissions], dict[str, str]] | None, level: AccessLevel, expiry_key: str
) -> Callable[[], VendedConfig]:
    """The blocking call that vends the config keys `issue` returns for the level's permissions.

    Raises: StorageAccessError when the warehouse has no credential to vend with (`issue` is None).
    """
    if issue is None:
        raise StorageAccessError("The warehouse's storage credential cannot issue credentials for its profile")
    permissions: Permissions = "read" if level == "read" else "read-write-delete"

    def call() -> VendedConfig:
        config = issue(permissions)
        return VendedConfig(config, expiry_of(config, expiry_key))

    return call


def expiry_of(config: dict[str, str], key: str) -> datetime:
    """The expiry under `key` (epoch milliseconds); now when the store vended nothing (so nothing is kept)."""
    milliseconds = config.get(key)
    if milliseconds is None:
        return datetime.now(UTC)
    return datetime.fromtimestamp(int(milliseconds) / 1000, UTC)
