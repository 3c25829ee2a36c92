#!/usr/bin/env bash
# The telemetry end-to-end test starts a real Prometheus; install Debian's when missing (root).
set -euo pipefail
[ -x /usr/bin/prometheus ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing prometheus for the telemetry end-to-end test"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
else
  echo "ERROR: /usr/bin/prometheus is missing; install it with:" \
    "sudo apt-get install -y --no-install-recommends prometheus" >&2
  exit 1
fi
