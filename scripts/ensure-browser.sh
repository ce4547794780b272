#!/usr/bin/env bash
# Make sure a Chromium is there for the Playwright tests:
# /usr/bin/chromium if present; as root on Debian, apt-get install chromium;
# otherwise Playwright's own build. In CI a missing browser is an error.
# Also an emoji font (Debian's fonts-noto-color-emoji), so that screenshots and the
# browser tests draw emoji in the text instead of empty boxes.
set -euo pipefail
PYTHON=${PYTHON:-.venv/bin/python}

can_apt() {
  [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1
}

apt_updated=""
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "$apt_updated" ]; then
    apt-get update -qq
    apt_updated=1
  fi
  apt-get install -y -qq "$@" >/dev/null
}

ensure_emoji_font() {
  if command -v fc-list >/dev/null 2>&1 && fc-list | grep -qi "Noto Color Emoji"; then
    return 0
  fi
  if [ -f /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ]; then
    return 0
  fi
  if can_apt; then
    echo "ensure-browser: installing Debian's fonts-noto-color-emoji (apt-get)" >&2
    apt_install fonts-noto-color-emoji && return 0
  fi
  echo "ensure-browser: WARNING: no emoji font; emoji in screenshots will show as boxes" >&2
}

ensure_chromium() {
  if [ -x /usr/bin/chromium ]; then
    return 0
  fi
  if can_apt; then
    echo "ensure-browser: installing Debian's chromium (apt-get)" >&2
    apt_install chromium
    [ -x /usr/bin/chromium ] && return 0
  fi
  echo "ensure-browser: trying Playwright's own Chromium" >&2
  if "$PYTHON" -m playwright install chromium; then
    return 0
  fi
  if [ "${CI:-}" = "true" ]; then
    echo "ensure-browser: no Chromium available (CI=true: browser tests must run)" >&2
    exit 1
  fi
  echo "ensure-browser: WARNING: no Chromium; browser tests will be skipped" >&2
}

ensure_chromium
ensure_emoji_font
