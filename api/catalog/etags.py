"""ETags for table representations: they change exactly when the metadata file or the snapshot mode does."""

from __future__ import annotations

import hashlib
from functools import lru_cache


@lru_cache(maxsize=4096)  # the current files of the busiest tables: a loadTable hashes nothing
def etag(metadata_location: str, snapshots: str = "all") -> str:
    digest = hashlib.sha256(f"{metadata_location}\n{snapshots}".encode()).hexdigest()[:32]
    return f'"{digest}"'


def etag_header(metadata_location: str | None) -> dict[str, str]:
    """The ETag of the full (`snapshots=all`) representation; none for a staged table."""
    return {"ETag": etag(metadata_location)} if metadata_location else {}
