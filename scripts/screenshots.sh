#!/usr/bin/env bash
# `make screenshots`: the README's screenshots (docs/screenshots/*.png), made by the browser
# test tests/e2e/test_screenshots.py from the demo documents at 1280x800, then made smaller
# with pngquant (installed with apt-get as root on Debian when missing; without it the
# PNGs are kept as Chromium wrote them).
set -euo pipefail
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${SCREENSHOTS_DIR:-docs/screenshots}

PYTHON="$PYTHON" ./scripts/ensure-browser.sh
SCREENSHOTS_DIR="$OUT" "$PYTHON" -m pytest tests/e2e/test_screenshots.py -q

if ! command -v pngquant >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "screenshots: installing pngquant (apt-get)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pngquant >/dev/null || true
fi
if command -v pngquant >/dev/null 2>&1; then
  pngquant --force --skip-if-larger --strip --quality 70-95 --ext .png "$OUT"/*.png || true
else
  echo "screenshots: WARNING: pngquant not found; PNGs left unoptimised" >&2
fi
ls -l "$OUT"/*.png
