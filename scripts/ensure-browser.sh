#!/usr/bin/env bash
# Make sure a Chromium is there for the Playwright tests:
# /usr/bin/chromium if present; as root on Debian, apt-get install chromium;
# otherwise Playwright's own build. In CI a missing browser is an error.
# Also the fonts of the scripts the browser tests select in (tests/e2e/test_scripts_offsets.py,
# docs/languages.md): Debian's fonts-noto-core (Arabic, Hebrew, Devanagari, Thai: the part of
# the fonts-noto family with the scripts, without its extra weights), fonts-noto-cjk
# (Chinese, Japanese) and fonts-noto-color-emoji, so that screenshots and drags meet real
# glyphs with real widths instead of empty boxes.
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

# family name (as fc-list prints it) -> the Debian package that has it
FONTS=(
  "Noto Sans Arabic:fonts-noto-core"
  "Noto Sans Hebrew:fonts-noto-core"
  "Noto Sans Devanagari:fonts-noto-core"
  "Noto Sans CJK SC:fonts-noto-cjk"
  "Noto Color Emoji:fonts-noto-color-emoji"
)

ensure_fonts() {
  local missing=() entry installed=""
  # Read the list once: `fc-list | grep -q` fails under pipefail when grep stops early.
  if command -v fc-list >/dev/null 2>&1; then
    installed=$(fc-list : family)
  fi
  for entry in "${FONTS[@]}"; do
    if ! grep -qi "${entry%%:*}" <<<"$installed"; then
      missing+=("${entry##*:}")
    fi
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  if can_apt; then
    echo "ensure-browser: installing Debian's ${missing[*]} (apt-get)" >&2
    apt_install fontconfig "${missing[@]}" && return 0
  fi
  echo "ensure-browser: WARNING: missing ${missing[*]}; some scripts will show as boxes" >&2
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
ensure_fonts
