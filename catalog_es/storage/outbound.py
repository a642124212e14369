"""Which hosts the server may contact for a warehouse's storage, and no ambient cloud identity for any of it."""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import urlsplit

from catalog_es.errors import StorageAccessError

ALLOWED_HOSTS_SETTING: Final = "CATALOG_ES__S3_ENDPOINT_ALLOWED_HOSTS"

# Set for the whole process at startup: boto3, pyarrow's AWS SDK, google-auth and google-cloud-cpp then
# never ask an instance-metadata service for an identity (the GCE ones point at the loopback discard port).
NO_AMBIENT_IDENTITY: Final = {
    "AWS_EC2_METADATA_DISABLED": "true",
    "NO_GCE_CHECK": "True",
    "GCE_METADATA_HOST": "127.0.0.1:9",
    "GCE_METADATA_IP": "127.0.0.1:9",
    "GCE_METADATA_ROOT": "127.0.0.1:9",
}

# Instance-metadata and credential services of the clouds: never contacted, whatever the allow-list says.
_METADATA_NAMES: Final = frozenset(
    {"metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"}
)
_METADATA_ADDRESSES: Final = frozenset(
    ipaddress.ip_address(text) for text in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
_NAT64: Final = ipaddress.ip_network("64:ff9b::/96")
# AWS's own S3 and STS endpoints (s3.eu-west-1.amazonaws.com, s3-fips.dualstack…, sts.amazonaws.com.cn):
# allowed without an entry. Other *.amazonaws.com names (EC2 hosts) resolve to private addresses in a VPC.
_AWS_ENDPOINT: Final = re.compile(r"(s3|sts)(-[a-z0-9-]+)?(\.[a-z0-9-]+)*\.amazonaws\.com(\.cn)?")
_HOST_ENTRY: Final = re.compile(r"(\*\.)?[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?")

Resolver = Callable[[str, int], list[str]]


class EndpointNotAllowedError(StorageAccessError):
    """A storage endpoint the server will not contact (answered 400 before any connection)."""


SystemIdentity = Literal["aws", "azure", "gcp"]
# The operator's switches (Lakekeeper's names, with this server's prefix) for the server's own cloud identity.
SYSTEM_IDENTITY_SETTINGS: Final[dict[SystemIdentity, str]] = {
    "aws": "CATALOG_ES__ENABLE_AWS_SYSTEM_CREDENTIALS",
    "azure": "CATALOG_ES__ENABLE_AZURE_SYSTEM_CREDENTIALS",
    "gcp": "CATALOG_ES__ENABLE_GCP_SYSTEM_CREDENTIALS",
}


def disable_ambient_identity(enabled: Iterable[SystemIdentity] = ()) -> None:
    """Keep every cloud SDK in this process (and the processes it starts) away from metadata services, but for
    the clouds whose system identity the operator enabled (GCP's metadata server then stays reachable)."""
    gcp = "gcp" in frozenset(enabled)
    for name, value in NO_AMBIENT_IDENTITY.items():
        if not (gcp and "GCE" in name):
            os.environ[name] = value
        elif os.environ.get(name) == value:  # set by an earlier call of this process (the CLI's, before settings)
            del os.environ[name]


def _resolve(host: str, port: int) -> list[str]:
    return [str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]


@dataclass(frozen=True)
class EndpointPolicy:
    """The operator's allow-list of custom S3 endpoint hosts (exact names or addresses, `*.domain` for any
    subdomain). Empty: only AWS's own endpoints; loopback and private hosts need an entry. Link-local and
    metadata addresses are refused always, also when an allowed name resolves to one."""

    allowed_hosts: tuple[str, ...] = ()
    resolve: Resolver = _resolve
    # The clouds whose system identity (instance metadata, managed identity) a warehouse may use: none unless the
    # operator enables one. Every use is checked here before a storage client exists, so nothing asks a metadata
    # service for a warehouse of a disabled kind.
    system_identities: frozenset[SystemIdentity] = frozenset()

    def check_system_identity(self, kind: SystemIdentity | None) -> None:
        """Raises: EndpointNotAllowedError (400) for a system identity the operator has not enabled."""
        if kind is not None and kind not in self.system_identities:
            raise EndpointNotAllowedError(
                f"The server's own {kind.upper() if kind == 'aws' else kind.capitalize()} identity is disabled: an "
                f"operator enables it with {SYSTEM_IDENTITY_SETTINGS[kind]}=true"
            )

    @classmethod
    def from_setting(
        cls, text: str | Iterable[str], system_identities: Iterable[SystemIdentity] = ()
    ) -> EndpointPolicy:
        """Parse the comma-separated setting. Raises: ValueError for an entry that is no host name or address."""
        entries = text.split(",") if isinstance(text, str) else list(text)
        hosts = tuple(_host_key(entry) for entry in entries if entry.strip())
        for host in hosts:
            if not (_address(host) or _HOST_ENTRY.fullmatch(host)):
                raise ValueError(f"{ALLOWED_HOSTS_SETTING}: {host!r} is not a host name or an IP address")
        return cls(allowed_hosts=hosts, system_identities=frozenset(system_identities))

    def check(self, endpoint: str | None) -> None:
        """Refuse an endpoint before any connection (blocking: resolves allowed names; run off the event loop).

        Raises:
            EndpointNotAllowedError: malformed, a metadata or link-local address, or not on the allow-list.
        """
        if endpoint is None:
            return  # boto3/pyarrow pick AWS's endpoint for the region (configured endpoint URLs are ignored)
        parts = urlsplit(endpoint)
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            port = -1
        if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc or port < 0:
            raise EndpointNotAllowedError(f"S3 endpoint {endpoint!r} is not allowed: expected http(s)://host[:port]")
        host = _host_key(parts.hostname)
        if host in _METADATA_NAMES or _forbidden(_address(host)):
            raise EndpointNotAllowedError(
                f"S3 endpoint {endpoint!r} is not allowed: link-local and cloud metadata addresses never are"
            )
        if not (self._listed(host) or _AWS_ENDPOINT.fullmatch(host)):
            raise EndpointNotAllowedError(
                f"S3 endpoint {endpoint!r} is not allowed: host {host!r} is not in {ALLOWED_HOSTS_SETTING}"
            )
        if _address(host) is None:
            self._check_resolved(endpoint, host, port)

    def _listed(self, host: str) -> bool:
        return any(
            host == entry or (entry.startswith("*.") and host.endswith(entry[1:])) for entry in self.allowed_hosts
        )

    def _check_resolved(self, endpoint: str, host: str, port: int) -> None:
        """An allowed name must not lead to a metadata service (checked at connect time by the resolver's
        answer now; the allow-list, not this, is what keeps a rebinding name out)."""
        try:
            addresses = self.resolve(host, port)
        except OSError:
            raise EndpointNotAllowedError(
                f"S3 endpoint {endpoint!r} is not allowed: {host!r} does not resolve"
            ) from None
        if any(_forbidden(_address(address.split("%")[0])) for address in addresses):
            raise EndpointNotAllowedError(
                f"S3 endpoint {endpoint!r} is not allowed: {host!r} resolves to a link-local or metadata address"
            )


def _host_key(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _forbidden(address: ipaddress.IPv4Address | ipaddress.IPv6Address | None) -> bool:
    """Link-local, metadata, unspecified or multicast; IPv4 inside IPv6 (mapped, NAT64) judged as IPv4."""
    if address is None:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        elif address in _NAT64:
            address = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address in _METADATA_ADDRESSES or address.is_link_local or address.is_unspecified or address.is_multicast
