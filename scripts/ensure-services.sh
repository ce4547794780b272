#!/usr/bin/env bash
# Make sure the servers the resilience tests start are there: nginx (in front of gunicorn,
# as deployed) and redis-server (rate limits shared by processes). As root on Debian,
# apt-get installs what is missing. In CI (CI=true) a missing one is an error; elsewhere
# the tests that need it are skipped.
set -euo pipefail

missing=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-services: installing ${missing[*]} (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # The packages' own services are not wanted (no init here; tests start their own).
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  missing=()
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  [ ${#missing[@]} -eq 0 ] && exit 0
fi
if [ "${CI:-}" = "true" ]; then
  echo "ensure-services: ${missing[*]} missing (CI=true: the resilience tests must run)" >&2
  exit 1
fi
echo "ensure-services: WARNING: ${missing[*]} missing; the tests that need them will be skipped" >&2
