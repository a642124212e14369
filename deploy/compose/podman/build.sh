#!/usr/bin/env bash
# Build the engines of compose.podman.yaml (Containerfile here) and the catalog image with podman, from Debian
# packages and PyPI only, on the debootstrap base deploy/docker/build.sh makes and caches. Idempotent.
#   deploy/compose/podman/build.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
docker_dir="$here/../../docker"
base="${CATALOG_ES_BASE_IMAGE:-localhost/catalog-es-base:bookworm}"

"$docker_dir/build.sh" runtime spark-client  # also makes the base when absent; spark-client runs `maintenance`

cert="${PIP_CERT:-}"
if [[ -z "$cert" ]]; then cert=$(python3 -m pip config get global.cert 2>/dev/null || true); fi
secret=()
if [[ -n "$cert" && -s "$cert" ]]; then secret=(--secret "id=pip-cert,src=$cert"); fi

for target in postgres nats s3 nginx; do
    echo "[compose/podman/build.sh] localhost/catalog-es-compose-$target:bookworm" >&2
    "$docker_dir/podman.sh" build --isolation chroot --layers --format docker -q \
        --build-arg "BASE_IMAGE=$base" "${secret[@]}" \
        --target "$target" -t "localhost/catalog-es-compose-$target:bookworm" -f "$here/Containerfile" "$here" >/dev/null
done
