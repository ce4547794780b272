#!/usr/bin/env bash
# Run a command with TEST_DATABASE_URL pointing at a PostgreSQL server.
# Uses TEST_DATABASE_URL when given; otherwise starts this machine's PostgreSQL cluster
# (Debian's pg_ctlcluster) and creates a `falte` role that may create test databases.
# In CI (CI=true) a missing PostgreSQL is an error; locally the database tests then skip.
set -euo pipefail

if [ -n "${TEST_DATABASE_URL:-}" ]; then
  exec "$@"
fi

fail_or_warn() {
  local message=$1
  shift
  if [ "${CI:-}" = "true" ]; then
    echo "with-postgres: $message (CI=true: PostgreSQL tests must run)" >&2
    exit 1
  fi
  echo "with-postgres: WARNING: $message; PostgreSQL tests will be skipped." >&2
  exec "$@"
}

if ! command -v pg_lsclusters >/dev/null 2>&1; then
  fail_or_warn "no PostgreSQL found (install postgresql, or set TEST_DATABASE_URL)" "$@"
fi

cluster=$(pg_lsclusters --no-header | awk 'NR==1 {print $1" "$2" "$3" "$4}')
if [ -z "$cluster" ]; then
  fail_or_warn "PostgreSQL is installed but has no cluster" "$@"
fi
read -r version name port status <<<"$cluster"
if [ "$status" != "online" ]; then
  echo "with-postgres: starting PostgreSQL $version/$name on port $port" >&2
  pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start
fi
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 -p "$port" && break
  sleep 1
done

as_postgres() {
  if [ "$(id -u)" = "0" ]; then su postgres -c "$1"; else sudo -n -u postgres sh -c "$1"; fi
}
as_postgres "psql -p $port -qtAc \"SELECT 1 FROM pg_roles WHERE rolname='falte'\"" | grep -q 1 \
  || as_postgres "psql -p $port -qc \"CREATE ROLE falte LOGIN PASSWORD 'falte' CREATEDB\""

export TEST_DATABASE_URL="postgresql://falte:falte@127.0.0.1:$port/postgres"
# The resilience tests restart this cluster mid-burst (only a cluster we started ourselves).
export TEST_PG_CLUSTER="$version $name"
echo "with-postgres: TEST_DATABASE_URL=$TEST_DATABASE_URL" >&2
exec "$@"
