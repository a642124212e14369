"""The relay's configuration, which is also the settings' `nats` section (`CATALOG_ES__NATS__*`).

Only msgspec here: the settings import it, and every CLI command loads the settings.
"""

from __future__ import annotations

from typing import Literal

import msgspec

ContentMode = Literal["binary", "structured"]


class StreamOptions(msgspec.Struct, frozen=True):
    """The stream the relay creates when it is missing (an existing stream is used as it is)."""

    name: str
    subjects: list[str]
    duplicate_window_seconds: float = 120.0
    max_age_seconds: float = 0.0  # 0: keep forever
    max_bytes: int = -1
    storage: str = "file"
    replicas: int = 1


class RelayConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Change events on NATS JetStream; the relay's name (checkpoint row, leadership lock) is the stream's.

    Without `url`: an embedded nats-server in embedded mode, no NATS with an external database
    (`RelayConfig.at` names the server actually used).
    """

    url: str | None = None
    enabled: bool = True
    embedded_port: int = 0  # 0: a free loopback port, recorded in the data dir
    stream: str = "CATALOG_EVENTS"
    subject_prefix: str = "catalog"
    content_mode: ContentMode = "binary"
    lakekeeper_compat: bool = False
    lakekeeper_subject: str = "catalog.lakekeeper"
    duplicate_window_seconds: float = 120.0
    max_age_seconds: float = 0.0  # 0: keep events forever
    storage: Literal["file", "memory"] = "file"
    batch_size: int = 500
    poll_seconds: float = 1.0  # a missed NOTIFY is noticed this late at most
    standby_retry_seconds: float = 1.0
    backoff_max_seconds: float = 5.0
    ack_timeout_seconds: float = 10.0

    def at(self, url: str) -> RelayConfig:
        """This configuration publishing to `url` (the embedded server's, when none was configured)."""
        return msgspec.structs.replace(self, url=url)

    def stream_options(self) -> StreamOptions:
        subjects = [f"{self.subject_prefix}.>"]
        if self.lakekeeper_compat and not self.lakekeeper_subject.startswith(f"{self.subject_prefix}."):
            subjects.append(self.lakekeeper_subject)
        window = self.duplicate_window_seconds
        if self.max_age_seconds:  # JetStream refuses a dedup window longer than the retention
            window = min(window, self.max_age_seconds)
        return StreamOptions(
            name=self.stream,
            subjects=subjects,
            duplicate_window_seconds=window,
            max_age_seconds=self.max_age_seconds,
            storage=self.storage,
        )
