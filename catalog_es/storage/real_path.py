"""An existing local file's real path by the kernel's own resolution (Linux), else `os.path.realpath`'s walk."""

from __future__ import annotations

import os

_O_PATH: int | None = getattr(os, "O_PATH", None)
_FD_LINKS = "/proc/self/fd/"


def strict_real_path(path: str) -> str:
    """`os.path.realpath(path, strict=True)`: the path with every symlink resolved; the file must exist.

    On Linux one `open(O_PATH)` (nothing of the file is read, no side effect) and one `readlink` of its
    descriptor's link under /proc, instead of Python's walk with an `lstat` per path segment.

    Raises: FileNotFoundError, NotADirectoryError, or another OSError (a symlink loop, access refused).
    """
    if _O_PATH is None:
        return os.path.realpath(path, strict=True)
    fd = os.open(path, _O_PATH | os.O_CLOEXEC)
    try:
        real = os.readlink(f"{_FD_LINKS}{fd}")
    except OSError:  # no /proc mounted: Python's walk
        return os.path.realpath(path, strict=True)
    finally:
        os.close(fd)
    return real if real.startswith("/") else os.path.realpath(path, strict=True)
