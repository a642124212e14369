"""Where `file` warehouses may live: the operator's storage roots, never the server's own data."""

from __future__ import annotations

import os
from collections.abc import Iterable

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.locations import local_path, normalize_location, overlaps

# Inside the data dir only this child may hold warehouses (embedded mode's default root); the rest is the
# server's own state: `pg/` (embedded PostgreSQL), `nats/`, `secrets.key`.
WAREHOUSE_DIR_NAME = "warehouse"


class FileStorageRoots(msgspec.Struct, frozen=True):
    """The directories `file` warehouses must lie in, and the data dir they must keep out of.

    Paths are compared resolved (symlinks followed, `os.path.realpath`), by whole segments, so neither a
    symlink nor a spelling (`file:/x`, `//x`, a trailing `/`) leads out of a root. No roots: file
    warehouses are refused (the default with an external database).
    """

    roots: tuple[str, ...] = ()
    data_dir: str | None = None

    @classmethod
    def of(cls, roots: Iterable[str], data_dir: str | None) -> FileStorageRoots:
        """Roots as resolved absolute paths.

        Raises:
            ValueError: a root is not an absolute path.
        """
        resolved = []
        for root in roots:
            if not os.path.isabs(root):
                raise ValueError(f"File storage roots must be absolute paths, got {root!r}")
            resolved.append(os.path.realpath(root))
        return cls(tuple(resolved), os.path.realpath(data_dir) if data_dir is not None else None)

    def check(self, location: str) -> str:
        """The resolved path of a file warehouse location allowed here.

        Raises:
            BadRequestError: no roots are configured, the location is outside every root, or it overlaps
                the server's data dir anywhere but below its `warehouse/` directory.
        """
        path = os.path.realpath(local_path(location))
        if not self.roots:
            raise BadRequestError(
                "File storage is disabled on this server: an operator must set CATALOG_ES__FILE_STORAGE_ROOTS"
            )
        if not any(within(path, root) for root in self.roots):
            raise BadRequestError(
                f"File storage location {location} is outside the server's file storage roots "
                "(CATALOG_ES__FILE_STORAGE_ROOTS)"
            )
        if self.data_dir is not None and _touches_server_data(path, self.data_dir):
            raise BadRequestError(f"File storage location {location} overlaps the server's own data directory")
        return path


def within(path: str, parent: str) -> bool:
    """Whether `path` is `parent` or lies below it, by whole path segments (both absolute, normalised)."""
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def storage_overlaps(a: str, b: str) -> bool:
    """Whether two storage locations overlap: as written (canonical), or for two `file:` locations once
    symlinks are resolved, so an alias of another warehouse's directory counts as that directory.

    Blocking (resolves paths on disk): run off the event loop.
    """
    if overlaps(a, b):
        return True
    a, b = normalize_location(a), normalize_location(b)
    if not (a.startswith("file://") and b.startswith("file://")):
        return False
    real_a, real_b = os.path.realpath(local_path(a)), os.path.realpath(local_path(b))
    return within(real_a, real_b) or within(real_b, real_a)


def _touches_server_data(path: str, data_dir: str) -> bool:
    if within(data_dir, path):  # the data dir itself or one of its ancestors
        return True
    return within(path, data_dir) and not within(path, os.path.join(data_dir, WAREHOUSE_DIR_NAME))
