#!/usr/bin/env bash
# The browser end-to-end test drives Debian's chromium, with a CJK font so screenshots show
# 智算 and the Chinese UI instead of empty boxes.
set -euo pipefail
[ -x /usr/bin/chromium ] && dpkg -s fonts-noto-cjk >/dev/null 2>&1 && exit 0
. "$(dirname "$0")/lib/apt.sh"
apt_install "the browser end-to-end test" chromium fonts-noto-cjk
