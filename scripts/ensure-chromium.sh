#!/usr/bin/env bash
# The browser end-to-end test drives Debian's chromium; install it when missing (needs root).
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing chromium for the end-to-end test"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "ERROR: /usr/bin/chromium is missing; install it with: sudo apt-get install -y chromium" >&2
  exit 1
fi
