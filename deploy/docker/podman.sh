#!/usr/bin/env bash
# podman as these machines need it (no Docker daemon, no registry, cgroup v1 hybrid, a sandbox that refuses
# podman's default ulimits): `deploy/docker/podman.sh <podman arguments>`. Used by build.sh, the image and compose
# test lanes; harmless elsewhere. Settings (all optional):
#   PODMAN_RUNTIME         OCI runtime (default runc when installed: crun fails on a cgroup v1 hybrid layout)
#   PODMAN_CGROUP_MANAGER  default cgroupfs (no systemd in the sandbox)
#   CATALOG_ES_IMAGE_CACHE where the generated containers.conf and the base rootfs live
#                          (default ${XDG_CACHE_HOME:-~/.cache}/catalog-es/image)
set -euo pipefail

cache="${CATALOG_ES_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/catalog-es/image}"
mkdir -p "$cache"

# podman asks for nofile/nproc limits above this process's own hard limits unless told otherwise; a
# containers.conf of our own (CONTAINERS_CONF, not /etc) pins them to what this process may set. A system file
# that already sets default_ulimits is left in charge.
if [[ -z "${CONTAINERS_CONF:-}" ]] && ! grep -qs '^[[:space:]]*default_ulimits' /etc/containers/containers.conf; then
    nofile_soft=$(ulimit -Sn)
    nofile_hard=$(ulimit -Hn)
    nproc=$(ulimit -Hu)
    if [[ "$nproc" == unlimited || "$nproc" -gt 32768 ]]; then nproc=32768; fi
    conf="$cache/containers.conf"
    want=$(printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n' \
        "$nofile_soft" "$nofile_hard" "$nproc" "$nproc")
    if [[ "$(cat "$conf" 2>/dev/null)" != "$want" ]]; then
        printf '%s\n' "$want" >"$conf.$$" && mv "$conf.$$" "$conf"
    fi
    export CONTAINERS_CONF="$conf"
fi

# Builds run their RUN steps in a chroot (an OCI runtime per step fails here), also when podman-compose builds.
export BUILDAH_ISOLATION="${BUILDAH_ISOLATION:-chroot}"

runtime="${PODMAN_RUNTIME:-}"
if [[ -z "$runtime" ]] && command -v runc >/dev/null; then runtime=runc; fi
global=(--cgroup-manager="${PODMAN_CGROUP_MANAGER:-cgroupfs}")
if [[ -n "$runtime" ]]; then global+=(--runtime "$runtime"); fi

exec podman "${global[@]}" "$@"
