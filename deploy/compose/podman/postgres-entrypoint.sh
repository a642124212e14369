#!/bin/sh
# PostgreSQL 15 from Debian, started like the official image: on an empty $PGDATA, a cluster whose superuser is
# POSTGRES_USER (password POSTGRES_PASSWORD, scram over TCP) and a database POSTGRES_DB; then the server, as the
# postgres user, listening on every interface of the container.
set -eu
: "${POSTGRES_USER:?}" "${POSTGRES_PASSWORD:?}" "${POSTGRES_DB:=$POSTGRES_USER}"
if [ "$(id -u)" = 0 ]; then
    # A fresh named volume belongs to root.
    install -d -o postgres -g postgres -m 0700 "$PGDATA"
    install -d -o postgres -g postgres -m 2775 /var/run/postgresql
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    password_file=$(mktemp)
    printf '%s' "$POSTGRES_PASSWORD" >"$password_file"
    initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$password_file" --auth-local=trust \
        --auth-host=scram-sha-256 --encoding=UTF8 >/dev/null
    rm -f "$password_file"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    if [ "$POSTGRES_DB" != postgres ]; then
        createdb -U "$POSTGRES_USER" "$POSTGRES_DB"
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
