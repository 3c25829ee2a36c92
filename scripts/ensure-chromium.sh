#!/usr/bin/env bash
# The browser end-to-end test drives Debian's chromium; install it when missing (needs root).
set -euo pipefail
# A CJK font too, so screenshots show 智算 and the Chinese UI instead of empty boxes.
[ -x /usr/bin/chromium ] && dpkg -s fonts-noto-cjk >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing chromium and a CJK font for the end-to-end test"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null
else
  echo "ERROR: /usr/bin/chromium is missing; install it with: sudo apt-get install -y chromium" >&2
  exit 1
fi
