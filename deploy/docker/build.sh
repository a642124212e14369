#!/usr/bin/env bash
# Build the catalog-es image with podman from Debian packages and PyPI only (no registry image is pulled):
#   deploy/docker/build.sh [runtime|spark-client]...     (default: runtime)
# The Dockerfile's base is a build argument; here it is a Debian bookworm root filesystem made once by
# debootstrap and imported as $CATALOG_ES_BASE_IMAGE (cached in podman's store and as a tarball under
# $CATALOG_ES_IMAGE_CACHE, so later builds skip it). Idempotent: a second run reuses the base and podman's layer cache.
# Settings (all optional):
#   CATALOG_ES_IMAGE        runtime image name   (default localhost/catalog-es:<pyproject version>)
#   CATALOG_ES_SPARK_IMAGE  spark-client name    (default localhost/catalog-es-spark:<pyproject version>)
#   CATALOG_ES_BASE_IMAGE   the base to build on (default localhost/catalog-es-base:bookworm, made here if absent;
#                           set docker.io/library/debian:bookworm-slim where a registry is reachable)
#   CATALOG_ES_IMAGE_CACHE  cache directory      (default ${XDG_CACHE_HOME:-~/.cache}/catalog-es/image)
#   DEBIAN_MIRROR           debootstrap's mirror (default http://deb.debian.org/debian)
#   PIP_CERT                a CA bundle handed to pip inside the build as a build secret (for TLS-intercepting
#                           proxies; default: the host's bundle when the host's pip is configured with one)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
podman="$here/podman.sh"
cache="${CATALOG_ES_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/catalog-es/image}"
mkdir -p "$cache"

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/pyproject.toml" | head -n 1)
base="${CATALOG_ES_BASE_IMAGE:-localhost/catalog-es-base:bookworm}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

log() { printf '[build.sh %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# The base: a minimal bookworm (what debian:bookworm-slim is) with the security and updates suites enabled.
make_base() {
    local tarball="$cache/bookworm-minbase.tar"
    if [[ ! -s "$tarball" ]]; then
        command -v debootstrap >/dev/null || { log "debootstrap is missing (apt-get install debootstrap)"; exit 1; }
        local rootfs
        rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
        log "debootstrap bookworm into $rootfs (once, ~1 min)"
        debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 \
            || { tail -n 20 "$cache/debootstrap.log" >&2; rm -rf "$rootfs"; exit 1; }
        cat >"$rootfs/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
        rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
        tar --numeric-owner -C "$rootfs" -cf "$tarball.$$" . && mv "$tarball.$$" "$tarball"
        rm -rf "$rootfs"
    fi
    log "importing $tarball as $base"
    "$podman" import -q --change 'CMD ["/bin/bash"]' "$tarball" "$base" >/dev/null
}

if ! "$podman" image exists "$base"; then
    if [[ "$base" == localhost/* ]]; then make_base; else "$podman" pull "$base"; fi
fi

# pip inside the build verifies TLS with its own certifi bundle; behind an intercepting proxy it needs the
# proxy's CA. Handed in as a build secret: it is not stored in any layer, and builds without it are unchanged.
cert="${PIP_CERT:-}"
if [[ -z "$cert" ]]; then cert=$(python3 -m pip config get global.cert 2>/dev/null || true); fi
secret=()
if [[ -n "$cert" && -s "$cert" ]]; then secret=(--secret "id=pip-cert,src=$cert"); fi

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then targets=(runtime); fi
for target in "${targets[@]}"; do
    case "$target" in
        runtime) tag="${CATALOG_ES_IMAGE:-localhost/catalog-es:$version}" ;;
        spark-client) tag="${CATALOG_ES_SPARK_IMAGE:-localhost/catalog-es-spark:$version}" ;;
        *) log "unknown target $target (runtime or spark-client)"; exit 2 ;;
    esac
    log "building $tag (target $target, base $base)"
    start=$(date +%s)
    "$podman" build --isolation chroot --layers --format docker \
        --build-arg "BASE_IMAGE=$base" --build-arg "VERSION=$version" \
        "${secret[@]}" \
        --target "$target" -t "$tag" -f "$here/Dockerfile" "$root"
    log "built $tag in $(($(date +%s) - start)) s"
done
