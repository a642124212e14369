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

    # NATS server URL; unset: embedded nats-server in embedded mode, no NATS with an external database
    url: str | None = None
    enabled: bool = True  # false: no relay, no NATS
    embedded_port: int = 0  # 0: a free loopback port, recorded in the data dir
    stream: str = "CATALOG_EVENTS"  # the JetStream stream (also the relay's name: checkpoint row, leadership lock)
    subject_prefix: str = "catalog"  # events go to `<prefix>.<event type...>`
    # CloudEvents over NATS: `binary` (attributes in headers) or `structured` (JSON envelope)
    content_mode: ContentMode = "binary"
    lakekeeper_compat: bool = False  # also publish Lakekeeper-shaped events for its consumers
    lakekeeper_subject: str = "catalog.lakekeeper"  # the subject of those Lakekeeper-shaped events
    duplicate_window_seconds: float = 120.0  # JetStream's deduplication window for a stream the relay creates
    max_age_seconds: float = 0.0  # 0: keep events forever
    storage: Literal["file", "memory"] = "file"  # storage of a stream the relay creates
    batch_size: int = 500  # events read and published per batch
    poll_seconds: float = 1.0  # a missed NOTIFY is noticed this late at most
    standby_retry_seconds: float = 1.0  # how often a standby relay tries to take the lead
    backoff_max_seconds: float = 5.0  # longest pause between reconnection attempts
    ack_timeout_seconds: float = 10.0  # how long a publish waits for JetStream's ack

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
