"""Process liveness, for the embedded servers' bookkeeping of who is still using them."""

from __future__ import annotations

import os


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True
