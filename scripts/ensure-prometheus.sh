#!/usr/bin/env bash
# The telemetry end-to-end test starts a real Prometheus: Debian's.
set -euo pipefail
[ -x /usr/bin/prometheus ] && exit 0
. "$(dirname "$0")/lib/apt.sh"
apt_install "the telemetry end-to-end test" --no-install-recommends prometheus
