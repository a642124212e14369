"""Storage locations: one canonical spelling and the sub-location / overlap rules."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final
from urllib.parse import urlsplit

from catalog_es.errors import InvalidLocationError

# Hadoop's older spellings of an S3 location: the same object, so one key for overlap checks.
_S3_SPELLINGS: Final = ("s3a", "s3n")
# Azure's Blob-endpoint spelling of an ADLS Gen2 location: `wasbs://fs@acct.blob.<suffix>/p` names the same
# blob as `abfss://fs@acct.dfs.<suffix>/p`.
_WASBS_HOST: Final = re.compile(r"(?P<prefix>[^@/]+@[^./]+)\.blob\.")


def normalize_location(location: str) -> str:
    """Canonical form: `file:/x`, `file://localhost/x` and `file:///x` are one location; no trailing '/'.

    Spark's HadoopFileIO spells local paths `file:/abs/path` while pyiceberg writes `file:///abs/path`.
    Doubled slashes collapse; `.` and `..` segments are refused, so text comparison is path comparison.
    """
    location = location.strip()
    if location.startswith("/"):
        location = "file://" + location
    parts = urlsplit(location)
    if not parts.scheme:
        raise InvalidLocationError(f"Location has no scheme: {location!r}")
    segments = [segment for segment in parts.path.split("/") if segment]
    if any(segment in (".", "..") for segment in segments):
        raise InvalidLocationError(f"Location must not contain '.' or '..' segments: {location!r}")
    path = "/" + "/".join(segments)
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise InvalidLocationError(f"File location must not name a host: {location!r}")
        return "file://" + path
    return f"{parts.scheme}://{parts.netloc}{path}".rstrip("/")


def as_written(location: str) -> str:
    """The location as its client spelled it, without trailing slashes (Iceberg Java's `stripTrailingSlash`).

    What metadata keeps and responses return (a client compares the location it sent with the one it gets);
    every check compares `normalize_location` spellings instead.
    """
    written = location.strip()
    while written.endswith("/") and not written.endswith((":/", "://")):
        written = written[:-1]
    return written


def local_path(location: str) -> str:
    """The filesystem path of a `file:` location."""
    canonical = normalize_location(location)
    if not canonical.startswith("file://"):
        raise InvalidLocationError(f"Not a local location: {location!r}")
    return canonical.removeprefix("file://")


def location_key(location: str) -> str:
    """The canonical location with `s3a://`/`s3n://` spelled `s3://` and `wasbs://fs@a.blob.…` spelled
    `abfss://fs@a.dfs.…`: what overlap checks compare."""
    canonical = normalize_location(location)
    scheme, _, rest = canonical.partition("://")
    if scheme == "wasbs":
        return "abfss://" + _WASBS_HOST.sub(r"\g<prefix>.dfs.", rest, count=1)
    return f"s3://{rest}" if scheme in _S3_SPELLINGS else canonical


def is_strictly_inside(child: str, parent: str) -> bool:
    """Whether `child` lies below `parent`, compared by whole path segments."""
    child, parent = normalize_location(child), normalize_location(parent)
    return child.startswith(parent.rstrip("/") + "/") and child != parent


def overlaps(a: str, b: str) -> bool:
    """Equal, or one contains the other (`…/x` and `…/xa` do not overlap)."""
    a, b = location_key(a), location_key(b)
    return a == b or is_strictly_inside(a, b) or is_strictly_inside(b, a)


def require_inside_warehouse(location: str, warehouse_location: str, alternative_schemes: Collection[str] = ()) -> str:
    """Return the canonical location, or refuse one that is not strictly inside the warehouse.

    `alternative_schemes` (a storage profile's `allow-alternative-protocols`) are other spellings of the
    warehouse's scheme: `s3a://b/wh/t` is inside `s3://b/wh` then, and keeps its scheme, as Hadoop-based
    engines need it so. A literal `?` or `#` is refused rather than cut off.
    """
    if "?" in location or "#" in location:  # urlsplit (and Iceberg Java's S3URI) would cut the rest off
        raise InvalidLocationError(
            f"Location {location} contains '?' or '#', which a URI reads as the start of its query or fragment: "
            "percent-encode them (%3F, %23)"
        )
    canonical = normalize_location(location)
    scheme = canonical.partition("://")[0]
    compared = location_key(canonical) if scheme in alternative_schemes else canonical
    if not is_strictly_inside(compared, warehouse_location):
        raise InvalidLocationError(
            f"Location {location} is not a sub-location of the warehouse location {warehouse_location}"
        )
    return canonical
