#!/usr/bin/env bash
# Make sure a Chromium is there for the Playwright tests:
# /usr/bin/chromium if present; as root on Debian, apt-get install chromium;
# otherwise Playwright's own build. In CI a missing browser is an error.
set -euo pipefail
PYTHON=${PYTHON:-.venv/bin/python}

if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-browser: installing Debian's chromium (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
  [ -x /usr/bin/chromium ] && exit 0
fi
echo "ensure-browser: trying Playwright's own Chromium" >&2
if "$PYTHON" -m playwright install chromium; then
  exit 0
fi
if [ "${CI:-}" = "true" ]; then
  echo "ensure-browser: no Chromium available (CI=true: browser tests must run)" >&2
  exit 1
fi
echo "ensure-browser: WARNING: no Chromium; browser tests will be skipped" >&2
