"""Settings: defaults, overridden by `CATALOG_ES__*` environment variables (nested keys with `__`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from catalog_es.storage.file_roots import WAREHOUSE_DIR_NAME, FileStorageRoots
from catalog_es.storage.outbound import EndpointPolicy, SystemIdentity
from projections.relay.config import RelayConfig

ENV_PREFIX = "CATALOG_ES__"


class AuthzSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Authorization (`CATALOG_ES__AUTHZ__*`): `allowall` lets every authenticated caller do anything."""

    # `builtin`: grants, bootstrapped by the first admin (POST /management/v1/bootstrap)
    backend: Literal["allowall", "builtin"] = "allowall"


class ServicePrincipalSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The catalog's own client credentials (`CATALOG_ES__SERVICE_PRINCIPALS__*`), beside or without OpenID.

    `enabled`: `POST /catalog/v1/oauth/tokens` issues tokens to service principals (needs a secrets key, which
    signs them) and the API accepts them. `token_lifetime_seconds` also bounds how long a token issued before a
    revocation could be used if a process's revocation list stopped following the log (it then refuses them).
    """

    enabled: bool = False  # issue and accept the catalog's own tokens (`serve --secure` sets it)
    # lifetime of the tokens /catalog/v1/oauth/tokens issues
    token_lifetime_seconds: Annotated[int, msgspec.Meta(ge=60, le=86_400)] = 900
    # client-credentials requests a minute per client id (each checks a secret with scrypt); more answer 429
    token_requests_per_minute: Annotated[int, msgspec.Meta(ge=1, le=100_000)] = 60
    # client-credentials requests a minute per peer address, whatever client ids it names
    token_requests_per_minute_per_peer: Annotated[int, msgspec.Meta(ge=1, le=100_000)] = 120


class MetricsSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Prometheus metrics (`CATALOG_ES__METRICS__*`).

    `GET /metrics` on the API port is authenticated like every route, and with the builtin authorizer
    for server admins and operators only. `port` adds an open scrape listener on `host:port` (no token,
    metrics only), for a Prometheus that cannot authenticate: keep it on a network only scrapers reach.
    """

    port: int | None = None  # unset: no open listener
    host: str = "127.0.0.1"  # the open listener's address


class EventsApiSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The Iceberg REST Events endpoint (`CATALOG_ES__EVENTS_API__*`).

    `retained_from_position`: a retention horizon; a continuation token below it gets 410 (0: never).
    """

    default_page_size: Annotated[int, msgspec.Meta(ge=1)] = 100  # events per page when the client names no `pageSize`
    max_page_size: Annotated[int, msgspec.Meta(ge=1)] = 1000  # a larger `pageSize` is capped to this
    scan_limit: Annotated[int, msgspec.Meta(ge=1)] = 10_000  # events one request examines at most
    retained_from_position: Annotated[int, msgspec.Meta(ge=0)] = 0  # a continuation token below it gets 410 (0: never)


class ScanPlanningSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Server-side scan planning (`CATALOG_ES__SCAN_PLANNING__*`, issue 33; api/README.md, scan planning)."""

    # `scan-planning-mode` in /config overrides and loadTable config: `server` makes clients plan here
    mode: Literal["client", "server"] = "client"
    # how long planTableScan waits for a plan before it answers `submitted` (pyiceberg 0.12 cannot poll)
    sync_seconds: Annotated[float, msgspec.Meta(ge=0)] = 30.0
    page_size: Annotated[int, msgspec.Meta(ge=1)] = 1000  # file scan tasks per page (plan tasks page the rest)
    cache_mib: Annotated[int, msgspec.Meta(ge=0)] = 256  # memory for finished plans, per process (LRU)
    max_plans: Annotated[int, msgspec.Meta(ge=1)] = 1000  # plan-ids kept per process, the oldest forgotten first
    # distinct plans being planned at once per process; past it planTableScan answers 503 with Retry-After
    max_queued: Annotated[int, msgspec.Meta(ge=1)] = 64


class UiSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The web console at /ui (`CATALOG_ES__UI__*`); with OIDC on it logs in as `client_id`.

    `client_id` names a public client of the provider allowed the authorization-code grant with PKCE and
    the redirect URI `<console origin>/ui/`. Unset with OIDC on: the console asks for a token to paste.
    """

    enabled: bool = True  # serve the console at /ui
    # the provider's public client the console logs in as (authorization code + PKCE); unset: paste a token
    client_id: str | None = None
    scope: str = "openid"  # the scopes the console asks the provider for
    resource: str | None = None  # an OAuth resource indicator, for providers that issue audience-bound tokens


class MaintenanceSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The Spark maintenance worker, `catalog-es maintenance run` (`CATALOG_ES__MAINTENANCE__*`).

    `spark_master`: any Spark master (`spark://host:7077`, `yarn`, `k8s://…`); `spark_packages` replaces the
    offline jars with Maven coordinates for clusters that reach a Maven repository. `catalog_uri`: the catalog
    as Spark reaches it (default: the URI the `serve` on the same data dir records there). With authentication
    on, `credential` (`<client id>:<client secret>` of the maintenance client) and `oauth2_server_uri` (the
    provider's token endpoint) let Spark fetch and refresh its own token. `orphan_min_age_seconds`: orphan
    removal never deletes a file younger than this, whatever a policy says (a writer's files are unreferenced
    until it commits).
    """

    spark_master: str = "local[*]"  # any Spark master: `local[*]`, `spark://host:7077`, `yarn`, `k8s://...`
    spark_packages: str | None = None  # Maven coordinates to use instead of the offline jars
    parallelism: Annotated[int, msgspec.Meta(ge=1)] = 2  # jobs running at once on the worker's one session
    lease_seconds: Annotated[float, msgspec.Meta(gt=0)] = 300.0  # renewed every third of it while a job runs
    poll_seconds: Annotated[float, msgspec.Meta(gt=0)] = 30.0  # between trigger evaluations in the loop
    # the catalog as Spark reaches it; unset: the URI the `serve` on this data dir records
    catalog_uri: str | None = None
    credential: str | None = None  # `<client id>:<client secret>` of the maintenance OAuth2 client (authentication on)
    oauth2_server_uri: str | None = None  # the provider's token endpoint for that client
    scope: str | None = None  # the scope the maintenance client asks for
    # orphan removal never deletes a younger file, whatever a policy says
    orphan_min_age_seconds: Annotated[float, msgspec.Meta(ge=0)] = 3600.0


class TaskWorkerSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The task worker (`CATALOG_ES__TASK_WORKER__*`): `serve` runs one in-process unless `enabled` is false
    (then run `catalog-es worker` on its own); any number of workers share the queue."""

    enabled: bool = True  # `serve` runs one task worker (with `--workers N`: in its supervisor)
    slots: Annotated[int, msgspec.Meta(ge=1)] = 2  # tasks one worker runs at once
    poll_seconds: Annotated[float, msgspec.Meta(gt=0)] = 1.0  # pause when nothing is due
    lease_seconds: Annotated[float, msgspec.Meta(gt=0)] = 60.0  # a silent worker's task is claimable after this
    backoff_seconds: Annotated[float, msgspec.Meta(ge=0)] = 5.0  # first retry's delay, doubling per attempt
    purge_concurrency: Annotated[int, msgspec.Meta(ge=1)] = 8  # file deletions of one purge at once
    purge_batch_size: Annotated[int, msgspec.Meta(ge=1)] = 64  # deletions between two progress records


class Settings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Everything configurable. Without `pg_dsn` the catalog runs an embedded PostgreSQL in `data_dir`."""

    pg_dsn: str | None = None  # external PostgreSQL (a libpq URI); unset: an embedded one in `data_dir`
    data_dir: str = ".catalog-es"  # embedded mode's database, NATS store, secrets key and file warehouse
    host: str = "127.0.0.1"  # the address the API listens on (`0.0.0.0` in a container)
    port: int = 8181  # the API's port
    default_warehouse: str = "demo"  # the file warehouse `serve` creates where the storage roots allow it
    event_source: str = "/catalog-es"  # the CloudEvents `source` of every event this catalog records
    log_level: str = "info"  # debug, info, warning or error
    log_json: bool = True  # JSON log lines (structlog); false: console lines
    max_request_body_bytes: int = 10_000_000  # a larger request body gets 413
    # How long a request waits for a database connection; past it (the database is down) it gets 503 + Retry-After.
    pg_pool_timeout_seconds: float = 2.0
    idempotency_key_lifetime_minutes: int = 30  # how long an `Idempotency-Key` replays its first answer
    # SIGTERM: stop accepting, let requests in flight finish for up to this long, then close what is left.
    graceful_shutdown_seconds: Annotated[float, msgspec.Meta(ge=0)] = 30.0
    allow_newer_schema: bool = False  # run against a database a newer catalog-es migrated (schema_guard.py)
    workers: int = 1  # uvicorn worker processes; more than 1 runs the relay and projectors only as their own processes
    enable_default_project: bool = True  # requests without `x-project-id` use the NIL-UUID project
    # Deepest namespace createNamespace accepts (Lakekeeper's limit is 5); deeper ones get 400.
    max_namespace_depth: Annotated[int, msgspec.Meta(ge=1)] = 5
    # A warehouse deleted with `force` stays undeletable this long (`POST /management/v1/warehouse/{id}/undelete`);
    # 0: deleted at once, as Lakekeeper does.
    warehouse_delete_hold_seconds: Annotated[int, msgspec.Meta(ge=0)] = 0
    # Storage-credential encryption key: URL-safe base64 of 32 bytes; embedded mode generates <data_dir>/secrets.key.
    secrets_key: str | None = None
    nats: RelayConfig = RelayConfig()  # CATALOG_ES__NATS__*
    # Authentication: off (anonymous) unless an OpenID provider is configured; see api/auth/.
    openid_provider_uri: str | None = None
    openid_audience: str | None = None  # comma-separated; a token's `aud` must contain one
    openid_additional_issuers: str | None = None  # comma-separated, accepted besides the discovered issuer
    openid_scope: str | None = None  # a scope every token must carry
    openid_subject_claim: str | None = None  # default: `oid`, then `sub`
    openid_roles_claim: str | None = None  # dot path, e.g. `resource_access.catalog.roles`
    authz: AuthzSettings = AuthzSettings()
    service_principals: ServicePrincipalSettings = ServicePrincipalSettings()  # CATALOG_ES__SERVICE_PRINCIPALS__*
    # Hosts a storage profile's S3 `endpoint` may name (comma-separated names, IP addresses, `*.domain`).
    # Empty: AWS's own S3/STS endpoints only. Link-local and cloud metadata addresses are refused always.
    s3_endpoint_allowed_hosts: str = ""
    # The server's own cloud identity (instance metadata, managed identity) for warehouses whose credential is
    # `azure-system-identity` / `gcp-system-identity` (AWS: none yet): off unless the operator enables it, and
    # then only a server admin or operator may give a warehouse such a credential (Lakekeeper's settings).
    enable_aws_system_credentials: bool = False
    enable_azure_system_credentials: bool = False  # see `enable_aws_system_credentials`
    enable_gcp_system_credentials: bool = False  # see `enable_aws_system_credentials`
    metrics: MetricsSettings = MetricsSettings()
    events_api: EventsApiSettings = EventsApiSettings()
    scan_planning: ScanPlanningSettings = ScanPlanningSettings()
    # As-of prefixes (`<warehouse>@<time or position>`): how many replayed past catalogs are kept in memory.
    as_of_cache_size: Annotated[int, msgspec.Meta(ge=1)] = 4
    # Also record allowed reads in the access audit log: loadTable, loadView (builtin authorizer), S3 sign requests.
    audit_reads: bool = False
    ui: UiSettings = UiSettings()
    # Comma-separated absolute paths `file` warehouses must lie in. Unset: `<data_dir>/warehouse` in embedded
    # mode, none with an external database (file warehouses refused until an operator names a root).
    file_storage_roots: str | None = None
    # Server-side rebase of commutative commits on a moved branch (fast appends, partition-disjoint
    # overwrites): `on` for all tables but those with `catalog-es.server-side-rebase=false`, `opt-in` for
    # tables with it `true` only, `off` for none. `on` since the Java-client and Spark suites pass with it.
    server_side_rebase: Literal["off", "opt-in", "on"] = "on"
    maintenance: MaintenanceSettings = MaintenanceSettings()  # CATALOG_ES__MAINTENANCE__*
    task_worker: TaskWorkerSettings = TaskWorkerSettings()

    def __post_init__(self) -> None:
        self.endpoint_policy  # noqa: B018 - refuses a malformed allow-list when the settings load

    @property
    def endpoint_policy(self) -> EndpointPolicy:
        return EndpointPolicy.from_setting(self.s3_endpoint_allowed_hosts, self.system_identities)

    @property
    def system_identities(self) -> frozenset[SystemIdentity]:
        enabled: dict[SystemIdentity, bool] = {
            "aws": self.enable_aws_system_credentials,
            "azure": self.enable_azure_system_credentials,
            "gcp": self.enable_gcp_system_credentials,
        }
        return frozenset(kind for kind, on in enabled.items() if on)

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir).expanduser().resolve()

    @property
    def default_warehouse_location(self) -> str:
        return (self.data_path / WAREHOUSE_DIR_NAME / self.default_warehouse).as_uri()

    @property
    def file_roots(self) -> FileStorageRoots:
        """The resolved storage roots and the data dir they must keep out of.

        Raises:
            ValueError: a root is not an absolute path.
        """
        if self.file_storage_roots is None:
            roots = [str(self.data_path / WAREHOUSE_DIR_NAME)] if self.pg_dsn is None else []
        else:
            roots = [root.strip() for root in self.file_storage_roots.split(",") if root.strip()]
        return FileStorageRoots.of(roots, str(self.data_path))

    @property
    def idempotency_key_lifetime(self) -> timedelta:
        return timedelta(minutes=self.idempotency_key_lifetime_minutes)

    @property
    def public_uri(self) -> str:
        return f"http://{self.host}:{self.port}/catalog"


def _nested(environ: Mapping[str, str]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for name, value in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX):
            continue
        *parents, leaf = name.removeprefix(ENV_PREFIX).lower().split("__")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise msgspec.ValidationError(f"{name} conflicts with {ENV_PREFIX}{part.upper()}")
        if isinstance(node.get(leaf), dict):
            raise msgspec.ValidationError(f"{name} is both a setting and a group of settings")
        node[leaf] = value
    return tree


def load_settings(environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Read settings from the environment; keyword overrides (e.g. CLI options) win when not None.

    Raises:
        msgspec.ValidationError: an unknown or malformed setting.
    """
    values = _nested(os.environ if environ is None else environ)
    values.update({key: value for key, value in overrides.items() if value is not None})
    return msgspec.convert(values, Settings, strict=False)
